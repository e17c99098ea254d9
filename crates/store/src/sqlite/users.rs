//! Per-user privacy switches on SQLite: one `user_states` row per user who is not active.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};
use rusqlite::{OptionalExtension, params};

use std::collections::BTreeMap;

use super::SqliteStore;
use super::rows::ms;
use crate::error::{Result, StoreError};
use crate::{DeletionEvent, Users};

impl Users for SqliteStore {
    /// The user's switch; `Active` when no row says otherwise.
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState> {
        let text: Option<String> = self.read(|c| {
            c.prepare_cached("SELECT state FROM user_states WHERE tenant = ?1 AND user_id = ?2")
                .and_then(|mut s| s.query_row(params![tenant.as_str(), user.as_str()], |r| r.get(0)).optional())
                .map_err(StoreError::sql("read user state"))
        })?;
        text.map_or(Ok(UserState::Active), |t| {
            t.parse()
                .map_err(|e: mnemo_core::CoreError| StoreError::Corrupt { what: "user state", detail: e.to_string() })
        })
    }

    /// Sets the user's switch: `Active` deletes the row, any other state upserts it.
    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()> {
        self.write("set user state", |tx| {
            let (t, u) = (tenant.as_str(), user.as_str());
            let done = if state == UserState::Active {
                tx.execute("DELETE FROM user_states WHERE tenant = ?1 AND user_id = ?2", params![t, u])
            } else {
                tx.execute(
                    "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (tenant, user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                    params![t, u, state.as_str(), ms(at)],
                )
            };
            done.map(drop).map_err(StoreError::sql("set user state"))
        })
    }

    fn erase_user(&self, tenant: &TenantId, user: &UserId, event: &DeletionEvent) -> Result<BTreeMap<String, u64>> {
        let (t, u) = (tenant.as_str(), user.as_str());
        let counts = self.write("erase user", |tx| {
            let exec = |sql: &str, p: &[&dyn rusqlite::ToSql]| {
                tx.execute(sql, p).map(|n| n as u64).map_err(StoreError::sql("erase user"))
            };
            // The user's memories, by rowid, for the side tables keyed by it.
            tx.execute_batch(
                "CREATE TEMP TABLE IF NOT EXISTS erasing (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL); \
                 DELETE FROM erasing;",
            )
            .map_err(StoreError::sql("erase user"))?;
            exec("INSERT INTO erasing (rowid, id) SELECT rowid, id FROM memories WHERE tenant = ?1 AND user_id = ?2", &[&t, &u])?;
            let by_rowid = |table: &str, col: &str| format!("DELETE FROM {table} WHERE {col} IN (SELECT rowid FROM erasing)");
            let mut counts = BTreeMap::new();
            counts.insert("lexical_index".into(), exec(&by_rowid("memory_fts", "rowid"), &[])?);
            counts.insert("embeddings".into(), exec(&by_rowid("embeddings", "memory_rowid"), &[])?);
            counts.insert("memory_sessions".into(), exec(&by_rowid("memory_sessions", "memory_rowid"), &[])?);
            counts.insert(
                "links".into(),
                exec(
                    "DELETE FROM links WHERE tenant = ?1 AND (from_id IN (SELECT id FROM erasing) OR to_id IN (SELECT id FROM erasing))",
                    &[&t],
                )?,
            );
            counts.insert("history".into(), exec("DELETE FROM history WHERE tenant = ?1 AND memory_id IN (SELECT id FROM erasing)", &[&t])?);
            let of_messages = |table: &str, col: &str| {
                format!("DELETE FROM {table} WHERE {col} IN (SELECT rowid FROM messages WHERE tenant = ?1 AND user_id = ?2)")
            };
            counts.insert("message_lexical_index".into(), exec(&of_messages("message_fts", "rowid"), &[&t, &u])?);
            counts.insert("message_embeddings".into(), exec(&of_messages("message_embeddings", "message_rowid"), &[&t, &u])?);
            for table in ["memories", "messages", "traces", "extraction_queue", "chat_progress", "user_states"] {
                counts.insert(table.into(), exec(&format!("DELETE FROM {table} WHERE tenant = ?1 AND user_id = ?2"), &[&t, &u])?);
            }
            // Its partitions go too: a user id can itself be personal data (an e-mail address).
            exec("DELETE FROM partitions WHERE tenant = ?1 AND user_id = ?2", &[&t, &u])?;
            tx.execute_batch("DELETE FROM erasing;").map_err(StoreError::sql("erase user"))?;
            tx.execute(
                "INSERT INTO deletions (tenant, subject, at, counts, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![t, event.subject, ms(event.at), serde_json::to_string(&counts).expect("counts"), event.digest],
            )
            .map_err(StoreError::sql("erase user"))?;
            Ok(counts)
        })?;
        self.vectors.forget_user(t, u);
        // Purge what the files could still hold: merge the lexical index's segments (dropping
        // deleted tokens), rewrite the database without free pages, and empty the WAL.
        let conn = self.writer.lock().expect("writer lock");
        conn.execute_batch(
            "INSERT INTO memory_fts (memory_fts) VALUES ('optimize'); \
             INSERT INTO message_fts (message_fts) VALUES ('optimize'); \
             PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .map_err(StoreError::sql("purge after erasure"))?;
        Ok(counts)
    }
}
