//! `GET /v1/traces/{turn_id}`: what one recall, context or ingest call did, for replay.

use axum::extract::State;
use mnemo::Scope;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::TraceOut;
use crate::error::{ApiError, ErrorBody, Json, Path};

/// The stored trace envelope of a turn of the caller's tenant.
#[utoipa::path(
    get, path = "/v1/traces/{turn_id}", tag = "traces",
    params(("turn_id" = String, Path, description = "Turn id from a recall, context or ingest response")),
    responses(
        (status = 200, description = "The trace envelope", body = TraceOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "No such turn for this tenant", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(turn_id): Path<String>,
) -> Result<Json<TraceOut>, ApiError> {
    let scope = Scope::tenant(tenant);
    let id = turn_id.clone();
    let found = crate::blocking(&state, move |memory| Ok(memory.trace(&scope, &id)?)).await?;
    found.map(|t| Json(TraceOut::from(&t))).ok_or_else(|| ApiError::NotFound(format!("turn {turn_id} not found")))
}
