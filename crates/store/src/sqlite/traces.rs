//! Trace envelopes on SQLite: recorded with the access statistics of what they returned, read
//! back for the over-reference guard, swept by age.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};
use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use super::rows::ms;
use crate::Traces;
use crate::error::{Result, StoreError};

impl Traces for SqliteStore {
    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let [t, a, u, c] = env.scope.key_parts();
        let body = serde_json::to_string(env).expect("trace serialises");
        let surfaced = serde_json::to_string(&env.surfaced).expect("ids serialise");
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        let mut ids: Vec<MemoryId> = accessed.to_vec();
        ids.extend(env.surfaced.iter().filter(|id| !accessed.contains(id)));
        self.write("record turn", |tx| {
            tx.prepare_cached(
                "INSERT INTO traces (turn_id, tenant, agent, user_id, chat, op, at, surfaced, body) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut s| s.execute(params![env.turn_id, t, a, u, c, env.op.as_str(), ms(env.at), surfaced, body]))
            .map_err(StoreError::sql("record turn"))?;
            for id in &ids {
                let rowid: Option<i64> = tx
                    .prepare_cached("SELECT rowid FROM memories WHERE tenant = ?1 AND id = ?2")
                    .and_then(|mut s| s.query_row(params![t, id.to_string()], |r| r.get(0)).optional())
                    .map_err(StoreError::sql("record turn"))?;
                let Some(rowid) = rowid else { continue };
                let new_session = match session {
                    Some(s) => tx
                        .prepare_cached("INSERT OR IGNORE INTO memory_sessions (memory_rowid, session) VALUES (?1, ?2)")
                        .and_then(|mut st| st.execute(params![rowid, s]))
                        .map_err(StoreError::sql("record turn"))?,
                    None => 0,
                };
                tx.prepare_cached(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed = ?1, \
                     distinct_sessions = distinct_sessions + ?2, \
                     last_surfaced = CASE WHEN ?3 THEN ?1 ELSE last_surfaced END WHERE rowid = ?4",
                )
                .and_then(|mut s| s.execute(params![ms(env.at), new_session as i64, env.surfaced.contains(id), rowid]))
                .map_err(StoreError::sql("record turn"))?;
            }
            Ok(())
        })
    }

    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        let body: Option<String> = self.read(|conn| {
            conn.prepare_cached("SELECT body FROM traces WHERE tenant = ?1 AND turn_id = ?2")
                .and_then(|mut s| s.query_row(params![tenant.as_str(), turn_id], |r| r.get(0)).optional())
                .map_err(StoreError::sql("get trace"))
        })?;
        body.map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt { what: "trace", detail: e.to_string() }))
            .transpose()
    }

    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>> {
        if turns == 0 {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let lists: Vec<String> = self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT surfaced FROM traces WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4 \
                     AND op = ?5 ORDER BY at DESC, rowid DESC LIMIT ?6",
                )
                .map_err(StoreError::sql("recently surfaced"))?;
            stmt.query_map(params![t, a, u, c, TraceOp::Context.as_str(), turns as i64], |r| r.get(0))
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("recently surfaced"))
        })?;
        let mut out = Vec::new();
        for l in lists {
            let ids: Vec<MemoryId> = serde_json::from_str(&l)
                .map_err(|e| StoreError::Corrupt { what: "trace surfaced ids", detail: e.to_string() })?;
            out.extend(ids);
        }
        Ok(out)
    }

    /// Deletes up to `limit` envelopes of `op` older than `before`, oldest first, in one transaction.
    fn sweep_traces(&self, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.write("sweep traces", |tx| {
            tx.prepare_cached(
                "DELETE FROM traces WHERE rowid IN \
                 (SELECT rowid FROM traces WHERE op = ?1 AND at < ?2 ORDER BY at, rowid LIMIT ?3)",
            )
            .and_then(|mut s| s.execute(params![op.as_str(), ms(before), limit]))
            .map(|n| n as u64)
            .map_err(StoreError::sql("sweep traces"))
        })
    }
}
