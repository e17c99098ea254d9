//! The storage contract every backend implements.

use chrono::{DateTime, Utc};
use mnemo_core::trace::TraceEnvelope;
use mnemo_core::{
    HistoryEntry, HistoryEvent, Kind, Link, Memory, MemoryId, Message, MessageId, Policy, Scope, Status, StatusKind,
    TenantId, UserId,
};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Result;

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
    /// Pin or unpin.
    SetPinned {
        /// The memory.
        id: MemoryId,
        /// New value.
        pinned: bool,
    },
    /// A typed edge.
    Link(Link),
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
    /// user, every chat) matching any term, with a BM25-style score (higher is better), best
    /// first. Extraction keeps what is worth keeping; this finds what was merely said.
    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>>;

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
}
