//! `POST /v1/context`: the token-budgeted memory block for a chat's next turn.

use axum::extract::State;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{ContextOut, ContextRequest};
use crate::error::{ApiError, ErrorBody, Json};

/// Assembles the block for the user's new message within the token budget.
#[utoipa::path(
    post, path = "/v1/context", tag = "context",
    request_body = ContextRequest,
    responses(
        (status = 200, description = "The block as text and as sections", body = ContextOut),
        (status = 400, description = "Invalid ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn context(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<ContextRequest>,
) -> Result<Json<ContextOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&req.chat_id))?;
    let budget = req.budget_tokens;
    let result = crate::blocking(&state, move |memory| Ok(memory.context(&scope, &req.message, budget)?)).await?;
    Ok(Json(ContextOut::from(&result)))
}
