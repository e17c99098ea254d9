//! The API's own request and response types.
//!
//! The wire format is a contract of its own: engine types can grow fields without the API
//! changing by accident, and these types carry the OpenAPI schemas (`ToSchema`). Every request
//! type refuses unknown fields, so a typo is a 422 instead of a silently ignored option.

use chrono::{DateTime, Utc};
use mnemo::core::archive::Excerpt;
use mnemo::core::assemble::{BlockItem, HeldBack, Section};
use mnemo::core::score::ScoreParts;
use mnemo::core::trace::TraceEnvelope;
use mnemo::core::{
    HistoryEntry, Kind, Link, Memory as Row, Message, Policy, Provenance, RecallItem, Scope, UserState, Verdict,
};
use mnemo::{AppliedTransition, ContextResult, IngestReport, MaintainReport, MemoryDetail, OpRecord, RecallResult};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

pub mod documents;

// ---- vocabularies --------------------------------------------------------------------------

/// The `Kind` schema: an enum of every kind with each one's description, built from the kind
/// table so the document cannot drift from the code. Fields that hold a kind stay strings (a
/// request's kind is parsed leniently, `open-loop` too) and name this schema with `value_type`.
pub struct KindName;

impl PartialSchema for KindName {
    fn schema() -> RefOr<Schema> {
        let kinds: Vec<String> = Kind::ALL.iter().map(|k| format!("- `{k}`: {}", k.spec().description)).collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(Kind::ALL.iter().map(|k| k.as_str())))
            .description(Some(format!("What a memory is.\n\n{}", kinds.join("\n"))))
            .into()
    }
}

impl ToSchema for KindName {
    fn name() -> std::borrow::Cow<'static, str> {
        "Kind".into()
    }
}

// ---- requests ------------------------------------------------------------------------------

/// One message to append to a chat's trace.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageIn {
    /// Your id for the message; re-sending an id is a no-op. Derived from the content if absent.
    #[serde(default)]
    pub id: Option<String>,
    /// Who spoke: `user`, `assistant`, `system` or `tool`.
    #[schema(example = "user")]
    pub role: String,
    /// What was said.
    pub content: String,
    /// When it was said; now if absent.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// `POST /v1/messages`: append messages to a chat and extract memories from them.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessagesRequest {
    /// The end user.
    pub user_id: String,
    /// The bot or project, if memories are kept per agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation.
    pub chat_id: String,
    /// The messages, oldest first.
    pub messages: Vec<MessageIn>,
}

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

/// `POST /v1/context`: the token-budgeted memory block for the next turn.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// The end user.
    pub user_id: String,
    /// The agent, if any.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation.
    pub chat_id: String,
    /// The user's new message.
    pub message: String,
    /// Token budget for the block; the configured default if absent.
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// Who is asking, in query strings of memory routes (the tenant comes from the key).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ScopeQuery {
    /// The end user; without it only tenant- and agent-wide memories are visible.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation; needed to see chat-private memories.
    #[serde(default)]
    pub chat_id: Option<String>,
}

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
    /// The end user it belongs to; tenant- or agent-wide when absent.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation, for a chat-private memory.
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

/// `POST /v1/admin/keys`: a new key for a tenant.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// The tenant the key will act as.
    pub tenant: String,
}

/// `GET /v1/admin/keys`: filter.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct KeysQuery {
    /// Only this tenant's keys.
    #[serde(default)]
    pub tenant: Option<String>,
}

// ---- responses -----------------------------------------------------------------------------

/// Where a memory or message lives inside the caller's tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScopeOut {
    /// The agent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The user, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The chat, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
}

impl From<&Scope> for ScopeOut {
    fn from(s: &Scope) -> Self {
        Self {
            agent_id: s.agent.as_ref().map(ToString::to_string),
            user_id: s.user.as_ref().map(ToString::to_string),
            chat_id: s.chat.as_ref().map(ToString::to_string),
        }
    }
}

/// Where a memory came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProvenanceOut {
    /// Ids of the messages it was extracted from or reinforced by.
    pub sources: Vec<String>,
    /// The chat of those messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// `heuristic`, `llm`, `api` (written through this API), `job`.
    pub extractor: String,
    /// Version of the extractor.
    pub extractor_version: String,
    /// The heuristic rule that proposed it (`preference.likes`): why it was remembered. Absent
    /// for the model, the API and jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl From<&Provenance> for ProvenanceOut {
    fn from(p: &Provenance) -> Self {
        Self {
            sources: p.sources.iter().map(ToString::to_string).collect(),
            chat_id: p.chat.as_ref().map(ToString::to_string),
            extractor: p.extractor.clone(),
            extractor_version: p.extractor_version.clone(),
            rule: p.rule.clone(),
        }
    }
}

/// The parts of a memory's score, so a ranking can be explained.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScorePartsOut {
    /// Normalised lexical signal, if it matched lexically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<f32>,
    /// Cosine with the query, if vectors were available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f32>,
    /// Fused relevance.
    pub relevance: f32,
    /// Salience.
    pub salience: f32,
    /// 1 if pinned.
    pub pinned: f32,
    /// Open-loop urgency.
    pub urgency: f32,
    /// Confidence.
    pub confidence: f32,
    /// Recency.
    pub recency: f32,
    /// Decay strength multiplier.
    pub strength: f32,
    /// Relevance added because the memory was said within the period the query asks about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f32>,
    /// Final score.
    pub total: f32,
}

impl From<&ScoreParts> for ScorePartsOut {
    fn from(s: &ScoreParts) -> Self {
        Self {
            lexical: s.lexical,
            vector: s.vector,
            relevance: s.relevance,
            salience: s.salience,
            pinned: s.pinned,
            urgency: s.urgency,
            confidence: s.confidence,
            recency: s.recency,
            strength: s.strength,
            period: s.period,
            total: s.total,
        }
    }
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

/// What the gate decided about one op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VerdictOut {
    /// `written`, `superseded`, `contradicted`, `deduplicated`, `closed`, `forgotten`, `rejected`.
    pub verdict: String,
    /// The memory it is mainly about (the new one, the reinforced one, the closed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_id: Option<String>,
    /// The decision in words.
    pub reason: String,
    /// The full verdict, tagged by `verdict` (ids, dedup method, rejection reason).
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

impl From<&Verdict> for VerdictOut {
    fn from(v: &Verdict) -> Self {
        Self {
            verdict: v.name().to_string(),
            memory_id: v.memory().map(|id| id.to_string()),
            reason: v.to_string(),
            details: serde_json::to_value(v).unwrap_or_default(),
        }
    }
}

/// One op an extractor proposed, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OpOut {
    /// `add`, `update`, `reinforce`, `contradict`, `close_loop`, `forget`.
    pub op: String,
    /// Kind of the proposed memory.
    #[schema(value_type = KindName)]
    pub kind: String,
    /// The proposed memory (or a description of the target).
    pub content: String,
    /// Messages it was drawn from.
    pub sources: Vec<String>,
    /// What the gate decided.
    pub verdict: VerdictOut,
}

impl From<&OpRecord> for OpOut {
    fn from(r: &OpRecord) -> Self {
        Self {
            op: r.op.action.name().to_string(),
            kind: r.op.draft.kind.to_string(),
            content: r.op.draft.content.clone(),
            sources: r.op.sources.iter().map(ToString::to_string).collect(),
            verdict: VerdictOut::from(&r.verdict),
        }
    }
}

/// What `POST /v1/messages` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IngestOut {
    /// Messages appended.
    pub appended: usize,
    /// Messages already present (same id), ignored.
    pub duplicates: usize,
    /// Every proposed op with its verdict.
    pub ops: Vec<OpOut>,
    /// Set when embeddings were unavailable (dedup by hash only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// Trace turn holding these verdicts (absent when nothing was proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// Present when the user is not active (see `POST /v1/users/{user_id}/pause`): `paused`
    /// (the messages were kept in the conversation but nothing was extracted, and they are never
    /// quoted back) or `disabled` (nothing was stored; see `discarded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserStateName>,
    /// Messages not stored because the user is disabled.
    #[serde(default)]
    pub discarded: usize,
}

impl From<&IngestReport> for IngestOut {
    fn from(r: &IngestReport) -> Self {
        Self {
            appended: r.appended,
            duplicates: r.duplicates,
            ops: r.ops.iter().map(OpOut::from).collect(),
            degraded: r.degraded.clone(),
            turn_id: r.turn_id.clone(),
            user_state: r.user_state.map(UserStateName::from),
            discarded: r.discarded,
        }
    }
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
}

fn text_of<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
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
        }
    }
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

/// One line of a context section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BlockItemOut {
    /// Memory id, `policy:<key>@v<version>`, or a message id.
    pub id: String,
    /// Memory kind, `policy` or `message`.
    pub kind: String,
    /// The rendered line.
    pub text: String,
    /// Surface policy of a memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// Total score of a ranked memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// Tokens this line costs.
    pub tokens: usize,
    /// How much of a ranked memory or a past message the line carries: `l2` whole, `l1` the
    /// sentences that bear on the message, `l0` a gist; stepped down only to fit the budget,
    /// the whole text stays retrievable by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<&BlockItem> for BlockItemOut {
    fn from(i: &BlockItem) -> Self {
        Self {
            id: i.id.clone(),
            kind: i.kind.clone(),
            text: i.text.clone(),
            surface: i.surface.map(|s| s.to_string()),
            score: i.score.map(|s| s.total),
            tokens: i.tokens,
            detail: i.detail.map(|d| d.to_string()),
        }
    }
}

/// One section of the block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SectionOut {
    /// `pinned`, `policy`, `preference`, `avoid`, `memo`, `adapt`, `fact_check`, `speak`,
    /// `continue`, `excerpt` (past messages, verbatim), `recent`.
    pub name: String,
    /// The heading the model reads.
    pub title: String,
    /// Depends only on stored state, not on the message: safe to prompt-cache.
    pub cacheable: bool,
    /// Its lines.
    pub items: Vec<BlockItemOut>,
}

impl From<&Section> for SectionOut {
    fn from(s: &Section) -> Self {
        Self {
            name: s.name.to_string(),
            title: s.title.clone(),
            cacheable: s.cacheable,
            items: s.items.iter().map(BlockItemOut::from).collect(),
        }
    }
}

/// Something relevant left out of the block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeldBackOut {
    /// Its id.
    pub id: String,
    /// `budget` or `surfaced_recently`.
    pub reason: String,
}

impl From<&HeldBack> for HeldBackOut {
    fn from(h: &HeldBack) -> Self {
        Self { id: h.id.clone(), reason: h.reason.to_string() }
    }
}

/// What `POST /v1/context` assembled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ContextOut {
    /// The block as text, ready for the prompt.
    pub text: String,
    /// The same block as sections, in rendering order.
    pub sections: Vec<SectionOut>,
    /// Tokens of `text`.
    pub tokens: usize,
    /// The budget it was assembled for.
    pub budget: usize,
    /// What was left out, and why.
    pub held_back: Vec<HeldBackOut>,
    /// Trace turn of this call (empty when the user is disabled: nothing was recorded).
    pub turn_id: String,
    /// Retrieval signals used.
    pub mode: String,
    /// Present when the user is paused or disabled: the block holds policies and the chat's
    /// recent window only, no memories, excerpts or memos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserStateName>,
}

impl From<&ContextResult> for ContextOut {
    fn from(r: &ContextResult) -> Self {
        let b = &r.block;
        Self {
            text: b.text.clone(),
            sections: b.sections.iter().map(SectionOut::from).collect(),
            tokens: b.tokens,
            budget: b.budget,
            held_back: b.held_back.iter().map(HeldBackOut::from).collect(),
            turn_id: r.turn_id.clone(),
            mode: r.mode.to_string(),
            user_state: r.user_state.map(UserStateName::from),
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
    /// Offset of the next page, when this one was full.
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

/// A message a memory came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SourceMessageOut {
    /// Message id.
    pub id: String,
    /// Its chat and user.
    pub scope: ScopeOut,
    /// Who spoke.
    pub role: String,
    /// What was said (PII redacted).
    pub content: String,
    /// When.
    pub at: DateTime<Utc>,
}

impl From<&Message> for SourceMessageOut {
    fn from(m: &Message) -> Self {
        Self {
            id: m.id.to_string(),
            scope: ScopeOut::from(&m.scope),
            role: m.role.to_string(),
            content: m.content.clone(),
            at: m.at,
        }
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

/// What `POST /v1/users/{user_id}/clear` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClearOut {
    /// Memories archived (history kept; erase is what deletes).
    pub archived: usize,
}

/// `POST /v1/memos`: a memo a person writes for a chat.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemoRequest {
    /// The end user.
    pub user_id: String,
    /// The chat it is about.
    pub chat_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The memo: a few highlights worth keeping.
    pub text: String,
    /// Where it sits in the chat's timeline; now when absent.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// `PATCH /v1/memos/{id}`: new text for a memo.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditMemoRequest {
    /// The end user.
    pub user_id: String,
    /// The chat.
    pub chat_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The new text.
    pub text: String,
}

/// A chat's memos.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MemoList {
    /// Oldest first, as they read.
    pub items: Vec<MemoryOut>,
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

/// One lifecycle transition a maintenance run applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TransitionOut {
    /// The memory.
    pub id: String,
    /// Status before.
    pub from: String,
    /// Status after.
    pub to: String,
    /// Why.
    pub reason: String,
}

impl From<&AppliedTransition> for TransitionOut {
    fn from(t: &AppliedTransition) -> Self {
        Self { id: t.id.to_string(), from: t.from.to_string(), to: t.to.to_string(), reason: t.reason.clone() }
    }
}

/// What `POST /v1/maintain` changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MaintainOut {
    /// Memories examined.
    pub examined: usize,
    /// Transitions applied.
    pub transitions: Vec<TransitionOut>,
    /// Present when nothing was done because another server sharing the store was running
    /// maintenance at that moment (it held the job lock): why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl From<&MaintainReport> for MaintainOut {
    fn from(r: &MaintainReport) -> Self {
        Self {
            examined: r.examined,
            transitions: r.transitions.iter().map(TransitionOut::from).collect(),
            skipped: r.skipped.clone(),
        }
    }
}

/// A key, shown once at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedKey {
    /// The key: send as `Authorization: Bearer <key>`. It is not stored and cannot be shown again.
    pub key: String,
    /// Everything else about it.
    #[serde(flatten)]
    pub info: crate::keys::KeyInfo,
}

/// Keys, without the keys themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyList {
    /// Newest first.
    pub items: Vec<crate::keys::KeyInfo>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// Server version.
    pub version: String,
}

/// The receipt of an erasure: what was removed, with no content in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErasureOut {
    /// SHA-256 of tenant and user id; the only trace of the user the store keeps.
    pub subject: String,
    /// When the erasure happened.
    pub at: DateTime<Utc>,
    /// Rows removed per table.
    pub counts: std::collections::BTreeMap<String, u64>,
    /// SHA-256 over subject, time and counts, to quote as proof.
    pub digest: String,
}

impl From<mnemo::ErasureReceipt> for ErasureOut {
    fn from(r: mnemo::ErasureReceipt) -> Self {
        Self { subject: r.subject, at: r.at, counts: r.counts, digest: r.digest }
    }
}

/// A user's privacy switch, as the API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UserStateName {
    /// Conversations are stored, memories extracted and recalled (the default).
    Active,
    /// Memories are kept, but nothing is extracted from new messages and nothing is recalled.
    Paused,
    /// Nothing of the user's is stored, and nothing is recalled.
    Disabled,
}

impl From<UserState> for UserStateName {
    fn from(s: UserState) -> Self {
        match s {
            UserState::Active => UserStateName::Active,
            UserState::Paused => UserStateName::Paused,
            UserState::Disabled => UserStateName::Disabled,
        }
    }
}

/// `GET /v1/users/{user_id}` and the answer of every switch: where the user stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UserOut {
    /// The user.
    pub user_id: String,
    /// The privacy switch in force now.
    pub state: UserStateName,
}
