//! `/v1/users/{user_id}`: privacy operations on everything one user told the system.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use mnemo::core::export::ExportFormat;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{ClearOut, ErasureOut, ScopeQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// Erases the user: memories, vectors, lexical entries, links, history, messages and traces,
/// across all agents and chats of the key's tenant, in one transaction, then purges free pages
/// and logs. Only a content-free deletion event remains. Erasing an unknown user is not an error
/// (nothing to remove), so the answer never reveals whether a user existed.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/erase", tag = "users",
    params(("user_id" = String, Path, description = "The user to erase")),
    responses(
        (status = 200, description = "Erased; the receipt", body = ErasureOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn erase(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<ErasureOut>, ApiError> {
    let scope = super::scope(&tenant, None, Some(&user_id), None)?;
    let receipt = crate::blocking(&state, move |memory| Ok(memory.erase_user(&scope)?)).await?;
    Ok(Json(ErasureOut::from(receipt)))
}

/// What `GET /v1/users/{user_id}/export` renders.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ExportQuery {
    /// `json` (everything, any status, with history and links; the default), `memory-md`
    /// (MEMORY.md of what is known) or `conventions` (the agent's own knowledge; needs `agent_id`).
    #[serde(default)]
    pub(crate) format: Option<String>,
    /// The agent whose layer to include (and, for `conventions`, to export).
    #[serde(default)]
    pub(crate) agent_id: Option<String>,
}

/// Exports what memory holds about the user: the user's own copy, or the standing context an
/// agent loads (MEMORY.md). Read-only; an unknown user gets an empty export, as with erase.
#[utoipa::path(
    get, path = "/v1/users/{user_id}/export", tag = "users",
    params(("user_id" = String, Path, description = "The user to export"), ExportQuery),
    responses(
        (status = 200, description = "The export: JSON, or Markdown for memory-md and conventions",
         content((Object = "application/json"), (String = "text/markdown"))),
        (status = 400, description = "Invalid user id or format", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn export(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let format: ExportFormat = q.format.as_deref().unwrap_or("json").parse()?;
    let scope = super::scope(&tenant, q.agent_id.as_deref(), Some(&user_id), None)?;
    let body = crate::blocking(&state, move |memory| Ok(memory.export(&scope, format)?)).await?;
    Ok(([(header::CONTENT_TYPE, format.media_type())], body).into_response())
}

/// Clears what memory holds about the user: every active memory of the user is archived (history
/// kept for audit) and the user's messages leave archival recall. A fresh start that keeps the
/// account; erase is what deletes.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/clear", tag = "users",
    params(("user_id" = String, Path, description = "The user to clear"), ScopeQuery),
    responses(
        (status = 200, description = "Cleared", body = ClearOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn clear(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<ClearOut>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), Some(&user_id), None)?;
    let archived = crate::blocking(&state, move |memory| Ok(memory.clear_user(&scope)?)).await?;
    Ok(Json(ClearOut { archived }))
}
