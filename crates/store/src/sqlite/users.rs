//! Per-user privacy switches on SQLite: one `user_states` row per user who is not active.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};
use std::collections::BTreeMap;

use rusqlite::{params, params_from_iter};

use super::SqliteStore;
use super::rows::{execute, insert, query, query_opt};
use crate::error::{Result, StoreError};
use crate::plan::turn::Durability;
use crate::rows::{Row, encode};
use crate::sql::{Dialect, users as sql};
use crate::{DeletionEvent, Users};

impl Users for SqliteStore {
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState> {
        let args = params![tenant.as_str(), user.as_str()];
        sql::state(self.read(|c| query_opt(c, "read user state", sql::STATE, args, |r| r.text(0)))?)
    }

    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()> {
        let (stmt, args) = sql::switch(tenant, user, state, at);
        self.write("set user state", |tx| execute(tx, "set user state", stmt, params_from_iter(&args)).map(drop))
    }

    fn known_users(&self, tenant: &TenantId) -> Result<Vec<UserId>> {
        let sql = Dialect::Sqlite.sql(&sql::known_users()).into_owned();
        self.read(|c| query(c, "known users", &sql, params![tenant.as_str()], |r| r.parse(0)))
    }

    fn subject_key(&self, _tenant: &TenantId) -> Result<Vec<u8>> {
        let sql = "SELECT value FROM installation WHERE name = 'subject_key'";
        self.read(|c| c.query_row(sql, [], |r| r.get(0)).map_err(StoreError::sql("read the subject key")))
    }

    fn erase_users(
        &self,
        tenant: &TenantId,
        erasures: &[(UserId, DeletionEvent)],
    ) -> Result<Vec<BTreeMap<String, u64>>> {
        let mut all = Vec::with_capacity(erasures.len());
        let mut failed = None;
        for batch in erasures.chunks(crate::ERASURES_PER_TRANSACTION) {
            let erased = self.write("erase users", |tx| {
                batch.iter().map(|(user, event)| erase_in(tx, tenant, user, event)).collect::<Result<Vec<_>>>()
            });
            match erased {
                Ok(counts) => {
                    for (user, _) in batch {
                        self.vectors.forget_user(tenant.as_str(), user.as_str());
                        self.message_vectors.forget_user(tenant.as_str(), user.as_str());
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
        // and their words must not stay in the files meanwhile.
        let purged = if all.is_empty() { Ok(()) } else { self.purge_after_erasure() };
        match failed {
            Some(e) => Err(e),
            None => purged.map(|()| all),
        }
    }
}

/// Deletes every row of `user` of `tenant` within `tx` (see [`Users::erase_user`]) and records
/// the content-free deletion event; the caller purges the files after the commit.
fn erase_in(
    tx: &rusqlite::Transaction<'_>,
    tenant: &TenantId,
    user: &UserId,
    event: &DeletionEvent,
) -> Result<BTreeMap<String, u64>> {
    let (t, u) = (tenant.as_str(), user.as_str());
    let exec = |sql: &str, p: &[&dyn rusqlite::ToSql]| {
        tx.execute(sql, p).map(|n| n as u64).map_err(StoreError::sql("erase user"))
    };
    // The user's memories, by rowid, for the side tables keyed by it.
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS erasing (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL); \
         DELETE FROM erasing;",
    )
    .map_err(StoreError::sql("erase user"))?;
    exec(
        "INSERT INTO erasing (rowid, id) SELECT rowid, id FROM memories WHERE tenant = ?1 AND user_id = ?2",
        &[&t, &u],
    )?;
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
    counts.insert(
        "history".into(),
        exec("DELETE FROM history WHERE tenant = ?1 AND memory_id IN (SELECT id FROM erasing)", &[&t])?,
    );
    let of_messages = |table: &str, col: &str| {
        format!("DELETE FROM {table} WHERE {col} IN (SELECT rowid FROM messages WHERE tenant = ?1 AND user_id = ?2)")
    };
    counts.insert("message_lexical_index".into(), exec(&of_messages("message_fts", "rowid"), &[&t, &u])?);
    counts.insert("message_embeddings".into(), exec(&of_messages("message_embeddings", "message_rowid"), &[&t, &u])?);
    for table in sql::OWNED_BY_USER {
        counts.insert(table.into(), exec(&Dialect::Sqlite.sql(&sql::delete_owned(table)), &[&t, &u])?);
    }
    for versions in ["partitions", "message_versions"] {
        exec(&Dialect::Sqlite.sql(&sql::delete_owned(versions)), &[&t, &u])?;
    }
    tx.execute_batch("DELETE FROM erasing;").map_err(StoreError::sql("erase user"))?;
    insert(tx, "erase user", &encode::deletion(tenant, event, &counts))?;
    Ok(counts)
}

impl SqliteStore {
    /// Purges what the files could still hold after erasures were committed. The deletes took
    /// the users' entries out of the lexical indexes' segments themselves (FTS5 `secure-delete`,
    /// schema version 16: a plain delete left markers carrying the words, which 'optimize' did
    /// not always drop); merging the segments compacts them. Then the database is rewritten
    /// without free pages, and the WAL emptied. This rewrites the whole file, every tenant's
    /// rows, so [`Users::erase_users`] runs it once for all the users it erases.
    fn purge_after_erasure(&self) -> Result<()> {
        let mut writer = self.writer.take();
        writer.set(Durability::Flushed).map_err(StoreError::sql("purge after erasure"))?;
        // No checkpoint of the thread between the two TRUNCATE ones: it could leave the log busy.
        let _checkpoints = self.checkpoints.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        writer
            .conn
            .execute_batch(
                "INSERT INTO memory_fts (memory_fts) VALUES ('optimize'); \
                 INSERT INTO message_fts (message_fts) VALUES ('optimize'); \
                 PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .map_err(StoreError::sql("purge after erasure"))
    }
}
