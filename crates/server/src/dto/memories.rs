//! `/v1/memories`: listing, reading, writing, editing and pinning memories by hand.
//!
//! A memory's full account (history, links, source messages, score) is one answer, so the "why
//! is this remembered" question never needs the trace.

use chrono::{DateTime, Utc};
use mnemo::MemoryDetail;
use mnemo::core::{HistoryEntry, Link, Memory as Row};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{KindName, ProvenanceOut, ScopeOut, ScorePartsOut, SourceMessageOut, VerdictOut};

/// `GET /v1/memories`: filters and page.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// The end user; without it only tenant- and agent-wide memories are visible.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation; needed to see chat-private memories.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// Kinds, comma-separated (`preference,fact`); all when absent.
    #[serde(default)]
    pub kind: Option<String>,
    /// Statuses, comma-separated (`active,stale`); all when absent.
    #[serde(default)]
    pub status: Option<String>,
    /// Case-insensitive substring of the content.
    #[serde(default)]
    pub text: Option<String>,
    /// Page size, 1..=500 (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Rows to skip.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// `POST /v1/memories`: a memory a person writes, judged by the same gate as extraction.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemoryRequest {
    /// The end user it belongs to. Without it the memory is tenant-wide (agent-wide with
    /// `agent_id`) and provisional until a person approves it at `/v1/candidates`.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation, for a chat-private memory (needs `user_id`).
    #[serde(default)]
    pub chat_id: Option<String>,
    /// Kind; policies are authored through `/v1/policies` instead.
    #[schema(value_type = KindName, example = "preference")]
    pub kind: String,
    /// The memory as a natural-language statement.
    pub content: String,
    /// Exact-lookup key (keyed preferences, profile slots).
    #[serde(default)]
    pub key: Option<String>,
    /// Value for the key.
    #[serde(default)]
    pub value: Option<String>,
    /// 0..=1; 1 when absent (a person said so).
    #[serde(default)]
    pub confidence: Option<f32>,
    /// 0..=1; 0.8 when absent.
    #[serde(default)]
    pub salience: Option<f32>,
    /// Pin it once written: always in the block, exempt from lifecycle.
    #[serde(default)]
    pub pinned: Option<bool>,
    /// Surface policy: `speak`, `adapt`, `avoid`, `continue`, `fact_check`; the kind's default
    /// when absent.
    #[serde(default)]
    pub surface: Option<String>,
    /// Due date (open loops).
    #[serde(default)]
    pub due_at: Option<DateTime<Utc>>,
    /// Hard expiry.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

/// One memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MemoryOut {
    /// Id.
    pub id: String,
    /// The partition that owns it.
    pub owner: ScopeOut,
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
    /// 0..=1.
    pub confidence: f32,
    /// 0..=1.
    pub salience: f32,
    /// Always included, exempt from lifecycle.
    pub pinned: bool,
    /// How the model should use it (`speak`, `adapt`, `avoid`, `continue`, `fact_check`).
    pub surface: String,
    /// `provisional`, `active`, `stale`, `archived`, `contradicted`, `superseded`, `erased`.
    pub status: String,
    /// For a superseded memory: the one that replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// `normal` or `sensitive`.
    pub sensitivity: String,
    /// Where it came from.
    pub provenance: ProvenanceOut,
    /// When written.
    pub created_at: DateTime<Utc>,
    /// When last changed.
    pub updated_at: DateTime<Utc>,
    /// Due date (open loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// From when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<DateTime<Utc>>,
    /// Until when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<DateTime<Utc>>,
    /// Hard expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// When last returned by recall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_accessed: Option<DateTime<Utc>>,
    /// Times returned by recall.
    pub access_count: u32,
    /// Distinct chats it was recalled or reinforced in.
    pub distinct_sessions: u32,
    /// Times re-asserted.
    pub reinforcements: u32,
}

impl From<&Row> for MemoryOut {
    fn from(m: &Row) -> Self {
        Self {
            id: m.id.to_string(),
            owner: ScopeOut::from(&m.owner),
            kind: m.kind.to_string(),
            content: m.content.clone(),
            key: m.key.clone(),
            value: m.value.clone(),
            confidence: m.confidence,
            salience: m.salience,
            pinned: m.pinned,
            surface: m.surface.to_string(),
            status: m.status.kind().to_string(),
            superseded_by: m.status.superseded_by().map(|id| id.to_string()),
            sensitivity: m.sensitivity.to_string(),
            provenance: ProvenanceOut::from(&m.provenance),
            created_at: m.created_at,
            updated_at: m.updated_at,
            due_at: m.due_at,
            valid_from: m.valid_from,
            valid_until: m.valid_until,
            expires_at: m.expires_at,
            last_accessed: m.last_accessed,
            access_count: m.access_count,
            distinct_sessions: m.distinct_sessions,
            reinforcements: m.reinforcements,
        }
    }
}

/// A page of memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MemoryList {
    /// Newest first.
    pub items: Vec<MemoryOut>,
    /// The page size used.
    pub limit: usize,
    /// Rows skipped.
    pub offset: usize,
    /// Offset of the next page, when this one was full: `limit` items, or fewer that came to
    /// 1 MiB of JSON (large key-value data), so the rest is fetched from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// One change in a memory's life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HistoryOut {
    /// When.
    pub at: DateTime<Utc>,
    /// `created`, `reinforced`, `superseded`, `contradicted`, `closed`, `forgotten`, `pinned`,
    /// `unpinned`, `edited`, `transitioned`, `erased`.
    pub event: String,
    /// Status before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<String>,
    /// Status after.
    pub to_status: String,
    /// Why, in words.
    pub reason: String,
    /// Messages that caused it.
    pub sources: Vec<String>,
}

impl From<&HistoryEntry> for HistoryOut {
    fn from(h: &HistoryEntry) -> Self {
        Self {
            at: h.at,
            event: h.event.to_string(),
            from_status: h.from_status.map(|s| s.kind().to_string()),
            to_status: h.to_status.kind().to_string(),
            reason: h.reason.clone(),
            sources: h.sources.iter().map(ToString::to_string).collect(),
        }
    }
}

/// A typed edge between two memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LinkOut {
    /// Source memory.
    pub from: String,
    /// Target memory.
    pub to: String,
    /// `contradicts`, `elaborates`, `caused_by`, `supersedes`, `derived_from`, `duplicate_of`,
    /// `resolves`.
    pub kind: String,
    /// When recorded.
    pub at: DateTime<Utc>,
}

impl From<&Link> for LinkOut {
    fn from(l: &Link) -> Self {
        Self { from: l.from.to_string(), to: l.to.to_string(), kind: l.kind.to_string(), at: l.at }
    }
}

/// Everything known about one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MemoryDetailOut {
    /// The memory.
    pub memory: MemoryOut,
    /// Its history, oldest first.
    pub history: Vec<HistoryOut>,
    /// Links from and to it.
    pub links: Vec<LinkOut>,
    /// The messages it came from.
    pub sources: Vec<SourceMessageOut>,
    /// Its query-independent score parts now.
    pub score: ScorePartsOut,
}

impl From<&MemoryDetail> for MemoryDetailOut {
    fn from(d: &MemoryDetail) -> Self {
        Self {
            memory: MemoryOut::from(&d.memory),
            history: d.history.iter().map(HistoryOut::from).collect(),
            links: d.links.iter().map(LinkOut::from).collect(),
            sources: d.sources.iter().map(SourceMessageOut::from).collect(),
            score: ScorePartsOut::from(&d.score),
        }
    }
}

/// `PATCH /v1/memories/{id}`: new content for a memory, judged by the gate; the edit supersedes
/// the old version (its history keeps what it said).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditMemoryRequest {
    /// The end user it belongs to.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation, for a chat-private memory.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// The new statement.
    pub content: String,
}

/// What `POST /v1/memories` decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AddMemoryOut {
    /// The gate's verdict.
    pub verdict: VerdictOut,
    /// The memory written or reinforced, as it is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryOut>,
}
