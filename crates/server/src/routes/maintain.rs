//! `POST /v1/maintain`: run the lifecycle jobs now.
//!
//! Admin only: the engine's jobs walk every tenant's rows and report their ids, so a tenant key
//! running them would both act on and see other tenants' data.

use axum::extract::State;

use crate::AppState;
use crate::auth::Admin;
use crate::dto::MaintainOut;
use crate::error::{ApiError, ErrorBody, Json};

/// Runs TTL expiry, staleness and open-loop closing across the store; idempotent.
///
/// When another server sharing the store is running them, answers at once with `skipped` set.
#[utoipa::path(
    post, path = "/v1/maintain", tag = "admin",
    responses(
        (status = 200, description = "Transitions applied, or `skipped` when another server runs them", body = MaintainOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 403, description = "A tenant key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn maintain(State(state): State<AppState>, _admin: Admin) -> Result<Json<MaintainOut>, ApiError> {
    let report = crate::blocking(&state, |memory| Ok(memory.maintain()?)).await?;
    Ok(Json(MaintainOut::from(&report)))
}
