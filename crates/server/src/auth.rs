//! Who is calling: a tenant key (every /v1 route) or the admin key (key management, jobs).
//!
//! The tenant comes only from the key. Request bodies and queries name users, agents and chats
//! inside that tenant, never the tenant itself, so one tenant's key cannot address another's data.
//! The one exception is the admin key, which sees every tenant: on a tenant route it acts for the
//! tenant named in the [`ACT_AS_TENANT`] header (the console's admin view), and without one it is
//! no tenant's key (401).

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use mnemo::core::TenantId;

use crate::AppState;
use crate::error::ApiError;
use crate::keys::{digests_equal, hash_key};

/// The tenant of a valid, unrevoked tenant key, or the tenant the admin key names in
/// [`ACT_AS_TENANT`].
#[derive(Debug, Clone)]
pub struct Tenant(pub TenantId);

/// The header with which the admin key acts for one tenant on a tenant route. Only the admin key
/// may send it: with a tenant key it is refused, so a key never reaches past its own tenant.
pub const ACT_AS_TENANT: &str = "x-mnemo-tenant";

/// Proof that the request carried the admin key (`MNEMO_ADMIN_KEY`).
#[derive(Debug, Clone, Copy)]
pub struct Admin;

/// The tenant of a valid, unrevoked tenant key presented the ways the clients of mnemo's
/// compatibility surfaces send one: `Authorization: Bearer <key>` (OpenAI SDKs, mem0's
/// self-hosted server), `Authorization: Token <key>` (mem0's platform SDKs) or
/// `X-API-Key: <key>` (mem0's self-hosted server). The native routes take `Bearer` only.
#[derive(Debug, Clone)]
pub struct CompatTenant(pub TenantId);

/// The token of an `Authorization: <scheme> <token>` header whose scheme is one of `schemes`.
fn authorization<'a>(parts: &'a Parts, schemes: &[&str]) -> Option<&'a str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (schemes.iter().any(|s| scheme.eq_ignore_ascii_case(s)) && !token.is_empty()).then_some(token)
}

/// The bearer token of the request, if any.
fn bearer(parts: &Parts) -> Option<&str> {
    authorization(parts, &["bearer"])
}

/// Whether `key` is the admin key.
fn is_admin(state: &AppState, key: &str) -> bool {
    state.admin_hash.as_ref().is_some_and(|admin| digests_equal(admin, &hash_key(key)))
}

/// The tenant of `key`, or 401; 429 when the tenant is past its request rate
/// (`limits.requests_per_second`): one lookup for every way a tenant key is presented.
async fn tenant_of(state: &AppState, key: Option<&str>) -> Result<TenantId, ApiError> {
    let key = key.ok_or(ApiError::Unauthorized)?.to_string();
    let keys = state.keys.clone();
    let tenant = tokio::task::spawn_blocking(move || keys.tenant_for(&key))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    let tenant = tenant.ok_or(ApiError::Unauthorized)?;
    within_rate(state, tenant)
}

/// `tenant` unless it is past its request rate, then 429 with how long to wait.
fn within_rate(state: &AppState, tenant: TenantId) -> Result<TenantId, ApiError> {
    if let Some(rate) = &state.rate
        && let Err(wait) = rate.check(&tenant, std::time::Instant::now())
    {
        // Whole seconds, rounded up: `Retry-After` has no fractions, and 0 would invite a retry
        // that is refused again.
        let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        return Err(ApiError::RateLimited { retry_after_secs: retry_after_secs.max(1) });
    }
    Ok(tenant)
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let acting_for = parts.headers.get(ACT_AS_TENANT).map(|v| v.to_str().map(str::trim));
        match (bearer(parts), acting_for) {
            (Some(key), Some(named)) if is_admin(state, key) => {
                let named = named.map_err(|_| ApiError::Invalid(format!("{ACT_AS_TENANT} is not text")))?;
                let tenant = named.parse::<TenantId>()?;
                within_rate(state, tenant).map(Tenant)
            }
            (key, Some(_)) => {
                // A tenant key naming a tenant is refused even when it names its own: the header
                // is the admin key's alone.
                tenant_of(state, key).await?;
                Err(ApiError::Forbidden)
            }
            (key, None) => tenant_of(state, key).await.map(Tenant),
        }
    }
}

impl FromRequestParts<AppState> for CompatTenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let api_key = parts.headers.get("x-api-key").and_then(|v| v.to_str().ok()).map(str::trim);
        let key = authorization(parts, &["bearer", "token"]).or(api_key.filter(|k| !k.is_empty()));
        tenant_of(state, key).await.map(CompatTenant)
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = bearer(parts).ok_or(ApiError::Unauthorized)?;
        match is_admin(state, key) {
            true => Ok(Admin),
            // A tenant key on an admin route is known but not allowed; anything else is unknown.
            false => {
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
