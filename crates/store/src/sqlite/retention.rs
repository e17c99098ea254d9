//! Retention sweeps of the trace on SQLite: old envelopes of one class deleted in batches.

use chrono::{DateTime, Utc};
use mnemo_core::trace::TraceOp;
use rusqlite::params;

use super::SqliteStore;
use super::rows::ms;
use crate::error::{Result, StoreError};

/// Deletes up to `limit` envelopes of `op` older than `before`, oldest first, in one transaction.
pub(crate) fn sweep_traces(store: &SqliteStore, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    store.write("sweep traces", |tx| {
        tx.prepare_cached(
            "DELETE FROM traces WHERE rowid IN \
             (SELECT rowid FROM traces WHERE op = ?1 AND at < ?2 ORDER BY at, rowid LIMIT ?3)",
        )
        .and_then(|mut s| s.execute(params![op.as_str(), ms(before), limit]))
        .map(|n| n as u64)
        .map_err(StoreError::sql("sweep traces"))
    })
}
