//! The API's one error shape, `{message, code}`, and the one table from error to HTTP status
//! and stable snake_case code.
//!
//! Clients branch on `code`, never on `message`; codes are part of the API contract. Internal
//! failures are logged with a reference id and answered with a generic message that carries only
//! that reference, so nothing about storage, paths or other tenants leaks.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

/// Everything a request can fail with, each variant mapped to one status and code by
/// [`ApiError::status_and_code`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The request is well-formed JSON but asks for something invalid (bad id, missing scope).
    #[error("{0}")]
    Invalid(String),
    /// The body is not valid JSON.
    #[error("{0}")]
    MalformedJson(String),
    /// The body is JSON of the wrong shape: unknown or missing fields, wrong types.
    #[error("{0}")]
    InvalidBody(String),
    /// The body is not declared as `application/json`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The body is larger than the server accepts.
    #[error("the request body is larger than the server accepts")]
    PayloadTooLarge,
    /// The request asks for more work than one request may (more messages than an ingest
    /// takes); the message names the limit and the setting behind it.
    #[error("{0}")]
    TooLarge(String),
    /// No API key, or one that is unknown or revoked.
    #[error("missing or invalid API key; send `Authorization: Bearer <key>`")]
    Unauthorized,
    /// A valid key that may not use this route (a tenant key on an admin route).
    #[error("this key may not use this route")]
    Forbidden,
    /// Nothing by that id visible to this key (which never says whether it exists elsewhere).
    #[error("{0}")]
    NotFound(String),
    /// The path exists but not with this method.
    #[error("method not allowed on this path")]
    MethodNotAllowed,
    /// A dependency (the embedding model) failed; retrying later may work. Detail is logged only.
    #[error("temporarily unavailable")]
    Unavailable {
        /// What failed, for the log.
        detail: String,
    },
    /// The tenant sent more requests than `limits.requests_per_second` allows; the answer's
    /// `Retry-After` says when one more will pass.
    #[error("too many requests for this tenant; retry after {retry_after_secs} s")]
    RateLimited {
        /// Whole seconds until the tenant's next request passes (at least 1).
        retry_after_secs: u64,
    },
    /// A bug or storage failure. Detail is logged only.
    #[error("internal error")]
    Internal {
        /// What failed, for the log.
        detail: String,
    },
}

/// The JSON body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in words meant for a developer; may change between versions.
    pub message: String,
    /// Stable machine-readable code: `invalid_request`, `malformed_json`, `invalid_body`,
    /// `unsupported_media_type`, `payload_too_large`, `unauthorized`, `forbidden`, `not_found`,
    /// `method_not_allowed`, `rate_limited`, `unavailable`, `internal`.
    pub code: String,
}

impl ApiError {
    /// The one table: HTTP status and stable code of each error.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::Invalid(_) => (StatusCode::BAD_REQUEST, "invalid_request"),
            ApiError::MalformedJson(_) => (StatusCode::BAD_REQUEST, "malformed_json"),
            ApiError::InvalidBody(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
            ApiError::UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            ApiError::PayloadTooLarge | ApiError::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::Unavailable { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::Internal { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }

    /// `response` with the headers this error owes a client whatever the body's shape: a
    /// refusal for rate says when to come back (`Retry-After`). Every error answer, native or
    /// a compatibility surface's, passes through here.
    pub(crate) fn with_headers(&self, mut response: Response) -> Response {
        if let ApiError::RateLimited { retry_after_secs } = self {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, (*retry_after_secs).into());
        }
        response
    }

    /// An internal error from anything displayable; the text goes to the log only.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        ApiError::Internal { detail: detail.to_string() }
    }
}

/// Logs an internal or unavailable failure under the reference the client was given: an error
/// for what is ours to fix, a warning for a dependency (a model server) that is down.
pub(crate) fn log_failure(e: &ApiError, reference: &str, code: &str, detail: &str) {
    if matches!(e, ApiError::Unavailable { .. }) {
        tracing::warn!(reference, code, detail, "request failed: a dependency is unavailable");
    } else {
        tracing::error!(reference, code, detail, "request failed");
    }
}

impl ApiError {
    /// Status, code and the message a client may see: internal and unavailable failures are
    /// logged here under a fresh reference, and only the reference is told. Every error answer,
    /// in the native shape or a compatibility surface's, is built from this.
    pub(crate) fn public(&self) -> (StatusCode, &'static str, String) {
        let (status, code) = self.status_and_code();
        let message = match self {
            ApiError::Internal { detail } | ApiError::Unavailable { detail } => {
                // The reference ties the client's report to the log line without leaking detail.
                let reference = ulid::Ulid::new().to_string().to_lowercase();
                log_failure(self, &reference, code, detail);
                format!("{self}; reference {reference}")
            }
            other => other.to_string(),
        };
        (status, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = self.public();
        self.with_headers((status, axum::Json(ErrorBody { message, code: code.to_string() })).into_response())
    }
}

impl From<mnemo::Error> for ApiError {
    fn from(e: mnemo::Error) -> Self {
        match e {
            mnemo::Error::Invalid(core) => ApiError::Invalid(core.to_string()),
            // The commonest cause is a scope that does not reach the memory's owner: say how to
            // name it, without saying whether the id exists elsewhere.
            mnemo::Error::NotFound { id, .. } => ApiError::NotFound(format!(
                "memory {id} not found in this scope (a user's memory is reached only with its user: ?user_id=..., and \
                 agent_id=... when it belongs to an agent)"
            )),
            e @ mnemo::Error::Rejected { .. } => ApiError::InvalidBody(e.to_string()),
            mnemo::Error::Model(m) => ApiError::Unavailable { detail: m.to_string() },
            e @ mnemo::Error::Busy { .. } => ApiError::Unavailable { detail: e.to_string() },
            other => ApiError::internal(other),
        }
    }
}

impl From<mnemo::core::CoreError> for ApiError {
    fn from(e: mnemo::core::CoreError) -> Self {
        ApiError::Invalid(e.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::JsonDataError(e) if integer_out_of_range(&e.body_text()) => ApiError::Invalid(e.body_text()),
            JsonRejection::JsonDataError(e) => ApiError::InvalidBody(e.body_text()),
            JsonRejection::JsonSyntaxError(e) => ApiError::MalformedJson(e.body_text()),
            JsonRejection::MissingJsonContentType(e) => ApiError::UnsupportedMediaType(e.body_text()),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge,
            other => ApiError::MalformedJson(other.body_text()),
        }
    }
}

/// Whether a body's shape error is a number sent for an integer field that the field's type
/// cannot hold: negative, or past its range (which JSON reads as a float). That is a value out
/// of range, answered 400 naming the field like every other range check (`top_k` of 2^63 and
/// of 2^64 alike), not a body of the wrong shape. serde says so only in words, as
/// "invalid value: integer `-1`, expected usize".
fn integer_out_of_range(message: &str) -> bool {
    let number = message.contains("invalid value: integer `") || message.contains("invalid type: floating point `");
    let integer = ["usize", "u64", "u32", "u16", "u8", "isize", "i64", "i32", "i16", "i8"]
        .iter()
        .any(|t| message.contains(&format!("expected {t} ")) || message.ends_with(&format!("expected {t}")));
    number && integer
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::Invalid(r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::Invalid(r.body_text())
    }
}

/// A JSON body extractor and response whose failures use the API's error shape (axum's own
/// answers in plain text).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<T>::from_request(req, state).await?;
        Ok(Json(value))
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// A query-string extractor whose failures (unknown or malformed parameters) use the error shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(Query(value))
    }
}

/// A path-parameter extractor whose failures use the error shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(value) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Path(value))
    }
}
