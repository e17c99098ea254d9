//! Per-user privacy switches on PostgreSQL: one `user_states` row per user who is not active,
//! under row-level security like every tenant table.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};

use super::PostgresStore;
use super::rows::{get, ms};
use crate::error::{Result, StoreError};
use crate::{DeletionEvent, Users};

impl Users for PostgresStore {
    /// The user's switch; `Active` when no row says otherwise.
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState> {
        let (t, u) = (tenant.as_str(), user.as_str());
        let text: Option<String> = self.read("read user state", t, |tx| {
            tx.query_opt("SELECT state FROM user_states WHERE tenant = $1 AND user_id = $2", &[&t, &u])?
                .map(|r| get::<String>(&r, 0))
                .transpose()
        })?;
        text.map_or(Ok(UserState::Active), |s| {
            s.parse()
                .map_err(|e: mnemo_core::CoreError| StoreError::Corrupt { what: "user state", detail: e.to_string() })
        })
    }

    /// Sets the user's switch: `Active` deletes the row, any other state upserts it.
    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()> {
        let (t, u) = (tenant.as_str(), user.as_str());
        self.write("set user state", t, |tx| {
            if state == UserState::Active {
                tx.execute("DELETE FROM user_states WHERE tenant = $1 AND user_id = $2", &[&t, &u])?;
            } else {
                tx.execute(
                    "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (tenant, user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                    &[&t, &u, &state.as_str(), &ms(at)],
                )?;
            }
            Ok(())
        })
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
            for table in ["memories", "messages", "traces", "extraction_queue", "chat_progress", "user_states"] {
                counts.insert(
                    table.to_string(),
                    tx.execute(&format!("DELETE FROM {table} WHERE tenant = $1 AND user_id = $2"), &[&t, &u])?,
                );
            }
            // Its partitions go too: a user id can itself be personal data (an e-mail address).
            tx.execute("DELETE FROM partitions WHERE tenant = $1 AND user_id = $2", &[&t, &u])?;
            let counts_json = serde_json::to_string(&counts).expect("counts serialise");
            tx.execute(
                "INSERT INTO deletions (tenant, subject, at, counts, digest) VALUES ($1, $2, $3, $4, $5)",
                &[&t, &event.subject, &ms(event.at), &counts_json, &event.digest],
            )?;
            Ok(counts)
        })
    }
}
