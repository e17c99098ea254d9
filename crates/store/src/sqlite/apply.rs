//! Applying a change set: one IMMEDIATE transaction, history written beside every change,
//! partition versions bumped so every process's vector cache notices.

use std::collections::BTreeSet;

use mnemo_core::{HistoryEvent, Memory, MemoryId, MessageId, Status};
use rusqlite::{OptionalExtension, Transaction, params};

use super::fts;
use super::rows::{ids_json, ms, ms_opt, status, vector_blob};
use crate::error::{Result, StoreError};
use crate::{Change, ChangeSet, Embedding};

type PartKey = [String; 4];

fn sql(e: rusqlite::Error) -> StoreError {
    StoreError::Sqlite { op: "apply", source: e }
}

/// Applies every change inside `tx`; the caller commits.
pub(crate) fn apply(tx: &Transaction<'_>, cs: &ChangeSet) -> Result<()> {
    let mut touched: BTreeSet<PartKey> = BTreeSet::new();
    for (i, change) in cs.changes.iter().enumerate() {
        if i == 1 {
            fail::fail_point!("store::apply::after_first_change", |_| Err(StoreError::Injected(
                "store::apply::after_first_change".into()
            )));
        }
        match change {
            Change::Insert { memory, embedding, reason } => {
                if memory.owner.tenant != cs.tenant {
                    return Err(StoreError::MemoryNotFound {
                        tenant: cs.tenant.to_string(),
                        id: memory.id.to_string(),
                    });
                }
                let rowid = insert_memory(tx, memory)?;
                if let Some(e) = embedding {
                    put_embedding(tx, rowid, e, true)?;
                }
                history(
                    tx,
                    cs,
                    memory.id,
                    HistoryEvent::Created,
                    None,
                    memory.status,
                    reason,
                    &memory.provenance.sources,
                )?;
                touched.insert(parts(&memory.owner));
            }
            Change::SetStatus { id, status: new, event, reason, sources } => {
                let (rowid, old, owner) = lookup(tx, cs, *id)?;
                tx.prepare_cached(
                    "UPDATE memories SET status = ?1, superseded_by = ?2, updated_at = ?3 WHERE tenant = ?4 AND id = ?5",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        new.kind().as_str(),
                        new.superseded_by().map(|m| m.to_string()),
                        ms(cs.at),
                        cs.tenant.as_str(),
                        id.to_string()
                    ])
                })
                .map_err(sql)?;
                history(tx, cs, *id, *event, Some(old), *new, reason, sources)?;
                reindex_lexical(tx, rowid, old, *new, &owner)?;
                touched.insert(owner);
            }
            Change::Reinforce { id, sources, session, reason } => {
                let (rowid, st, _) = lookup(tx, cs, *id)?;
                let current: String = tx
                    .query_row("SELECT sources FROM memories WHERE rowid = ?1", [rowid], |r| r.get(0))
                    .map_err(sql)?;
                let mut all: Vec<MessageId> = serde_json::from_str(&current)
                    .map_err(|e| StoreError::Corrupt { what: "memory sources", detail: e.to_string() })?;
                for s in sources {
                    if !all.contains(s) {
                        all.push(s.clone());
                    }
                }
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
                .and_then(|mut s| s.execute(params![new_session as i64, ms(cs.at), ids_json(&all), rowid]))
                .map_err(sql)?;
                history(tx, cs, *id, HistoryEvent::Reinforced, Some(st), st, reason, sources)?;
            }
            Change::SetEmbedding { id, embedding } => {
                let (rowid, _, owner) = lookup(tx, cs, *id)?;
                put_embedding(tx, rowid, embedding, false)?;
                touched.insert(owner);
            }
            Change::SetPinned { id, pinned } => {
                let (rowid, st, _) = lookup(tx, cs, *id)?;
                tx.execute(
                    "UPDATE memories SET pinned = ?1, updated_at = ?2 WHERE rowid = ?3",
                    params![pinned, ms(cs.at), rowid],
                )
                .map_err(sql)?;
                let (event, why) =
                    if *pinned { (HistoryEvent::Pinned, "pinned") } else { (HistoryEvent::Unpinned, "unpinned") };
                history(tx, cs, *id, event, Some(st), st, why, &[])?;
            }
            Change::Withhold { messages } => {
                for id in messages {
                    let rowid: Option<i64> = tx
                        .prepare_cached("SELECT rowid FROM messages WHERE tenant = ?1 AND id = ?2")
                        .and_then(|mut s| {
                            s.query_row(params![cs.tenant.as_str(), id.as_str()], |r| r.get(0)).optional()
                        })
                        .map_err(sql)?;
                    let Some(rowid) = rowid else { continue };
                    for stmt in [
                        "UPDATE messages SET withheld = 1 WHERE rowid = ?1",
                        "DELETE FROM message_embeddings WHERE message_rowid = ?1",
                    ] {
                        tx.prepare_cached(stmt).and_then(|mut s| s.execute([rowid])).map_err(sql)?;
                    }
                    fts::unindex_message(tx, rowid).map_err(sql)?;
                }
            }
            Change::Link(link) => {
                lookup(tx, cs, link.from)?;
                lookup(tx, cs, link.to)?;
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO links (tenant, from_id, to_id, kind, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        cs.tenant.as_str(),
                        link.from.to_string(),
                        link.to.to_string(),
                        link.kind.as_str(),
                        ms(link.at)
                    ])
                })
                .map_err(sql)?;
            }
        }
    }
    for [t, a, u, c] in &touched {
        tx.prepare_cached(
            "INSERT INTO partitions (tenant, agent, user_id, chat, version) VALUES (?1, ?2, ?3, ?4, 1) \
             ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET version = version + 1",
        )
        .and_then(|mut s| s.execute(params![t, a, u, c]))
        .map_err(sql)?;
    }
    fail::fail_point!("store::apply::before_commit", |_| Err(StoreError::Injected(
        "store::apply::before_commit".into()
    )));
    Ok(())
}

fn parts(owner: &mnemo_core::Scope) -> PartKey {
    owner.key_parts().map(str::to_string)
}

/// The rowid, status and partition of a memory of this tenant, or a not-found error.
fn lookup(tx: &Transaction<'_>, cs: &ChangeSet, id: MemoryId) -> Result<(i64, Status, PartKey)> {
    tx.prepare_cached(
        "SELECT rowid, status, superseded_by, tenant, agent, user_id, chat FROM memories WHERE tenant = ?1 AND id = ?2",
    )
    .and_then(|mut s| {
        s.query_row(params![cs.tenant.as_str(), id.to_string()], |r| {
            Ok((r.get(0)?, status(r, 1, 2)?, [r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?]))
        })
        .optional()
    })
    .map_err(sql)?
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
    let [t, a, u, c] = m.owner.key_parts();
    tx.prepare_cached(
        "INSERT INTO memories (id, tenant, agent, user_id, chat, kind, content, key, value, confidence, salience, \
         pinned, surface, status, superseded_by, due_at, valid_from, valid_until, sources, source_chat, extractor, \
         extractor_version, content_hash, created_at, updated_at, last_accessed, last_surfaced, access_count, \
         distinct_sessions, reinforcements, expires_at, sensitivity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
         ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, \
         ?31, ?32)",
    )
    .and_then(|mut s| {
        s.execute(params![
            m.id.to_string(),
            t,
            a,
            u,
            c,
            m.kind.as_str(),
            m.content,
            m.key,
            m.value,
            m.confidence as f64,
            m.salience as f64,
            m.pinned,
            m.surface.as_str(),
            m.status.kind().as_str(),
            m.status.superseded_by().map(|x| x.to_string()),
            ms_opt(m.due_at),
            ms_opt(m.valid_from),
            ms_opt(m.valid_until),
            ids_json(&m.provenance.sources),
            m.provenance.chat.as_ref().map(|c| c.to_string()),
            m.provenance.extractor,
            m.provenance.extractor_version,
            m.content_hash,
            ms(m.created_at),
            ms(m.updated_at),
            ms_opt(m.last_accessed),
            ms_opt(m.last_surfaced),
            m.access_count,
            m.distinct_sessions,
            m.reinforcements,
            ms_opt(m.expires_at),
            m.sensitivity.as_str(),
        ])
    })
    .map_err(sql)?;
    let rowid = tx.last_insert_rowid();
    if m.status == Status::Active {
        fts::index_memory(tx, rowid, m.owner.key_parts(), &m.search_text()).map_err(sql)?;
    }
    Ok(rowid)
}

/// Keeps the lexical index equal to the set of active rows across a status change.
fn reindex_lexical(tx: &Transaction<'_>, rowid: i64, was: Status, now: Status, parts: &PartKey) -> Result<()> {
    match (was == Status::Active, now == Status::Active) {
        (true, false) => fts::unindex_memory(tx, rowid).map_err(sql)?,
        (false, true) => {
            let (content, key): (String, Option<String>) = tx
                .query_row("SELECT content, key FROM memories WHERE rowid = ?1", [rowid], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map_err(sql)?;
            let [t, a, u, c] = parts;
            let text = mnemo_core::text::search_text(&content, key.as_deref());
            fts::index_memory(tx, rowid, [t, a, u, c], &text).map_err(sql)?;
        }
        _ => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn history(
    tx: &Transaction<'_>,
    cs: &ChangeSet,
    id: MemoryId,
    event: HistoryEvent,
    from: Option<Status>,
    to: Status,
    reason: &str,
    sources: &[MessageId],
) -> Result<()> {
    let enc = |s: Status| serde_json::to_string(&s).expect("status serialises");
    tx.prepare_cached(
        "INSERT INTO history (tenant, memory_id, at, event, from_status, to_status, reason, sources) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut s| {
        s.execute(params![
            cs.tenant.as_str(),
            id.to_string(),
            ms(cs.at),
            event.as_str(),
            from.map(enc),
            enc(to),
            reason,
            ids_json(sources)
        ])
    })
    .map_err(sql)?;
    Ok(())
}
