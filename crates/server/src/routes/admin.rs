//! `/v1/admin/keys`: create, list and revoke tenant API keys with the admin key.

use axum::extract::State;
use axum::http::StatusCode;

use crate::AppState;
use crate::auth::Admin;
use crate::dto::{CreateKeyRequest, CreatedKey, KeyList, KeysQuery};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};
use crate::keys::KeyError;

fn key_error(e: KeyError) -> ApiError {
    match e {
        KeyError::Tenant(core) => ApiError::from(core),
        other => ApiError::internal(other),
    }
}

/// Creates a key for a tenant; the response is the only time the key is shown.
#[utoipa::path(
    post, path = "/v1/admin/keys", tag = "admin",
    request_body = CreateKeyRequest,
    responses(
        (status = 201, description = "The new key, shown once", body = CreatedKey),
        (status = 400, description = "Invalid tenant id", body = ErrorBody),
        (status = 401, description = "Missing or invalid admin key", body = ErrorBody),
        (status = 403, description = "A tenant key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn create_key(
    State(state): State<AppState>,
    _admin: Admin,
    Json(req): Json<CreateKeyRequest>,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let keys = state.keys.clone();
    let (key, info) = tokio::task::spawn_blocking(move || keys.create(&req.tenant))
        .await
        .map_err(ApiError::internal)?
        .map_err(key_error)?;
    Ok((StatusCode::CREATED, Json(CreatedKey { key, info })))
}

/// Lists keys (never the keys themselves), optionally of one tenant.
#[utoipa::path(
    get, path = "/v1/admin/keys", tag = "admin",
    params(KeysQuery),
    responses(
        (status = 200, description = "Keys, newest first", body = KeyList),
        (status = 401, description = "Missing or invalid admin key", body = ErrorBody),
        (status = 403, description = "A tenant key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list_keys(
    State(state): State<AppState>,
    _admin: Admin,
    Query(q): Query<KeysQuery>,
) -> Result<Json<KeyList>, ApiError> {
    let keys = state.keys.clone();
    let items = tokio::task::spawn_blocking(move || keys.list(q.tenant.as_deref()))
        .await
        .map_err(ApiError::internal)?
        .map_err(key_error)?;
    Ok(Json(KeyList { items }))
}

/// Revokes a key by its public prefix; requests with it answer 401 from then on.
#[utoipa::path(
    delete, path = "/v1/admin/keys/{prefix}", tag = "admin",
    params(("prefix" = String, Path, description = "The key's public prefix")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "Missing or invalid admin key", body = ErrorBody),
        (status = 403, description = "A tenant key", body = ErrorBody),
        (status = 404, description = "No active key with that prefix", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn revoke_key(
    State(state): State<AppState>,
    _admin: Admin,
    Path(prefix): Path<String>,
) -> Result<StatusCode, ApiError> {
    let keys = state.keys.clone();
    let p = prefix.clone();
    let revoked =
        tokio::task::spawn_blocking(move || keys.revoke(&p)).await.map_err(ApiError::internal)?.map_err(key_error)?;
    if revoked { Ok(StatusCode::NO_CONTENT) } else { Err(ApiError::NotFound(format!("no active key {prefix}"))) }
}
