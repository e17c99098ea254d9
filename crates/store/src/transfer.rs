//! Moving a whole store between backends: the [`Record`] every backend exports and imports.
//!
//! A record is one stored row in domain terms, carrying everything the row holds (ids,
//! timestamps, statuses, counters, the tenant) so an import writes it back verbatim, without
//! the history rows, version bumps or status logic that [`Memories::apply`](crate::Memories::apply)
//! adds for live writes. Derived projections (SQLite's FTS rows and partition versions,
//! PostgreSQL's tsvector and model registry, the in-process vector cache) are not records: the
//! importing backend rebuilds them from the rows.
//!
//! Adding a table: one variant here, its name in [`TABLES`], its columns in `rows::encode` and
//! a decoder arm in `rows::decode::record`, its export query in `sql::transfer` (or in each
//! backend's `transfer.rs` where the layouts differ), its import step in `plan::import`, and its
//! rows in `fill_every_table` of the conformance suite (`tests/conformance/transfer.rs`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use mnemo_core::{
    Document, HistoryEntry, Link, Memory, MemoryId, Message, MessageId, Observation, Policy, Scope, TenantId, UserId,
    UserState,
};

use crate::error::Result;
use crate::memories::Embedding;
use crate::messages::MessageVectors;
use crate::queue::{ChatProgress, QueueState};
use crate::users::DeletionEvent;

/// Every table a copy moves, in the order exports stream them: rows come after the rows they
/// refer to (history, links and sessions after their memories). Also the keys of
/// [`Transfer::counts`], so counts of two backends compare key by key.
pub const TABLES: &[&str] = &[
    "messages",
    "message_embeddings",
    "memories",
    "embeddings",
    "history",
    "links",
    "memory_sessions",
    "policies",
    "traces",
    "deletions",
    "extraction_queue",
    "chat_progress",
    "user_states",
    "documents",
    "document_vectors",
    "observations",
];

/// One stored row, as a copy moves it.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A message of the trace.
    Message {
        /// The message.
        message: Message,
        /// Taken out of archival recall (see `Change::Withhold`): kept in the trace, never
        /// searched or quoted.
        withheld: bool,
    },
    /// The vector of a message, for archival recall.
    MessageEmbedding {
        /// The message's tenant, agent, user and chat: its id is unique within those only.
        scope: Scope,
        /// The message.
        message: MessageId,
        /// Its vectors: the whole message's and its passages'.
        vectors: MessageVectors,
    },
    /// A memory row with its vector (table `memories`, and `embeddings` when it has one).
    Memory {
        /// The row, every column.
        memory: Memory,
        /// Its vector, if it has one.
        embedding: Option<Embedding>,
    },
    /// One history row of a memory.
    History {
        /// The memory's tenant.
        tenant: TenantId,
        /// The row.
        entry: HistoryEntry,
    },
    /// A typed edge between two memories.
    Link {
        /// The memories' tenant.
        tenant: TenantId,
        /// The edge.
        link: Link,
    },
    /// A session (chat) in which a memory was reinforced or surfaced: what the spacing signal
    /// counts, kept so a later reinforcement in the same chat is not counted twice.
    Session {
        /// The memory's tenant.
        tenant: TenantId,
        /// The memory.
        memory: MemoryId,
        /// The session.
        session: String,
    },
    /// One version of a policy (every version is copied, in force or not).
    Policy(Policy),
    /// The envelope of one recall or context call.
    Trace(TraceRow),
    /// What an erasure left behind.
    Deletion {
        /// The tenant the erased user belonged to.
        tenant: TenantId,
        /// Subject hash, time and receipt digest.
        event: DeletionEvent,
        /// Rows deleted per table, as the erasure reported them.
        counts: BTreeMap<String, u64>,
    },
    /// One message's row of the background-work queue. Exported in registration order, which
    /// an import keeps: memo ranges are cut in that order.
    Queued(QueueRow),
    /// One chat's background-work progress: its counts, memo and episode cursors, last error
    /// and claim. Copied, not recomputed: the cursors and gaps exist nowhere else.
    ChatProgress {
        /// Every column the worker reads.
        progress: ChatProgress,
        /// Until when a worker holds the chat (a claim still running when the copy was taken
        /// stays in force until it expires, as it would have on the source).
        claimed_until: Option<DateTime<Utc>>,
    },
    /// One user's privacy switch (only users who are not active have one).
    UserState {
        /// The user's tenant.
        tenant: TenantId,
        /// The user.
        user: UserId,
        /// Paused or disabled.
        state: UserState,
        /// When it was set.
        updated_at: DateTime<Utc>,
    },
    /// A stored document with its vector (both in table `documents`).
    Document {
        /// The row, every level.
        document: Document,
        /// Its vector, if it has one.
        embedding: Option<Embedding>,
    },
    /// A recorded observation of an agent with its vector (both in table `observations`).
    Observation {
        /// The row.
        observation: Observation,
        /// Its vector, if it has one.
        embedding: Option<Embedding>,
    },
}

impl Record {
    /// The table (one of [`TABLES`]) this record is a row of; a memory with a vector counts
    /// under `memories` here and adds an `embeddings` row on import.
    pub fn table(&self) -> &'static str {
        match self {
            Record::Message { .. } => "messages",
            Record::MessageEmbedding { .. } => "message_embeddings",
            Record::Memory { .. } => "memories",
            Record::History { .. } => "history",
            Record::Link { .. } => "links",
            Record::Session { .. } => "memory_sessions",
            Record::Policy(_) => "policies",
            Record::Trace(_) => "traces",
            Record::Deletion { .. } => "deletions",
            Record::Queued(_) => "extraction_queue",
            Record::ChatProgress { .. } => "chat_progress",
            Record::UserState { .. } => "user_states",
            Record::Document { .. } => "documents",
            Record::Observation { .. } => "observations",
        }
    }

    /// The tenant the row belongs to.
    pub fn tenant(&self) -> &TenantId {
        match self {
            Record::Message { message, .. } => &message.scope.tenant,
            Record::MessageEmbedding { scope, .. } => &scope.tenant,
            Record::Memory { memory, .. } => &memory.owner.tenant,
            Record::History { tenant, .. }
            | Record::Link { tenant, .. }
            | Record::Session { tenant, .. }
            | Record::Deletion { tenant, .. }
            | Record::UserState { tenant, .. } => tenant,
            Record::Policy(p) => &p.tenant,
            Record::Trace(t) => &t.scope.tenant,
            Record::Queued(q) => &q.scope.tenant,
            Record::ChatProgress { progress, .. } => &progress.scope.tenant,
            Record::Document { document, .. } => &document.owner.tenant,
            Record::Observation { observation, .. } => &observation.owner.tenant,
        }
    }
}

/// A stored trace envelope, kept as the row holds it: the envelope's JSON is copied as text, so
/// a copy never rewrites (or drops fields of) an envelope written by another version.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    /// The turn id.
    pub turn_id: String,
    /// The scope of the call.
    pub scope: Scope,
    /// `recall` or `context`.
    pub op: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Memories placed in the block (the over-reference guard reads these).
    pub surfaced: Vec<MemoryId>,
    /// The envelope, as JSON.
    pub body: String,
}

/// A stored row of the background-work queue, every column: which message, where its
/// extraction stands, and what a heuristic fallback wrote for it (what a later successful retry
/// replaces). Unlike [`Queued`](crate::Queued) it names its message rather than carrying it:
/// the message travels as its own record.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    /// The chat the message was registered in.
    pub scope: Scope,
    /// The message (a message of `scope`, copied before this row).
    pub message: MessageId,
    /// Its state.
    pub state: QueueState,
    /// Extraction attempts with the model so far.
    pub attempts: u32,
    /// When the next attempt is due (fallback rows).
    pub retry_at: Option<DateTime<Utc>>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Memories the heuristic fallback wrote for its batch.
    pub fallback: Vec<MemoryId>,
    /// When the message was registered.
    pub queued_at: DateTime<Utc>,
}

/// Writes batches of records into a store that was empty when the import began.
///
/// Obtained from [`Transfer::import`], which refuses a store holding any
/// memory or message. Each [`write`](Importer::write) is one transaction: a batch is written
/// whole or not at all. Batches must come in export order (a memory before its history).
pub trait Importer {
    /// Writes one batch verbatim, rebuilding the derived projections of what it wrote.
    fn write(&mut self, batch: &[Record]) -> Result<()>;
}

/// Rows per table, every name of [`TABLES`] present (zero when empty): what a copy compares
/// between source and target.
pub type Counts = BTreeMap<String, u64>;

/// A [`Counts`] with every table at zero.
pub(crate) fn empty_counts() -> Counts {
    TABLES.iter().map(|t| (t.to_string(), 0)).collect()
}

/// Refuses an import into a store whose `counts` show rows of any copied table.
pub(crate) fn refuse_unless_empty(counts: Counts, target: &str) -> Result<()> {
    let held: BTreeMap<String, u64> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    if held.is_empty() { Ok(()) } else { Err(not_empty(target, &held)) }
}

/// The refusal of an import into a store that already holds rows.
pub(crate) fn not_empty(target: &str, held: &BTreeMap<String, u64>) -> crate::StoreError {
    let what = held.iter().map(|(t, n)| format!("{n} {t}")).collect::<Vec<_>>().join(", ");
    crate::StoreError::Transfer {
        op: "import",
        reason: format!(
            "the target store {target} is not empty ({what}); a copy goes only into an empty store, so ids, \
             history and versions stay exactly as they were. Point the copy at a new database or data directory"
        ),
    }
}

/// The error for a row naming a memory or message (`row`, e.g. "memory 01H...") the import has
/// not written (yet).
pub(crate) fn out_of_order(what: &str, row: &str) -> crate::StoreError {
    crate::StoreError::Transfer {
        op: "import",
        reason: format!(
            "{what} names {row}, which this import has not written; records must come in export order \
             (every row before the rows that refer to it)"
        ),
    }
}

/// Whole-store copies between backends: export, import into an empty store, row counts, and
/// the bulk-load switch around large loads.
pub trait Transfer {
    /// Streams every row of the store to `visit`, table by table in [`TABLES`] order (rows
    /// after the rows they refer to), from one consistent snapshot: what `mnemo copy` moves to
    /// another backend. Reads across tenants; stops at the first error of `visit`.
    fn export(&self, visit: &mut dyn FnMut(Record) -> Result<()>) -> Result<()>;

    /// Starts an import of exported records, refusing a store that holds any row already (a
    /// copy keeps ids, history and versions exactly, so it cannot merge into existing data).
    /// Records are written verbatim (no history rows are added) and derived projections are
    /// rebuilt by this backend.
    fn import(&self) -> Result<Box<dyn Importer + '_>>;

    /// Rows per table of [`TABLES`] across all tenants, so a copy can be verified table by table.
    fn counts(&self) -> Result<Counts>;

    /// Prepares for writing many rows at once (`mnemo copy`, benchmarks): a backend may drop
    /// indexes that are far cheaper to build once over the loaded rows than to maintain row by
    /// row (PostgreSQL's HNSW indexes: loads run about six times faster without them). Reads
    /// stay correct meanwhile, only slower. [`Transfer::finish_bulk_load`] builds them again; a
    /// load that dies before it leaves them to the next open of the store. Default: nothing to
    /// drop.
    fn begin_bulk_load(&self) -> Result<()> {
        Ok(())
    }

    /// Builds again what [`Transfer::begin_bulk_load`] dropped (idempotent).
    fn finish_bulk_load(&self) -> Result<()> {
        Ok(())
    }

    /// The stored vector of one memory of the tenant, if it has one: how a copy is verified
    /// byte for byte, where searches would only show that some vector is there.
    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Embedding>>;
}
