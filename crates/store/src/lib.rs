//! mnemo-store: the [`Store`] contract, its embedded SQLite backend and (feature `postgres`) a
//! PostgreSQL + pgvector backend for servers sharing one database.
//!
//! The contract speaks only in domain types (scope, memory, change sets); no SQL leaks above it,
//! so a PostgreSQL backend can implement the same contract and pass the same conformance tests.
//! It is one trait per concern ([`Messages`], [`Memories`], [`Search`], [`Policies`], [`Documents`], [`Observations`],
//! [`Traces`], [`Users`], [`Queue`], [`Transfer`], [`JobLocks`]); [`Store`] is all of them.
//! Every read takes the caller's scope and filters by it before any ranking; every write is a
//! [`ChangeSet`] applied in one transaction.
#![deny(missing_docs)]
// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod documents;
mod error;
mod lock;
mod memories;
mod message_vectors;
mod messages;
mod observations;
mod plan;
mod policies;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod priority;
pub mod queue;
mod rows;
mod search;
mod sql;
pub mod sqlite;
mod store;
mod traces;
pub mod transfer;
mod users;
mod vectors;

pub use documents::Documents;
pub use error::{Result, StoreError};
pub use lock::{JobLock, JobLocks};
pub use memories::{Change, ChangeSet, Embedding, ListFilter, Memories};
pub use messages::{MessageVectors, Messages};
pub use observations::Observations;
pub use policies::Policies;
#[cfg(feature = "postgres")]
pub use postgres::{EXACT_SCAN_MAX, PostgresStore, TempDatabase};
pub use queue::{ChatCursor, ChatProgress, Queue, QueueState, Queued, Settlement};
pub use search::{CacheBudgets, CacheUsage, DEFAULT_SQLITE_HEAP, Search};
pub use sqlite::SqliteStore;
pub use store::Store;
pub use traces::Traces;
pub use transfer::{Importer, Record, Transfer};
pub use users::{DeletionEvent, ERASURES_PER_TRANSACTION, Users};

/// Every part of the contract, for code that calls store methods on a concrete backend
/// (`SqliteStore`, `PostgresStore`) rather than through `dyn Store`: `use mnemo_store::prelude::*`.
pub mod prelude {
    pub use crate::{
        Documents, JobLocks, Memories, Messages, Observations, Policies, Queue, Search, Store, Traces, Transfer, Users,
    };
}
