//! `/v1/observations`: behavioural learning. An agent records what it did (a tool, a summary of
//! its arguments, how it ended); consolidation (`/v1/maintain`) mines patterns recurring across
//! sessions into skill candidates, approved or rejected at `/v1/candidates`.

use axum::extract::State;
use axum::http::StatusCode;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::observations::{
    ObservationList, ObservationOut, ObservationQuery, ObserveRequest, StoredObservationOut,
};
use crate::error::{ApiError, ErrorBody, Json, Query};

/// Records one action of an agent in a session. Limits are checked and a paused or disabled
/// user refused before anything is written; PII is redacted.
#[utoipa::path(
    post, path = "/v1/observations", tag = "observations",
    request_body = ObserveRequest,
    responses(
        (status = 201, description = "Stored", body = StoredObservationOut),
        (status = 400, description = "Empty or oversized texts, bad ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 413, description = "Body larger than the server accepts", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape (unknown outcome or field), or the user is paused or disabled", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn observe(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<ObserveRequest>,
) -> Result<(StatusCode, Json<StoredObservationOut>), ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), Some(&req.chat_id))?;
    let stored = crate::blocking(&state, move |memory| {
        Ok(memory.observe(&scope, &req.tool, &req.args_summary, req.outcome.into(), req.text.as_deref())?)
    })
    .await?;
    let observation = ObservationOut::from(&stored.observation);
    Ok((StatusCode::CREATED, Json(StoredObservationOut { observation, degraded: stored.degraded })))
}

/// The observations of a user with an agent (of one session with `chat_id`), newest first.
#[utoipa::path(
    get, path = "/v1/observations", tag = "observations",
    params(ObservationQuery),
    responses(
        (status = 200, description = "A page of observations", body = ObservationList),
        (status = 400, description = "Bad ids or page", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<ObservationQuery>,
) -> Result<Json<ObservationList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let (limit, offset) = (q.limit.unwrap_or(50), q.offset.unwrap_or(0));
    let rows = crate::blocking(&state, move |memory| Ok(memory.observations(&scope, limit, offset)?)).await?;
    Ok(Json(ObservationList { items: rows.iter().map(ObservationOut::from).collect() }))
}
