//! The durable work queue behind LLM extraction and the chat jobs (memos, episodes): the types
//! the [`Queue`] trait speaks.
//!
//! Every message handed to background work gets one queue row, keyed by tenant and message id,
//! written before `ingest` returns: a crash loses no acknowledged message, and re-sending a
//! message never queues it twice. A row is `pending` until a batch extracts it, `fallback` when
//! the model failed and the heuristic extractor stood in (the model is asked again later), and
//! `done` after that. Each chat has one progress row with the counts, its memo cursor and a
//! claim, so of several workers only one runs a chat's batch at a time.

use chrono::{DateTime, Utc};
use mnemo_core::{MemoryId, Message, MessageId, Scope};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// Where a queued message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    /// Waiting for its first extraction.
    Pending,
    /// The model failed on its batch; the heuristic extractor stood in and the model is asked
    /// again when the retry is due.
    Fallback,
    /// Extracted (or given up on after the last retry): nothing left to do.
    Done,
}

impl QueueState {
    /// The stable text form stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Pending => "pending",
            QueueState::Fallback => "fallback",
            QueueState::Done => "done",
        }
    }
}

impl std::str::FromStr for QueueState {
    type Err = StoreError;

    fn from_str(s: &str) -> std::result::Result<Self, StoreError> {
        match s {
            "pending" => Ok(QueueState::Pending),
            "fallback" => Ok(QueueState::Fallback),
            "done" => Ok(QueueState::Done),
            other => Err(StoreError::Corrupt { what: "queue state", detail: other.to_string() }),
        }
    }
}

/// One queued message with its bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    /// The message.
    pub message: Message,
    /// Its state.
    pub state: QueueState,
    /// Extraction attempts with the model so far.
    pub attempts: u32,
    /// When the next attempt is due (fallback rows).
    pub retry_at: Option<DateTime<Utc>>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Memories the heuristic fallback wrote for its batch: what a successful retry replaces.
    pub fallback_memories: Vec<MemoryId>,
}

/// How a batch ended, recorded for all its messages in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    /// Extracted: nothing more to do for these messages.
    Done,
    /// The model failed and the heuristic stood in; ask the model again at `retry_at`.
    Fallback {
        /// Attempts made so far, this one included.
        attempts: u32,
        /// When to try again.
        retry_at: DateTime<Utc>,
        /// What went wrong, in words.
        error: String,
        /// Memories the fallback wrote (kept across retries: a retry adds its own).
        memories: Vec<MemoryId>,
    },
    /// The model failed on the last allowed attempt: the fallback's memories stay, the
    /// messages leave the queue, the error is kept on the chat.
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last error.
        error: String,
    },
}

/// One chat's background work, as the worker sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatProgress {
    /// The chat (tenant, agent, user, chat).
    pub scope: Scope,
    /// Messages registered with background work, in all.
    pub messages: usize,
    /// Of which waiting for their first extraction.
    pub pending: usize,
    /// Of which extracted by the fallback and owed a retry with the model.
    pub retrying: usize,
    /// The earliest retry due, if any.
    pub retry_at: Option<DateTime<Utc>>,
    /// When the last message was registered: how long the chat has been idle.
    pub last_message_at: DateTime<Utc>,
    /// Messages already covered by memos (or memo gaps), in insertion order.
    pub memo_covered: usize,
    /// Memo ranges that failed and were left as gaps.
    pub memo_gaps: usize,
    /// The latest extraction or memo failure, for `mnemo show` and operators.
    pub last_error: Option<String>,
    /// Messages the episode check has looked at.
    pub episode_checked: usize,
}

impl ChatProgress {
    /// Messages not yet covered by a memo (or a memo gap).
    pub fn uncovered(&self) -> usize {
        self.messages.saturating_sub(self.memo_covered)
    }
}

/// A chat's cursor that only moves forward: memos, episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatCursor {
    /// Messages covered by memos (and gaps).
    Memo,
    /// Messages looked at by the episode check.
    Episode,
}

/// The durable background-work queue and the chats' job cursors (see the module header).
pub trait Queue {
    /// Registers messages of the scope's chat with background work, in one transaction: each id
    /// new to the queue gets a row — `pending` when `extract`, else `done` (the heuristic ran
    /// inline) — and counts toward the chat's memos. Ids registered before keep their state, so
    /// re-sending a message never queues it twice; ids not in the chat's trace are skipped.
    /// Returns how many were new. The engine calls it before `ingest` returns, so an
    /// acknowledged message is never lost to extraction.
    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize>;

    /// Chats with background work, across tenants, least recently active first: extraction
    /// pending, a retry due by `now`, at least `memo_every` messages without a memo, or activity
    /// since `active_since` (for summaries and episodes). What the worker walks.
    fn chats_with_work(
        &self,
        now: DateTime<Utc>,
        memo_every: usize,
        active_since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ChatProgress>>;

    /// One chat's background-work progress, if any message of it was registered.
    fn chat_progress(&self, scope: &Scope) -> Result<Option<ChatProgress>>;

    /// Claims the chat until `until` unless another worker's claim is still running at `now`, so
    /// of several workers (servers, `mnemo maintain`, `mnemo ingest`) one runs a chat's batches;
    /// a crashed worker's claim simply expires. Returns whether this caller got it.
    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool>;

    /// Gives a claim back before it expires.
    fn release_chat(&self, scope: &Scope) -> Result<()>;

    /// The chat's oldest queued messages in `state` (fallback rows only once their retry is due
    /// by `due_by`), at most `limit`, in queue order: the next batch.
    fn queued(&self, scope: &Scope, state: QueueState, due_by: DateTime<Utc>, limit: usize) -> Result<Vec<Queued>>;

    /// Records how a batch of the chat ended, for all its messages and the chat's counts, in one
    /// transaction. Applied after the batch's ops, so a crash in between re-runs the batch,
    /// which the write path recognises as a replay.
    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &Settlement) -> Result<()>;

    /// The chat's registered messages in registration order from position `offset`, at most
    /// `limit`: the ranges memos summarise.
    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>>;

    /// Moves a chat's cursor from `from` to `to` messages only if it still stands at `from`
    /// (compare and set: two workers never write the same memo); `gap` records why the range got
    /// no memo. Returns whether it moved.
    fn advance_cursor(
        &self,
        scope: &Scope,
        cursor: ChatCursor,
        from: usize,
        to: usize,
        gap: Option<&str>,
    ) -> Result<bool>;

    /// The scope's user's messages with this agent, every chat, with `from <= at < to`, oldest
    /// first, at most `limit`: what daily, weekly and monthly summaries read.
    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>>;
}
