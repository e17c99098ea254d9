//! Executing a planned change set on SQLite: one IMMEDIATE transaction, the lexical index kept
//! equal to the set of active rows, vectors in their side table, partition versions bumped so
//! every process's vector cache notices, and what the set did to each partition's recallable
//! vectors handed back so this handle's cache can follow without a reload. What each change
//! writes is [`plan::apply`](crate::plan::apply)'s decision.

use std::borrow::Cow;
use std::collections::HashMap;

use mnemo_core::{Memory, MemoryId, Status};
use rusqlite::{OptionalExtension, Transaction, params};

use super::fts;
use super::rows::{blob_vector, execute, insert, query_opt, vector_blob};
use crate::error::{Result, StoreError};
use crate::memories::{ChangeSet, Embedding};
use crate::messages::owner_key;
use crate::plan::apply::{self as plan, PartKey, STORED_COLUMNS, Write};
use crate::rows::encode::{self, MEMORY};
use crate::rows::{Row, decode, json, ms};
use crate::sql::Dialect;
use crate::vectors::{Deltas, Moved, VectorChange};

fn sql(e: rusqlite::Error) -> StoreError {
    StoreError::Sqlite { op: "apply", source: e }
}

/// Takes one message out of archival recall: flagged, its vector and its lexical entries gone.
fn withhold_row(tx: &Transaction<'_>, rowid: i64) -> Result<()> {
    for stmt in
        ["UPDATE messages SET withheld = 1 WHERE rowid = ?1", "DELETE FROM message_embeddings WHERE message_rowid = ?1"]
    {
        tx.prepare_cached(stmt).and_then(|mut s| s.execute([rowid])).map_err(sql)?;
    }
    fts::unindex_message(tx, rowid).map_err(sql)
}

/// Applies every change inside `tx`; the caller commits, then hands the partitions moved to the
/// vector cache.
pub(crate) fn apply<'a>(tx: &Transaction<'_>, cs: &'a ChangeSet) -> Result<Vec<Moved<'a>>> {
    // Rowids key the side tables (vectors, sessions, the lexical index).
    let mut rowids: HashMap<MemoryId, i64> = HashMap::new();
    let mut stored = HashMap::new();
    let lookup = format!("SELECT m.rowid, {STORED_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.id = $2");
    for (id, _) in plan::reads(cs) {
        let found = query_opt(tx, "apply", &lookup, params![cs.tenant.as_str(), id.to_string()], |r| {
            Ok((r.int(0)?, decode::stored(r, 1)?))
        })?;
        if let Some((rowid, row)) = found {
            rowids.insert(id, rowid);
            stored.insert(id, row);
        }
    }
    let mut deltas = Deltas::new(&stored);
    let plan = plan::plan(cs, stored)?;
    plan.run(|write| {
        match write {
            Write::Insert { memory, embedding } => {
                let new = insert_memory(tx, memory)?;
                if let Some(e) = embedding {
                    put_embedding(tx, new, e, true)?;
                }
                rowids.insert(memory.id, new);
                deltas.inserted(memory, *embedding);
            }
            Write::Status { id, from, to } => {
                let rowid = rowid_of(&rowids, cs, id)?;
                if let Some(owner) = deltas.status(*id, *from, *to)
                    && let Some(put) = stored_vector(tx, *id, rowid)?
                {
                    deltas.restored(owner, put);
                }
                tx.prepare_cached("UPDATE memories SET status = ?1, superseded_by = ?2, updated_at = ?3 WHERE rowid = ?4")
                    .and_then(|mut s| {
                        s.execute(params![
                            to.kind().as_str(),
                            to.superseded_by().map(|m| m.to_string()),
                            ms(cs.at),
                            rowid
                        ])
                    })
                    .map_err(sql)?;
                reindex_lexical(tx, rowid, *from, *to)?;
            }
            Write::Reinforce { id, sources, session } => {
                let rowid = rowid_of(&rowids, cs, id)?;
                let new_session = match session {
                    Some(s) => tx
                        .prepare_cached("INSERT OR IGNORE INTO memory_sessions (memory_rowid, session) VALUES (?1, ?2)")
                        .and_then(|mut st| st.execute(params![rowid, s]))
                        .map_err(sql)?,
                    None => 0,
                };
                tx.prepare_cached(
                    "UPDATE memories SET reinforcements = reinforcements + 1, distinct_sessions = distinct_sessions + ?1, \
                     updated_at = ?2, sources = ?3 WHERE rowid = ?4",
                )
                .and_then(|mut s| s.execute(params![new_session as i64, ms(cs.at), json(sources), rowid]))
                .map_err(sql)?;
            }
            Write::Embedding { id, embedding } => {
                put_embedding(tx, rowid_of(&rowids, cs, id)?, embedding, false)?;
                deltas.embedded(*id, embedding);
            }
            Write::Pinned { id, pinned } => {
                let rowid = rowid_of(&rowids, cs, id)?;
                tx.prepare_cached("UPDATE memories SET pinned = ?1, updated_at = ?2 WHERE rowid = ?3")
                    .and_then(|mut s| s.execute(params![pinned, ms(cs.at), rowid]))
                    .map_err(sql)?;
            }
            Write::Metadata { id, json } => {
                let rowid = rowid_of(&rowids, cs, id)?;
                tx.prepare_cached("UPDATE memories SET metadata = ?1, updated_at = ?2 WHERE rowid = ?3")
                    .and_then(|mut s| s.execute(params![json, ms(cs.at), rowid]))
                    .map_err(sql)?;
            }
            Write::Withhold { owner, messages } => {
                let [_, u, c] = owner_key(owner);
                for id in *messages {
                    let rows: Vec<(i64, String)> = tx
                        .prepare_cached(
                            "SELECT rowid, user_id FROM messages WHERE tenant = ?1 AND id = ?2 \
                             AND ?3 IN ('', user_id) AND ?4 IN ('', chat)",
                        )
                        .and_then(|mut s| {
                            s.query_map(params![cs.tenant.as_str(), id.as_str(), u, c], |r| {
                                Ok((r.get(0)?, r.get(1)?))
                            })?
                            .collect()
                        })
                        .map_err(sql)?;
                    for (rowid, user) in rows {
                        withhold_row(tx, rowid)?;
                        bump_messages(tx, cs.tenant.as_str(), &user)?;
                    }
                }
            }
            Write::Link(link) => {
                let row = encode::link(&cs.tenant, link);
                let stmt = Dialect::Sqlite.insert_or_ignore(row.table, row.columns.iter().copied());
                execute(tx, "apply", &stmt, rusqlite::params_from_iter(&row.values))?;
            }
            Write::History(entry) => {
                insert(tx, "apply", &encode::history(&cs.tenant, entry))?;
            }
            Write::Partition(partition) => {
                let (from, to) = bump_partition(tx, partition)?;
                deltas.bumped(partition, from, to);
            }
        }
        Ok(())
    })?;
    Ok(deltas.into_moved())
}

/// The stored vector of a memory made recallable again, as the cache needs it.
fn stored_vector(tx: &Transaction<'_>, id: MemoryId, rowid: i64) -> Result<Option<VectorChange<'static>>> {
    let found: Option<(String, Vec<u8>)> = tx
        .prepare_cached("SELECT model, vector FROM embeddings WHERE memory_rowid = ?1")
        .and_then(|mut s| s.query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(sql)?;
    Ok(found.map(|(model, blob)| VectorChange::Put {
        id,
        model: Cow::Owned(model),
        vector: Cow::Owned(blob_vector(&blob)),
    }))
}

/// Moves a partition's version inside `tx`: (before, after), before being none when this creates
/// its row (see [`bump_version`]).
pub(crate) fn bump_partition(tx: &Transaction<'_>, [t, a, u, c]: &PartKey) -> Result<(Option<i64>, i64)> {
    bump_version(tx, "partitions", &[("tenant", t), ("agent", a), ("user_id", u), ("chat", c)])
}

/// Moves a user's message version inside `tx`, as [`bump_partition`] a partition's: the stamp
/// of the user's message vectors in every handle's cache ([`crate::message_vectors`]).
pub(crate) fn bump_messages(tx: &Transaction<'_>, tenant: &str, user: &str) -> Result<(Option<i64>, i64)> {
    bump_version(tx, "message_versions", &[("tenant", tenant), ("user_id", user)])
}

/// Moves the version of the row of `table` that `key` (column, value) names: (before, after),
/// before being none when this creates the row. A new row starts at the current time in
/// microseconds rather than at 1: its key may have had a row before (deleted by an erasure)
/// whose versions another process still holds in its cache, and that row cannot have counted
/// past the time of its last write, one write at a time, so a version of the new row never
/// equals one of the old.
fn bump_version(tx: &Transaction<'_>, table: &str, key: &[(&str, &str)]) -> Result<(Option<i64>, i64)> {
    let columns: Vec<&str> = key.iter().map(|(c, _)| *c).collect();
    let at = |i: usize| format!("?{}", i + 1);
    let found = columns.iter().enumerate().map(|(i, c)| format!("{c} = {}", at(i))).collect::<Vec<_>>().join(" AND ");
    let values = key.iter().map(|(_, v)| v as &dyn rusqlite::ToSql);
    let before: Option<i64> = tx
        .prepare_cached(&format!("SELECT version FROM {table} WHERE {found}"))
        .and_then(|mut s| s.query_row(rusqlite::params_from_iter(values.clone()), |r| r.get(0)).optional())
        .map_err(sql)?;
    let after = match before {
        Some(v) => v + 1,
        None => {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            i64::try_from(now.as_micros()).unwrap_or(i64::MAX >> 1).max(1)
        }
    };
    let version = at(key.len());
    let write = match before {
        Some(_) => format!("UPDATE {table} SET version = {version} WHERE {found}"),
        None => {
            let places = (0..key.len()).map(at).collect::<Vec<_>>().join(", ");
            format!("INSERT INTO {table} ({}, version) VALUES ({places}, {version})", columns.join(", "))
        }
    };
    tx.prepare_cached(&write)
        .and_then(|mut s| s.execute(rusqlite::params_from_iter(values.chain([&after as &dyn rusqlite::ToSql]))))
        .map_err(sql)?;
    Ok((before, after))
}

/// The rowid of a memory the plan read or this change set inserted.
fn rowid_of(rowids: &HashMap<MemoryId, i64>, cs: &ChangeSet, id: &MemoryId) -> Result<i64> {
    rowids
        .get(id)
        .copied()
        .ok_or_else(|| StoreError::MemoryNotFound { tenant: cs.tenant.to_string(), id: id.to_string() })
}

/// Stores (or replaces) a memory's vector, refusing one whose dimension differs from what the
/// store already holds for its model. `new_row`: the memory was inserted by this change set, so
/// it has no vector to replace.
fn put_embedding(tx: &Transaction<'_>, rowid: i64, e: &Embedding, new_row: bool) -> Result<()> {
    let dim: Option<i64> = tx
        .query_row("SELECT dim FROM embeddings WHERE model = ?1 LIMIT 1", [&e.model], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    if let Some(d) = dim.filter(|d| *d as usize != e.vector.len()) {
        return Err(StoreError::Dimension { model: e.model.clone(), expected: d as usize, got: e.vector.len() });
    }
    // An UPDATE, then an INSERT when there was no row: never `INSERT OR REPLACE`, whose
    // statement journal makes FTS5 flush its pending terms at every statement, so a large change
    // set wrote one index segment per row and spent its time merging them (a 300k-row load took
    // 470 s instead of 17 s).
    let args = params![rowid, e.model, e.vector.len() as i64, vector_blob(&e.vector)];
    // A row inserted in this change set has no vector yet: no UPDATE to try first.
    let updated = if new_row {
        0
    } else {
        tx.prepare_cached("UPDATE embeddings SET model = ?2, dim = ?3, vector = ?4 WHERE memory_rowid = ?1")
            .and_then(|mut s| s.execute(args))
            .map_err(sql)?
    };
    if updated == 0 {
        tx.prepare_cached("INSERT INTO embeddings (memory_rowid, model, dim, vector) VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut s| s.execute(args))
            .map_err(sql)?;
    }
    Ok(())
}

/// Inserts one memory row exactly as given, with its lexical entry when active; returns its rowid.
/// Shared by apply and import (a copy writes rows verbatim through the same statement).
pub(super) fn insert_memory(tx: &Transaction<'_>, m: &Memory) -> Result<i64> {
    insert(tx, "apply", &encode::Insert { table: "memories", columns: MEMORY, values: encode::memory(m) })?;
    let rowid = tx.last_insert_rowid();
    if m.status == Status::Active {
        fts::index_memory(tx, rowid, m.owner.key_parts(), &m.search_text()).map_err(sql)?;
    }
    Ok(rowid)
}

/// Keeps the lexical index equal to the set of active rows across a status change.
fn reindex_lexical(tx: &Transaction<'_>, rowid: i64, was: Status, now: Status) -> Result<()> {
    match (was == Status::Active, now == Status::Active) {
        (true, false) => fts::unindex_memory(tx, rowid).map_err(sql)?,
        (false, true) => {
            let (content, key, parts): (String, Option<String>, [String; 4]) = tx
                .query_row(
                    "SELECT content, key, tenant, agent, user_id, chat FROM memories WHERE rowid = ?1",
                    [rowid],
                    |r| Ok((r.get(0)?, r.get(1)?, [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?])),
                )
                .map_err(sql)?;
            let [t, a, u, c] = &parts;
            let text = mnemo_core::text::search_text(&content, key.as_deref());
            fts::index_memory(tx, rowid, [t, a, u, c], &text).map_err(sql)?;
        }
        _ => {}
    }
    Ok(())
}
