//! Who is calling: a tenant key (every /v1 route) or the admin key (key management, jobs).
//!
//! The tenant comes only from the key. Request bodies and queries name users, agents and chats
//! inside that tenant, never the tenant itself, so one tenant's key cannot address another's data.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use mnemo::core::TenantId;

use crate::AppState;
use crate::error::ApiError;
use crate::keys::{digests_equal, hash_key};

/// The tenant of a valid, unrevoked tenant key.
#[derive(Debug, Clone)]
pub struct Tenant(pub TenantId);

/// Proof that the request carried the admin key (`MNEMO_ADMIN_KEY`).
#[derive(Debug, Clone, Copy)]
pub struct Admin;

/// The bearer token of the request, if any.
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = bearer(parts).ok_or(ApiError::Unauthorized)?.to_string();
        let keys = state.keys.clone();
        let tenant = tokio::task::spawn_blocking(move || keys.tenant_for(&key))
            .await
            .map_err(ApiError::internal)?
            .map_err(ApiError::internal)?;
        tenant.map(Tenant).ok_or(ApiError::Unauthorized)
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = bearer(parts).ok_or(ApiError::Unauthorized)?;
        match &state.admin_hash {
            Some(admin) if digests_equal(admin, &hash_key(key)) => Ok(Admin),
            // A tenant key on an admin route is known but not allowed; anything else is unknown.
            _ => {
                let keys = state.keys.clone();
                let key = key.to_string();
                let known = tokio::task::spawn_blocking(move || keys.tenant_for(&key))
                    .await
                    .map_err(ApiError::internal)?
                    .map_err(ApiError::internal)?;
                Err(if known.is_some() { ApiError::Forbidden } else { ApiError::Unauthorized })
            }
        }
    }
}
