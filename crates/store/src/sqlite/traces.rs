//! Trace envelopes on SQLite: recorded with the access statistics of what they returned, read
//! back for the over-reference guard, swept by age.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};
use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use super::rows::{execute, insert, query, query_opt};
use crate::Traces;
use crate::error::{Result, StoreError};
use crate::plan::turn;
use crate::rows::{Row, ms};
use crate::sql::{Dialect, traces as sql};

impl Traces for SqliteStore {
    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let turn = turn::plan(env, accessed);
        let tenant = env.scope.tenant.as_str();
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        self.write("record turn", |tx| {
            insert(tx, "record turn", &turn.envelope)?;
            for (id, surfaced) in &turn.touched {
                let rowid: Option<i64> = tx
                    .prepare_cached("SELECT rowid FROM memories WHERE tenant = ?1 AND id = ?2")
                    .and_then(|mut s| s.query_row(params![tenant, id.to_string()], |r| r.get(0)).optional())
                    .map_err(StoreError::sql("record turn"))?;
                let Some(rowid) = rowid else { continue };
                let new_session = match session {
                    Some(s) => execute(
                        tx,
                        "record turn",
                        "INSERT OR IGNORE INTO memory_sessions (memory_rowid, session) VALUES (?1, ?2)",
                        params![rowid, s],
                    )?,
                    None => 0,
                };
                execute(
                    tx,
                    "record turn",
                    "UPDATE memories SET access_count = access_count + 1, last_accessed = ?1, \
                     distinct_sessions = distinct_sessions + ?2, \
                     last_surfaced = CASE WHEN ?3 THEN ?1 ELSE last_surfaced END WHERE rowid = ?4",
                    params![ms(env.at), new_session as i64, surfaced, rowid],
                )?;
            }
            Ok(())
        })
    }

    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        let body = self.read(|conn| {
            query_opt(conn, "get trace", sql::ENVELOPE, params![tenant.as_str(), turn_id], |r| r.text(0))
        })?;
        body.as_deref().map(turn::envelope).transpose()
    }

    fn recent_traces(&self, scope: &Scope, limit: usize) -> Result<Vec<TraceEnvelope>> {
        let [t, a, u, c] = scope.key_parts();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let bodies = self.read(|conn| {
            query(conn, "recent traces", &sql::recent(Dialect::Sqlite), params![t, a, u, c, limit], |r| r.text(0))
        })?;
        bodies.iter().map(|b| turn::envelope(b)).collect()
    }

    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>> {
        if turns == 0 {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let args = params![t, a, u, c, TraceOp::Context.as_str(), turns as i64];
        let lists = self.read(|conn| {
            query(conn, "recently surfaced", &sql::recently_surfaced(Dialect::Sqlite), args, |r| r.text(0))
        })?;
        turn::surfaced(&lists)
    }

    /// Deletes up to `limit` envelopes of `op` older than `before`, oldest first, in one transaction.
    fn sweep_traces(&self, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.write("sweep traces", |tx| {
            let sql = "DELETE FROM traces WHERE rowid IN \
                       (SELECT rowid FROM traces WHERE op = ?1 AND at < ?2 ORDER BY at, rowid LIMIT ?3)";
            execute(tx, "sweep traces", sql, params![op.as_str(), ms(before), limit]).map(|n| n as u64)
        })
    }
}
