//! `/v1/users`: the tenant's users, and under `/v1/users/{user_id}` privacy operations on everything one user told the system, and the
//! user's privacy switches (pause, resume, disable, enable).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use mnemo::core::UserState;
use mnemo::core::export::ExportFormat;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{ClearOut, ErasureOut, ScopeQuery, UserList, UserOut, UserSummaryOut, UsersQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// The tenant's users that have memories in use, with the agents and chats holding them: whom
/// the system remembers things about, for a person to find and inspect. Sorted by id.
#[utoipa::path(
    get, path = "/v1/users", tag = "users",
    params(UsersQuery),
    responses(
        (status = 200, description = "The users, sorted by id", body = UserList),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<UsersQuery>,
) -> Result<Json<UserList>, ApiError> {
    let users = crate::blocking(&state, move |memory| Ok(memory.users(&tenant, q.text.as_deref())?)).await?;
    Ok(Json(UserList { items: users.iter().map(UserSummaryOut::from).collect() }))
}

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
    let receipt = crate::heavy(&state, &tenant, move |memory| Ok(memory.erase_user(&scope)?)).await?;
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
    if format == ExportFormat::Skills {
        return Err(ApiError::Invalid(
            "format skills exports an agent's skills, not a user's memory: use `mnemo export --format skills`".into(),
        ));
    }
    let scope = super::scope(&tenant, q.agent_id.as_deref(), Some(&user_id), None)?;
    let body = crate::heavy(&state, &tenant, move |memory| Ok(memory.export(&scope, format)?)).await?;
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
    let archived = crate::heavy(&state, &tenant, move |memory| Ok(memory.clear_user(&scope)?)).await?;
    Ok(Json(ClearOut { archived }))
}

/// Where the user stands: `active` (the default, also for a user never seen), `paused` or
/// `disabled`. The switch is the person's, across every agent and chat of the key's tenant.
#[utoipa::path(
    get, path = "/v1/users/{user_id}", tag = "users",
    params(("user_id" = String, Path, description = "The user")),
    responses(
        (status = 200, description = "The user's privacy switch", body = UserOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn show(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<UserOut>, ApiError> {
    let scope = super::scope(&tenant, None, Some(&user_id), None)?;
    let now = crate::blocking(&state, move |memory| Ok(memory.user_state(&scope)?)).await?;
    Ok(Json(UserOut { user_id, state: now.into() }))
}

/// Sets the user's switch and answers where the user stands now.
async fn switch(
    state: AppState,
    tenant: &mnemo::core::TenantId,
    user_id: String,
    to: UserState,
) -> Result<Json<UserOut>, ApiError> {
    let scope = super::scope(tenant, None, Some(&user_id), None)?;
    let now = crate::blocking(&state, move |memory| Ok(memory.set_user_state(&scope, to)?)).await?;
    Ok(Json(UserOut { user_id, state: now.into() }))
}

/// Pauses the user: memories are kept, but new messages are only kept in the conversation
/// (never extracted, never quoted back) and recall and context return nothing about the user
/// (policies and the chat's recent window still apply) until resumed. Idempotent.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/pause", tag = "users",
    params(("user_id" = String, Path, description = "The user to pause")),
    responses(
        (status = 200, description = "Paused", body = UserOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn pause(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<UserOut>, ApiError> {
    switch(state, &tenant, user_id, UserState::Paused).await
}

/// Ends a pause (or a disable): the user is active again. What was said while paused is never
/// extracted or quoted back. Idempotent.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/resume", tag = "users",
    params(("user_id" = String, Path, description = "The user to resume")),
    responses(
        (status = 200, description = "Active again", body = UserOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn resume(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<UserOut>, ApiError> {
    switch(state, &tenant, user_id, UserState::Active).await
}

/// Disables the user: from now on nothing of theirs is stored (messages are discarded, adding
/// memories or memos is refused with 422) and nothing is recalled, until enabled. What was
/// stored before stays until cleared or erased. Idempotent.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/disable", tag = "users",
    params(("user_id" = String, Path, description = "The user to disable")),
    responses(
        (status = 200, description = "Disabled", body = UserOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn disable(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<UserOut>, ApiError> {
    switch(state, &tenant, user_id, UserState::Disabled).await
}

/// Enables the user again: normal behaviour resumes; nothing of the disabled period exists.
/// Idempotent.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/enable", tag = "users",
    params(("user_id" = String, Path, description = "The user to enable")),
    responses(
        (status = 200, description = "Active again", body = UserOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn enable(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<UserOut>, ApiError> {
    switch(state, &tenant, user_id, UserState::Active).await
}
