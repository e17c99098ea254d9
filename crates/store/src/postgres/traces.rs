//! Trace envelopes on PostgreSQL: recorded with the access statistics of what they returned in
//! one statement, read back for the over-reference guard, and swept by age: the jobs role finds the tenants with envelopes
//! of one class past their age (it may read only those three columns), and each tenant's old
//! envelopes are deleted in that tenant's own transaction, under row-level security like any
//! request of the tenant.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};

use super::apply::insert;
use super::rows::get;
use super::{Actor, PostgresStore};
use crate::Traces;
use crate::error::Result;
use crate::plan::turn::{self, Durability};
use crate::rows::{Row, ms};
use crate::sql::{Dialect, traces as sql};

impl Traces for PostgresStore {
    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let turn = turn::plan(env, accessed);
        let tenant = env.scope.tenant.as_str();
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        self.write("record turn", tenant, |tx| {
            if turn.durability == Durability::Logged {
                // This transaction only: its commit returns before the WAL is flushed (a crash
                // of the server can lose the last such commits, never corrupt anything).
                tx.query("SELECT set_config('synchronous_commit', 'off', true)", &[])?;
            }
            insert(tx, &turn.envelope)?;
            if turn.touched.is_empty() {
                return Ok(());
            }
            // One statement for every item, not three round trips each: rows that still exist
            // count the access, a session new to a row counts once, surfaced rows are stamped.
            let (ids, surfaced): (Vec<String>, Vec<bool>) =
                turn.touched.iter().map(|(id, s)| (id.to_string(), *s)).unzip();
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
                &[&ids, &surfaced, &tenant, &session, &ms(env.at)],
            )?;
            Ok(())
        })
    }

    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        let body: Option<String> = self.read("get trace", tenant.as_str(), |tx| {
            tx.query_opt(sql::ENVELOPE, &[&tenant.as_str(), &turn_id])?.map(|r| r.text(0)).transpose()
        })?;
        body.as_deref().map(turn::envelope).transpose()
    }

    fn recent_traces(&self, scope: &Scope, limit: usize) -> Result<Vec<TraceEnvelope>> {
        let [t, a, u, c] = scope.key_parts();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let sql = sql::recent(Dialect::Postgres);
        let bodies: Vec<String> = self.read("recent traces", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &limit])?.iter().map(|r| r.text(0)).collect()
        })?;
        bodies.iter().map(|b| turn::envelope(b)).collect()
    }

    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>> {
        if turns == 0 {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let sql = sql::recently_surfaced(Dialect::Postgres);
        let lists: Vec<String> = self.read("recently surfaced", t, |tx| {
            let rows = tx.query(&sql, &[&t, &a, &u, &c, &TraceOp::Context.as_str(), &(turns as i64)])?;
            rows.iter().map(|r| r.text(0)).collect()
        })?;
        turn::surfaced(&lists)
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
