//! A change set as rows: which memory rows change and how, the history row beside every change,
//! the sources a reinforcement merges, the tenant check, the partitions whose version moves.
//!
//! Planning walks the changes in order over a view of the memories they touch (read by the
//! backend before, locked where it rewrites them), updating the view as it goes, so a change
//! sees what earlier changes of the same set did, as it would have reading the database.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use mnemo_core::{HistoryEntry, HistoryEvent, Link, Memory, MemoryId, MessageId, Status, TenantId};

use crate::error::{Result, StoreError};
use crate::memories::{Change, ChangeSet, Embedding};

/// Columns a backend selects (alias `m`) for each memory the plan reads, in the order
/// [`decode::stored`](crate::rows::decode::stored) reads them.
pub(crate) const STORED_COLUMNS: &str = "m.status, m.superseded_by, m.tenant, m.agent, m.user_id, m.chat, m.sources";

/// A partition's key parts: tenant, agent, user, chat.
pub(crate) type PartKey = [String; 4];

/// What the plan needs of a stored memory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stored {
    /// Its status.
    pub(crate) status: Status,
    /// Its partition.
    pub(crate) owner: PartKey,
    /// Messages it was asserted by (what a reinforcement adds to).
    pub(crate) sources: Vec<MessageId>,
}

/// How a backend locks a memory it reads for the plan, until the transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Lock {
    /// Only linked to: it must not be deleted meanwhile.
    Share,
    /// Rewritten: concurrent change sets on it serialise.
    Update,
}

/// The memories a change set reads, each once, in the order first named, with the strongest
/// lock any change needs. Memories the set itself inserts are not read.
pub(crate) fn reads(cs: &ChangeSet) -> Vec<(MemoryId, Lock)> {
    let inserted: BTreeSet<MemoryId> = cs
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Insert { memory, .. } => Some(memory.id),
            _ => None,
        })
        .collect();
    let mut out: Vec<(MemoryId, Lock)> = Vec::new();
    let mut need = |id: MemoryId, lock: Lock| {
        if inserted.contains(&id) {
            return;
        }
        match out.iter_mut().find(|(seen, _)| *seen == id) {
            Some((_, held)) => *held = (*held).max(lock),
            None => out.push((id, lock)),
        }
    };
    for change in &cs.changes {
        match change {
            Change::SetStatus { id, .. }
            | Change::Reinforce { id, .. }
            | Change::SetEmbedding { id, .. }
            | Change::SetPinned { id, .. } => need(*id, Lock::Update),
            Change::Link(link) => {
                need(link.from, Lock::Share);
                need(link.to, Lock::Share);
            }
            Change::Insert { .. } | Change::Withhold { .. } => {}
        }
    }
    out
}

/// One row-level write of a plan. History rows are writes of their own, so a backend cannot
/// write a change without them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Write<'a> {
    /// A new memory row, with its vector.
    Insert {
        /// The row, written as given.
        memory: &'a Memory,
        /// Its vector.
        embedding: Option<&'a Embedding>,
    },
    /// A status transition (`from` tells a backend whether the row enters or leaves the set of
    /// recallable rows its projections hold).
    Status {
        /// The memory.
        id: MemoryId,
        /// Its status before.
        from: Status,
        /// Its status after.
        to: Status,
    },
    /// A re-assertion: one more reinforcement, the merged sources, and the session counted if
    /// it is new to the memory.
    Reinforce {
        /// The memory.
        id: MemoryId,
        /// Its sources with the new ones appended (each once, in order of first assertion).
        sources: Vec<MessageId>,
        /// The session it happened in.
        session: Option<&'a str>,
    },
    /// A memory's vector, replacing any it had.
    Embedding {
        /// The memory.
        id: MemoryId,
        /// The vector.
        embedding: &'a Embedding,
    },
    /// The pinned flag.
    Pinned {
        /// The memory.
        id: MemoryId,
        /// Its new value.
        pinned: bool,
    },
    /// Messages taken out of archival recall (ids unknown to the tenant are skipped).
    Withhold(&'a [MessageId]),
    /// A typed edge between two memories of the tenant (skipped if it exists).
    Link(&'a Link),
    /// The history row of a change.
    History(HistoryEntry),
    /// A partition whose recallable rows changed: its version moves.
    Partition(PartKey),
}

/// A change set's writes, each with the index of the change it belongs to (partition bumps,
/// after every change, belong to none).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan<'a> {
    /// The tenant every write belongs to.
    pub(crate) tenant: &'a TenantId,
    /// The engine's clock for the whole set.
    pub(crate) at: DateTime<Utc>,
    /// The writes in order.
    pub(crate) writes: Vec<(Option<usize>, Write<'a>)>,
}

fn not_found(tenant: &TenantId, id: MemoryId) -> StoreError {
    StoreError::MemoryNotFound { tenant: tenant.to_string(), id: id.to_string() }
}

/// Plans `cs` over `stored`, the memories [`reads`] named that exist in the tenant. Fails, before
/// anything is written, on a memory of another tenant or one the tenant does not have.
pub(crate) fn plan<'a>(cs: &'a ChangeSet, mut stored: HashMap<MemoryId, Stored>) -> Result<Plan<'a>> {
    let mut writes = Vec::new();
    // Sorted, so concurrent writers lock partition rows in one order: no deadlocks.
    let mut touched: BTreeSet<PartKey> = BTreeSet::new();
    let history =
        |id: MemoryId, event: HistoryEvent, from: Option<Status>, to: Status, reason: &str, sources: &[MessageId]| {
            Write::History(HistoryEntry {
                memory: id,
                at: cs.at,
                event,
                from_status: from,
                to_status: to,
                reason: reason.to_string(),
                sources: sources.to_vec(),
            })
        };
    for (i, change) in cs.changes.iter().enumerate() {
        let mut write = |w: Write<'a>| writes.push((Some(i), w));
        match change {
            Change::Insert { memory, embedding, reason } => {
                if memory.owner.tenant != cs.tenant {
                    return Err(not_found(&cs.tenant, memory.id));
                }
                let owner = memory.owner.key_parts().map(str::to_string);
                write(Write::Insert { memory, embedding: embedding.as_ref() });
                write(history(
                    memory.id,
                    HistoryEvent::Created,
                    None,
                    memory.status,
                    reason,
                    &memory.provenance.sources,
                ));
                touched.insert(owner.clone());
                stored.insert(
                    memory.id,
                    Stored { status: memory.status, owner, sources: memory.provenance.sources.clone() },
                );
            }
            Change::SetStatus { id, status, event, reason, sources } => {
                let row = stored.get_mut(id).ok_or_else(|| not_found(&cs.tenant, *id))?;
                let from = std::mem::replace(&mut row.status, *status);
                write(Write::Status { id: *id, from, to: *status });
                write(history(*id, *event, Some(from), *status, reason, sources));
                touched.insert(row.owner.clone());
            }
            Change::Reinforce { id, sources, session, reason } => {
                let row = stored.get_mut(id).ok_or_else(|| not_found(&cs.tenant, *id))?;
                for s in sources {
                    if !row.sources.contains(s) {
                        row.sources.push(s.clone());
                    }
                }
                write(Write::Reinforce { id: *id, sources: row.sources.clone(), session: session.as_deref() });
                write(history(*id, HistoryEvent::Reinforced, Some(row.status), row.status, reason, sources));
            }
            Change::SetEmbedding { id, embedding } => {
                let row = stored.get(id).ok_or_else(|| not_found(&cs.tenant, *id))?;
                write(Write::Embedding { id: *id, embedding });
                touched.insert(row.owner.clone());
            }
            Change::SetPinned { id, pinned } => {
                let row = stored.get(id).ok_or_else(|| not_found(&cs.tenant, *id))?;
                let (event, why) =
                    if *pinned { (HistoryEvent::Pinned, "pinned") } else { (HistoryEvent::Unpinned, "unpinned") };
                write(Write::Pinned { id: *id, pinned: *pinned });
                write(history(*id, event, Some(row.status), row.status, why, &[]));
            }
            Change::Withhold { messages } => write(Write::Withhold(messages)),
            Change::Link(link) => {
                for end in [link.from, link.to] {
                    if !stored.contains_key(&end) {
                        return Err(not_found(&cs.tenant, end));
                    }
                }
                write(Write::Link(link));
            }
        }
    }
    writes.extend(touched.into_iter().map(|p| (None, Write::Partition(p))));
    Ok(Plan { tenant: &cs.tenant, at: cs.at, writes })
}

impl<'a> Plan<'a> {
    /// Executes every write in order with `exec`, inside the caller's transaction, with the
    /// fail points tests use to prove a change set is all or nothing.
    pub(crate) fn run(&self, mut exec: impl FnMut(&Write<'a>) -> Result<()>) -> Result<()> {
        let mut second = false;
        for (change, write) in &self.writes {
            if *change == Some(1) && !second {
                second = true;
                fail::fail_point!("store::apply::after_first_change", |_| Err(StoreError::Injected(
                    "store::apply::after_first_change".into()
                )));
            }
            exec(write)?;
        }
        fail::fail_point!("store::apply::before_commit", |_| Err(StoreError::Injected(
            "store::apply::before_commit".into()
        )));
        Ok(())
    }
}
