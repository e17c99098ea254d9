//! Tenant policies: versioned rules authored by admins, loaded exhaustively on every turn.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::id::AgentId;
use crate::id::TenantId;

/// One version of a policy. Authoring the same key again closes this version and opens the next,
/// so the rule in force at any instant is always answerable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Tenant it binds.
    pub tenant: TenantId,
    /// Agent it binds, or every agent of the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentId>,
    /// Stable key, e.g. `refunds`.
    pub key: String,
    /// The rule in words, as the model will read it.
    pub text: String,
    /// Structured value for applications.
    #[serde(default)]
    pub value: serde_json::Value,
    /// 1 for the first version of a key, then 2, 3, ...
    pub version: u32,
    /// In force from.
    pub effective_from: DateTime<Utc>,
    /// In force until (exclusive), if closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_until: Option<DateTime<Utc>>,
}

impl Policy {
    /// Whether this version is in force at `at`.
    pub fn in_force(&self, at: DateTime<Utc>) -> bool {
        self.effective_from <= at && self.effective_until.is_none_or(|u| at < u)
    }
}
