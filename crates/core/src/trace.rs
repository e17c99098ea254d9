//! The trace envelope: what a recall or context call retrieved, in which mode, what it held
//! back and why, and how many tokens it cost — so any answer can be explained and replayed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::assemble::HeldBack;
use crate::id::{MemoryId, MessageId};
use crate::kind::Kind;
use crate::kind::text_enum;
use crate::recall::{ExactReason, RecallMode};
use crate::scope::Scope;
use crate::score::{ScoreParts, Tier};
use crate::verdict::Verdict;

text_enum!(
    /// Which engine call left the envelope.
    TraceOp, "trace op" {
        /// `recall`.
        Recall => "recall",
        /// `context`.
        Context => "context",
        /// `ingest` (and re-extraction): the verdicts of the batch.
        Ingest => "ingest",
    }
);

/// One retrieved item as the trace records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedItem {
    /// The memory.
    pub id: MemoryId,
    /// Path A reason, if exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactReason>,
    /// Path B score parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreParts>,
    /// Path B tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
}

/// One op of an ingest and what the gate made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedVerdict {
    /// The op's name (add, update, ...).
    pub op: String,
    /// The proposed kind.
    pub kind: Kind,
    /// The proposed content.
    pub content: String,
    /// The messages it came from.
    pub sources: Vec<MessageId>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The envelope of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEnvelope {
    /// Turn id: how `mnemo trace` and the API find it again.
    pub turn_id: String,
    /// Who asked.
    pub scope: Scope,
    /// Which call.
    pub op: TraceOp,
    /// When.
    pub at: DateTime<Utc>,
    /// The query or current message.
    pub query: String,
    /// Path B's retrieval mode (recall and context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RecallMode>,
    /// What came back, path A then path B.
    pub retrieved: Vec<TracedItem>,
    /// Memories placed in the block (context only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub surfaced: Vec<MemoryId>,
    /// Candidates dropped below the relevance floor, with their relevance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub below_floor: Vec<(MemoryId, f32)>,
    /// What assembly left out and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_back: Vec<HeldBack>,
    /// Why a degraded mode was used, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// Tokens of the block (context only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// Token budget (context only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Ingest: every proposed op and the gate's verdict on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<TracedVerdict>,
    /// Wall time of the call in microseconds, query embedding included.
    pub micros: u64,
    /// Of which: embedding the query.
    #[serde(default)]
    pub embed_micros: u64,
}
