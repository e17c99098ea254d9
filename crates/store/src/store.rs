//! The storage contract every backend implements.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{
    HistoryEntry, HistoryEvent, Kind, Link, Memory, MemoryId, Message, MessageId, Policy, Scope, Status, StatusKind,
    TenantId, UserId, UserState,
};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::lock::JobLock;
use crate::queue::{ChatCursor, ChatProgress, QueueState, Queued, Settlement};
use crate::transfer::{Counts, Importer, Record};

/// A vector with the model that produced it; vectors of different models are never compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Embedder id, e.g. "local:all-MiniLM-L6-v2".
    pub model: String,
    /// L2-normalised vector.
    pub vector: Vec<f32>,
}

/// One change inside a [`ChangeSet`]. History rows are written by the store for each change,
/// so no change can happen without leaving its trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A new memory (history: created, with the verdict as reason).
    Insert {
        /// The row.
        memory: Memory,
        /// Its vector, if an embedder was available.
        embedding: Option<Embedding>,
        /// Why it was written.
        reason: String,
    },
    /// A status transition (superseded, contradicted, closed, forgotten, lifecycle).
    SetStatus {
        /// The memory.
        id: MemoryId,
        /// The new status.
        status: Status,
        /// What kind of change.
        event: HistoryEvent,
        /// Why.
        reason: String,
        /// Messages that caused it.
        sources: Vec<MessageId>,
    },
    /// The memory was re-asserted.
    Reinforce {
        /// The memory.
        id: MemoryId,
        /// Messages that re-asserted it (added to its provenance).
        sources: Vec<MessageId>,
        /// The session (chat) it happened in, for the spacing signal.
        session: Option<String>,
        /// Why.
        reason: String,
    },
    /// Stores a memory's vector after the fact: one written while the embedder was down, or
    /// one of another model after the embedder changed. No history row: what the memory says,
    /// and its status, are unchanged.
    SetEmbedding {
        /// The memory.
        id: MemoryId,
        /// Its vector (replaces any it had).
        embedding: Embedding,
    },
    /// Pin or unpin.
    SetPinned {
        /// The memory.
        id: MemoryId,
        /// New value.
        pinned: bool,
    },
    /// A typed edge.
    Link(Link),
    /// Takes messages out of archival recall, for good: the source of a forgotten or corrected
    /// memory, a boundary, a request to forget. They stay in the trace (audit, replay) but are
    /// never quoted back as excerpts. Ids unknown to the tenant are ignored.
    Withhold {
        /// The messages.
        messages: Vec<MessageId>,
    },
}

/// Changes applied atomically: readers see all of them or none.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeSet {
    /// The tenant every change belongs to; changes naming another tenant's memory fail.
    pub tenant: TenantId,
    /// The engine's clock for this apply.
    pub at: DateTime<Utc>,
    /// The changes, in order.
    pub changes: Vec<Change>,
}

/// The content-free record an erasure leaves behind: that it happened, when, and how much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeletionEvent {
    /// SHA-256 of tenant and user id: lets an operator confirm an erasure of a known user without
    /// the store keeping the id itself.
    pub subject: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Digest of the receipt (subject, time, counts), for the requester's records.
    pub digest: String,
}

/// Filters for listing memories.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListFilter {
    /// Only these kinds (all when empty).
    #[serde(default)]
    pub kinds: Vec<Kind>,
    /// Only these statuses (all when empty).
    #[serde(default)]
    pub statuses: Vec<StatusKind>,
    /// Case-insensitive substring of the content.
    #[serde(default)]
    pub text: Option<String>,
    /// Page size (0 = no limit).
    #[serde(default)]
    pub limit: usize,
    /// Rows to skip.
    #[serde(default)]
    pub offset: usize,
}

/// Durable memory storage. Synchronous: every call is short and CPU/disk bound; async servers
/// call it from a blocking pool.
pub trait Store: Send + Sync {
    // ---- trace -------------------------------------------------------------------------------

    /// Appends messages, ignoring ids already present in the tenant. Returns, per message,
    /// whether it was new. One transaction.
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>>;

    /// The latest `limit` messages of the scope's chat, oldest first.
    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>>;

    /// Messages by id within a tenant (for provenance display).
    fn messages(&self, tenant: &TenantId, ids: &[MessageId]) -> Result<Vec<Message>>;

    /// Attaches vectors to stored messages of a tenant (unknown ids are skipped): the semantic
    /// half of archival recall. A message without a vector is still found lexically.
    fn embed_messages(&self, tenant: &TenantId, vectors: &[(MessageId, Embedding)]) -> Result<()>;

    /// Archival recall, lexical half: the scope's user's own messages (same tenant, agent and
    /// user; only the scope's chat when it names one, every chat otherwise) matching any term,
    /// with a BM25-style score (higher is better), best first. Extraction keeps what is worth
    /// keeping; this finds what was merely said. Withheld messages are never found.
    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>>;

    /// The messages right around each of `ids` in its own chat: up to `span` before it and
    /// `span` after, each paired with the id it neighbours, never a withheld one. A hit's
    /// neighbours hold the question it answers or the answer it got (archival recall's
    /// neighbourhood). Unknown ids are skipped.
    fn adjacent_messages(&self, tenant: &TenantId, ids: &[MessageId], span: usize)
    -> Result<Vec<(MessageId, Message)>>;

    /// Archival recall, semantic half: exact cosine over the same messages' vectors of `model`,
    /// best first.
    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MessageId, f32)>>;

    // ---- memories: reads ---------------------------------------------------------------------

    /// One memory of the tenant, any status.
    fn get(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Memory>>;

    /// Several memories of the tenant, visible to `scope`, in the order of `ids` (missing skipped).
    fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>>;

    /// Memories visible to the scope, newest first.
    fn list(&self, scope: &Scope, filter: &ListFilter) -> Result<Vec<Memory>>;

    /// Every memory visible to the scope with this content hash, any status, oldest first: the
    /// gate's exact-dedup half, and how a replayed message is recognised.
    fn by_hash(&self, scope: &Scope, hash: &str) -> Result<Vec<Memory>>;

    /// The active memory of this kind and key owned exactly by `owner`.
    fn find_by_key(&self, owner: &Scope, kind: Kind, key: &str) -> Result<Option<Memory>>;

    /// Path A's raw material: active memories visible to the scope that are pinned, of an exact
    /// kind (preference, protocol), or open loops due by `due_by`.
    fn exact_candidates(&self, scope: &Scope, due_by: DateTime<Utc>) -> Result<Vec<Memory>>;

    /// Lexical search over active memories visible to the scope: ids with a BM25 score
    /// (higher is better), best first.
    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>>;

    /// Exact cosine search over active memories visible to the scope with vectors of `model`,
    /// best first.
    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>>;

    /// Cosine of specific memories with the query (for candidates found lexically).
    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>>;

    /// Last resort of the cascade: active memories visible to the scope containing any term.
    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>>;

    /// A page of every memory in the store, across tenants, whose status is one of `statuses`,
    /// ordered by id after `after`: how jobs walk the whole store resumably.
    fn scan(&self, statuses: &[StatusKind], after: Option<MemoryId>, limit: usize) -> Result<Vec<Memory>>;

    /// The append-only history of a memory.
    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>>;

    /// Links from or to a memory.
    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>>;

    // ---- memories: writes --------------------------------------------------------------------

    /// Applies a change set in one transaction.
    fn apply(&self, changes: &ChangeSet) -> Result<()>;

    // ---- privacy ----------------------------------------------------------------------------

    /// Erases everything of one user of a tenant, in one transaction: memories with their
    /// vectors, lexical entries, links, history and sessions; messages; traces — across all
    /// agents and chats. Keeps only a content-free deletion event. Backends then purge what the
    /// files could still hold (free pages, logs). Returns rows deleted per table.
    fn erase_user(&self, tenant: &TenantId, user: &UserId, event: &DeletionEvent) -> Result<BTreeMap<String, u64>>;

    // ---- policies ----------------------------------------------------------------------------

    /// Authors a policy: closes the version in force for the same tenant, agent and key and
    /// writes the next version. Returns the stored version.
    fn put_policy(&self, policy: &Policy) -> Result<Policy>;

    /// Every policy version binding the scope's tenant and agent (in force or not).
    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>>;

    // ---- traces ------------------------------------------------------------------------------

    /// Records one recall or context call in one transaction: its envelope, and the access
    /// stats of the memories it returned (`accessed`) and placed in a block (`envelope.surfaced`).
    /// The envelope's chat is the session for the spacing signal.
    fn record_turn(&self, envelope: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()>;

    /// One envelope by turn id, within a tenant.
    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>>;

    /// Memories placed in context blocks by the last `turns` context calls of the scope's chat.
    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>>;

    // ---- jobs and whole-store copies ---------------------------------------------------------

    /// Takes the lock of job `name` for as long as the returned guard lives, or `None` when
    /// another handle holds it, in this process or another server sharing the store: several
    /// servers each try, and one runs the job. Names are independent of each other.
    fn try_job_lock(&self, name: &str) -> Result<Option<JobLock>>;

    /// Streams every row of the store to `visit`, table by table in [`TABLES`](crate::transfer::TABLES) order (rows
    /// after the rows they refer to), from one consistent snapshot: what `mnemo copy` moves to
    /// another backend. Reads across tenants; stops at the first error of `visit`.
    fn export(&self, visit: &mut dyn FnMut(Record) -> Result<()>) -> Result<()>;

    /// Starts an import of exported records, refusing a store that holds any row already (a
    /// copy keeps ids, history and versions exactly, so it cannot merge into existing data).
    /// Records are written verbatim (no history rows are added) and derived projections are
    /// rebuilt by this backend.
    fn import(&self) -> Result<Box<dyn Importer + '_>>;

    /// Rows per table of [`TABLES`](crate::transfer::TABLES) across all tenants, so a copy can be verified table by table.
    fn counts(&self) -> Result<Counts>;

    /// Prepares for writing many rows at once (`mnemo copy`, benchmarks): a backend may drop
    /// indexes that are far cheaper to build once over the loaded rows than to maintain row by
    /// row (PostgreSQL's HNSW indexes: loads run about six times faster without them). Reads
    /// stay correct meanwhile, only slower. [`Store::finish_bulk_load`] builds them again; a
    /// load that dies before it leaves them to the next open of the store. Default: nothing to
    /// drop.
    fn begin_bulk_load(&self) -> Result<()> {
        Ok(())
    }

    /// Builds again what [`Store::begin_bulk_load`] dropped (idempotent).
    fn finish_bulk_load(&self) -> Result<()> {
        Ok(())
    }

    /// The stored vector of one memory of the tenant, if it has one: how a copy is verified
    /// byte for byte, where searches would only show that some vector is there.
    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Embedding>>;

    // ---- background work: the extraction queue and chat jobs ---------------------------------

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

    // ---- users: privacy switches -------------------------------------------------------------

    /// The privacy switch of one user of a tenant: [`UserState::Active`] when nobody set one
    /// (or after an erasure, which deletes it). Read on every ingest and recall, so it is one
    /// keyed lookup.
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState>;

    /// Sets the switch of one user of a tenant as of `at`. Setting `Active` removes the row, so
    /// a user who was never switched and one switched back look the same.
    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()>;

    // ---- retention: sweeps of the trace ------------------------------------------------------

    /// Deletes, across tenants, trace envelopes of operation `op` recorded before `before`,
    /// oldest first, at most `limit` in one transaction; returns how many went. These are logs
    /// that explain past answers, not memories: nothing a memory cites is touched (access stats
    /// live on the memories themselves). Each tenant's rows go by their own age.
    fn sweep_traces(&self, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64>;
}
