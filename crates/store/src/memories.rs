//! Memories: the change sets every write is made of, and the reads by id, scope, hash and key.
//!
//! History rows are never written by callers: the store writes one beside every change, so no
//! change can happen without leaving its trace.

use chrono::{DateTime, Utc};
use mnemo_core::safety::Domains;
use mnemo_core::{
    HistoryEntry, HistoryEvent, Kind, Link, Memory, MemoryId, MessageId, Scope, Status, StatusKind, TenantId,
};
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
    /// Replaces a client's key-value data on a memory (mem0's `metadata`). No history row: what
    /// the memory says, and its status, are unchanged.
    SetMetadata {
        /// The memory.
        id: MemoryId,
        /// The new data; `None` removes it.
        metadata: Option<mnemo_core::Metadata>,
    },
    /// A typed edge.
    Link(Link),
    /// Takes messages out of archival recall, for good: the source of a forgotten or corrected
    /// memory, a boundary, a request to forget. They stay in the trace (audit, replay) but are
    /// never quoted back as excerpts. Ids unknown to the owner are ignored.
    Withhold {
        /// Whose messages: the tenant, user and (when it names one) chat the ids belong to. Ids
        /// are unique per user and chat only, so the user keeps another user's message with the
        /// same id out of reach; a scope without a user reaches every user of the tenant.
        owner: Scope,
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

/// Memories by id, by scope, by hash and by key, their history and links, and the one write
/// path: a [`ChangeSet`] applied atomically, with history rows written by the store itself.
pub trait Memories {
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

    /// Path A's safety half: active memories visible to the scope that state a constraint
    /// bearing on any of `domains` (an allergy, for a recipe), newest first, at most `limit`.
    /// Each row's domains were kept when it was written (`safety::constraint_domains` of its
    /// content), so this is an index lookup however many memories the user has.
    fn constraints(&self, scope: &Scope, domains: Domains, limit: usize) -> Result<Vec<Memory>>;

    /// A page of every memory in the store, across tenants, whose status is one of `statuses`,
    /// ordered by id after `after`: how jobs walk the whole store resumably.
    fn scan(&self, statuses: &[StatusKind], after: Option<MemoryId>, limit: usize) -> Result<Vec<Memory>>;

    /// The distinct owners (agent, user and chat partitions) of the tenant's memories that are
    /// still in use (provisional, active or stale), sorted: whom a tenant holds memories for,
    /// for a listing of its entities without reading the memories themselves.
    fn owners(&self, tenant: &TenantId) -> Result<Vec<Scope>>;

    /// The append-only history of a memory.
    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>>;

    /// Links from or to a memory.
    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>>;

    /// Applies a change set in one transaction.
    fn apply(&self, changes: &ChangeSet) -> Result<()>;
}

/// `found` in the order of `ids` (what [`Memories::get_many`] promises), ids not found skipped.
pub(crate) fn in_order(mut found: Vec<Memory>, ids: &[MemoryId]) -> Vec<Memory> {
    let pos: std::collections::HashMap<MemoryId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    found.sort_by_key(|m| pos.get(&m.id).copied().unwrap_or(usize::MAX));
    found
}
