//! `/v1/policies`: tenant rules written by an admin, versioned per key.
//!
//! Every version comes back, not only the one in force, so a caller can audit what a model was
//! told at any past time.

use chrono::{DateTime, Utc};
use mnemo::core::Policy;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `GET /v1/policies`: which agent's policies.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PolicyQuery {
    /// The agent; without it only tenant-wide policies.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// `POST /v1/policies`: author a policy, or a new version of one.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyRequest {
    /// Binds one agent only; the whole tenant when absent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Stable key, e.g. `refunds`; authoring it again closes the current version.
    pub key: String,
    /// The rule in words, as the model will read it.
    pub text: String,
    /// Structured value for applications: any JSON value (null when absent).
    #[serde(default)]
    #[schema(value_type = Value)]
    pub value: serde_json::Value,
}

/// One version of a tenant policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PolicyOut {
    /// The agent it binds; every agent when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Stable key.
    pub key: String,
    /// The rule in words.
    pub text: String,
    /// Structured value: any JSON value, as authored (null when none was given).
    #[schema(value_type = Value)]
    pub value: serde_json::Value,
    /// 1, 2, 3, ... per key.
    pub version: u32,
    /// In force from.
    pub effective_from: DateTime<Utc>,
    /// In force until (exclusive), once a newer version exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_until: Option<DateTime<Utc>>,
}

impl From<&Policy> for PolicyOut {
    fn from(p: &Policy) -> Self {
        Self {
            agent_id: p.agent.as_ref().map(ToString::to_string),
            key: p.key.clone(),
            text: p.text.clone(),
            value: p.value.clone(),
            version: p.version,
            effective_from: p.effective_from,
            effective_until: p.effective_until,
        }
    }
}

/// Policy versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PolicyList {
    /// Every version of every policy binding the scope.
    pub items: Vec<PolicyOut>,
}
