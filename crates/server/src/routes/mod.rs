//! Handlers, one module per resource. Each parses its request into engine types, runs the
//! engine on the blocking pool, and answers with the API's own types from [`crate::dto`].
//!
//! [`api`] is the one list of documented routes: a route and its OpenAPI entry are registered
//! by the same line, so the served API and `/openapi.json` cannot drift apart.

pub(crate) mod admin;
pub(crate) mod candidates;
pub(crate) mod context;
pub(crate) mod documents;
pub(crate) mod health;
pub(crate) mod maintain;
pub(crate) mod memories;
pub(crate) mod memos;
pub(crate) mod messages;
pub(crate) mod observations;
pub(crate) mod policies;
pub(crate) mod recall;
pub(crate) mod sessions;
pub(crate) mod traces;
pub(crate) mod users;

use mnemo::Scope;
use mnemo::core::TenantId;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::openapi::ApiDoc;

/// Every documented route with its OpenAPI entry, over [`ApiDoc`]'s info, shared schemas and
/// security scheme.
///
/// `routes!` reads each handler's method and path from its `#[utoipa::path]`, so adding a route
/// is one line here (handlers that share a path go on one line). What the document leaves out
/// (MCP, `/openapi.json` itself), the fallbacks and the layers every route shares are added by
/// [`crate::app`].
pub(crate) fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(messages::ingest, messages::conversation))
        .routes(routes!(recall::recall))
        .routes(routes!(context::context))
        .routes(routes!(memories::list, memories::add))
        .routes(routes!(memories::get, memories::delete, memories::edit))
        .routes(routes!(memories::pin))
        .routes(routes!(memories::unpin))
        .routes(routes!(memos::list, memos::add))
        .routes(routes!(memos::edit))
        .routes(routes!(policies::list, policies::put))
        .routes(routes!(documents::list, documents::store))
        .routes(routes!(documents::search))
        .routes(routes!(documents::similar))
        .routes(routes!(documents::get, documents::delete))
        .routes(routes!(observations::list, observations::observe))
        .routes(routes!(sessions::usage))
        .routes(routes!(sessions::rotate))
        .routes(routes!(traces::list))
        .routes(routes!(traces::get))
        .routes(routes!(maintain::maintain))
        .routes(routes!(candidates::list))
        .routes(routes!(candidates::approve))
        .routes(routes!(candidates::reject))
        .routes(routes!(users::list))
        .routes(routes!(users::show))
        .routes(routes!(users::erase))
        .routes(routes!(users::export))
        .routes(routes!(users::clear))
        .routes(routes!(users::pause))
        .routes(routes!(users::resume))
        .routes(routes!(users::disable))
        .routes(routes!(users::enable))
        .routes(routes!(admin::list_keys, admin::create_key))
        .routes(routes!(admin::revoke_key))
        .routes(routes!(health::healthz))
        .routes(routes!(health::metrics))
}

/// The request's scope: the tenant from the key, the rest from the request.
pub(crate) fn scope(
    tenant: &TenantId,
    agent: Option<&str>,
    user: Option<&str>,
    chat: Option<&str>,
) -> Result<Scope, ApiError> {
    Ok(Scope::parse(tenant.as_str(), agent, user, chat)?)
}
