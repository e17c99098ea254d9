//! The trace envelope: what a recall or context call retrieved, in which mode, what it held
//! back and why, and how many tokens it cost — so any answer can be explained and replayed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::assemble::{HeldBack, Shed};
use crate::id::{MemoryId, MessageId};
use crate::kind::text_enum;
use crate::kind::{Kind, Surface};
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
        /// A background extraction batch (LLM extractor, or its heuristic fallback).
        Extract => "extract",
        /// A background job that asked the chat model for a memo, summary, reflection or episode.
        Job => "job",
        /// A session's segment rotated: what was extracted first, what the bundle carried.
        Rotate => "rotate",
    }
);

/// One task done with the chat model inside a traced operation: what it was for, what it cost
/// and how it ended. The cost accounting of LLM extraction, memos and summaries: `mnemo show`
/// and `mnemo trace` print it, so the price of a batch is never a guess.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LlmCall {
    /// What the model was asked for: `extract`, `memo`, `summary`, `reflection`, `episode`.
    pub task: String,
    /// The model's id, e.g. `openai:gpt-4o-mini`.
    pub model: String,
    /// HTTP requests made, retries and format fallbacks included.
    pub calls: u32,
    /// Of which repeated after a transient failure.
    pub retries: u32,
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// Calls whose token counts are estimates (the server reported none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated_calls: u32,
    /// Wall time with the model, backoff waits included, in microseconds.
    pub micros: u64,
    /// `ok`, `partial` (some items unusable), `failed` (nothing usable).
    pub outcome: String,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Items of the reply that could not be used, with reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_errors: Vec<String>,
    /// Set when the heuristic extractor stood in for the model on this batch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback: bool,
    /// Which attempt at this batch it was (1 for the first).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempt: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

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
    /// The heuristic rule that proposed it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The surface the memory gets, and what set it ([`crate::op::Draft::surface_basis`]);
    /// absent in traces written before surfaces were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<TracedSurface>,
    /// The verdict.
    pub verdict: Verdict,
}

/// A proposed memory's surface and what set it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedSurface {
    /// The surface policy.
    pub policy: Surface,
    /// The rule, the step or the kind default that chose it, in words.
    pub by: String,
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
    /// What assembly placed below full detail to make room, and at which level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shed: Vec<Shed>,
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
    /// Work done with the chat model and what it cost (extraction batches, memos, summaries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub llm: Vec<LlmCall>,
    /// Wall time of the call in microseconds, query embedding included.
    pub micros: u64,
    /// Of which: embedding the query.
    #[serde(default)]
    pub embed_micros: u64,
}
