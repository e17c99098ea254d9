//! `POST /v1/recall`: the two paths of retrieval (exact and ranked) and archival excerpts.
//!
//! Ranked items carry their score parts and tier, so a caller can explain or tune a ranking from
//! the answer alone.

use chrono::{DateTime, Utc};
use mnemo::RecallResult;
use mnemo::core::RecallItem;
use mnemo::core::archive::Excerpt;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{KindName, PolicyOut, ProvenanceOut, ScorePartsOut, SourceMessageOut, UserStateName, text_of};

/// `POST /v1/recall`: memories relevant to a query.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    /// The end user.
    pub user_id: String,
    /// The agent, if any.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation; without it, chat-private memories are not seen.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// What to recall for.
    pub query: String,
    /// How many ranked items (path B); the configured default if absent.
    #[serde(default)]
    pub top_k: Option<usize>,
}

/// One recalled memory, flattened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RecallItemOut {
    /// Memory id.
    pub id: String,
    /// Kind.
    #[schema(value_type = KindName)]
    pub kind: String,
    /// The memory as a statement.
    pub content: String,
    /// Exact-lookup key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Value for the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Total score (ranked items only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// The parts of the score (ranked items only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_parts: Option<ScorePartsOut>,
    /// Tier (ranked items only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Why it is always included (exact items only): `pinned`, `preference`, `protocol`,
    /// `due_soon`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<String>,
    /// How the model should use it.
    pub surface: String,
    /// Status.
    pub status: String,
    /// Pinned.
    pub pinned: bool,
    /// Where it came from.
    pub provenance: ProvenanceOut,
    /// When it was written.
    pub created_at: DateTime<Utc>,
}

impl From<&RecallItem> for RecallItemOut {
    fn from(i: &RecallItem) -> Self {
        let m = &i.memory;
        Self {
            id: m.id.to_string(),
            kind: m.kind.to_string(),
            content: m.content.clone(),
            key: m.key.clone(),
            value: m.value.clone(),
            score: i.score.map(|s| s.total),
            score_parts: i.score.as_ref().map(ScorePartsOut::from),
            tier: i.tier.as_ref().map(text_of),
            exact: i.exact.map(|e| e.to_string()),
            surface: m.surface.to_string(),
            status: m.status.kind().to_string(),
            pinned: m.pinned,
            provenance: ProvenanceOut::from(&m.provenance),
            created_at: m.created_at,
        }
    }
}

/// What `POST /v1/recall` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RecallOut {
    /// Trace turn of this call (see `GET /v1/traces/{turn_id}`).
    pub turn_id: String,
    /// Retrieval signals used: `hybrid`, `vector_only`, `lexical_only`, `substring`.
    pub mode: String,
    /// Path A: policies in force.
    pub policies: Vec<PolicyOut>,
    /// Path A: pinned memories, preferences, protocols, loops due soon.
    pub exact: Vec<RecallItemOut>,
    /// Path B: ranked, best first.
    pub items: Vec<RecallItemOut>,
    /// Archival recall: the user's own past messages that bear on the query, best first.
    pub excerpts: Vec<ExcerptOut>,
    /// Wall time in microseconds.
    pub micros: u64,
    /// Present when the user is paused or disabled: nothing about the user was searched (only
    /// policies come back); for a disabled user nothing was recorded and `turn_id` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserStateName>,
}

/// A past message found by archival recall, verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExcerptOut {
    /// The message, as it was said.
    pub message: SourceMessageOut,
    /// Fused relevance in 0..=1, with the period's lift.
    pub relevance: f32,
    /// Relevance added because the message was said within the period the query asks about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f32>,
}

impl From<&Excerpt> for ExcerptOut {
    fn from(e: &Excerpt) -> Self {
        Self { message: SourceMessageOut::from(&e.message), relevance: e.relevance, period: e.period }
    }
}

impl From<&RecallResult> for RecallOut {
    fn from(r: &RecallResult) -> Self {
        Self {
            turn_id: r.turn_id.clone(),
            mode: r.mode.to_string(),
            policies: r.policies.iter().map(PolicyOut::from).collect(),
            exact: r.exact.iter().map(RecallItemOut::from).collect(),
            items: r.items.iter().map(RecallItemOut::from).collect(),
            excerpts: r.excerpts.iter().map(ExcerptOut::from).collect(),
            micros: r.micros,
            user_state: r.user_state.map(UserStateName::from),
        }
    }
}
