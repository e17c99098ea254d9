//! The consolidation job and crystallization candidates: per owner partition, near-duplicates
//! merged and recurring assertions turned into knowledge (rules in `mnemo_core::consolidate`);
//! candidates approved or rejected by a person.
//!
//! Each partition's changes are one change set, so an interrupted run leaves every partition
//! either consolidated or untouched, and a rerun plans only what is left.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use mnemo_core::consolidate::{self, KnowledgeDraft, Member, Merge};
use mnemo_core::lifecycle;
use mnemo_core::{
    HistoryEvent, Kind, Link, LinkKind, Memory as Row, MemoryId, Provenance, Scope, Status, StatusKind, text,
};
use mnemo_models::Embedder;
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::{Error, Result};
use crate::jobs::ActiveByUser;

/// Knowledge a partition already holds: its id, what it was derived from, its vector, and when
/// it was written.
type KnownKnowledge = (MemoryId, Vec<MemoryId>, Option<Vec<f32>>, DateTime<Utc>);

/// A knowledge memory a consolidation run wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DerivedKnowledge {
    /// The new knowledge memory.
    pub id: MemoryId,
    /// Its status: active for a user's own knowledge, provisional for a crystallization
    /// candidate waiting for a person.
    pub status: StatusKind,
    /// The memories it was derived from (`derived_from` links).
    pub members: Vec<MemoryId>,
    /// Older knowledge of the same members it superseded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<MemoryId>,
}

/// What consolidation changed in one run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConsolidationReport {
    /// Owner partitions looked at.
    pub partitions: usize,
    /// Near-duplicates archived into their survivor.
    pub merged: Vec<Merge>,
    /// Knowledge written.
    pub knowledge: Vec<DerivedKnowledge>,
    /// Skill candidates mined from agents' observations, best first per agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<crate::skills::SkillCandidate>,
}

/// The vector model most rows of a partition carry (memories, observations): the only one
/// compared.
pub(crate) fn common_model<'a>(vectors: impl Iterator<Item = &'a Embedding>) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in vectors {
        *counts.entry(e.model.as_str()).or_default() += 1;
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(m, _)| m.to_string())
}

impl Memory {
    /// Consolidates one owner partition as of `now`: vectors for rows written without one,
    /// knowledge (from the rows as they are), then near-duplicate merges, all in one change set.
    /// With consolidation disabled only the vectors are written. `active` (each user's active
    /// memories with their cap weights, for the per-user cap that runs next) loses the merged
    /// duplicates and gains the new active knowledge, so the cap counts what is really active.
    pub(crate) fn consolidate_partition(
        &self,
        owner: &Scope,
        now: DateTime<Utc>,
        report: &mut ConsolidationReport,
        active: &mut ActiveByUser,
    ) -> Result<()> {
        let t = &self.config.consolidation;
        report.partitions += 1;
        let filter =
            ListFilter { statuses: vec![StatusKind::Active, StatusKind::Provisional], ..ListFilter::default() };
        let visible = self.store.list(owner, &filter)?;
        let mut rows: Vec<Row> =
            visible.iter().filter(|m| m.owner == *owner && m.status == Status::Active).cloned().collect();
        if rows.is_empty() {
            return Ok(());
        }
        rows.sort_by_key(|m| (m.created_at, m.id));
        let mut vectors = HashMap::new();
        let mut changes = Vec::new();
        if rows.len() <= t.max_partition {
            for m in &rows {
                if let Some(e) = self.store.embedding(&owner.tenant, m.id)? {
                    vectors.insert(m.id, e);
                }
            }
            changes.extend(self.backfill_vectors(&rows, &mut vectors));
        }
        if !t.enabled || rows.len() < 2 {
            if !changes.is_empty() {
                self.apply_changes(ChangeSet { tenant: owner.tenant.clone(), at: now, changes })?;
            }
            return Ok(());
        }
        let model = common_model(vectors.values());
        let members: Vec<Member<'_>> = rows
            .iter()
            .map(|m| Member {
                memory: m,
                vector: vectors.get(&m.id).filter(|e| Some(&e.model) == model.as_ref()).map(|e| e.vector.as_slice()),
            })
            .collect();
        // Knowledge the scope already holds (any layer it sees), with what each was derived
        // from and its vector: a draft supersedes knowledge of its own members, and is not
        // written at all when it would near-duplicate other knowledge (so one run reaches the
        // state a second run would leave alone).
        let mut knowledge: Vec<KnownKnowledge> = Vec::new();
        for k in visible.iter().filter(|m| m.kind == Kind::Knowledge) {
            let from: Vec<MemoryId> = self
                .store
                .links(&owner.tenant, k.id)?
                .into_iter()
                .filter(|l| l.from == k.id && l.kind == LinkKind::DerivedFrom)
                .map(|l| l.to)
                .collect();
            let vector = self.store.embedding(&owner.tenant, k.id)?.filter(|e| Some(&e.model) == model.as_ref());
            knowledge.push((k.id, from, vector.map(|e| e.vector), k.created_at));
        }
        let by_id: HashMap<MemoryId, &Row> = rows.iter().map(|m| (m.id, m)).collect();
        for draft in consolidate::knowledge(&members, t) {
            let hash = text::content_hash(&draft.content);
            if self.store.by_hash(owner, &hash)?.into_iter().any(|m| m.kind == Kind::Knowledge) {
                continue; // written before (and maybe approved, rejected or superseded since)
            }
            let embedding = vectors.get(&draft.newest).filter(|e| Some(&e.model) == model.as_ref()).cloned();
            let own = |from: &[MemoryId]| from.iter().any(|m| draft.members.contains(m));
            // Knowledge of these members written since their newest assertion still holds:
            // only a newer assertion replaces it (a member archived since changes nothing).
            let newest_at = by_id[&draft.newest].created_at;
            if knowledge.iter().any(|(_, from, _, at)| own(from) && *at >= newest_at) {
                continue;
            }
            let near_other = knowledge.iter().any(|(_, from, v, _)| {
                !own(from)
                    && matches!((v, &embedding), (Some(a), Some(b))
                        if a.iter().zip(&b.vector).map(|(x, y)| x * y).sum::<f32>() >= self.tuning.gate.dedup_cosine)
            });
            if near_other {
                continue;
            }
            let superseded: Vec<MemoryId> =
                knowledge.iter().filter(|(_, from, _, _)| own(from)).map(|(id, _, _, _)| *id).collect();
            let vector = embedding.as_ref().map(|e| e.vector.clone());
            let (derived, writes) = self.knowledge_changes(owner, &draft, &by_id, embedding, &superseded, now);
            knowledge.retain(|(id, _, _, _)| !superseded.contains(id));
            knowledge.push((derived.id, draft.members.clone(), vector, now));
            for w in &writes {
                if let Change::Insert { memory: k, .. } = w {
                    if let (Status::Active, Some(user)) = (k.status, &k.owner.user) {
                        let weight = lifecycle::cap_weight(k, now, &self.tuning.decay);
                        active.entry((k.owner.tenant.clone(), user.clone())).or_default().push((k.id, weight));
                    }
                }
            }
            if let Some(user) = &owner.user {
                if let Some(list) = active.get_mut(&(owner.tenant.clone(), user.clone())) {
                    list.retain(|(id, _)| !superseded.contains(id));
                }
            }
            changes.extend(writes);
            report.knowledge.push(derived);
        }
        let merges =
            consolidate::duplicates(&members, self.tuning.gate.dedup_cosine, t.max_partition, now, &self.tuning.decay);
        for merge in &merges {
            let dup = by_id[&merge.duplicate];
            changes.push(Change::SetStatus {
                id: merge.duplicate,
                status: Status::Archived,
                event: HistoryEvent::Transitioned,
                reason: format!(
                    "near-duplicate of {} (similarity {:.2}); merged into it by consolidation",
                    merge.survivor, merge.similarity
                ),
                sources: Vec::new(),
            });
            changes.push(Change::Link(Link {
                from: merge.duplicate,
                to: merge.survivor,
                kind: LinkKind::DuplicateOf,
                at: now,
            }));
            changes.push(Change::Reinforce {
                id: merge.survivor,
                sources: dup.provenance.sources.clone(),
                session: dup.provenance.chat.as_ref().map(|c| c.as_str().to_string()),
                reason: format!("absorbed its near-duplicate {} (consolidation)", merge.duplicate),
            });
        }
        if let Some(list) = owner.user.as_ref().and_then(|u| active.get_mut(&(owner.tenant.clone(), u.clone()))) {
            list.retain(|(id, _)| !merges.iter().any(|m| m.duplicate == *id));
        }
        report.merged.extend(merges);
        if !changes.is_empty() {
            self.apply_changes(ChangeSet { tenant: owner.tenant.clone(), at: now, changes })?;
        }
        Ok(())
    }

    /// Vectors for the rows that have none of the embedder's model: written while the embedder
    /// was down (the gate then deduplicated by content hash only, so near-duplicates may have
    /// slipped in), or before the embedder changed. Each is stored by the returned changes and
    /// put in `vectors` at once, so this run's merges already see it. When the embedder fails
    /// again, nothing changes and the next run tries again.
    fn backfill_vectors(&self, rows: &[Row], vectors: &mut HashMap<MemoryId, Embedding>) -> Vec<Change> {
        let Some(embedder) = &self.embedder else { return Vec::new() };
        let model = embedder.id();
        let missing: Vec<&Row> = rows.iter().filter(|m| vectors.get(&m.id).is_none_or(|e| e.model != model)).collect();
        if missing.is_empty() {
            return Vec::new();
        }
        let texts: Vec<String> = missing.iter().map(|m| text::search_text(&m.content, m.key.as_deref())).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let Ok(embedded) = embedder.embed(&refs) else { return Vec::new() };
        missing
            .iter()
            .zip(embedded)
            .map(|(m, vector)| {
                let embedding = Embedding { model: model.to_string(), vector };
                vectors.insert(m.id, embedding.clone());
                Change::SetEmbedding { id: m.id, embedding }
            })
            .collect()
    }

    /// The row and links one knowledge draft writes, and the supersession of older knowledge
    /// derived from the same members.
    fn knowledge_changes(
        &self,
        owner: &Scope,
        draft: &KnowledgeDraft,
        by_id: &HashMap<MemoryId, &Row>,
        embedding: Option<Embedding>,
        superseded: &[MemoryId],
        now: DateTime<Utc>,
    ) -> (DerivedKnowledge, Vec<Change>) {
        let members: Vec<&Row> = draft.members.iter().map(|id| by_id[id]).collect();
        let (layer_owner, status) = match draft.crystallize {
            true => (Scope { user: None, chat: None, ..owner.clone() }, Status::Provisional),
            false => (owner.clone(), Status::Active),
        };
        let mut sources = Vec::new();
        for m in &members {
            for s in &m.provenance.sources {
                if !sources.contains(s) {
                    sources.push(s.clone());
                }
            }
        }
        let newest = by_id[&draft.newest];
        let mut row = Row::new(layer_owner, Kind::Knowledge, draft.content.clone(), now);
        row.status = status;
        row.confidence = members.iter().map(|m| m.confidence).fold(0.0, f32::max);
        row.salience = members.iter().map(|m| m.salience).fold(0.0, f32::max);
        row.sensitivity = newest.sensitivity;
        row.provenance = Provenance {
            sources,
            chat: None,
            extractor: "job".into(),
            extractor_version: "consolidate-1".into(),
            rule: None,
        };
        let id = row.id;
        let reason = format!(
            "consolidated from {} assertions across {} sessions; the newest wording kept{}",
            members.len(),
            draft.sessions.len(),
            if draft.crystallize { "; a crystallization candidate for the agent, waiting for a person" } else { "" }
        );
        let mut changes = vec![Change::Insert { memory: row, embedding, reason }];
        for m in &draft.members {
            changes.push(Change::Link(Link { from: id, to: *m, kind: LinkKind::DerivedFrom, at: now }));
        }
        for old in superseded {
            changes.push(Change::SetStatus {
                id: *old,
                status: Status::Superseded { by: id },
                event: HistoryEvent::Superseded,
                reason: format!("replaced by knowledge {id} in the newest wording of the same assertions"),
                sources: Vec::new(),
            });
            changes.push(Change::Link(Link { from: id, to: *old, kind: LinkKind::Supersedes, at: now }));
        }
        let derived = DerivedKnowledge {
            id,
            status: status.kind(),
            members: draft.members.clone(),
            supersedes: superseded.to_vec(),
        };
        (derived, changes)
    }

    /// Crystallization candidates and other provisional memories visible to the scope, waiting
    /// for a person to approve or reject them, oldest first.
    pub fn list_candidates(&self, scope: &Scope) -> Result<Vec<Row>> {
        let filter = ListFilter { statuses: vec![StatusKind::Provisional], ..ListFilter::default() };
        let mut rows = self.store.list(scope, &filter)?;
        rows.reverse();
        Ok(rows)
    }

    /// A person approves a provisional memory: it becomes active (and, for agent-layer
    /// knowledge, part of every user's recall of that agent and of its CONVENTIONS.md).
    pub fn approve(&self, scope: &Scope, id: MemoryId) -> Result<Row> {
        self.decide(scope, id, Status::Active, "approved by a person")
    }

    /// A person rejects a provisional memory: it is archived (kept for audit, never recalled,
    /// and consolidation does not propose the same wording again).
    pub fn reject(&self, scope: &Scope, id: MemoryId) -> Result<Row> {
        self.decide(scope, id, Status::Archived, "rejected by a person")
    }

    fn decide(&self, scope: &Scope, id: MemoryId, to: Status, reason: &str) -> Result<Row> {
        let m = self
            .store
            .get_many(scope, &[id])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound { tenant: scope.tenant.to_string(), id: id.to_string() })?;
        if m.status != Status::Provisional {
            return Err(Error::Rejected {
                what: "decision",
                reason: format!(
                    "memory {id} is {}, not a candidate; only provisional memories are approved or rejected \
                     (list them with `mnemo candidates list`)",
                    m.status.kind()
                ),
            });
        }
        let change = Change::SetStatus {
            id,
            status: to,
            event: HistoryEvent::Transitioned,
            reason: reason.to_string(),
            sources: Vec::new(),
        };
        self.apply_changes(ChangeSet { tenant: scope.tenant.clone(), at: self.clock.now(), changes: vec![change] })?;
        self.store
            .get(&scope.tenant, id)?
            .ok_or_else(|| Error::NotFound { tenant: scope.tenant.to_string(), id: id.to_string() })
    }
}
