//! Handlers, one module per resource. Each parses its request into engine types, runs the
//! engine on the blocking pool, and answers with the API's own types from [`crate::dto`].

pub(crate) mod admin;
pub(crate) mod candidates;
pub(crate) mod context;
pub(crate) mod documents;
pub(crate) mod health;
pub(crate) mod maintain;
pub(crate) mod memories;
pub(crate) mod memos;
pub(crate) mod messages;
pub(crate) mod policies;
pub(crate) mod recall;
pub(crate) mod traces;
pub(crate) mod users;

use mnemo::Scope;
use mnemo::core::TenantId;

use crate::error::ApiError;

/// The request's scope: the tenant from the key, the rest from the request.
pub(crate) fn scope(
    tenant: &TenantId,
    agent: Option<&str>,
    user: Option<&str>,
    chat: Option<&str>,
) -> Result<Scope, ApiError> {
    Ok(Scope::parse(tenant.as_str(), agent, user, chat)?)
}
