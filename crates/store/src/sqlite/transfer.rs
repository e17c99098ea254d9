//! Whole-store copy for SQLite: export every row as [`Record`]s from one read snapshot, import
//! records verbatim into an empty store (rebuilding the FTS rows and partition versions), count
//! rows per table.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mnemo_core::{HistoryEntry, Link, MemoryId, Status, TenantId};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::apply::insert_memory;
use super::fts;
use super::rows::{blob_vector, ids_json, message_ids, ms, ms_opt, parse, time, time_opt, vector_blob};
use super::{MESSAGE_COLUMNS, SqliteStore};
use crate::error::{Result, StoreError};
use crate::queue::ChatProgress;
use crate::transfer::{
    Counts, Importer, QueueRow, Record, TABLES, TraceRow, Transfer, empty_counts, not_empty, out_of_order,
};
use crate::{DeletionEvent, Embedding};

fn sql(op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sqlite { op, source }
}

fn bad(idx: usize, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, e.to_string().into())
}

/// Reads a JSON text column.
fn json<T: serde::de::DeserializeOwned>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s).map_err(|e| bad(idx, e))
}

/// Reads a count column (never negative; a negative one is refused rather than copied as zero).
fn counter(row: &Row<'_>, idx: usize) -> rusqlite::Result<usize> {
    let v: i64 = row.get(idx)?;
    usize::try_from(v).map_err(|e| bad(idx, format!("count {v}: {e}")))
}

/// One table's export: the query, in a stable order, and how a row becomes a record.
type Decode = fn(&Row<'_>) -> rusqlite::Result<Record>;

/// The export of every table, in [`TABLES`] order (embeddings travel with their memories).
fn exports() -> Vec<(&'static str, String, Decode)> {
    vec![
        ("messages", format!("SELECT {MESSAGE_COLUMNS}, withheld FROM messages ORDER BY rowid"), |r| {
            Ok(Record::Message { message: super::message(r)?, withheld: r.get(8)? })
        }),
        (
            "message_embeddings",
            "SELECT m.tenant, m.id, e.model, e.vector FROM message_embeddings e \
             JOIN messages m ON m.rowid = e.message_rowid ORDER BY m.rowid"
                .into(),
            |r| {
                Ok(Record::MessageEmbedding {
                    tenant: parse(r, 0)?,
                    message: parse(r, 1)?,
                    embedding: Embedding { model: r.get(2)?, vector: blob_vector(&r.get::<_, Vec<u8>>(3)?) },
                })
            },
        ),
        (
            "memories",
            format!(
                "SELECT {}, e.model, e.vector FROM memories m LEFT JOIN embeddings e ON e.memory_rowid = m.rowid \
                 ORDER BY m.id",
                super::rows::MEMORY_COLUMNS
            ),
            |r| {
                let model: Option<String> = r.get(32)?;
                let vector: Option<Vec<u8>> = r.get(33)?;
                let embedding = model.zip(vector).map(|(model, v)| Embedding { model, vector: blob_vector(&v) });
                Ok(Record::Memory { memory: super::rows::memory(r)?, embedding })
            },
        ),
        (
            "history",
            "SELECT tenant, memory_id, at, event, from_status, to_status, reason, sources FROM history ORDER BY rowid"
                .into(),
            |r| {
                let from: Option<String> = r.get(4)?;
                Ok(Record::History {
                    tenant: parse(r, 0)?,
                    entry: HistoryEntry {
                        memory: parse(r, 1)?,
                        at: time(r, 2)?,
                        event: parse(r, 3)?,
                        from_status: from.map(|s| serde_json::from_str(&s).map_err(|e| bad(4, e))).transpose()?,
                        to_status: json(r, 5)?,
                        reason: r.get(6)?,
                        sources: message_ids(r, 7)?,
                    },
                })
            },
        ),
        ("links", "SELECT tenant, from_id, to_id, kind, at FROM links ORDER BY rowid".into(), |r| {
            Ok(Record::Link {
                tenant: parse(r, 0)?,
                link: Link { from: parse(r, 1)?, to: parse(r, 2)?, kind: parse(r, 3)?, at: time(r, 4)? },
            })
        }),
        (
            "memory_sessions",
            "SELECT m.tenant, m.id, s.session FROM memory_sessions s JOIN memories m ON m.rowid = s.memory_rowid \
             ORDER BY m.id, s.session"
                .into(),
            |r| Ok(Record::Session { tenant: parse(r, 0)?, memory: parse(r, 1)?, session: r.get(2)? }),
        ),
        (
            "policies",
            "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
             ORDER BY tenant, agent, key, version"
                .into(),
            |r| {
                let agent: String = r.get(1)?;
                Ok(Record::Policy(mnemo_core::Policy {
                    tenant: parse(r, 0)?,
                    agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(|e| bad(1, e))?,
                    key: r.get(2)?,
                    version: r.get(3)?,
                    text: r.get(4)?,
                    value: json(r, 5)?,
                    effective_from: time(r, 6)?,
                    effective_until: time_opt(r, 7)?,
                }))
            },
        ),
        (
            "traces",
            "SELECT turn_id, tenant, agent, user_id, chat, op, at, surfaced, body FROM traces ORDER BY rowid".into(),
            |r| {
                Ok(Record::Trace(TraceRow {
                    turn_id: r.get(0)?,
                    scope: super::rows::scope(r, 1)?,
                    op: r.get(5)?,
                    at: time(r, 6)?,
                    surfaced: json(r, 7)?,
                    body: r.get(8)?,
                }))
            },
        ),
        ("deletions", "SELECT tenant, subject, at, counts, digest FROM deletions ORDER BY rowid".into(), |r| {
            Ok(Record::Deletion {
                tenant: parse(r, 0)?,
                event: DeletionEvent { subject: r.get(1)?, at: time(r, 2)?, digest: r.get(4)? },
                counts: json(r, 3)?,
            })
        }),
        (
            "extraction_queue",
            "SELECT tenant, agent, user_id, chat, message_id, state, attempts, retry_at, last_error, fallback, \
             queued_at FROM extraction_queue ORDER BY rowid"
                .into(),
            |r| {
                Ok(Record::Queued(QueueRow {
                    scope: super::rows::scope(r, 0)?,
                    message: parse(r, 4)?,
                    state: parse(r, 5)?,
                    attempts: r.get(6)?,
                    retry_at: time_opt(r, 7)?,
                    last_error: r.get(8)?,
                    fallback: json(r, 9)?,
                    queued_at: time(r, 10)?,
                }))
            },
        ),
        (
            "chat_progress",
            "SELECT tenant, agent, user_id, chat, messages, pending, retrying, retry_at, last_message_at, \
             memo_covered, memo_gaps, episode_checked, last_error, claimed_until FROM chat_progress \
             ORDER BY tenant, agent, user_id, chat"
                .into(),
            |r| {
                Ok(Record::ChatProgress {
                    progress: ChatProgress {
                        scope: super::rows::scope(r, 0)?,
                        messages: counter(r, 4)?,
                        pending: counter(r, 5)?,
                        retrying: counter(r, 6)?,
                        retry_at: time_opt(r, 7)?,
                        last_message_at: time(r, 8)?,
                        memo_covered: counter(r, 9)?,
                        memo_gaps: counter(r, 10)?,
                        episode_checked: counter(r, 11)?,
                        last_error: r.get(12)?,
                    },
                    claimed_until: time_opt(r, 13)?,
                })
            },
        ),
        (
            "user_states",
            "SELECT tenant, user_id, state, updated_at FROM user_states ORDER BY tenant, user_id".into(),
            |r| {
                Ok(Record::UserState {
                    tenant: parse(r, 0)?,
                    user: parse(r, 1)?,
                    state: parse(r, 2)?,
                    updated_at: time(r, 3)?,
                })
            },
        ),
    ]
}

fn export_table(
    conn: &Connection,
    query: &str,
    decode: Decode,
    visit: &mut dyn FnMut(Record) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn.prepare(query).map_err(sql("export"))?;
    let mut rows = stmt.query([]).map_err(sql("export"))?;
    while let Some(row) = rows.next().map_err(sql("export"))? {
        visit(decode(row).map_err(sql("export"))?)?;
    }
    Ok(())
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
        let mut dims = self.dims.clone();
        self.store.write("import", |tx| write_batch(tx, batch, &mut dims))?;
        self.dims = dims;
        Ok(())
    }
}

fn write_batch(tx: &Transaction<'_>, batch: &[Record], dims: &mut HashMap<String, usize>) -> Result<()> {
    let e = sql("import");
    let mut touched: BTreeSet<[String; 4]> = BTreeSet::new();
    for record in batch {
        match record {
            Record::Message { message: m, withheld } => {
                let [t, a, u, c] = m.scope.key_parts();
                tx.prepare_cached(
                    "INSERT INTO messages (id, tenant, agent, user_id, chat, role, content, at, withheld) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .and_then(|mut s| {
                    s.execute(params![m.id.as_str(), t, a, u, c, m.role.as_str(), m.content, ms(m.at), withheld])
                })
                .map_err(&e)?;
                // Archival recall's lexical index holds the messages that are not withheld.
                if !withheld {
                    fts::index_message(tx, tx.last_insert_rowid(), [t, a, u, c], &m.content).map_err(&e)?;
                }
            }
            Record::MessageEmbedding { tenant, message, embedding: v } => {
                let rowid: i64 = tx
                    .prepare_cached("SELECT rowid FROM messages WHERE tenant = ?1 AND id = ?2")
                    .and_then(|mut s| s.query_row(params![tenant.as_str(), message.as_str()], |r| r.get(0)).optional())
                    .map_err(&e)?
                    .ok_or_else(|| out_of_order("a message vector", &format!("message {message}")))?;
                tx.prepare_cached(
                    "INSERT INTO message_embeddings (message_rowid, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
                )
                .and_then(|mut s| s.execute(params![rowid, v.model, v.vector.len() as i64, vector_blob(&v.vector)]))
                .map_err(&e)?;
            }
            Record::Memory { memory, embedding } => {
                let rowid = insert_memory(tx, memory)?;
                if let Some(v) = embedding {
                    check_dim(tx, dims, v)?;
                    tx.prepare_cached(
                        "INSERT INTO embeddings (memory_rowid, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut s| s.execute(params![rowid, v.model, v.vector.len() as i64, vector_blob(&v.vector)]))
                    .map_err(&e)?;
                }
                touched.insert(memory.owner.key_parts().map(str::to_string));
            }
            Record::History { tenant, entry: h } => {
                let enc = |s: &Status| serde_json::to_string(s).expect("status serialises");
                tx.prepare_cached(
                    "INSERT INTO history (tenant, memory_id, at, event, from_status, to_status, reason, sources) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        tenant.as_str(),
                        h.memory.to_string(),
                        ms(h.at),
                        h.event.as_str(),
                        h.from_status.as_ref().map(enc),
                        enc(&h.to_status),
                        h.reason,
                        ids_json(&h.sources)
                    ])
                })
                .map_err(&e)?;
            }
            Record::Link { tenant, link } => {
                tx.prepare_cached("INSERT INTO links (tenant, from_id, to_id, kind, at) VALUES (?1, ?2, ?3, ?4, ?5)")
                    .and_then(|mut s| {
                        s.execute(params![
                            tenant.as_str(),
                            link.from.to_string(),
                            link.to.to_string(),
                            link.kind.as_str(),
                            ms(link.at)
                        ])
                    })
                    .map_err(&e)?;
            }
            Record::Session { tenant, memory, session } => {
                let rowid: i64 = tx
                    .prepare_cached("SELECT rowid FROM memories WHERE tenant = ?1 AND id = ?2")
                    .and_then(|mut s| {
                        s.query_row(params![tenant.as_str(), memory.to_string()], |r| r.get(0)).optional()
                    })
                    .map_err(&e)?
                    .ok_or_else(|| out_of_order("a session", &format!("memory {memory}")))?;
                tx.prepare_cached("INSERT INTO memory_sessions (memory_rowid, session) VALUES (?1, ?2)")
                    .and_then(|mut s| s.execute(params![rowid, session]))
                    .map_err(&e)?;
            }
            Record::Policy(p) => {
                tx.prepare_cached(
                    "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        p.tenant.as_str(),
                        p.agent.as_ref().map_or("", |a| a.as_str()),
                        p.key,
                        p.version,
                        p.text,
                        p.value.to_string(),
                        ms(p.effective_from),
                        ms_opt(p.effective_until)
                    ])
                })
                .map_err(&e)?;
            }
            Record::Trace(t) => {
                let [tn, a, u, c] = t.scope.key_parts();
                let surfaced = serde_json::to_string(&t.surfaced).expect("ids serialise");
                tx.prepare_cached(
                    "INSERT INTO traces (turn_id, tenant, agent, user_id, chat, op, at, surfaced, body) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .and_then(|mut s| s.execute(params![t.turn_id, tn, a, u, c, t.op, ms(t.at), surfaced, t.body]))
                .map_err(&e)?;
            }
            Record::Deletion { tenant, event, counts } => {
                let counts = serde_json::to_string(counts).expect("counts serialise");
                tx.prepare_cached(
                    "INSERT INTO deletions (tenant, subject, at, counts, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut s| {
                    s.execute(params![tenant.as_str(), event.subject, ms(event.at), counts, event.digest])
                })
                .map_err(&e)?;
            }
            Record::Queued(q) => {
                let [t, a, u, c] = q.scope.key_parts();
                let known: Option<i64> = tx
                    .prepare_cached(
                        "SELECT 1 FROM messages WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4 \
                         AND id = ?5",
                    )
                    .and_then(|mut s| s.query_row(params![t, a, u, c, q.message.as_str()], |r| r.get(0)).optional())
                    .map_err(&e)?;
                if known.is_none() {
                    return Err(out_of_order("a queue row", &format!("message {} of {}", q.message, q.scope)));
                }
                let fallback = serde_json::to_string(&q.fallback).expect("ids serialise");
                // Rowids grow in insertion order, so export order is registration order again.
                tx.prepare_cached(
                    "INSERT INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, attempts, \
                     retry_at, last_error, fallback, queued_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        t,
                        a,
                        u,
                        c,
                        q.message.as_str(),
                        q.state.as_str(),
                        q.attempts,
                        ms_opt(q.retry_at),
                        q.last_error,
                        fallback,
                        ms(q.queued_at)
                    ])
                })
                .map_err(&e)?;
            }
            Record::ChatProgress { progress: p, claimed_until } => {
                let [t, a, u, c] = p.scope.key_parts();
                let n = |v: usize| v as i64;
                tx.prepare_cached(
                    "INSERT INTO chat_progress (tenant, agent, user_id, chat, messages, pending, retrying, retry_at, \
                     last_message_at, memo_covered, memo_gaps, episode_checked, last_error, claimed_until) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        t,
                        a,
                        u,
                        c,
                        n(p.messages),
                        n(p.pending),
                        n(p.retrying),
                        ms_opt(p.retry_at),
                        ms(p.last_message_at),
                        n(p.memo_covered),
                        n(p.memo_gaps),
                        n(p.episode_checked),
                        p.last_error,
                        ms_opt(*claimed_until)
                    ])
                })
                .map_err(&e)?;
            }
            Record::UserState { tenant, user, state, updated_at } => {
                tx.prepare_cached(
                    "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES (?1, ?2, ?3, ?4)",
                )
                .and_then(|mut s| s.execute(params![tenant.as_str(), user.as_str(), state.as_str(), ms(*updated_at)]))
                .map_err(&e)?;
            }
        }
    }
    // New rows in a partition: its version moves, so vector caches of other processes reload.
    for [t, a, u, c] in &touched {
        tx.prepare_cached(
            "INSERT INTO partitions (tenant, agent, user_id, chat, version) VALUES (?1, ?2, ?3, ?4, 1) \
             ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET version = version + 1",
        )
        .and_then(|mut s| s.execute(params![t, a, u, c]))
        .map_err(&e)?;
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
            for (_table, query, decode) in exports() {
                export_table(&snapshot, &query, decode, visit)?;
            }
            snapshot.commit().map_err(sql("export"))
        })
    }

    /// Starts an import, refusing a store that holds any row of a copied table.
    fn import(&self) -> Result<Box<dyn Importer + '_>> {
        let held: BTreeMap<String, u64> = self.counts()?.into_iter().filter(|(_, n)| *n > 0).collect();
        if !held.is_empty() {
            return Err(not_empty(&self.path().display().to_string(), &held));
        }
        Ok(Box::new(SqliteImporter { store: self, dims: HashMap::new() }))
    }

    /// How many rows each table of [`TABLES`] holds. The table names are ours (a fixed list), never
    /// input, so they can be formatted into the query.
    fn counts(&self) -> Result<Counts> {
        self.read(|conn| {
            let mut out = empty_counts();
            for table in TABLES {
                let n: i64 = conn
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .map_err(sql("count rows"))?;
                out.insert(table.to_string(), n as u64);
            }
            Ok(out)
        })
    }

    /// The stored vector of one memory of the tenant.
    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Embedding>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT e.model, e.vector FROM embeddings e JOIN memories m ON m.rowid = e.memory_rowid \
                 WHERE m.tenant = ?1 AND m.id = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![tenant.as_str(), id.to_string()], |r| {
                    Ok(Embedding { model: r.get(0)?, vector: blob_vector(&r.get::<_, Vec<u8>>(1)?) })
                })
                .optional()
            })
            .map_err(sql("get embedding"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{SqliteStore, TABLES};

    /// Tables a copy does not move because the importing backend rebuilds them from the rows it
    /// imports: the FTS5 indexes (with their shadow tables) and the partition versions.
    const REBUILT: &[&str] = &["memory_fts", "message_fts", "partitions"];

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
                    .map_err(super::sql("list tables"))
            })
            .unwrap();
        for table in &tables {
            let shadow = REBUILT.iter().any(|r| table.starts_with(&format!("{r}_")));
            assert!(
                TABLES.contains(&table.as_str()) || REBUILT.contains(&table.as_str()) || shadow,
                "table {table} is neither copied by `mnemo copy` (crate::transfer::TABLES, with a Record variant \
                 and an export and import arm in each backend's transfer.rs) nor rebuilt by the importing \
                 backend (REBUILT in sqlite/transfer.rs's tests): decide which"
            );
        }
        for t in TABLES.iter().chain(REBUILT) {
            assert!(tables.iter().any(|x| x == t), "{t} is listed but the schema has no such table");
        }
    }

    /// The export streams every copied table in `TABLES` order (vectors ride with their memories).
    #[test]
    fn exports_follow_the_table_list() {
        let exported: Vec<&str> = super::exports().iter().map(|e| e.0).collect();
        let listed: Vec<&str> = TABLES.iter().copied().filter(|t| *t != "embeddings").collect();
        assert_eq!(exported, listed);
    }
}
