//! `/v1/memos`: a chat's memo book — list, add a memo a person writes, edit one.

use axum::extract::State;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{AddMemoRequest, EditMemoRequest, MemoList, MemoryOut, ScopeQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// The chat's memos, oldest first: what the block's "earlier in this chat" section draws on.
#[utoipa::path(
    get, path = "/v1/memos", tag = "memos",
    params(ScopeQuery),
    responses(
        (status = 200, description = "The chat's active memos", body = MemoList),
        (status = 400, description = "Missing user or invalid ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let rows = crate::blocking(&state, move |memory| Ok(memory.memos(&scope)?)).await?;
    Ok(Json(MemoList { items: rows.iter().map(MemoryOut::from).collect() }))
}

/// Adds a memo a person wrote (backstory, a shared joke, a milestone), checked like any memory.
#[utoipa::path(
    post, path = "/v1/memos", tag = "memos",
    request_body = AddMemoRequest,
    responses(
        (status = 200, description = "The memo written", body = MemoryOut),
        (status = 400, description = "Invalid ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Empty, too long or holding personal data", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn add(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<AddMemoRequest>,
) -> Result<Json<MemoryOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&req.chat_id))?;
    let row = crate::blocking(&state, move |memory| Ok(memory.add_memo(&scope, &req.text, req.at)?)).await?;
    Ok(Json(MemoryOut::from(&row)))
}

/// Replaces a memo's text; the edit supersedes the old memo, whose history keeps what it said.
#[utoipa::path(
    patch, path = "/v1/memos/{id}", tag = "memos",
    params(("id" = String, Path, description = "Memo id")),
    request_body = EditMemoRequest,
    responses(
        (status = 200, description = "The edited memo", body = MemoryOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "No active memo with this id in the chat", body = ErrorBody),
        (status = 422, description = "Empty, too long or holding personal data", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn edit(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Json(req): Json<EditMemoRequest>,
) -> Result<Json<MemoryOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&req.chat_id))?;
    let id = id.parse()?;
    let row = crate::blocking(&state, move |memory| Ok(memory.edit_memo(&scope, id, &req.text)?)).await?;
    Ok(Json(MemoryOut::from(&row)))
}
