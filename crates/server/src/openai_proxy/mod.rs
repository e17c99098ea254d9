//! Memory for any OpenAI client: `POST /openai/v1/chat/completions` and `GET /openai/v1/models`
//! in front of an OpenAI-compatible upstream (`[proxy]`; docs/openai-proxy.md).
//!
//! An app points its OpenAI SDK's `base_url` here and its `api_key` at a mnemo tenant key. For
//! each chat request mnemo builds the memory block for the last user message (as
//! `POST /v1/context` does), inserts it as a system message after the app's own, forwards the
//! request with every other field untouched, and streams the upstream's answer back byte for
//! byte. Once the answer has been delivered, the user's message and the assistant's reply are
//! ingested (as `POST /v1/messages`), so remembering never delays the answer.
//!
//! The upstream's errors reach the client with their status and body. A failure of mnemo's own
//! (a bad user id, a store error) never breaks the chat: the request goes upstream without
//! memory, the log says why, and so does the answer's `X-Mnemo-Memory` header.

mod conversation;

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mnemo::core::{NewMessage, Role, Scope};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::AppState;
use crate::auth::CompatTenant;
use crate::error::ApiError;

/// Header of every proxied answer saying what memory did: `turn <id>` (the block's trace turn),
/// or `skipped: <why>`.
pub(crate) const MEMORY_HEADER: &str = "x-mnemo-memory";

/// How much of an answer is kept to read the reply from; the client still gets all of it.
const MAX_CAPTURE: usize = 4 * 1024 * 1024;

/// The proxy's routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/openai/v1/chat/completions", post(chat_completions)).route("/openai/v1/models", get(models))
}

/// An error of the proxy itself in OpenAI's shape, `{"error": {"message", "type", "param",
/// "code"}}`, which OpenAI SDKs read: OpenAI's type for the status (`invalid_request_error` for
/// a refusal of the request, `server_error` for a failure on this side), and mnemo's stable code.
fn openai_error(status: StatusCode, message: &str, code: &str) -> Response {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    let error = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (status, axum::Json(error)).into_response()
}

impl ApiError {
    /// This error in OpenAI's shape, for the proxy's own refusals (a bad key, a body too large).
    fn into_openai(self) -> Response {
        let (status, code, message) = self.public();
        self.with_headers(openai_error(status, &message, code))
    }
}

/// A body the proxy could not read as bytes, as an error to answer in OpenAI's shape: one over
/// the server's body limit (`limit` bytes) is a 413 that names it.
fn unread_body(rejection: &BytesRejection, limit: usize) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::TooLarge(format!(
            "the request body is larger than the server accepts ({limit} bytes); send a shorter history, or raise \
             the server's body limit"
        ))
    } else {
        ApiError::Invalid(rejection.body_text())
    }
}

/// Whose conversation a request belongs to and what to remember from it.
struct Turn {
    scope: Scope,
    user_text: String,
}

/// Reads the request, builds and inserts the memory block; what to ingest afterwards and what
/// the `X-Mnemo-Memory` header says. Every failure is reported, never raised.
async fn remember_into(
    state: &AppState,
    tenant: &mnemo::core::TenantId,
    headers: &HeaderMap,
    body: &mut Value,
) -> (Option<Turn>, String) {
    let Some(user) = conversation::user(body, headers) else {
        return (None, "skipped: no user (send `user` or X-Mnemo-User)".into());
    };
    let Some(user_text) = conversation::last_user_text(body) else {
        return (None, "skipped: no user message with text".into());
    };
    let chat = conversation::chat(body, headers);
    let agent = conversation::agent(headers);
    let scope = match crate::routes::scope(tenant, agent.as_deref(), Some(&user), chat.as_deref()) {
        Ok(s) => s,
        Err(e) => return (None, format!("skipped: {e}")),
    };
    let (for_context, query) = (scope.clone(), user_text.clone());
    let built = crate::blocking(state, move |m| Ok(m.context(&for_context, &query, None)?)).await;
    let note = match built {
        Ok(ctx) => {
            if !ctx.block.text.trim().is_empty() {
                conversation::insert_block(body, &ctx.block.text);
            }
            format!("turn {}", ctx.turn_id)
        }
        Err(e) => {
            let (_, code, message) = e.public();
            tracing::warn!(code, message, "proxy: forwarding without memory");
            format!("skipped: {message}")
        }
    };
    (Some(Turn { scope, user_text }), note)
}

/// `POST /openai/v1/chat/completions`.
async fn chat_completions(
    State(state): State<AppState>,
    tenant: Result<CompatTenant, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let CompatTenant(tenant) = match tenant {
        Ok(t) => t,
        Err(e) => return e.into_openai(),
    };
    let body = match body {
        Ok(b) => b,
        Err(r) => return unread_body(&r, state.body_limit).into_openai(),
    };
    // A body mnemo cannot read is the upstream's to judge: it goes through as sent.
    let (body, turn, note) = match serde_json::from_slice::<Value>(&body) {
        Ok(mut v) => {
            let (turn, note) = remember_into(&state, &tenant, &headers, &mut v).await;
            (Bytes::from(serde_json::to_vec(&v).unwrap_or_else(|_| body.to_vec())), turn, note)
        }
        Err(_) => (body, None, "skipped: the body is not JSON".into()),
    };
    forward(state, Method::POST, "chat/completions", Some(body), &headers, turn, note).await
}

/// `GET /openai/v1/models`: the upstream's list, for SDKs and tools that ask first.
async fn models(State(state): State<AppState>, tenant: Result<CompatTenant, ApiError>, headers: HeaderMap) -> Response {
    if let Err(e) = tenant {
        return e.into_openai();
    }
    forward(state, Method::GET, "models", None, &headers, None, "skipped: not a chat".into()).await
}

/// Response headers that describe the upstream's connection or encoding rather than the answer
/// (the body is re-framed here, and ureq has already decoded any compression).
fn passes(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "connection" | "keep-alive" | "transfer-encoding" | "content-length" | "content-encoding" | "upgrade"
    )
}

/// Sends the request upstream and streams the answer back; after the last byte has been handed
/// to the client, ingests the turn.
async fn forward(
    state: AppState,
    method: Method,
    path: &'static str,
    body: Option<Bytes>,
    headers: &HeaderMap,
    turn: Option<Turn>,
    note: String,
) -> Response {
    let settings = state.memory.config().proxy.clone();
    if settings.upstream_url.trim().is_empty() {
        return openai_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "mnemo's OpenAI proxy has no upstream: set MNEMO_PROXY_UPSTREAM_URL (or upstream_url under [proxy])",
            "unavailable",
        );
    }
    let url = format!("{}/{path}", settings.upstream_url.trim().trim_end_matches('/'));
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).map(str::to_string);
    let sent = tokio::task::spawn_blocking(move || {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(settings.timeout_secs.max(1))))
            .http_status_as_error(false)
            .build()
            .new_agent();
        let auth =
            (!settings.upstream_key.trim().is_empty()).then(|| format!("Bearer {}", settings.upstream_key.trim()));
        match (method, body) {
            (Method::POST, Some(b)) => {
                let mut req = agent.post(&url).header("content-type", "application/json");
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                if let Some(a) = &accept {
                    req = req.header("accept", a);
                }
                req.send(&b[..])
            }
            _ => {
                let mut req = agent.get(&url);
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                req.call()
            }
        }
    })
    .await;
    let answer = match sent {
        Ok(Ok(a)) => a,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "proxy: the upstream could not be reached");
            return openai_error(
                StatusCode::BAD_GATEWAY,
                &format!("the upstream could not be reached: {e}"),
                "upstream_error",
            );
        }
        Err(e) => return ApiError::internal(e).into_openai(),
    };
    let (parts, upstream_body) = answer.into_parts();
    let ok = parts.status.is_success();
    let mut response = Response::builder().status(parts.status.as_u16());
    for (name, value) in parts.headers.iter().filter(|(n, _)| passes(n)) {
        response = response.header(name.as_str(), value.as_bytes());
    }
    if let Ok(v) = HeaderValue::from_str(&note) {
        response = response.header(MEMORY_HEADER, v);
    }
    let (tx, rx) = mpsc::channel(16);
    let reader = upstream_body.into_reader();
    tokio::task::spawn_blocking(move || {
        let captured = pump(reader, &tx);
        // The client's stream ends here, before anything is remembered.
        drop(tx);
        if let (true, Some(turn)) = (ok, turn) {
            remember(&state.memory, turn, &captured);
        }
    });
    response.body(Body::new(ChannelBody(rx))).unwrap_or_else(|e| ApiError::internal(e).into_openai())
}

/// Copies the upstream's answer to the client as it arrives; what was copied (up to
/// [`MAX_CAPTURE`]) to read the reply from.
fn pump(mut reader: impl Read, tx: &mpsc::Sender<Result<Bytes, std::io::Error>>) -> Vec<u8> {
    let mut captured = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if captured.len() + n <= MAX_CAPTURE {
                    captured.extend_from_slice(&buf[..n]);
                }
                if tx.blocking_send(Ok(Bytes::copy_from_slice(&buf[..n]))).is_err() {
                    break; // the client went away
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "proxy: the upstream's answer broke off");
                let _ = tx.blocking_send(Err(e));
                break;
            }
        }
    }
    captured
}

/// Ingests the user's message and the assistant's reply into the turn's chat.
fn remember(memory: &mnemo::Memory, turn: Turn, answer: &[u8]) {
    let mut messages = vec![NewMessage { id: None, role: Role::User, content: turn.user_text, at: None }];
    if let Some(reply) = conversation::reply_text(answer).filter(|r| !r.trim().is_empty()) {
        messages.push(NewMessage { id: None, role: Role::Assistant, content: reply, at: None });
    }
    match memory.ingest(&turn.scope, messages) {
        Ok(report) => tracing::debug!(appended = report.appended, ops = report.ops.len(), "proxy: turn remembered"),
        Err(e) => tracing::warn!(error = %e, "proxy: the turn could not be remembered"),
    }
}

/// A response body fed by the thread that reads the upstream.
struct ChannelBody(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|next| next.map(|chunk| chunk.map(http_body::Frame::data)))
    }
}
