//! `GET /v1/traces/{turn_id}`: what one recall, context or ingest call did, for replay; and
//! `GET /v1/traces`: a user's latest calls, to find the turn to open.

use axum::extract::State;
use mnemo::Scope;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{TraceList, TraceOut, TracesQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

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

/// The latest trace envelopes of a user of the caller's tenant (of one chat when `chat_id` is
/// given), newest first: what the model was told on past turns, and why. Envelopes are swept
/// by retention (`retention.*`), so the oldest calls disappear from this list in time.
#[utoipa::path(
    get, path = "/v1/traces", tag = "traces",
    params(TracesQuery),
    responses(
        (status = 200, description = "The user's latest envelopes, newest first", body = TraceList),
        (status = 400, description = "Invalid ids or limit", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<TracesQuery>,
) -> Result<Json<TraceList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), Some(&q.user_id), q.chat_id.as_deref())?;
    let limit = super::memories::page_limit(q.limit)?;
    let found = crate::blocking(&state, move |memory| Ok(memory.traces(&scope, limit)?)).await?;
    Ok(Json(TraceList { items: found.iter().map(TraceOut::from).collect() }))
}
