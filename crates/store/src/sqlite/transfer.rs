//! Whole-store copy for SQLite: export every row as [`Record`]s from one read snapshot, import
//! planned records into an empty store (rebuilding the FTS rows and partition versions), count
//! rows per table. What a record is as a row is shared ([`plan::import`](crate::plan::import), [`decode::record`]);
//! here are only the tables this backend lays out its own way (vectors and sessions by rowid).

use std::collections::HashMap;

use mnemo_core::{MemoryId, TenantId};
use rusqlite::{OptionalExtension, Transaction, params, params_from_iter};

use super::SqliteStore;
use super::apply::{bump_messages, bump_partition, insert_memory};
use super::fts;
use super::rows::{insert, query, query_opt, vector_blob};
use crate::Embedding;
use crate::error::{Result, StoreError};
use crate::plan::import::{self as plan, Step};
use crate::rows::{Row, decode};
use crate::sql::Dialect;
use crate::sql::transfer::export_sql;
use crate::transfer::{Counts, Importer, Record, TABLES, Transfer, empty_counts, out_of_order, refuse_unless_empty};

fn sql(op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sqlite { op, source }
}

/// The export query of a table laid out the SQLite way: vectors and sessions keyed by rowid.
fn own_export_sql(table: &str) -> String {
    match table {
        "message_embeddings" => {
            "SELECT m.tenant, m.agent, m.user_id, m.chat, m.id, e.model, e.vector, e.passages FROM message_embeddings e \
             JOIN messages m ON m.rowid = e.message_rowid ORDER BY m.rowid"
                .into()
        }
        "memories" => format!(
            "SELECT {}, e.model, e.vector FROM memories m LEFT JOIN embeddings e ON e.memory_rowid = m.rowid \
             ORDER BY m.id",
            crate::rows::MEMORY_COLUMNS
        ),
        "documents" => format!(
            "SELECT {}, v.model, v.vector FROM documents m LEFT JOIN document_vectors v ON v.document_id = m.id \
             ORDER BY m.id",
            crate::sql::documents::COLUMNS
        ),
        "memory_sessions" => "SELECT m.tenant, m.id, s.session FROM memory_sessions s \
             JOIN memories m ON m.rowid = s.memory_rowid ORDER BY m.id, s.session"
            .into(),
        other => unreachable!("{other} has a shared export query"),
    }
}

struct SqliteImporter<'a> {
    store: &'a SqliteStore,
    /// Dimension of each model's vectors, as committed by earlier batches.
    dims: HashMap<String, usize>,
}

impl Importer for SqliteImporter<'_> {
    fn write(&mut self, batch: &[Record]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let plan = plan::plan(batch)?;
        let mut dims = self.dims.clone();
        self.store.write("import", |tx| write_batch(tx, &plan, &mut dims))?;
        self.dims = dims;
        Ok(())
    }
}

/// The rowid of row `id` of `table` (`messages`, `memories`) the import wrote, or the refusal
/// of `what` (a record naming the `noun` it has not).
fn rowid_of(tx: &Transaction<'_>, table: &str, noun: &str, tenant: &TenantId, id: &str, what: &str) -> Result<i64> {
    tx.prepare_cached(&format!("SELECT rowid FROM {table} WHERE tenant = ?1 AND id = ?2"))
        .and_then(|mut s| s.query_row(params![tenant.as_str(), id], |r| r.get(0)).optional())
        .map_err(sql("import"))?
        .ok_or_else(|| out_of_order(what, &format!("{noun} {id}")))
}

fn write_batch(tx: &Transaction<'_>, plan: &plan::Plan<'_>, dims: &mut HashMap<String, usize>) -> Result<()> {
    let e = sql("import");
    for step in &plan.steps {
        match step {
            Step::Row { insert: row, requires } => {
                if let Some(r) = requires
                    && query_opt(tx, "import", r.sql, params_from_iter(&r.params), |_| Ok(()))?.is_none()
                {
                    return Err(r.refusal());
                }
                insert(tx, "import", row)?;
            }
            Step::Message { insert: row, message: m, withheld } => {
                insert(tx, "import", row)?;
                // Archival recall's lexical index holds the messages that are not withheld.
                if !withheld {
                    fts::index_message(tx, tx.last_insert_rowid(), m.scope.key_parts(), &m.content).map_err(&e)?;
                }
            }
            Step::MessageEmbedding { scope, message, vectors } => {
                let v = &vectors.embedding;
                let [t, _, u, c] = scope.key_parts();
                let rowid = tx
                    .prepare_cached(
                        "SELECT rowid FROM messages WHERE tenant = ?1 AND user_id = ?2 AND chat = ?3 AND id = ?4",
                    )
                    .and_then(|mut s| {
                        s.query_row(params![t, u, c, message.as_str()], |r| r.get::<_, i64>(0)).optional()
                    })
                    .map_err(sql("import"))?
                    .ok_or_else(|| out_of_order("a message vector", &format!("message {message}")))?;
                tx.prepare_cached(
                    "INSERT INTO message_embeddings (message_rowid, model, dim, vector, passages) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut s| {
                    let passages = super::messages::passages_blob(&vectors.passages);
                    s.execute(params![rowid, v.model, v.vector.len() as i64, vector_blob(&v.vector), passages])
                })
                .map_err(&e)?;
                bump_messages(tx, t, u)?;
            }
            Step::Memory { memory, embedding } => {
                let rowid = insert_memory(tx, memory)?;
                if let Some(v) = embedding {
                    check_dim(tx, dims, v)?;
                    tx.prepare_cached(
                        "INSERT INTO embeddings (memory_rowid, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut s| s.execute(params![rowid, v.model, v.vector.len() as i64, vector_blob(&v.vector)]))
                    .map_err(&e)?;
                }
            }
            Step::Document { document, embedding } => super::documents::write(tx, document, *embedding)?,
            Step::Observation { observation, embedding } => super::observations::write(tx, observation, *embedding)?,
            Step::Session { tenant, memory, session } => {
                let rowid = rowid_of(tx, "memories", "memory", tenant, &memory.to_string(), "a session")?;
                tx.prepare_cached("INSERT INTO memory_sessions (memory_rowid, session) VALUES (?1, ?2)")
                    .and_then(|mut s| s.execute(params![rowid, session]))
                    .map_err(&e)?;
            }
        }
    }
    // No vector delta: an import is a bulk load, and the caches of every handle, this one's
    // included, reload what it moved.
    for partition in &plan.partitions {
        bump_partition(tx, partition)?;
    }
    Ok(())
}

/// Refuses a vector whose dimension differs from its model's others (already stored or earlier
/// in this import).
fn check_dim(tx: &Transaction<'_>, dims: &mut HashMap<String, usize>, v: &Embedding) -> Result<()> {
    let expected = match dims.get(&v.model) {
        Some(d) => Some(*d),
        None => tx
            .query_row("SELECT dim FROM embeddings WHERE model = ?1 LIMIT 1", [&v.model], |r| r.get::<_, i64>(0))
            .optional()
            .map_err(sql("import"))?
            .map(|d| d as usize),
    };
    match expected {
        Some(d) if d != v.vector.len() => {
            Err(StoreError::Dimension { model: v.model.clone(), expected: d, got: v.vector.len() })
        }
        _ => {
            dims.insert(v.model.clone(), v.vector.len());
            Ok(())
        }
    }
}

impl Transfer for SqliteStore {
    /// Streams every row to `visit`, table by table, all from one read snapshot (a write committed
    /// meanwhile is either wholly in the export or not at all). Stops at the first error of `visit`.
    fn export(&self, visit: &mut dyn FnMut(Record) -> Result<()>) -> Result<()> {
        self.read(|conn| {
            let snapshot = conn.unchecked_transaction().map_err(sql("export"))?;
            for table in decode::exported_tables() {
                let query = export_sql(table, Dialect::Sqlite).unwrap_or_else(|| own_export_sql(table));
                let mut stmt = snapshot.prepare(&query).map_err(sql("export"))?;
                let mut rows = stmt.query([]).map_err(sql("export"))?;
                while let Some(row) = rows.next().map_err(sql("export"))? {
                    visit(decode::record(table, row)?)?;
                }
            }
            snapshot.commit().map_err(sql("export"))
        })
    }

    /// Starts an import, refusing a store that holds any row of a copied table.
    fn import(&self) -> Result<Box<dyn Importer + '_>> {
        refuse_unless_empty(self.counts()?, &self.path().display().to_string())?;
        Ok(Box::new(SqliteImporter { store: self, dims: HashMap::new() }))
    }

    /// How many rows each table of [`TABLES`] holds. The table names are ours (a fixed list),
    /// never input, so they can be formatted into the query.
    fn counts(&self) -> Result<Counts> {
        self.read(|conn| {
            let mut out = empty_counts();
            for table in TABLES {
                let n = query(conn, "count rows", &format!("SELECT count(*) FROM {table}"), [], |r| r.int(0))?;
                out.insert(table.to_string(), n.first().copied().unwrap_or(0) as u64);
            }
            Ok(out)
        })
    }

    /// The stored vector of one memory of the tenant.
    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Embedding>> {
        self.read(|conn| {
            let sql = "SELECT e.model, e.vector FROM embeddings e JOIN memories m ON m.rowid = e.memory_rowid \
                       WHERE m.tenant = $1 AND m.id = $2";
            let found = query_opt(conn, "get embedding", sql, params![tenant.as_str(), id.to_string()], |r| {
                r.vector(1)?.map(|vector| Ok(Embedding { model: r.text(0)?, vector })).transpose()
            })?;
            Ok(found.flatten())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{SqliteStore, TABLES};

    /// Tables a copy does not move because the importing backend rebuilds them from the rows it
    /// imports: the FTS5 indexes (with their shadow tables), the partition versions and the
    /// users' message versions.
    const REBUILT: &[&str] = &["memory_fts", "message_fts", "partitions", "message_versions"];

    /// Tables every store makes for itself with its schema and a copy leaves alone: the
    /// installation's secrets (the erasure subject key) stay with the installation that made
    /// them, and the target keys its own erasures from then on.
    const OWN: &[&str] = &["installation"];

    /// A table added by a migration must be either copied by `mnemo copy` or rebuilt by the
    /// target; this fails until whoever adds one decides which (and says so in `TABLES` or
    /// `REBUILT`), so no table is silently left behind by a copy.
    #[test]
    fn every_table_is_copied_or_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        let tables: Vec<String> = store
            .read(|c| {
                c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                    .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                    .map_err(crate::StoreError::sql("list tables"))
            })
            .unwrap();
        for table in &tables {
            let shadow = REBUILT.iter().any(|r| table.starts_with(&format!("{r}_")));
            assert!(
                TABLES.contains(&table.as_str())
                    || REBUILT.contains(&table.as_str())
                    || OWN.contains(&table.as_str())
                    || shadow,
                "table {table} is neither copied by `mnemo copy` (crate::transfer::TABLES, with a Record variant \
                 and what the module header of crate::transfer lists) nor rebuilt by the importing backend \
                 (REBUILT in sqlite/transfer.rs's tests): decide which"
            );
        }
        for t in TABLES.iter().chain(REBUILT).chain(OWN) {
            assert!(tables.iter().any(|x| x == t), "{t} is listed but the schema has no such table");
        }
    }
}
