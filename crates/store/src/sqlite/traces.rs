//! Trace envelopes on SQLite: recorded with the access statistics of what they returned, read
//! back for the over-reference guard, swept by age.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};
use rusqlite::params;

use super::SqliteStore;
use super::rows::{execute, insert, query, query_opt};
use crate::Traces;
use crate::error::{Result, StoreError};
use crate::plan::turn;
use crate::rows::{Row, ms};
use crate::sql::{Dialect, traces as sql};

/// Links the rows of tenant `?1` whose ids the JSON list `?2` holds to session `?3`, returning
/// the rows the session is new to.
const NEW_SESSIONS: &str = "INSERT OR IGNORE INTO memory_sessions (memory_rowid, session) \
     SELECT m.rowid, ?3 FROM json_each(?2) j CROSS JOIN memories m ON m.id = j.value \
     WHERE m.tenant = ?1 RETURNING memory_rowid";

/// Counts an access at `?1` for the rows of tenant `?2` whose ids the JSON list `?3` holds: a
/// session for the rows listed in `?4`, a placement for the ids listed in `?5`.
const ACCESSED: &str = "UPDATE memories SET access_count = access_count + 1, last_accessed = ?1, \
     distinct_sessions = distinct_sessions + (rowid IN (SELECT value FROM json_each(?4))), \
     last_surfaced = CASE WHEN id IN (SELECT value FROM json_each(?5)) THEN ?1 ELSE last_surfaced END \
     WHERE rowid IN (SELECT m.rowid FROM json_each(?3) j CROSS JOIN memories m ON m.id = j.value \
     WHERE m.tenant = ?2)";

impl Traces for SqliteStore {
    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let turn = turn::plan(env, accessed);
        let tenant = env.scope.tenant.as_str();
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        // The touched ids as JSON arrays, so that one cached statement of each kind records any
        // turn: three statements per memory took 0.6 ms of a 30-memory turn. Each statement
        // walks the list and finds every id by its index (`CROSS JOIN` fixes that order: the
        // planner cannot size a `json_each`, and scanned a million-row tenant instead).
        let ids = json_list(turn.touched.iter().map(|(id, _)| id.to_string()));
        let surfaced = json_list(turn.touched.iter().filter(|(_, s)| *s).map(|(id, _)| id.to_string()));
        let write = |tx: &rusqlite::Transaction<'_>| {
            insert(tx, "record turn", &turn.envelope)?;
            if turn.touched.is_empty() {
                return Ok(());
            }
            // The rows this turn's session is new to: their distinct sessions count it once.
            let fresh: Vec<i64> = match session {
                Some(s) => tx
                    .prepare_cached(NEW_SESSIONS)
                    .and_then(|mut stmt| stmt.query_map(params![tenant, ids, s], |r| r.get(0))?.collect())
                    .map_err(StoreError::sql("record turn"))?,
                None => Vec::new(),
            };
            execute(tx, "record turn", ACCESSED, params![ms(env.at), tenant, ids, json_list(fresh), surfaced])?;
            Ok(())
        };
        self.commit("record turn", turn.durability, write, |()| ())
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

/// Values as one JSON array, the argument of `json_each`.
fn json_list<T: serde::Serialize>(values: impl IntoIterator<Item = T>) -> String {
    serde_json::to_string(&values.into_iter().collect::<Vec<T>>()).expect("a list of strings or numbers serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::tests::plan;

    /// Recording a turn finds each touched memory by its id, never by walking the tenant: a
    /// plan that scanned `memories` took seconds per turn in a million-row tenant.
    #[test]
    fn a_turns_memories_are_found_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        for (sql, params) in [(NEW_SESSIONS, 3), (ACCESSED, 5)] {
            let steps = plan(&store, sql, rusqlite::params_from_iter(vec![rusqlite::types::Null; params]));
            let on_memories: Vec<&String> = steps.iter().filter(|s| s.contains(" m ") || s.ends_with(" m")).collect();
            assert!(!on_memories.is_empty(), "{steps:#?}");
            let walks = |s: &&String| s.starts_with("SCAN m") || s.contains("(tenant=?)");
            assert!(!steps.iter().any(|s| walks(&s)), "{sql}: {steps:#?}");
            for step in on_memories {
                assert!(step.starts_with("SEARCH m USING") && step.contains("(id=?)"), "{sql}: {steps:#?}");
            }
        }
    }

    /// A read's turn commits without a sync, and the next write of anything else is synced
    /// again: the relaxed level never outlives the commit it was set for.
    #[test]
    fn only_a_read_s_turn_commits_without_a_sync() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        let level =
            || -> i64 { store.writer.take().conn.pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap() };
        let turn = |op: TraceOp| -> TraceEnvelope {
            serde_json::from_value(serde_json::json!({
                "turn_id": format!("t-{op}"), "scope": {"tenant": "acme", "user": "dana"}, "op": op.as_str(),
                "at": "2026-03-02T09:00:00Z", "query": "q", "surfaced": [], "micros": 1, "retrieved": [],
                "below_floor": [], "held_back": [], "shed": [], "verdicts": [], "llm": [], "embed_micros": 0,
            }))
            .unwrap()
        };
        let (full, normal) = (2, 1);
        assert_eq!(level(), full);
        store.record_turn(&turn(TraceOp::Recall), &[]).unwrap();
        assert_eq!(level(), normal);
        store.record_turn(&turn(TraceOp::Ingest), &[]).unwrap();
        assert_eq!(level(), full);
        store.record_turn(&turn(TraceOp::Context), &[]).unwrap();
        store.sweep_traces(TraceOp::Job, "2026-01-01T00:00:00Z".parse().unwrap(), 10).unwrap();
        assert_eq!(level(), full, "a write after a read's turn is synced");
        let tenant: TenantId = "acme".parse().unwrap();
        for op in [TraceOp::Recall, TraceOp::Ingest, TraceOp::Context] {
            assert!(store.trace(&tenant, &format!("t-{op}")).unwrap().is_some(), "{op} recorded");
        }
    }
}
