//! The embedded default: one SQLite file in WAL mode, FTS5 for BM25, vectors as blobs scored
//! exactly within scope.

mod apply;
mod fts;
mod lexicon;
mod queue;
mod retention;
mod rows;
mod schema;
mod transfer;
mod users;
mod vectors;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{
    HistoryEntry, Kind, Link, Memory, MemoryId, Message, MessageId, Policy, Scope, StatusKind, TenantId, UserId,
};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params, params_from_iter};
use std::collections::BTreeMap;

use self::rows::{MEMORY_COLUMNS, VISIBLE, blob_vector, message_partition, ms, parse, time, time_opt, vector_blob};
use self::vectors::VectorCache;
use crate::error::{Result, StoreError};
use crate::neighbours::{Dialect, adjacent_sql};
use crate::store::{ChangeSet, DeletionEvent, Embedding, ListFilter, Store};

/// Readers kept open beside the writer; WAL lets them run while a write is in progress.
const READERS: usize = 4;

/// The SQLite backend.
pub struct SqliteStore {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    vectors: VectorCache,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // NORMAL in WAL mode never corrupts; FULL also makes every acknowledged commit survive a
    // power cut, which is the promise we make.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "cache_size", -16_000)?;
    // Deleted content is overwritten with zeros, so an erased user's bytes do not linger in
    // free pages between an erasure and the VACUUM that follows it.
    conn.pragma_update(None, "secure_delete", true)?;
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the store file `path`, migrating it to the latest schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: dir.to_path_buf(),
                reason: format!("cannot create directory: {e}"),
            })?;
        }
        let open_err = |e: rusqlite::Error| StoreError::Open { path: path.clone(), reason: e.to_string() };
        let mut writer = Connection::open(&path).map_err(open_err)?;
        writer.pragma_update(None, "journal_mode", "WAL").map_err(open_err)?;
        configure(&writer).map_err(open_err)?;
        schema::migrate(&mut writer)?;
        // Refreshes planner statistics where they are missing or stale; cheap when nothing changed.
        writer.execute_batch("PRAGMA optimize = 0x10002;").map_err(open_err)?;
        let readers = (0..READERS)
            .map(|_| {
                let c = Connection::open_with_flags(
                    &path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(open_err)?;
                configure(&c).map_err(open_err)?;
                Ok(Mutex::new(c))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { path, writer: Mutex::new(writer), readers, vectors: VectorCache::default() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on a free reader (or waits for one).
    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        for r in &self.readers {
            if let Ok(conn) = r.try_lock() {
                return f(&conn);
            }
        }
        let conn = self.readers[0].lock().expect("reader lock");
        f(&conn)
    }

    /// Runs `f` inside an IMMEDIATE transaction on the writer; commits when it returns Ok.
    fn write<T>(&self, op: &'static str, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.writer.lock().expect("writer lock");
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::sql(op))?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::sql(op))?;
        Ok(out)
    }

    fn memories(&self, op: &'static str, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Memory>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(sql).map_err(StoreError::sql(op))?;
            stmt.query_map(params, rows::memory).and_then(|r| r.collect()).map_err(StoreError::sql(op))
        })
    }
}

fn message(row: &rusqlite::Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        id: parse(row, 0)?,
        scope: rows::scope(row, 1)?,
        role: parse(row, 5)?,
        content: row.get(6)?,
        at: time(row, 7)?,
    })
}

const MESSAGE_COLUMNS: &str = "id, tenant, agent, user_id, chat, role, content, at";

/// `?5, ?6, ...` placeholders for a list after the four scope parameters.
fn placeholders(n: usize, first: usize) -> String {
    (first..first + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

impl Store for SqliteStore {
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>> {
        self.write("append messages", |tx| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO messages (id, tenant, agent, user_id, chat, role, content, at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(StoreError::sql("append messages"))?;
            messages
                .iter()
                .map(|m| {
                    let [t, a, u, c] = m.scope.key_parts();
                    let fresh = stmt
                        .execute(params![m.id.as_str(), t, a, u, c, m.role.as_str(), m.content, ms(m.at)])
                        .map_err(StoreError::sql("append messages"))?
                        == 1;
                    if fresh {
                        fts::index_message(tx, tx.last_insert_rowid(), [t, a, u, c], &m.content)
                            .map_err(StoreError::sql("append messages"))?;
                    }
                    Ok(fresh)
                })
                .collect()
        })
    }

    fn embed_messages(&self, tenant: &TenantId, vectors: &[(MessageId, Embedding)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.write("embed messages", |tx| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO message_embeddings (message_rowid, model, dim, vector) \
                     SELECT rowid, ?3, ?4, ?5 FROM messages WHERE tenant = ?1 AND id = ?2 AND withheld = 0",
                )
                .map_err(StoreError::sql("embed messages"))?;
            for (id, e) in vectors {
                stmt.execute(params![
                    tenant.as_str(),
                    id.as_str(),
                    e.model,
                    e.vector.len() as i64,
                    vector_blob(&e.vector)
                ])
                .map_err(StoreError::sql("embed messages"))?;
            }
            Ok(())
        })
    }

    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if terms.is_empty() || u.is_empty() {
            return Ok(Vec::new());
        }
        // Every token of the index carries its partition: other users' messages are not in the
        // ranked set, and do not even weigh this user's terms.
        let partition = message_partition(t, a, u, c);
        self.read(|conn| {
            fts::search_messages(conn, &partition, terms, limit).map_err(StoreError::sql("search messages"))
        })
    }

    fn adjacent_messages(
        &self,
        tenant: &TenantId,
        ids: &[MessageId],
        span: usize,
    ) -> Result<Vec<(MessageId, Message)>> {
        if ids.is_empty() || span == 0 {
            return Ok(Vec::new());
        }
        let dialect = Dialect { order: "rowid", visible: "n.withheld = 0", params: ["?1", "?2", "?3"] };
        let sql = adjacent_sql(MESSAGE_COLUMNS, &dialect);
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&sql).map_err(StoreError::sql("adjacent messages"))?;
            let mut out = Vec::new();
            for id in ids {
                let found: Vec<Message> = stmt
                    .query_map(params![tenant.as_str(), id.as_str(), span as i64], message)
                    .and_then(|r| r.collect())
                    .map_err(StoreError::sql("adjacent messages"))?;
                out.extend(found.into_iter().map(|m| (id.clone(), m)));
            }
            Ok(out)
        })
    }

    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MessageId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if u.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<(MessageId, i64, Vec<u8>)> = self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT m.id, e.dim, e.vector FROM messages m JOIN message_embeddings e ON e.message_rowid = m.rowid \
                     WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 AND e.model = ?4 \
                     AND ?5 IN ('', m.chat)",
                )
                .map_err(StoreError::sql("nearest messages"))?;
            stmt.query_map(params![t, a, u, model, c], |r| Ok((parse(r, 0)?, r.get(1)?, r.get(2)?)))
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("nearest messages"))
        })?;
        let mut scored = Vec::with_capacity(rows.len());
        for (id, dim, blob) in rows {
            if dim as usize != query.len() {
                return Err(StoreError::Dimension {
                    model: model.to_string(),
                    expected: dim as usize,
                    got: query.len(),
                });
            }
            scored.push((id, vectors::dot(&blob_vector(&blob), query)));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(scored)
    }

    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 \
                     AND chat = ?4 ORDER BY at DESC, rowid DESC LIMIT ?5"
                ))
                .map_err(StoreError::sql("recent messages"))?;
            let mut out: Vec<Message> = stmt
                .query_map(params![t, a, u, c, limit as i64], message)
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("recent messages"))?;
            out.reverse();
            Ok(out)
        })
    }

    fn messages(&self, tenant: &TenantId, ids: &[MessageId]) -> Result<Vec<Message>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|conn| {
            let sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = ?1 AND id IN ({}) ORDER BY at, rowid",
                placeholders(ids.len(), 2)
            );
            let mut stmt = conn.prepare(&sql).map_err(StoreError::sql("messages"))?;
            let args = std::iter::once(tenant.as_str()).chain(ids.iter().map(MessageId::as_str));
            stmt.query_map(params_from_iter(args), message)
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("messages"))
        })
    }

    fn get(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Memory>> {
        self.read(|c| {
            c.prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = ?1 AND m.id = ?2"))
                .and_then(|mut s| s.query_row(params![tenant.as_str(), id.to_string()], rows::memory).optional())
                .map_err(StoreError::sql("get memory"))
        })
    }

    fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        // Unary `+` keeps the planner on the unique id index: without statistics it would
        // otherwise walk the scope index, i.e. every row of the user. Scope still filters.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({}) AND +m.tenant = ?1 AND +m.agent IN ('', ?2) \
             AND +m.user_id IN ('', ?3) AND +m.chat IN ('', ?4)",
            placeholders(ids.len(), 5)
        );
        let id_strs: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
        let args = [t, a, u, c].into_iter().map(str::to_string).chain(id_strs);
        let mut found = self.memories("get memories", &sql, params_from_iter(args))?;
        let pos: std::collections::HashMap<MemoryId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        found.sort_by_key(|m| pos.get(&m.id).copied().unwrap_or(usize::MAX));
        Ok(found)
    }

    fn list(&self, scope: &Scope, f: &ListFilter) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let mut sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE}");
        let mut args: Vec<String> = [t, a, u, c].into_iter().map(str::to_string).collect();
        if !f.kinds.is_empty() {
            sql.push_str(&format!(" AND m.kind IN ({})", placeholders(f.kinds.len(), args.len() + 1)));
            args.extend(f.kinds.iter().map(|k| k.as_str().to_string()));
        }
        if !f.statuses.is_empty() {
            sql.push_str(&format!(" AND m.status IN ({})", placeholders(f.statuses.len(), args.len() + 1)));
            args.extend(f.statuses.iter().map(|s| s.as_str().to_string()));
        }
        if let Some(text) = f.text.as_ref().filter(|t| !t.is_empty()) {
            sql.push_str(&format!(" AND instr(lower(m.content), lower(?{})) > 0", args.len() + 1));
            args.push(text.clone());
        }
        sql.push_str(" ORDER BY m.created_at DESC, m.id DESC");
        if f.limit > 0 {
            sql.push_str(&format!(" LIMIT {} OFFSET {}", f.limit, f.offset));
        } else if f.offset > 0 {
            sql.push_str(&format!(" LIMIT -1 OFFSET {}", f.offset));
        }
        self.memories("list memories", &sql, params_from_iter(args))
    }

    fn by_hash(&self, scope: &Scope, hash: &str) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_by_hash WHERE {VISIBLE} \
             AND m.content_hash = ?5 ORDER BY m.created_at, m.id"
        );
        self.memories("find by hash", &sql, params![t, a, u, c, hash])
    }

    fn find_by_key(&self, owner: &Scope, kind: Kind, key: &str) -> Result<Option<Memory>> {
        let [t, a, u, c] = owner.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 \
             AND m.chat = ?4 AND m.kind = ?5 AND m.key = ?6 AND m.status = 'active' ORDER BY m.created_at DESC LIMIT 1"
        );
        Ok(self.memories("find by key", &sql, params![t, a, u, c, kind.as_str(), key])?.into_iter().next())
    }

    fn exact_candidates(&self, scope: &Scope, due_by: DateTime<Utc>) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        // One index seek per branch; an OR across kinds or the pinned flag would make the planner
        // walk every active row of the user instead.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_keyed WHERE {VISIBLE} \
               AND m.status = 'active' AND m.kind = 'preference' AND m.key IS NOT NULL \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
               AND m.kind = 'protocol' \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_pinned WHERE {VISIBLE} \
               AND m.status = 'active' AND m.pinned = 1 \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_due WHERE {VISIBLE} \
               AND m.status = 'active' AND m.kind = 'open_loop' AND m.due_at IS NOT NULL AND m.due_at <= ?5"
        );
        self.memories("exact candidates", &sql, params![t, a, u, c, ms(due_by)])
    }

    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // The index holds active rows only, every token prefixed with its row's partition token:
        // a query names the partitions the scope can see, so ranking only ever sees rows the
        // caller may see, and BM25's document frequencies are those of these partitions alone.
        self.read(|conn| fts::search_memories(conn, scope, terms, limit).map_err(StoreError::sql("lexical search")))
    }

    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        self.read(|conn| self.vectors.search(conn, scope, model, query, limit))
    }

    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>> {
        self.read(|conn| self.vectors.cosines(conn, scope, model, query, ids))
    }

    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let like = (0..terms.len())
            .map(|i| format!("instr(lower(m.content), ?{}) > 0", i + 5))
            .collect::<Vec<_>>()
            .join(" OR ");
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {VISIBLE} AND m.status = 'active' AND ({like}) \
             ORDER BY m.updated_at DESC LIMIT {limit}"
        );
        let args = [t, a, u, c].into_iter().map(str::to_string).chain(terms.iter().map(|t| t.to_lowercase()));
        self.read(|conn| {
            let mut stmt = conn.prepare(&sql).map_err(StoreError::sql("substring search"))?;
            stmt.query_map(params_from_iter(args), |r| parse::<MemoryId>(r, 0))
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("substring search"))
        })
    }

    fn scan(&self, statuses: &[StatusKind], after: Option<MemoryId>, limit: usize) -> Result<Vec<Memory>> {
        if statuses.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id > ?1 AND m.status IN ({}) ORDER BY m.id LIMIT {limit}",
            placeholders(statuses.len(), 2)
        );
        let args = std::iter::once(after.map(|a| a.to_string()).unwrap_or_default())
            .chain(statuses.iter().map(|s| s.as_str().to_string()));
        self.memories("scan", &sql, params_from_iter(args))
    }

    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT memory_id, at, event, from_status, to_status, reason, sources FROM history \
                     WHERE tenant = ?1 AND memory_id = ?2 ORDER BY rowid",
                )
                .map_err(StoreError::sql("history"))?;
            stmt.query_map(params![tenant.as_str(), id.to_string()], |r| {
                let dec = |i: usize, s: String| {
                    serde_json::from_str(&s).map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
                    })
                };
                Ok(HistoryEntry {
                    memory: parse(r, 0)?,
                    at: time(r, 1)?,
                    event: parse(r, 2)?,
                    from_status: r.get::<_, Option<String>>(3)?.map(|s| dec(3, s)).transpose()?,
                    to_status: dec(4, r.get(4)?)?,
                    reason: r.get(5)?,
                    sources: rows::message_ids(r, 6)?,
                })
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("history"))
        })
    }

    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT from_id, to_id, kind, at FROM links WHERE tenant = ?1 AND (from_id = ?2 OR to_id = ?2) ORDER BY at, rowid",
                )
                .map_err(StoreError::sql("links"))?;
            stmt.query_map(params![tenant.as_str(), id.to_string()], |r| {
                Ok(Link { from: parse(r, 0)?, to: parse(r, 1)?, kind: parse(r, 2)?, at: time(r, 3)? })
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("links"))
        })
    }

    fn apply(&self, changes: &ChangeSet) -> Result<()> {
        if changes.changes.is_empty() {
            return Ok(());
        }
        self.write("apply", |tx| apply::apply(tx, changes))
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

    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str()).to_string();
        self.write("put policy", |tx| {
            let latest: Option<i64> = tx
                .query_row(
                    "SELECT max(version) FROM policies WHERE tenant = ?1 AND agent = ?2 AND key = ?3",
                    params![p.tenant.as_str(), agent, p.key],
                    |r| r.get(0),
                )
                .map_err(StoreError::sql("put policy"))?;
            tx.execute(
                "UPDATE policies SET effective_until = ?1 WHERE tenant = ?2 AND agent = ?3 AND key = ?4 \
                 AND (effective_until IS NULL OR effective_until > ?1)",
                params![ms(p.effective_from), p.tenant.as_str(), agent, p.key],
            )
            .map_err(StoreError::sql("put policy"))?;
            let stored = Policy { version: latest.unwrap_or(0) as u32 + 1, ..p.clone() };
            tx.execute(
                "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    stored.tenant.as_str(),
                    agent,
                    stored.key,
                    stored.version,
                    stored.text,
                    stored.value.to_string(),
                    ms(stored.effective_from),
                    rows::ms_opt(stored.effective_until)
                ],
            )
            .map_err(StoreError::sql("put policy"))?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
                     WHERE tenant = ?1 AND agent IN ('', ?2) ORDER BY key, agent, version",
                )
                .map_err(StoreError::sql("policies"))?;
            stmt.query_map(params![scope.tenant.as_str(), agent], |r| {
                let agent: String = r.get(1)?;
                let value: String = r.get(5)?;
                Ok(Policy {
                    tenant: parse(r, 0)?,
                    agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(
                        |e: mnemo_core::CoreError| {
                            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
                        },
                    )?,
                    key: r.get(2)?,
                    version: r.get(3)?,
                    text: r.get(4)?,
                    value: serde_json::from_str(&value).unwrap_or(serde_json::Value::Null),
                    effective_from: time(r, 6)?,
                    effective_until: time_opt(r, 7)?,
                })
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("policies"))
        })
    }

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

    fn try_job_lock(&self, name: &str) -> Result<Option<crate::JobLock>> {
        transfer::try_job_lock(self, name)
    }

    fn export(&self, visit: &mut dyn FnMut(crate::Record) -> Result<()>) -> Result<()> {
        transfer::export(self, visit)
    }

    fn import(&self) -> Result<Box<dyn crate::Importer + '_>> {
        transfer::import(self)
    }

    fn counts(&self) -> Result<crate::transfer::Counts> {
        transfer::counts(self)
    }

    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<crate::Embedding>> {
        transfer::embedding(self, tenant, id)
    }

    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        queue::enqueue(self, scope, messages, extract, at)
    }

    fn chats_with_work(
        &self,
        now: DateTime<Utc>,
        memo_every: usize,
        active_since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::ChatProgress>> {
        queue::chats_with_work(self, now, memo_every, active_since, limit)
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<crate::ChatProgress>> {
        queue::chat_progress(self, scope)
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        queue::claim_chat(self, scope, now, until)
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        queue::release_chat(self, scope)
    }

    fn queued(
        &self,
        scope: &Scope,
        state: crate::QueueState,
        due_by: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::Queued>> {
        queue::queued(self, scope, state, due_by, limit)
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &crate::Settlement) -> Result<()> {
        queue::settle(self, scope, messages, outcome)
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        queue::chat_messages(self, scope, offset, limit)
    }

    fn advance_cursor(
        &self,
        scope: &Scope,
        cursor: crate::ChatCursor,
        from: usize,
        to: usize,
        gap: Option<&str>,
    ) -> Result<bool> {
        queue::advance_cursor(self, scope, cursor, from, to, gap)
    }

    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        queue::user_messages(self, scope, from, to, limit)
    }

    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<mnemo_core::UserState> {
        users::user_state(self, tenant, user)
    }

    fn set_user_state(
        &self,
        tenant: &TenantId,
        user: &UserId,
        state: mnemo_core::UserState,
        at: DateTime<Utc>,
    ) -> Result<()> {
        users::set_user_state(self, tenant, user, state, at)
    }

    fn sweep_traces(&self, op: mnemo_core::trace::TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
        retention::sweep_traces(self, op, before, limit)
    }
}
