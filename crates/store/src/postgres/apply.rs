//! Executing a planned change set on PostgreSQL: one transaction as the application role bound
//! to the change set's tenant. What each change writes is [`plan::apply`](crate::plan::apply)'s decision.
//!
//! The memories a plan reads are locked for the rest of the transaction (FOR UPDATE when a
//! change rewrites them, FOR KEY SHARE when it only links to them), so concurrent applies from
//! several servers serialise per memory the way SQLite's single writer does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use mnemo_core::{Memory, MemoryId};

use super::pool::Tx;
use super::rows::{get, params, vector_text};
use crate::error::{Result, StoreError};
use crate::messages::owner_key;
use crate::plan::apply::{self as plan, Lock, STORED_COLUMNS, Write};
use crate::rows::encode::{self, MEMORY};
use crate::rows::{decode, json, ms};
use crate::sql::{BUMP_PARTITION, Dialect};
use crate::vectors::{Deltas, Moved, VectorChange};
use crate::{Change, ChangeSet, Embedding};

/// Applies every change inside `tx`; the caller commits, then hands the partitions moved to the
/// vector cache.
pub(crate) fn apply<'a>(tx: &mut Tx<'_>, cs: &'a ChangeSet, models: &mut Models<'_>) -> Result<Vec<Moved<'a>>> {
    register_models(tx, cs, models)?;
    let tenant = cs.tenant.as_str();
    let mut stored = HashMap::new();
    for (id, lock) in plan::reads(cs) {
        let lock = match lock {
            Lock::Update => "FOR UPDATE",
            Lock::Share => "FOR KEY SHARE",
        };
        let sql = format!("SELECT {STORED_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.id = $2 {lock}");
        if let Some(row) = tx.query_opt(&sql, &[&tenant, &id.to_string()])? {
            stored.insert(id, decode::stored(&row, 0)?);
        }
    }
    let mut deltas = Deltas::new(&stored);
    let plan = plan::plan(cs, stored)?;
    plan.run(|write| {
        match write {
            Write::Insert { memory, embedding } => {
                insert_memory(tx, memory, embedding.map(|e| (e.model.as_str(), vector_text(&e.vector))))?;
                deltas.inserted(memory, *embedding);
            }
            Write::Status { id, from, to } => {
                if let Some(owner) = deltas.status(*id, *from, *to)
                    && let Some(put) = stored_vector(tx, tenant, *id)?
                {
                    deltas.restored(owner, put);
                }
                tx.execute(
                    "UPDATE memories SET status = $1, superseded_by = $2, updated_at = $3 WHERE tenant = $4 AND id = $5",
                    &[&to.kind().as_str(), &to.superseded_by().map(|m| m.to_string()), &ms(cs.at), &tenant, &id.to_string()],
                )?;
            }
            Write::Reinforce { id, sources, session } => {
                let id = id.to_string();
                let new_session = match session {
                    Some(s) => add_session(tx, tenant, &id, s)?,
                    None => 0,
                };
                tx.execute(
                    "UPDATE memories SET reinforcements = reinforcements + 1, distinct_sessions = distinct_sessions + $1, \
                     updated_at = $2, sources = $3 WHERE tenant = $4 AND id = $5",
                    &[&new_session, &ms(cs.at), &json(sources), &tenant, &id],
                )?;
            }
            Write::Embedding { id, embedding } => {
                tx.execute(
                    "UPDATE memories SET model = $1, embedding = $2::text::vector WHERE tenant = $3 AND id = $4",
                    &[&embedding.model, &vector_text(&embedding.vector), &tenant, &id.to_string()],
                )?;
                deltas.embedded(*id, embedding);
            }
            Write::Pinned { id, pinned } => {
                tx.execute(
                    "UPDATE memories SET pinned = $1, updated_at = $2 WHERE tenant = $3 AND id = $4",
                    &[pinned, &ms(cs.at), &tenant, &id.to_string()],
                )?;
            }
            Write::Metadata { id, json } => {
                tx.execute(
                    "UPDATE memories SET metadata = $1, updated_at = $2 WHERE tenant = $3 AND id = $4",
                    &[json, &ms(cs.at), &tenant, &id.to_string()],
                )?;
            }
            Write::Withhold { owner, messages } => {
                let ids: Vec<&str> = messages.iter().map(|m| m.as_str()).collect();
                let [_, u, c] = owner_key(owner);
                tx.execute(
                    "UPDATE messages SET withheld = true, model = NULL, embedding = NULL, passages = NULL \
                     WHERE tenant = $1 AND id = ANY($2) AND $3 IN ('', user_id) AND $4 IN ('', chat)",
                    &[&tenant, &ids, &u, &c],
                )?;
            }
            Write::Link(link) => {
                let row = encode::link(&cs.tenant, link);
                tx.execute(&Dialect::Postgres.insert_or_ignore(row.table, row.columns.iter().copied()), &params(&row.values))?;
            }
            Write::History(entry) => insert(tx, &encode::history(&cs.tenant, entry))?,
            Write::Partition(partition) => {
                let [t, a, u, c] = partition;
                let row = tx.query_one(BUMP_PARTITION, &[t, a, u, c])?;
                let (before, after): (Option<i64>, i64) = (get(&row, 0)?, get(&row, 1)?);
                // Another bump committed between the snapshot and this one: no delta to give.
                deltas.bumped(partition, before.filter(|b| b + 1 == after), after);
            }
        }
        Ok(())
    })?;
    Ok(deltas.into_moved())
}

/// The stored vector of a memory made recallable again, as the cache needs it.
fn stored_vector(tx: &mut Tx<'_>, tenant: &str, id: MemoryId) -> Result<Option<VectorChange<'static>>> {
    let row = tx.query_opt(
        "SELECT model, embedding::real[] FROM memories WHERE tenant = $1 AND id = $2 AND model IS NOT NULL",
        &[&tenant, &id.to_string()],
    )?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(VectorChange::Put { id, model: Cow::Owned(get(&row, 0)?), vector: Cow::Owned(get(&row, 1)?) }))
}

/// Writes one planned row through its shared column list.
pub(crate) fn insert(tx: &mut Tx<'_>, row: &encode::Insert) -> Result<()> {
    tx.execute(&Dialect::Postgres.insert_of(row.table, row.columns), &params(&row.values)).map(drop)
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

/// Counts a session for a memory once; 1 when it is new.
pub(crate) fn add_session(tx: &mut Tx<'_>, tenant: &str, id: &str, session: &str) -> Result<i64> {
    let n = tx.execute(
        "INSERT INTO memory_sessions (tenant, memory_id, session) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        &[&tenant, &id, &session],
    )?;
    Ok(n as i64)
}

/// Inserts one memory row exactly as given, with its vector (the tsvector is generated from
/// `search`); shared by apply and import, so a copy writes rows through the same statement.
pub(super) fn insert_memory(tx: &mut Tx<'_>, m: &Memory, vector: Option<(&str, String)>) -> Result<()> {
    let (model, vector) = vector.unzip();
    // The shared columns, then the vector and the text the tsvector is generated from.
    static COLUMNS: LazyLock<Vec<&str>> =
        LazyLock::new(|| MEMORY.iter().copied().chain(["model", "embedding::text::vector", "search"]).collect());
    let mut values = encode::memory(m);
    values.extend([model.map(str::to_string).into(), vector.into(), m.search_text().into()]);
    tx.execute(&Dialect::Postgres.insert_of("memories", &COLUMNS), &params(&values)).map(drop)
}
