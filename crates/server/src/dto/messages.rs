//! `POST /v1/messages`: what a caller sends to be remembered, and the gate's account of it.
//!
//! The answer lists every proposed op with its verdict, so a caller can see why something was or
//! was not remembered without a second request to the trace.

use chrono::{DateTime, Utc};
use mnemo::{IngestReport, OpRecord};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{KindName, UserStateName, VerdictOut};

/// One message to append to a chat's trace.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageIn {
    /// Your id for the message; re-sending an id is a no-op. Derived from the role, `at` and the
    /// content if absent (identical turns of one batch each get their own): a batch sent again
    /// is a no-op when its messages carry ids or `at`; without either, each is a new turn.
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

/// One op an extractor proposed, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OpOut {
    /// `add`, `update`, `reinforce`, `contradict`, `close_loop`, `forget`, `amend`.
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

/// `GET /v1/messages`: which conversation to read.
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConversationQuery {
    /// The end user.
    pub user_id: String,
    /// The agent, if memories are kept per agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation.
    pub chat_id: String,
    /// How many of the latest messages, 1..=500 (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `GET /v1/messages`: a chat's latest messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationOut {
    /// Oldest first, PII redacted as stored.
    pub items: Vec<super::SourceMessageOut>,
}
