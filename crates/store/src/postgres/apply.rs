//! Applying a change set: one transaction as the application role bound to the change set's
//! tenant, history written beside every change, partition versions bumped.
//!
//! Rows a change reads before rewriting (status, sources) are locked FOR UPDATE, so concurrent
//! applies from several servers serialise per memory the way SQLite's single writer does.

use std::collections::{BTreeSet, HashMap};

use mnemo_core::{HistoryEvent, Memory, MemoryId, MessageId, Status};

use super::pool::Tx;
use super::rows::{get, ids_json, ms, ms_opt, status, vector_text};
use crate::error::{Result, StoreError};
use crate::{Change, ChangeSet, Embedding};

type PartKey = [String; 4];

/// Applies every change inside `tx`; the caller commits.
pub(crate) fn apply(tx: &mut Tx<'_>, cs: &ChangeSet, models: &mut Models<'_>) -> Result<()> {
    register_models(tx, cs, models)?;
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
                let vector = embedding.as_ref().map(|e| (e.model.as_str(), vector_text(&e.vector)));
                insert_memory(tx, memory, vector)?;
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
                let (old, owner) = lookup(tx, cs, *id, true)?;
                let by = new.superseded_by().map(|m| m.to_string());
                tx.execute(
                    "UPDATE memories SET status = $1, superseded_by = $2, updated_at = $3 WHERE tenant = $4 AND id = $5",
                    &[&new.kind().as_str(), &by, &ms(cs.at), &cs.tenant.as_str(), &id.to_string()],
                )?;
                history(tx, cs, *id, *event, Some(old), *new, reason, sources)?;
                touched.insert(owner);
            }
            Change::Reinforce { id, sources, session, reason } => {
                let (st, _) = lookup(tx, cs, *id, true)?;
                let id_text = id.to_string();
                let row = tx.query_one(
                    "SELECT sources FROM memories WHERE tenant = $1 AND id = $2",
                    &[&cs.tenant.as_str(), &id_text],
                )?;
                let mut all: Vec<MessageId> = serde_json::from_str(get::<&str>(&row, 0)?)
                    .map_err(|e| StoreError::Corrupt { what: "memory sources", detail: e.to_string() })?;
                for s in sources {
                    if !all.contains(s) {
                        all.push(s.clone());
                    }
                }
                let new_session = match session {
                    Some(s) => add_session(tx, cs.tenant.as_str(), &id_text, s)?,
                    None => 0,
                };
                tx.execute(
                    "UPDATE memories SET reinforcements = reinforcements + 1, distinct_sessions = distinct_sessions + $1, \
                     updated_at = $2, sources = $3 WHERE tenant = $4 AND id = $5",
                    &[&new_session, &ms(cs.at), &ids_json(&all), &cs.tenant.as_str(), &id_text],
                )?;
                history(tx, cs, *id, HistoryEvent::Reinforced, Some(st), st, reason, sources)?;
            }
            Change::SetEmbedding { id, embedding } => {
                let (_, owner) = lookup(tx, cs, *id, true)?;
                tx.execute(
                    "UPDATE memories SET model = $1, embedding = $2::text::vector WHERE tenant = $3 AND id = $4",
                    &[&embedding.model, &vector_text(&embedding.vector), &cs.tenant.as_str(), &id.to_string()],
                )?;
                touched.insert(owner);
            }
            Change::SetPinned { id, pinned } => {
                let (st, _) = lookup(tx, cs, *id, true)?;
                tx.execute(
                    "UPDATE memories SET pinned = $1, updated_at = $2 WHERE tenant = $3 AND id = $4",
                    &[pinned, &ms(cs.at), &cs.tenant.as_str(), &id.to_string()],
                )?;
                let (event, why) =
                    if *pinned { (HistoryEvent::Pinned, "pinned") } else { (HistoryEvent::Unpinned, "unpinned") };
                history(tx, cs, *id, event, Some(st), st, why, &[])?;
            }
            Change::Withhold { messages } => {
                let ids: Vec<&str> = messages.iter().map(MessageId::as_str).collect();
                tx.execute(
                    "UPDATE messages SET withheld = true, model = NULL, embedding = NULL \
                     WHERE tenant = $1 AND id = ANY($2)",
                    &[&cs.tenant.as_str(), &ids],
                )?;
            }
            Change::Link(link) => {
                lookup(tx, cs, link.from, false)?;
                lookup(tx, cs, link.to, false)?;
                tx.execute(
                    "INSERT INTO links (tenant, from_id, to_id, kind, at) VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT DO NOTHING",
                    &[
                        &cs.tenant.as_str(),
                        &link.from.to_string(),
                        &link.to.to_string(),
                        &link.kind.as_str(),
                        &ms(link.at),
                    ],
                )?;
            }
        }
    }
    // Sorted (a BTreeSet), so concurrent applies lock partition rows in one order: no deadlocks.
    for [t, a, u, c] in &touched {
        tx.execute(
            "INSERT INTO partitions (tenant, agent, user_id, chat, version) VALUES ($1, $2, $3, $4, 1) \
             ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET version = partitions.version + 1",
            &[t, a, u, c],
        )?;
    }
    fail::fail_point!("store::apply::before_commit", |_| Err(StoreError::Injected(
        "store::apply::before_commit".into()
    )));
    Ok(())
}

/// Models this transaction may meet: those committed before (`known`), those it registered
/// (`registered`, recorded by the caller once the commit succeeds), and whether a bulk load is
/// under way (then a new model's HNSW index waits for `Store::finish_bulk_load`).
pub(crate) struct Models<'a> {
    pub(crate) known: &'a HashMap<String, usize>,
    pub(crate) registered: &'a mut HashMap<String, usize>,
    pub(crate) defer_index: bool,
}

/// Checks every vector's dimension against its model's, registering each model seen for the
/// first time. Runs before any row is written, so the index's table lock is taken early and a
/// refused vector leaves nothing behind.
fn register_models(tx: &mut Tx<'_>, cs: &ChangeSet, models: &mut Models<'_>) -> Result<()> {
    for change in &cs.changes {
        if let Change::Insert { embedding: Some(e), .. } | Change::SetEmbedding { embedding: e, .. } = change {
            register_model(tx, e, models)?;
        }
    }
    Ok(())
}

/// Registers `e`'s model when seen for the first time (with its HNSW index, in this same
/// transaction, unless a bulk load defers it), and refuses a vector whose dimension differs
/// from its model's. Shared by apply and import.
pub(crate) fn register_model(tx: &mut Tx<'_>, e: &Embedding, models: &mut Models<'_>) -> Result<()> {
    let got = e.vector.len();
    let expected = match models.known.get(&e.model).or_else(|| models.registered.get(&e.model)) {
        Some(d) => *d,
        None => {
            let dim = i32::try_from(got).map_err(|_| StoreError::Dimension {
                model: e.model.clone(),
                expected: i32::MAX as usize,
                got,
            })?;
            tx.execute(
                "INSERT INTO embedding_models (model, dim) VALUES ($1, $2) ON CONFLICT (model) DO NOTHING",
                &[&e.model, &dim],
            )?;
            let stored: i32 = get(&tx.query_one("SELECT dim FROM embedding_models WHERE model = $1", &[&e.model])?, 0)?;
            let stored = stored as usize;
            if stored == got && !models.defer_index {
                tx.query("SELECT mnemo_ensure_vector_index($1, $2)", &[&e.model, &dim])?;
            }
            models.registered.insert(e.model.clone(), stored);
            stored
        }
    };
    if expected != got {
        return Err(StoreError::Dimension { model: e.model.clone(), expected, got });
    }
    Ok(())
}

fn parts(owner: &mnemo_core::Scope) -> PartKey {
    owner.key_parts().map(str::to_string)
}

/// Counts a session for a memory once; 1 when it is new.
pub(crate) fn add_session(tx: &mut Tx<'_>, tenant: &str, id: &str, session: &str) -> Result<i64> {
    let n = tx.execute(
        "INSERT INTO memory_sessions (tenant, memory_id, session) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        &[&tenant, &id, &session],
    )?;
    Ok(n as i64)
}

/// The status and partition of a memory of this tenant (locked for the rest of the transaction:
/// for update when the change rewrites it, against deletion otherwise), or a not-found error.
fn lookup(tx: &mut Tx<'_>, cs: &ChangeSet, id: MemoryId, for_update: bool) -> Result<(Status, PartKey)> {
    let sql = if for_update {
        "SELECT status, superseded_by, tenant, agent, user_id, chat FROM memories WHERE tenant = $1 AND id = $2 \
         FOR UPDATE"
    } else {
        "SELECT status, superseded_by, tenant, agent, user_id, chat FROM memories WHERE tenant = $1 AND id = $2 \
         FOR KEY SHARE"
    };
    let row = tx
        .query_opt(sql, &[&cs.tenant.as_str(), &id.to_string()])?
        .ok_or_else(|| StoreError::MemoryNotFound { tenant: cs.tenant.to_string(), id: id.to_string() })?;
    Ok((status(&row, 0, 1)?, [get(&row, 2)?, get(&row, 3)?, get(&row, 4)?, get(&row, 5)?]))
}

/// Inserts one memory row exactly as given (the tsvector is generated from `search`); shared by
/// apply and import, so a copy writes rows through the same statement.
pub(super) fn insert_memory(tx: &mut Tx<'_>, m: &Memory, vector: Option<(&str, String)>) -> Result<()> {
    let [t, a, u, c] = m.owner.key_parts();
    let (model, vector) = vector.unzip();
    tx.execute(
        "INSERT INTO memories (id, tenant, agent, user_id, chat, kind, content, key, value, confidence, salience, \
         pinned, surface, status, superseded_by, due_at, valid_from, valid_until, sources, source_chat, extractor, \
         extractor_version, content_hash, created_at, updated_at, last_accessed, last_surfaced, access_count, \
         distinct_sessions, reinforcements, expires_at, sensitivity, model, embedding, search) VALUES ($1, $2, $3, $4, $5, \
         $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, \
         $28, $29, $30, $31, $32, $33, $34::text::vector, $35)",
        &[
            &m.id.to_string(),
            &t,
            &a,
            &u,
            &c,
            &m.kind.as_str(),
            &m.content,
            &m.key,
            &m.value,
            &m.confidence,
            &m.salience,
            &m.pinned,
            &m.surface.as_str(),
            &m.status.kind().as_str(),
            &m.status.superseded_by().map(|x| x.to_string()),
            &ms_opt(m.due_at),
            &ms_opt(m.valid_from),
            &ms_opt(m.valid_until),
            &ids_json(&m.provenance.sources),
            &m.provenance.chat.as_ref().map(|c| c.to_string()),
            &m.provenance.extractor,
            &m.provenance.extractor_version,
            &m.content_hash,
            &ms(m.created_at),
            &ms(m.updated_at),
            &ms_opt(m.last_accessed),
            &ms_opt(m.last_surfaced),
            &i64::from(m.access_count),
            &i64::from(m.distinct_sessions),
            &i64::from(m.reinforcements),
            &ms_opt(m.expires_at),
            &m.sensitivity.as_str(),
            &model,
            &vector,
            &m.search_text(),
        ],
    )?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn history(
    tx: &mut Tx<'_>,
    cs: &ChangeSet,
    id: MemoryId,
    event: HistoryEvent,
    from: Option<Status>,
    to: Status,
    reason: &str,
    sources: &[MessageId],
) -> Result<()> {
    let enc = |s: Status| serde_json::to_string(&s).expect("status serialises");
    tx.execute(
        "INSERT INTO history (tenant, memory_id, at, event, from_status, to_status, reason, sources) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &cs.tenant.as_str(),
            &id.to_string(),
            &ms(cs.at),
            &event.as_str(),
            &from.map(enc),
            &enc(to),
            &reason,
            &ids_json(sources),
        ],
    )?;
    Ok(())
}
