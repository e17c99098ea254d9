//! Per-user privacy switches on PostgreSQL: one `user_states` row per user who is not active,
//! under row-level security like every tenant table.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};

use super::PostgresStore;
use super::apply::insert;
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

    fn subject_key(&self, tenant: &TenantId) -> Result<Vec<u8>> {
        let sql = "SELECT value FROM installation WHERE name = 'subject_key'";
        self.read("read the subject key", tenant.as_str(), |tx| Ok(tx.query_one(sql, &[])?.get(0)))
    }

    fn erase_user(
        &self,
        tenant: &TenantId,
        user: &UserId,
        event: &DeletionEvent,
    ) -> Result<std::collections::BTreeMap<String, u64>> {
        let (t, u) = (tenant.as_str(), user.as_str());
        self.write("erase user", t, |tx| {
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
                tx.execute(
                    &format!("DELETE FROM memory_sessions WHERE tenant = $1 AND memory_id IN ({ids})"),
                    &[&t, &u],
                )?,
            );
            // Vectors and the lexical projection live in the memory rows themselves.
            for table in sql::OWNED_BY_USER {
                counts.insert(table.to_string(), tx.execute(&sql::delete_owned(table), &[&t, &u])?);
            }
            tx.execute(&sql::delete_owned("partitions"), &[&t, &u])?;
            insert(tx, &encode::deletion(tenant, event, &counts))?;
            Ok(counts)
        })
        .inspect(|_| self.vectors.forget_user(t, u))
    }
}
