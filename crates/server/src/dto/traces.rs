//! `GET /v1/traces/{turn_id}`: the record one call left behind.
//!
//! The summary fields are typed for the OpenAPI document; the full envelope rides along as JSON
//! so the trace format can grow without an API version.

use chrono::{DateTime, Utc};
use mnemo::core::trace::TraceEnvelope;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{ScopeOut, text_of};

/// A stored trace envelope: everything one recall, context or ingest call did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TraceOut {
    /// The turn.
    pub turn_id: String,
    /// `recall`, `context` or `ingest`.
    pub op: String,
    /// Who asked.
    pub scope: ScopeOut,
    /// When.
    pub at: DateTime<Utc>,
    /// The query or message.
    pub query: String,
    /// Retrieval signals used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Why retrieval degraded, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// Memory ids placed in the block.
    pub surfaced: Vec<String>,
    /// Block tokens and budget (context calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// Token budget (context calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Wall time in microseconds.
    pub micros: u64,
    /// The full envelope: retrieved items with scores, below-floor and held-back ids, verdicts.
    #[schema(value_type = Object)]
    pub envelope: serde_json::Value,
}

impl From<&TraceEnvelope> for TraceOut {
    fn from(t: &TraceEnvelope) -> Self {
        let mut envelope = serde_json::to_value(t).unwrap_or_default();
        // The tenant is the caller's own and implied by the key; keep the wire tenant-free.
        if let Some(scope) = envelope.get_mut("scope").and_then(|s| s.as_object_mut()) {
            scope.remove("tenant");
        }
        Self {
            turn_id: t.turn_id.clone(),
            op: text_of(&t.op),
            scope: ScopeOut::from(&t.scope),
            at: t.at,
            query: t.query.clone(),
            mode: t.mode.map(|m| m.to_string()),
            degraded: t.degraded.clone(),
            surfaced: t.surfaced.iter().map(ToString::to_string).collect(),
            tokens: t.tokens,
            budget: t.budget,
            micros: t.micros,
            envelope,
        }
    }
}

/// `GET /v1/traces`: whose past calls to list.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TracesQuery {
    /// The end user.
    pub user_id: String,
    /// The agent, if the calls named one.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Only this conversation's calls; every chat of the user when absent.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// How many of the latest, 1..=500 (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `GET /v1/traces`: a user's latest trace envelopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TraceList {
    /// Newest first.
    pub items: Vec<TraceOut>,
}
