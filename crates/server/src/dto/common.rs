//! The wire vocabulary several resources share: who is asking (the scope), where a memory came
//! from, how it was scored, what the gate decided, the messages it quotes and a user's switch.
//!
//! They live apart from any one resource so that a memory looks the same in every answer that
//! carries one: a field added here reaches ingest, recall, the memory routes and MCP alike.

use chrono::{DateTime, Utc};
use mnemo::core::score::ScoreParts;
use mnemo::core::{Kind, Message, Provenance, Scope, UserState, Verdict};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

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

/// An engine enum as the one word its serde form spells (`"hybrid"`, `"recall"`): the wire
/// keeps engine spellings without a second table of names.
pub(crate) fn text_of<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
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
