//! Per-user privacy switches on PostgreSQL: one `user_states` row per user who is not active,
//! under row-level security like every tenant table.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};

use super::PostgresStore;
use super::apply::insert;
use super::pool::{Tx, pg};
use super::rows::params;
use crate::error::Result;
use crate::rows::{Row, encode};
use crate::sql::users as sql;
use crate::{DeletionEvent, Users};

impl Users for PostgresStore {
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState> {
        let (t, u) = (tenant.as_str(), user.as_str());
        sql::state(
            self.read("read user state", t, |tx| tx.query_opt(sql::STATE, &[&t, &u])?.map(|r| r.text(0)).transpose())?,
        )
    }

    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()> {
        let (stmt, args) = sql::switch(tenant, user, state, at);
        self.write("set user state", tenant.as_str(), |tx| tx.execute(stmt, &params(&args)).map(drop))
    }

    fn known_users(&self, tenant: &TenantId) -> Result<Vec<UserId>> {
        let sql = sql::known_users();
        self.read("known users", tenant.as_str(), |tx| {
            tx.query(&sql, &[&tenant.as_str()])?.iter().map(|r| r.parse(0)).collect()
        })
    }

    fn subject_key(&self, tenant: &TenantId) -> Result<Vec<u8>> {
        let sql = "SELECT value FROM installation WHERE name = 'subject_key'";
        self.read("read the subject key", tenant.as_str(), |tx| Ok(tx.query_one(sql, &[])?.get(0)))
    }

    fn erase_users(
        &self,
        tenant: &TenantId,
        erasures: &[(UserId, DeletionEvent)],
    ) -> Result<Vec<std::collections::BTreeMap<String, u64>>> {
        let t = tenant.as_str();
        let mut all = Vec::with_capacity(erasures.len());
        let mut failed = None;
        for batch in erasures.chunks(crate::ERASURES_PER_TRANSACTION) {
            let erased = self.write("erase users", t, |tx| {
                batch.iter().map(|(user, event)| erase_in(tx, tenant, user, event)).collect::<Result<Vec<_>>>()
            });
            match erased {
                Ok(counts) => {
                    for (user, _) in batch {
                        self.vectors.forget_user(t, user.as_str());
                    }
                    all.extend(counts);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // What was committed is purged even when a later batch failed: those users are erased,
        // and their rows must not wait for autovacuum meanwhile.
        let purged = if all.is_empty() {
            Ok(())
        } else {
            let tables: Vec<&str> = sql::OWNED_BY_USER.iter().chain(&ALSO_ERASED_FROM).copied().collect();
            self.purge(&tables)
        };
        match failed {
            Some(e) => Err(e),
            None => purged.map(|()| all),
        }
    }
}

/// Deletes every row of `user` of `tenant` within `tx` (see [`Users::erase_user`]) and records
/// the content-free deletion event; the caller purges the tables after the commit.
fn erase_in(
    tx: &mut Tx<'_>,
    tenant: &TenantId,
    user: &UserId,
    event: &DeletionEvent,
) -> Result<std::collections::BTreeMap<String, u64>> {
    let (t, u) = (tenant.as_str(), user.as_str());
    let mut counts = std::collections::BTreeMap::new();
    let ids = "SELECT id FROM memories WHERE tenant = $1 AND user_id = $2";
    counts.insert(
        "links".to_string(),
        tx.execute(
            &format!("DELETE FROM links WHERE tenant = $1 AND (from_id IN ({ids}) OR to_id IN ({ids}))"),
            &[&t, &u],
        )?,
    );
    counts.insert(
        "history".to_string(),
        tx.execute(&format!("DELETE FROM history WHERE tenant = $1 AND memory_id IN ({ids})"), &[&t, &u])?,
    );
    counts.insert(
        "memory_sessions".to_string(),
        tx.execute(&format!("DELETE FROM memory_sessions WHERE tenant = $1 AND memory_id IN ({ids})"), &[&t, &u])?,
    );
    // Vectors and the lexical projection live in the memory rows themselves.
    for table in sql::OWNED_BY_USER {
        counts.insert(table.to_string(), tx.execute(&sql::delete_owned(table), &[&t, &u])?);
    }
    tx.execute(&sql::delete_owned("partitions"), &[&t, &u])?;
    insert(tx, &encode::deletion(tenant, event, &counts))?;
    Ok(counts)
}

/// The tables an erasure deletes from besides [`sql::OWNED_BY_USER`]: the memories' links,
/// history and sessions, and the user's partition versions.
const ALSO_ERASED_FROM: [&str; 4] = ["links", "history", "memory_sessions", "partitions"];

impl PostgresStore {
    /// Removes the rows an erasure deleted from the pages of `tables` and of their indexes
    /// (their TOAST tables' too).
    ///
    /// A DELETE only marks a row dead: the tuple, with its text and its tsvector, stays in its
    /// heap page, and every index entry pointing at it (the lexical indexes include the
    /// tsvector) stays in the index, until a VACUUM, which autovacuum runs only once a fifth of
    /// a table is dead: on a large table an erased user's words could stay in the files for
    /// weeks. This VACUUM runs at once; `INDEX_CLEANUP ON` makes it clear the indexes even when
    /// few pages changed (by default it may skip them). It takes no lock that stops reads or
    /// writes of other tenants, only another VACUUM of the same table.
    ///
    /// What it cannot do: PostgreSQL does not zero the space a removed tuple leaves in its page,
    /// so those bytes, referenced by nothing, stay in the file until a later row overwrites them
    /// or the table is rewritten (`VACUUM FULL`, which locks every tenant out while it runs, so
    /// it is left to the operator), and the WAL keeps them until its segments are recycled. A
    /// transaction older than the erasure that is still open keeps the dead rows too, as it may
    /// still read them.
    fn purge(&self, tables: &[&str]) -> Result<()> {
        // One statement, outside any transaction (VACUUM refuses to run inside one), as the
        // connecting role, which owns the tables.
        let mut lease = self.pool.get("purge after erasure")?;
        lease
            .client()
            .batch_execute(&format!("VACUUM (INDEX_CLEANUP ON) {}", tables.join(", ")))
            .map_err(pg("purge after erasure"))
    }
}
