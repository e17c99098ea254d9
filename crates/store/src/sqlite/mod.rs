//! The embedded default: one SQLite file in WAL mode, FTS5 for BM25, vectors as blobs scored
//! exactly within scope.

mod apply;
mod checkpoint;
mod documents;
mod fts;
mod lexicon;
mod lock;
mod memories;
mod messages;
mod observations;
mod policies;
mod queue;
mod rows;
mod schema;
mod search;
mod traces;
mod transfer;
mod turnstile;
mod users;
mod vectors;

use std::path::{Path, PathBuf};

use mnemo_core::Memory;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::{Result, StoreError};
use crate::message_vectors::MessageVectorCache;
use crate::plan::turn::Durability;
use crate::vectors::VectorCache;
use turnstile::Pool;

/// Readers kept open beside the writer; WAL lets them run while a write is in progress.
const READERS: usize = 4;

/// Prepared statements each connection keeps.
const STATEMENT_CACHE: usize = 256;

/// The SQLite backend.
pub struct SqliteStore {
    path: PathBuf,
    writer: Pool<Writer>,
    readers: Pool<Connection>,
    pub(crate) vectors: VectorCache,
    /// Archival recall's vectors of each user's messages ([`crate::message_vectors`]).
    pub(crate) message_vectors: MessageVectorCache,
    /// The write-ahead log's checkpoints, off the writer's commits ([`checkpoint`]).
    checkpoints: checkpoint::Checkpointer,
}

/// The one read-write connection of a handle, and how far its commits go.
struct Writer {
    conn: Connection,
    /// What SQLite's `synchronous` is set to now.
    durability: Durability,
}

impl Writer {
    /// Sets how far the next commit goes. SQLite's `synchronous` cannot change inside a
    /// transaction, so every write sets the one it needs first; it costs a statement only when
    /// it differs from the last write's.
    fn set(&mut self, durability: Durability) -> rusqlite::Result<()> {
        if self.durability != durability {
            let level = match durability {
                Durability::Flushed => "FULL",
                // In WAL mode NORMAL never corrupts; the commit reaches the disk with the next
                // synced one or the next checkpoint.
                Durability::Logged => "NORMAL",
            };
            self.conn.pragma_update(None, "synchronous", level)?;
            self.durability = durability;
        }
        Ok(())
    }
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
    // A statement is planned once, when prepared. Without the query planner stability
    // guarantee SQLite plans it again on every run with new parameters wherever it may peek at
    // them (any `LIMIT ?`, a value compared to an indexed column that has STAT4 samples): every
    // read of a turn was parsed and planned twice, a third of `context()`'s CPU time. Our
    // statements are written for their indexes, so a value-blind plan loses nothing.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    // A turn runs a few dozen distinct statements (lists of ids of varying length included);
    // rusqlite's default of 16 cached ones made most of them parse again on every turn.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
        // The log is checkpointed by a thread of its own, the writer's commits only past a
        // bound ([`checkpoint`]).
        checkpoint::bound_writer(&writer, checkpoint::BOUND_PAGES).map_err(open_err)?;
        let checkpointing = Connection::open(&path).map_err(open_err)?;
        configure(&checkpointing).map_err(open_err)?;
        let checkpoints = checkpoint::Checkpointer::start(checkpointing).map_err(|e| StoreError::Open {
            path: path.clone(),
            reason: format!("cannot start the checkpoint thread: {e}"),
        })?;
        let readers = (0..READERS)
            .map(|_| {
                let c = Connection::open_with_flags(
                    &path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(open_err)?;
                configure(&c).map_err(open_err)?;
                Ok(c)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            path,
            writer: Pool::new(vec![Writer { conn: writer, durability: Durability::Flushed }]),
            readers: Pool::new(readers),
            vectors: VectorCache::default(),
            message_vectors: MessageVectorCache::default(),
            checkpoints,
        })
    }

    /// The same store with its in-process caches held to `budgets` (before any read fills them).
    ///
    /// SQLite's heap budget is its soft heap limit, which holds for the whole process: the last
    /// store opened sets it for every store of the process.
    pub fn with_cache_budgets(mut self, budgets: crate::CacheBudgets) -> Result<Self> {
        self.vectors = VectorCache::with_budget(budgets.memory_vectors);
        self.message_vectors = MessageVectorCache::with_budget(budgets.message_vectors);
        let limit = i64::try_from(budgets.sqlite_heap).unwrap_or(i64::MAX);
        self.writer
            .take()
            .conn
            .pragma_update_and_check(None, "soft_heap_limit", limit, |r| r.get::<_, i64>(0))
            .map_err(StoreError::sql("set SQLite's soft heap limit"))?;
        Ok(self)
    }

    /// SQLite's soft heap limit in force for the process, in bytes (0: none).
    pub fn sqlite_heap_limit(&self) -> Result<i64> {
        self.read(|c| {
            c.pragma_query_value(None, "soft_heap_limit", |r| r.get(0)).map_err(StoreError::sql("heap limit"))
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on a free reader, or waits for one in turn ([`turnstile`]).
    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        f(&self.readers.take())
    }

    /// Runs `f` inside an IMMEDIATE transaction on the writer; commits when it returns Ok.
    fn write<T>(&self, op: &'static str, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>) -> Result<T> {
        self.write_then(op, f, |out| out)
    }

    /// [`SqliteStore::write`], then `after` with what `f` returned, once committed and before
    /// this handle's next write can begin: how the vector cache follows this handle's writes in
    /// the order they were committed.
    fn write_then<T, R>(
        &self,
        op: &'static str,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>,
        after: impl FnOnce(T) -> R,
    ) -> Result<R> {
        self.commit(op, Durability::Flushed, f, after)
    }

    /// [`SqliteStore::write_then`], committed as far as `durability` says, on the writer taken
    /// in turn ([`turnstile`]).
    fn commit<T, R>(
        &self,
        op: &'static str,
        durability: Durability,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>,
        after: impl FnOnce(T) -> R,
    ) -> Result<R> {
        let mut writer = self.writer.take();
        writer.set(durability).map_err(StoreError::sql(op))?;
        let tx = writer.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::sql(op))?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::sql(op))?;
        self.checkpoints.committed();
        Ok(after(out))
    }

    /// Memories selected with [`MEMORY_COLUMNS`](crate::rows::MEMORY_COLUMNS) by the shared
    /// statement `sql`, on a reader.
    fn query_memories(&self, op: &'static str, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Memory>> {
        self.read(|c| rows::query(c, op, sql, params, |r| crate::rows::decode::memory(r)))
    }
}

/// `?5, ?6, ...` placeholders for a list after the four scope parameters.
fn placeholders(n: usize, first: usize) -> String {
    (first..first + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use rusqlite::StatementStatus;

    use super::*;
    use crate::sql::Dialect;

    /// How SQLite plans `sql` (the detail column of each step), with every parameter bound.
    pub(crate) fn plan(store: &SqliteStore, sql: &str, args: impl rusqlite::Params) -> Vec<String> {
        store
            .read(|conn| {
                let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", Dialect::Sqlite.sql(sql))).unwrap();
                let steps = stmt.query_map(args, |r| r.get::<_, String>(3)).unwrap();
                Ok(steps.map(|s| s.unwrap()).collect())
            })
            .unwrap()
    }

    /// The heap budget reaches SQLite as its soft heap limit, which bounds the page caches of
    /// every connection together (each alone may hold 16 MB).
    #[test]
    fn the_heap_budget_is_sqlites_soft_heap_limit() {
        let dir = tempfile::tempdir().unwrap();
        let budgets = crate::CacheBudgets { sqlite_heap: 8 << 20, ..crate::CacheBudgets::default() };
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap().with_cache_budgets(budgets).unwrap();
        assert_eq!(store.sqlite_heap_limit().unwrap(), 8 << 20);
        let store = store.with_cache_budgets(crate::CacheBudgets::default()).unwrap();
        assert_eq!(store.sqlite_heap_limit().unwrap(), i64::try_from(crate::DEFAULT_SQLITE_HEAP).unwrap());
    }

    /// A cached statement run again with new parameters is not planned again, on the writer or
    /// on a reader: neither for its `LIMIT` nor for a value compared to an indexed column.
    #[test]
    fn statements_are_planned_once_whatever_their_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        let sql = "SELECT id FROM memories WHERE tenant = ?1 AND user_id = ?2 LIMIT ?3";
        let runs = |conn: &Connection| {
            for (user, limit) in [("dana", 1), ("eve", 5), ("dana", 50)] {
                let mut stmt = conn.prepare_cached(sql).unwrap();
                let rows: Vec<String> = stmt
                    .query_map(rusqlite::params!["acme", user, limit], |r| r.get(0))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                assert!(rows.is_empty());
                assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "planned again for {user}, {limit}");
            }
        };
        runs(&store.writer.take().conn);
        store
            .read(|conn| {
                runs(conn);
                Ok(())
            })
            .unwrap();
    }
}
