//! mnemo-store: the [`Store`] trait, its embedded SQLite backend and (feature `postgres`) a
//! PostgreSQL + pgvector backend for servers sharing one database.
//!
//! The trait speaks only in domain types (scope, memory, change sets); no SQL leaks above it, so
//! a PostgreSQL backend can implement the same contract and pass the same conformance tests.
//! Every read takes the caller's scope and filters by it before any ranking; every write is a
//! [`ChangeSet`] applied in one transaction.
#![deny(missing_docs)]

mod error;
mod lock;
mod neighbours;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod queue;
pub mod sqlite;
mod store;
pub mod transfer;

pub use error::{Result, StoreError};
pub use lock::JobLock;
#[cfg(feature = "postgres")]
pub use postgres::{EXACT_SCAN_MAX, PostgresStore, TempDatabase};
pub use queue::{ChatCursor, ChatProgress, QueueState, Queued, Settlement};
pub use sqlite::SqliteStore;
pub use store::{Change, ChangeSet, DeletionEvent, Embedding, ListFilter, Store};
pub use transfer::{Importer, Record};
