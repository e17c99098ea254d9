//! `/v1/policies`: tenant rules, versioned; authoring a key again closes its current version.

use axum::extract::State;
use axum::http::StatusCode;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{PolicyList, PolicyOut, PolicyQuery, PolicyRequest};
use crate::error::{ApiError, ErrorBody, Json, Query};

/// Every version of every policy binding the tenant (and the agent, when given).
#[utoipa::path(
    get, path = "/v1/policies", tag = "policies",
    params(PolicyQuery),
    responses(
        (status = 200, description = "Policy versions with their effective ranges", body = PolicyList),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<PolicyQuery>,
) -> Result<Json<PolicyList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), None, None)?;
    let rows = crate::blocking(&state, move |memory| Ok(memory.policies(&scope)?)).await?;
    Ok(Json(PolicyList { items: rows.iter().map(PolicyOut::from).collect() }))
}

/// Authors a policy in force from now (a new version if the key exists).
#[utoipa::path(
    post, path = "/v1/policies", tag = "policies",
    request_body = PolicyRequest,
    responses(
        (status = 201, description = "The new version", body = PolicyOut),
        (status = 400, description = "Empty key or text", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn put(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<PolicyRequest>,
) -> Result<(StatusCode, Json<PolicyOut>), ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), None, None)?;
    let key = req.key.trim().to_string();
    if key.is_empty() || key.len() > 128 || key.chars().any(char::is_control) {
        return Err(ApiError::Invalid("policy key must be 1 to 128 characters without control characters".into()));
    }
    if req.text.trim().is_empty() {
        return Err(ApiError::Invalid("policy text must not be empty".into()));
    }
    let policy =
        crate::blocking(&state, move |memory| Ok(memory.put_policy(&scope, &key, &req.text, req.value)?)).await?;
    Ok((StatusCode::CREATED, Json(PolicyOut::from(&policy))))
}
