//! The OpenAPI 3.1 document, generated from the handlers' annotations and the types in
//! [`crate::dto`]. A copy is committed at `crates/server/openapi.json`; a test fails when the code
//! and the copy drift apart.

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes;

/// The API description; `ApiDoc::openapi()` builds the document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mnemo",
        description = "Durable memory for LLM applications. Every /v1 route takes `Authorization: Bearer <key>`; \
                       the tenant comes from the key. Every error is `{message, code}`.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        routes::messages::ingest,
        routes::recall::recall,
        routes::context::context,
        routes::memories::list,
        routes::memories::get,
        routes::memories::add,
        routes::memories::pin,
        routes::memories::unpin,
        routes::memories::delete,
        routes::memories::edit,
        routes::memos::list,
        routes::memos::add,
        routes::memos::edit,
        routes::policies::list,
        routes::policies::put,
        routes::documents::store,
        routes::documents::list,
        routes::documents::get,
        routes::documents::delete,
        routes::documents::search,
        routes::documents::similar,
        routes::traces::get,
        routes::maintain::maintain,
        routes::candidates::list,
        routes::candidates::approve,
        routes::candidates::reject,
        routes::users::erase,
        routes::users::export,
        routes::users::clear,
        routes::users::show,
        routes::users::pause,
        routes::users::resume,
        routes::users::disable,
        routes::users::enable,
        routes::admin::create_key,
        routes::admin::list_keys,
        routes::admin::revoke_key,
        routes::health::healthz,
        routes::health::metrics,
    ),
    components(schemas(crate::error::ErrorBody)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

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
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    let mut text = doc.to_pretty_json().unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// `GET /openapi.json`.
pub(crate) async fn document() -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], document_json())
}
