//! Retention sweeps of the trace on PostgreSQL: the jobs role finds the tenants with envelopes
//! of one class past their age (it may read only those three columns), and each tenant's old
//! envelopes are deleted in that tenant's own transaction, under row-level security like any
//! request of the tenant.

use chrono::{DateTime, Utc};
use mnemo_core::trace::TraceOp;

use super::rows::{get, ms};
use super::{Actor, PostgresStore};
use crate::error::Result;

/// Deletes up to `limit` envelopes of `op` older than `before` across tenants, oldest first.
pub(crate) fn sweep_traces(store: &PostgresStore, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
    let (op, before) = (op.as_str(), ms(before));
    let tenants: Vec<String> = store.tx("sweep traces", Actor::Jobs, true, |tx| {
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
        let n = store.write("sweep traces", &tenant, |tx| {
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
