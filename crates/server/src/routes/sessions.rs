//! `/v1/sessions/{chat_id}`: context-window management for coding agents. The agent reports
//! how full its window is and what it holds (`/usage`) and gets back what to step down or
//! release; past the last threshold it rotates the segment (`/rotate`): everything said is
//! extracted first, then a continuation bundle comes back under the same session id.

use axum::extract::State;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::sessions::{RotateRequest, RotationOut, UsageOut, UsageRequest};
use crate::error::{ApiError, ErrorBody, Json, Path};

/// What to do at this usage of the agent's window: for each held item (memories, documents,
/// message ranges at a level) keep, step down to a lower level (with the text to put in its
/// place) or release, least valuable first; pinned items and boundaries are always kept. Past
/// the last threshold `rotate` is true. Reads only: nothing is written.
#[utoipa::path(
    post, path = "/v1/sessions/{chat_id}/usage", tag = "sessions",
    params(("chat_id" = String, Path, description = "The session (chat) id")),
    request_body = UsageRequest,
    responses(
        (status = 200, description = "The advice", body = UsageOut),
        (status = 400, description = "Capacity 0 or too large, more used than fits, an unknown or repeated \
                                      id, a bad level, too many items", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape (unknown kind or field, negative number)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn usage(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(chat_id): Path<String>,
    Json(req): Json<UsageRequest>,
) -> Result<Json<UsageOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&chat_id))?;
    let items = req.items.into_iter().enumerate().map(|(i, item)| item.parse(i)).collect::<Result<Vec<_>, _>>()?;
    let (used, capacity) = (req.used_tokens, req.capacity_tokens);
    let out = crate::blocking(&state, move |memory| {
        let advice = memory.session_usage(&scope, used, capacity, &items)?;
        Ok(UsageOut::new(&advice, &memory.config().sessions))
    })
    .await?;
    Ok(Json(out))
}

/// Rotates the session's segment: every message of it still waiting for extraction is
/// extracted first, then the continuation bundle comes back within `budget_tokens` (MEMORY.md of
/// what is known, pinned items and boundaries, a continuity note of open loops and what was
/// settled, the recent tail). The session keeps its id; what the segment said stays reachable
/// through recall and context.
#[utoipa::path(
    post, path = "/v1/sessions/{chat_id}/rotate", tag = "sessions",
    params(("chat_id" = String, Path, description = "The session (chat) id")),
    request_body = RotateRequest,
    responses(
        (status = 200, description = "Extracted; the bundle", body = RotationOut),
        (status = 400, description = "Bad ids or budget", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
        (status = 503, description = "Another worker is extracting the chat; try again shortly", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn rotate(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(chat_id): Path<String>,
    Json(req): Json<RotateRequest>,
) -> Result<Json<RotationOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&chat_id))?;
    let budget = req.budget_tokens;
    let rotation = crate::blocking(&state, move |memory| Ok(memory.rotate_session(&scope, budget)?)).await?;
    Ok(Json(RotationOut::from(&rotation)))
}
