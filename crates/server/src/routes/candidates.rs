//! `/v1/candidates`: crystallization candidates (knowledge consolidation proposes for a whole
//! agent) and other provisional memories, which a person approves (active) or rejects
//! (archived). Nothing provisional is ever recalled until approved.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{MemoryOut, ScopeQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// The candidates visible to the scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct CandidateList {
    /// Oldest first.
    pub(crate) items: Vec<MemoryOut>,
}

/// Provisional memories visible to the scope, waiting for a person's decision.
#[utoipa::path(
    get, path = "/v1/candidates", tag = "memories",
    params(ScopeQuery),
    responses(
        (status = 200, description = "The candidates, oldest first", body = CandidateList),
        (status = 400, description = "Bad scope", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<CandidateList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let rows = crate::blocking(&state, move |memory| Ok(memory.list_candidates(&scope)?)).await?;
    Ok(Json(CandidateList { items: rows.iter().map(MemoryOut::from).collect() }))
}

/// Approves a candidate: it becomes active (agent-layer knowledge then reaches every user of
/// the agent and its CONVENTIONS.md export).
#[utoipa::path(
    post, path = "/v1/candidates/{id}/approve", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 200, description = "The memory, now active", body = MemoryOut),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 422, description = "The memory is not provisional", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn approve(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoryOut>, ApiError> {
    decide(state, &tenant, &id, &q, true).await
}

/// Rejects a candidate: it is archived, kept for audit, and not proposed again.
#[utoipa::path(
    post, path = "/v1/candidates/{id}/reject", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 200, description = "The memory, now archived", body = MemoryOut),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 422, description = "The memory is not provisional", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn reject(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoryOut>, ApiError> {
    decide(state, &tenant, &id, &q, false).await
}

async fn decide(
    state: AppState,
    tenant: &mnemo::core::TenantId,
    id: &str,
    q: &ScopeQuery,
    approve: bool,
) -> Result<Json<MemoryOut>, ApiError> {
    let scope = super::scope(tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let id = id.parse::<mnemo::core::MemoryId>()?;
    let row = crate::blocking(&state, move |memory| {
        Ok(if approve { memory.approve(&scope, id)? } else { memory.reject(&scope, id)? })
    })
    .await?;
    Ok(Json(MemoryOut::from(&row)))
}
