//! `POST /v1/recall`: path A (exact) and path B (ranked) memories for a query.

use axum::extract::State;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{RecallOut, RecallRequest};
use crate::error::{ApiError, ErrorBody, Json};

/// Recalls memories for a query; the call is traced under the returned `turn_id`.
#[utoipa::path(
    post, path = "/v1/recall", tag = "recall",
    request_body = RecallRequest,
    responses(
        (status = 200, description = "Exact and ranked memories", body = RecallOut),
        (status = 400, description = "Invalid ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn recall(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<RecallRequest>,
) -> Result<Json<RecallOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), req.chat_id.as_deref())?;
    let top_k = req.top_k;
    let result = crate::blocking(&state, move |memory| Ok(memory.recall(&scope, &req.query, top_k)?)).await?;
    Ok(Json(RecallOut::from(&result)))
}
