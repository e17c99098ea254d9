//! A change set as rows: which memory rows change and how, the history row beside every change,
//! the sources a reinforcement merges, the tenant check, the partitions whose version moves.
//!
//! Planning walks the changes in order over a view of the memories they touch (read by the
//! backend before, locked where it rewrites them), updating the view as it goes, so a change
//! sees what earlier changes of the same set did, as it would have reading the database.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use mnemo_core::{HistoryEntry, HistoryEvent, Link, Memory, MemoryId, MessageId, Scope, Status, TenantId};

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
    // Where each memory stands in `out`: a change set may name thousands (a re-embedding).
    let mut at: HashMap<MemoryId, usize> = HashMap::new();
    let mut need = |id: MemoryId, lock: Lock| {
        if inserted.contains(&id) {
            return;
        }
        match at.get(&id) {
            Some(&i) => out[i].1 = out[i].1.max(lock),
            None => {
                at.insert(id, out.len());
                out.push((id, lock));
            }
        }
    };
    for change in &cs.changes {
        match change {
            Change::SetStatus { id, .. }
            | Change::Reinforce { id, .. }
            | Change::SetEmbedding { id, .. }
            | Change::SetPinned { id, .. }
            | Change::SetMetadata { id, .. } => need(*id, Lock::Update),
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
    /// A client's key-value data, as JSON text (`None` clears it).
    Metadata {
        /// The memory.
        id: MemoryId,
        /// The data.
        json: Option<String>,
    },
    /// Messages taken out of archival recall (ids unknown to the owner are skipped).
    Withhold {
        /// Whose messages (see `Change::Withhold`).
        owner: &'a Scope,
        /// The messages.
        messages: &'a [MessageId],
    },
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
            Change::SetMetadata { id, metadata } => {
                stored.get(id).ok_or_else(|| not_found(&cs.tenant, *id))?;
                write(Write::Metadata { id: *id, json: metadata.as_ref().map(crate::rows::json) });
            }
            Change::Withhold { owner, messages } => write(Write::Withhold { owner, messages }),
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::{DateTime, Utc};
    use mnemo_core::{HistoryEvent, Kind, Link, LinkKind, Memory, MemoryId, MessageId, Scope, Status};
    use proptest::prelude::*;

    use super::{Lock, Stored, Write, plan, reads};
    use crate::error::StoreError;
    use crate::memories::{Change, ChangeSet};

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn owner(tenant: &str, user: &str) -> Scope {
        Scope::parse(tenant, None, Some(user), None).unwrap()
    }

    fn mid(s: &str) -> MessageId {
        MessageId::new(s).unwrap()
    }

    fn stored(user: &str, sources: &[&str]) -> Stored {
        Stored {
            status: Status::Active,
            owner: owner("acme", user).key_parts().map(str::to_string),
            sources: sources.iter().map(|s| mid(s)).collect(),
        }
    }

    fn set(changes: Vec<Change>) -> ChangeSet {
        ChangeSet { tenant: "acme".parse().unwrap(), at: t0(), changes }
    }

    fn histories<'a>(writes: &'a [(Option<usize>, Write<'_>)]) -> Vec<&'a mnemo_core::HistoryEntry> {
        writes
            .iter()
            .filter_map(|(_, w)| match w {
                Write::History(h) => Some(h),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_memory_of_another_tenant_is_not_found_and_nothing_is_planned() {
        let theirs = Memory::new(owner("evil", "dana"), Kind::Profile, "x", t0());
        let cs = set(vec![Change::Insert { memory: theirs.clone(), embedding: None, reason: "r".into() }]);
        let err = plan(&cs, HashMap::new()).unwrap_err();
        assert!(matches!(err, StoreError::MemoryNotFound { id, .. } if id == theirs.id.to_string()));
    }

    #[test]
    fn a_reinforcement_merges_sources_once_and_its_history_names_the_new_ones() {
        let id = MemoryId::new();
        let cs = set(vec![Change::Reinforce {
            id,
            sources: vec![mid("m2"), mid("m1"), mid("m3")],
            session: Some("c1".into()),
            reason: "again".into(),
        }]);
        let p = plan(&cs, HashMap::from([(id, stored("dana", &["m1", "m2"]))])).unwrap();
        assert_eq!(
            p.writes[0].1,
            Write::Reinforce { id, sources: vec![mid("m1"), mid("m2"), mid("m3")], session: Some("c1") }
        );
        let h = histories(&p.writes);
        assert_eq!(h.len(), 1);
        assert_eq!(
            (h[0].event, h[0].from_status, h[0].to_status),
            (HistoryEvent::Reinforced, Some(Status::Active), Status::Active)
        );
        assert_eq!(h[0].sources, vec![mid("m2"), mid("m1"), mid("m3")]);
        assert!(p.writes.iter().all(|(_, w)| !matches!(w, Write::Partition(_))), "recall sets are unchanged");
    }

    #[test]
    fn pins_write_their_event_and_a_later_change_sees_an_earlier_status() {
        let id = MemoryId::new();
        let cs = set(vec![
            Change::SetStatus {
                id,
                status: Status::Archived,
                event: HistoryEvent::Forgotten,
                reason: "asked".into(),
                sources: vec![],
            },
            Change::SetPinned { id, pinned: false },
        ]);
        let p = plan(&cs, HashMap::from([(id, stored("dana", &[]))])).unwrap();
        let h = histories(&p.writes);
        assert_eq!((h[0].from_status, h[0].to_status), (Some(Status::Active), Status::Archived));
        assert_eq!((h[1].event, h[1].reason.as_str()), (HistoryEvent::Unpinned, "unpinned"));
        assert_eq!((h[1].from_status, h[1].to_status), (Some(Status::Archived), Status::Archived));
    }

    #[test]
    fn links_need_both_ends_and_may_name_a_memory_the_set_inserts() {
        let old = MemoryId::new();
        let new = Memory::new(owner("acme", "dana"), Kind::Profile, "y", t0());
        let link = |to| Change::Link(Link { from: new.id, to, kind: LinkKind::Supersedes, at: t0() });
        let insert = Change::Insert { memory: new.clone(), embedding: None, reason: "r".into() };
        let known = HashMap::from([(old, stored("dana", &[]))]);
        assert!(plan(&set(vec![insert.clone(), link(old)]), known.clone()).is_ok());
        let missing = MemoryId::new();
        assert!(matches!(
            plan(&set(vec![insert.clone(), link(missing)]), known).unwrap_err(),
            StoreError::MemoryNotFound { id, .. } if id == missing.to_string()
        ));
        assert_eq!(reads(&set(vec![insert, link(old)])), vec![(old, Lock::Share)], "the inserted end is not read");
    }

    #[test]
    fn reads_name_each_memory_once_with_the_strongest_lock() {
        let (a, b) = (MemoryId::new(), MemoryId::new());
        let cs = set(vec![
            Change::Link(Link { from: a, to: b, kind: LinkKind::Supersedes, at: t0() }),
            Change::SetPinned { id: b, pinned: true },
        ]);
        assert_eq!(reads(&cs), vec![(a, Lock::Share), (b, Lock::Update)]);
    }

    /// One change of a generated set, over three memories that exist and one that does not.
    fn change(ids: [MemoryId; 4]) -> impl Strategy<Value = Change> {
        let id = proptest::sample::select(ids.to_vec());
        let sources = proptest::collection::vec(proptest::sample::select(vec!["m1", "m2", "m3"]), 0..3)
            .prop_map(|v| v.into_iter().map(mid).collect::<Vec<_>>());
        prop_oneof![
            (id.clone(), sources).prop_map(|(id, sources)| Change::Reinforce {
                id,
                sources,
                session: None,
                reason: "again".into()
            }),
            (id.clone(), any::<bool>()).prop_map(|(id, pinned)| Change::SetPinned { id, pinned }),
            id.clone().prop_map(|id| Change::SetStatus {
                id,
                status: Status::Archived,
                event: HistoryEvent::Closed,
                reason: "done".into(),
                sources: vec![],
            }),
            (id.clone(), id).prop_map(|(from, to)| Change::Link(Link {
                from,
                to,
                kind: LinkKind::Supersedes,
                at: t0()
            })),
        ]
    }

    fn generated() -> impl Strategy<Value = ([MemoryId; 4], Vec<Change>)> {
        let ids = [MemoryId::new(), MemoryId::new(), MemoryId::new(), MemoryId::new()];
        (Just(ids), proptest::collection::vec(change(ids), 0..8))
    }

    proptest! {
        /// Whatever the changes: a set naming a missing memory plans nothing, and any other set
        /// writes one history row per change that alters a memory's row, its sources never repeat,
        /// and partition bumps come last, sorted, each once.
        #[test]
        fn every_planned_set_is_all_or_nothing_with_its_history((ids, changes) in generated()) {
            let known: HashMap<MemoryId, Stored> =
                ids[..3].iter().map(|id| (*id, stored(&format!("u{id}"), &["m1"]))).collect();
            let cs = set(changes);
            let names_missing = reads(&cs).iter().any(|(id, _)| *id == ids[3]);
            match plan(&cs, known) {
                Err(e) => {
                    let not_found = matches!(e, StoreError::MemoryNotFound { .. });
                    prop_assert!(names_missing && not_found);
                }
                Ok(p) => {
                    prop_assert!(!names_missing);
                    let altering = cs.changes.iter().filter(|c| !matches!(c, Change::Link(_))).count();
                    prop_assert_eq!(histories(&p.writes).len(), altering);
                    for (_, w) in &p.writes {
                        if let Write::Reinforce { sources, .. } = w {
                            let mut seen = sources.clone();
                            seen.dedup();
                            prop_assert_eq!(seen.len(), sources.iter().collect::<std::collections::BTreeSet<_>>().len());
                            prop_assert_eq!(&sources[0], &mid("m1"), "earlier sources keep their place");
                        }
                    }
                    let first_bump = p.writes.iter().position(|(c, _)| c.is_none()).unwrap_or(p.writes.len());
                    prop_assert!(p.writes[first_bump..].iter().all(|(c, w)| c.is_none() && matches!(w, Write::Partition(_))));
                    let bumps: Vec<_> = p.writes[first_bump..].iter().map(|(_, w)| format!("{w:?}")).collect();
                    prop_assert!(bumps.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
                }
            }
        }
    }
}
