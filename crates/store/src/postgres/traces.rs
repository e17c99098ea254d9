//! Trace envelopes on PostgreSQL: recorded with the access statistics of what they returned in
//! one statement, read back for the over-reference guard, and swept by age: the jobs role finds the tenants with envelopes
//! of one class past their age (it may read only those three columns), and each tenant's old
//! envelopes are deleted in that tenant's own transaction, under row-level security like any
//! request of the tenant.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};

use super::rows::{get, ms};
use super::{Actor, PostgresStore};
use crate::Traces;
use crate::error::{Result, StoreError};

impl Traces for PostgresStore {
    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let [t, a, u, c] = env.scope.key_parts();
        let body = serde_json::to_string(env).expect("trace serialises");
        let surfaced = serde_json::to_string(&env.surfaced).expect("ids serialise");
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        let mut ids: Vec<MemoryId> = accessed.to_vec();
        ids.extend(env.surfaced.iter().filter(|id| !accessed.contains(id)));
        self.write("record turn", t, |tx| {
            tx.execute(
                "INSERT INTO traces (turn_id, tenant, agent, user_id, chat, op, at, surfaced, body) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[&env.turn_id, &t, &a, &u, &c, &env.op.as_str(), &ms(env.at), &surfaced, &body],
            )?;
            if ids.is_empty() {
                return Ok(());
            }
            // One statement for every item, not three round trips each: rows that still exist
            // count the access, a session new to a row counts once, surfaced rows are stamped.
            let id_texts: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
            let surfaced: Vec<bool> = ids.iter().map(|id| env.surfaced.contains(id)).collect();
            tx.execute(
                "WITH touched AS (SELECT m.id, i.surfaced FROM memories m \
                     JOIN unnest($1::text[], $2::bool[]) AS i (id, surfaced) ON m.id = i.id WHERE m.tenant = $3), \
                 new_sessions AS (INSERT INTO memory_sessions (tenant, memory_id, session) \
                     SELECT $3, id, $4 FROM touched WHERE $4::text IS NOT NULL ON CONFLICT DO NOTHING \
                     RETURNING memory_id) \
                 UPDATE memories m SET access_count = access_count + 1, last_accessed = $5, \
                     distinct_sessions = distinct_sessions \
                         + (SELECT count(*) FROM new_sessions n WHERE n.memory_id = m.id), \
                     last_surfaced = CASE WHEN t.surfaced THEN $5 ELSE m.last_surfaced END \
                 FROM touched t WHERE m.tenant = $3 AND m.id = t.id",
                &[&id_texts, &surfaced, &t, &session, &ms(env.at)],
            )?;
            Ok(())
        })
    }

    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        let body: Option<String> = self.read("get trace", tenant.as_str(), |tx| {
            tx.query_opt("SELECT body FROM traces WHERE tenant = $1 AND turn_id = $2", &[&tenant.as_str(), &turn_id])?
                .map(|r| get(&r, 0))
                .transpose()
        })?;
        body.map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt { what: "trace", detail: e.to_string() }))
            .transpose()
    }

    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>> {
        if turns == 0 {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let lists: Vec<String> = self.read("recently surfaced", t, |tx| {
            tx.query(
                "SELECT surfaced FROM traces WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
                 AND op = $5 ORDER BY at DESC, seq DESC LIMIT $6",
                &[&t, &a, &u, &c, &TraceOp::Context.as_str(), &(turns as i64)],
            )?
            .iter()
            .map(|r| get(r, 0))
            .collect()
        })?;
        let mut out = Vec::new();
        for l in lists {
            let ids: Vec<MemoryId> = serde_json::from_str(&l)
                .map_err(|e| StoreError::Corrupt { what: "trace surfaced ids", detail: e.to_string() })?;
            out.extend(ids);
        }
        Ok(out)
    }

    /// Deletes up to `limit` envelopes of `op` older than `before` across tenants, oldest first.
    fn sweep_traces(&self, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
        let (op, before) = (op.as_str(), ms(before));
        let tenants: Vec<String> = self.tx("sweep traces", Actor::Jobs, true, |tx| {
            tx.query("SELECT DISTINCT tenant FROM traces WHERE op = $1 AND at < $2 ORDER BY tenant", &[&op, &before])?
                .iter()
                .map(|r| get::<String>(r, 0))
                .collect()
        })?;
        let mut left = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut deleted = 0u64;
        for tenant in tenants {
            if left <= 0 {
                break;
            }
            let n = self.write("sweep traces", &tenant, |tx| {
                tx.execute(
                    "DELETE FROM traces WHERE seq IN \
                     (SELECT seq FROM traces WHERE tenant = $1 AND op = $2 AND at < $3 ORDER BY at, seq LIMIT $4)",
                    &[&tenant.as_str(), &op, &before, &left],
                )
            })?;
            deleted += n;
            left -= n as i64;
        }
        Ok(deleted)
    }
}
