//! The OpenAPI 3.1 document, generated from the handlers' annotations and the types in
//! [`crate::dto`]. A copy is committed at `crates/server/openapi.json`; a test fails when the code
//! and the copy drift apart.
//!
//! The paths come from the router itself (`routes::api`), so a route is documented by being
//! served; this module holds only what is not any one route's: the info, the error schema and
//! the `bearer` scheme.

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::routing::{MethodRouter, get};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{AppState, routes};

/// What the document says besides its paths; `routes::api` adds a path for every route it
/// registers, and [`document_json`] renders the whole.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mnemo",
        description = "Durable memory for LLM applications. Every /v1 route takes `Authorization: Bearer <key>`; \
                       the tenant comes from the key. Every error is `{message, code}`.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(crate::error::ErrorBody)),
    modifiers(&BearerAuth),
)]
pub(crate) struct ApiDoc;

/// Declares the `bearer` security scheme the routes refer to.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("mnemo key").build()),
        );
    }
}

/// The document as pretty JSON with a trailing newline: exactly the committed copy's bytes.
pub fn document_json() -> String {
    render(routes::api().into_openapi())
}

/// A router's document as served and committed: the crate's version, pretty JSON, a newline.
pub(crate) fn render(mut doc: utoipa::openapi::OpenApi) -> String {
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    let mut text = doc.to_pretty_json().unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// `GET /openapi.json`: the document rendered once when the router was built.
pub(crate) fn document(json: String) -> MethodRouter<AppState> {
    let json = Bytes::from(json);
    get(move || std::future::ready(([(CONTENT_TYPE, "application/json")], json.clone())))
}
