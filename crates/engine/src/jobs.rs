//! Background jobs, run by `mnemo maintain` or the server's worker: lifecycle transitions and
//! the per-user cap, consolidation (merges, knowledge), and retention sweeps of the trace.
//!
//! Jobs walk the whole store in id order, a page at a time, and apply each page's transitions
//! per tenant in one transaction, so an interrupted run resumes where a rerun finds work left.
//! Each job runs under the store's job lock of its name, so of several servers sharing one
//! store (or several `mnemo maintain` processes) one runs it and the others skip at once.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};

use mnemo_core::lifecycle;
use mnemo_core::trace::TraceOp;
use mnemo_core::{HistoryEvent, MemoryId, Scope, Status, StatusKind, TenantId, UserId};
use mnemo_store::{Change, ChangeSet};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::consolidate::ConsolidationReport;
use crate::error::{Error, Result};

/// Each user's active memories with their claim to stay active under the cap
/// (`lifecycle::cap_weight`; `None` for the exempt).
pub(crate) type ActiveByUser = HashMap<(TenantId, UserId), Vec<(MemoryId, Option<lifecycle::CapWeight>)>>;

/// Memories examined per page.
const PAGE: usize = 1_000;

/// The job lock `Memory::maintain` runs under.
const MAINTAIN_LOCK: &str = "maintain";

/// Trace envelopes deleted per sweep call (one transaction each).
const SWEEP_BATCH: usize = 5_000;

/// How long the trace keeps each class of envelope, in days (0 keeps it forever). Traces are
/// logs that explain answers; memories cite messages, never envelopes, so sweeping these loses no
/// memory. Messages themselves are kept: memories cite them as provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionTuning {
    /// Envelopes of `recall` calls.
    pub recall_traces_days: u32,
    /// Envelopes of `context` calls.
    pub context_traces_days: u32,
    /// Envelopes of ingest batches (the verdicts: why a memory exists is also in its history).
    pub ingest_traces_days: u32,
    /// Envelopes of background extraction batches, chat-model jobs (their cost accounting) and
    /// session rotations.
    pub job_traces_days: u32,
}

impl Default for RetentionTuning {
    fn default() -> Self {
        Self { recall_traces_days: 30, context_traces_days: 30, ingest_traces_days: 90, job_traces_days: 90 }
    }
}

impl RetentionTuning {
    /// Days kept per trace operation.
    pub fn days(&self, op: TraceOp) -> u32 {
        match op {
            TraceOp::Recall => self.recall_traces_days,
            TraceOp::Context => self.context_traces_days,
            TraceOp::Ingest => self.ingest_traces_days,
            TraceOp::Extract | TraceOp::Job | TraceOp::Rotate => self.job_traces_days,
        }
    }
}

/// Where a running `maintain` is, for a progress display on long runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaintainProgress {
    /// The job running: "lifecycle", "cap", "consolidation" or "retention".
    pub phase: &'static str,
    /// Units done in this phase (memories examined, partitions consolidated, ...).
    pub done: usize,
    /// Units in the phase when known.
    pub total: Option<usize>,
}

/// One applied transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedTransition {
    /// The memory.
    pub id: MemoryId,
    /// Status before.
    pub from: StatusKind,
    /// Status after.
    pub to: StatusKind,
    /// Why.
    pub reason: String,
}

/// What a maintenance run changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MaintainReport {
    /// Memories looked at.
    pub examined: usize,
    /// Transitions applied.
    pub transitions: Vec<AppliedTransition>,
    /// Set when this run did nothing because another process was running maintenance on the
    /// same store (it held the job lock): why, in words. Not an error: the work is being done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Near-duplicates merged and knowledge derived.
    #[serde(default)]
    pub consolidation: ConsolidationReport,
    /// Trace envelopes deleted per retention class (trace operation).
    #[serde(default)]
    pub swept: BTreeMap<String, u64>,
}

impl MaintainReport {
    /// Transitions counted by kind of change ("active -> stale", ...), for the summary a person
    /// reads after a run.
    pub fn summary(&self) -> BTreeMap<String, usize> {
        let mut out: BTreeMap<String, usize> = BTreeMap::new();
        for t in &self.transitions {
            let cause = if t.reason.starts_with("expired") {
                "ttl expiry"
            } else if t.reason.starts_with("over the cap") {
                "per-user cap"
            } else if t.reason.starts_with("due ") {
                "open loop overdue"
            } else if t.reason.starts_with("open loop silent") {
                "open loop silent"
            } else if t.reason.starts_with("ephemeral") {
                "ephemeral unreferenced"
            } else if t.reason.starts_with("event") {
                "event not reinforced"
            } else if t.reason.starts_with("stale for") {
                "stale archived"
            } else {
                "other"
            };
            *out.entry(format!("{} -> {} ({cause})", t.from, t.to)).or_default() += 1;
        }
        if !self.consolidation.merged.is_empty() {
            out.insert("near-duplicates merged".into(), self.consolidation.merged.len());
        }
        let (active, candidates): (Vec<_>, Vec<_>) =
            self.consolidation.knowledge.iter().partition(|k| k.status == StatusKind::Active);
        if !active.is_empty() {
            out.insert("knowledge derived".into(), active.len());
        }
        if !candidates.is_empty() {
            out.insert("crystallization candidates".into(), candidates.len());
        }
        if !self.consolidation.skills.is_empty() {
            out.insert("skill candidates".into(), self.consolidation.skills.len());
        }
        for (class, n) in self.swept.iter().filter(|(_, n)| **n > 0) {
            out.insert(format!("{class} traces swept"), *n as usize);
        }
        out
    }
}

impl Memory {
    /// Runs the lifecycle jobs as of the engine clock's now: TTL expiry, ephemeral and event
    /// staleness, open loops closing when overdue or silent, stale rows archived. Idempotent:
    /// a second run at the same time changes nothing.
    ///
    /// Runs under the store's job lock `"maintain"`: when another handle holds it (another
    /// server on the same database, another `mnemo maintain`), returns at once with
    /// [`MaintainReport::skipped`] set and nothing examined.
    pub fn maintain(&self) -> Result<MaintainReport> {
        self.maintain_with(&mut |_| {})
    }

    /// [`Memory::maintain`], telling `progress` where it is after every page and partition.
    #[tracing::instrument(name = "maintain", level = "debug", skip_all)]
    pub fn maintain_with(&self, progress: &mut dyn FnMut(MaintainProgress)) -> Result<MaintainReport> {
        // Decay reads the access statistics the queued turns move.
        self.turns.settle_all();
        let Some(_lock) = self.store.try_job_lock(MAINTAIN_LOCK)? else {
            return Ok(MaintainReport {
                skipped: Some(format!(
                    "another process is running maintenance on this store (it holds the job lock \"{MAINTAIN_LOCK}\"); \
                     nothing was done here"
                )),
                ..MaintainReport::default()
            });
        };
        let now = self.clock.now();
        let mut report = MaintainReport::default();
        // Active memories per user that stay active after this pass, for the cap.
        let mut per_user: ActiveByUser = HashMap::new();
        // Owner partitions with rows that stay active, for consolidation.
        let mut partitions: BTreeMap<[String; 4], Scope> = BTreeMap::new();
        let mut after = None;
        let mut pages = 0usize;
        loop {
            let page = self.store.scan(&[StatusKind::Active, StatusKind::Stale], after, PAGE)?;
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            report.examined += page.len();
            let mut by_tenant: BTreeMap<TenantId, Vec<Change>> = BTreeMap::new();
            for m in &page {
                let next = lifecycle::next(m, now, &self.tuning.lifecycle);
                if next.is_none() && m.status == Status::Active && !m.kind.is_authored_only() {
                    let key = m.owner.key_parts().map(str::to_string);
                    partitions.entry(key).or_insert_with(|| m.owner.clone());
                }
                if let (None, Status::Active, Some(user)) = (&next, &m.status, &m.owner.user) {
                    per_user
                        .entry((m.owner.tenant.clone(), user.clone()))
                        .or_default()
                        .push((m.id, lifecycle::cap_weight(m, now, &self.tuning.decay)));
                }
                if let Some(t) = next {
                    report.transitions.push(AppliedTransition {
                        id: m.id,
                        from: m.status.kind(),
                        to: t.to.kind(),
                        reason: t.reason.clone(),
                    });
                    let changes = by_tenant.entry(m.owner.tenant.clone()).or_default();
                    changes.push(Change::SetStatus {
                        id: m.id,
                        status: t.to,
                        event: t.event,
                        reason: t.reason,
                        sources: Vec::new(),
                    });
                    // What aged out of memory is not quoted back from the conversation either:
                    // a week-old "I'm exhausted" is as stale verbatim as it is extracted.
                    if !m.provenance.sources.is_empty() {
                        changes.push(crate::write::withhold_sources(m));
                    }
                }
            }
            for (tenant, changes) in by_tenant {
                self.apply_changes(ChangeSet { tenant, at: now, changes })?;
            }
            pages += 1;
            progress(MaintainProgress { phase: "lifecycle", done: report.examined, total: None });
            tracing::debug!(page = pages, examined = report.examined, "lifecycle page committed");
            // The kill-and-resume test pauses here (`FAILPOINTS=engine::maintain::after_page=pause`)
            // and kills the process with the page committed; compiled out of normal builds.
            fail::fail_point!("engine::maintain::after_page");
            if page.len() < PAGE {
                break;
            }
        }
        // Consolidation before the cap, so the cap counts what is active after merges and new
        // knowledge, and a second run finds nothing over it.
        // Every partition, even of one row: rows written while the embedder was down get their
        // vectors here (and only that when consolidation is disabled).
        let owners: Vec<Scope> = partitions.into_values().collect();
        let total = owners.len();
        for (i, owner) in owners.iter().enumerate() {
            self.consolidate_partition(owner, now, &mut report.consolidation, &mut per_user)?;
            if (i + 1) % 100 == 0 || i + 1 == total {
                progress(MaintainProgress { phase: "consolidation", done: i + 1, total: Some(total) });
            }
        }
        // Skills: agents' observations mined into candidates (agent-layer rows, never capped).
        self.mine_skills(now, &mut report.consolidation.skills)?;
        progress(MaintainProgress { phase: "cap", done: 0, total: Some(per_user.len()) });
        self.enforce_cap(per_user, now, &mut report)?;
        report.swept = self.sweep_traces(now)?;
        progress(MaintainProgress { phase: "retention", done: report.swept.len(), total: Some(report.swept.len()) });
        Ok(report)
    }

    /// Deletes trace envelopes older than their class's retention, in batches; each batch is
    /// its own transaction, so an interrupted sweep just leaves the rest for the next run.
    fn sweep_traces(&self, now: DateTime<Utc>) -> Result<BTreeMap<String, u64>> {
        let mut out = BTreeMap::new();
        for op in TraceOp::ALL.iter().copied() {
            let days = self.config.retention.days(op);
            if days == 0 {
                continue;
            }
            let before = now.checked_sub_signed(Duration::days(i64::from(days))).ok_or_else(|| Error::Config {
                source_name: "retention".into(),
                reason: format!("{days} days is too far back"),
            })?;
            let mut total = 0u64;
            loop {
                let n = self.store.sweep_traces(op, before, SWEEP_BATCH)?;
                total += n;
                if n < SWEEP_BATCH as u64 {
                    break;
                }
            }
            out.insert(op.as_str().to_string(), total);
        }
        Ok(out)
    }

    /// Archives each user's weakest active memories beyond `lifecycle.max_active_per_user`
    /// (a bounded working set keeps recall sharp). Runs after the lifecycle pass,
    /// so what aged out anyway is not counted; idempotent like the rest.
    fn enforce_cap(&self, per_user: ActiveByUser, now: DateTime<Utc>, report: &mut MaintainReport) -> Result<()> {
        let max = self.tuning.lifecycle.max_active_per_user;
        let mut users: Vec<_> = per_user.into_iter().filter(|(_, v)| v.len() > max).collect();
        users.sort_by(|a, b| a.0.cmp(&b.0));
        for ((tenant, _), weights) in users {
            let count = weights.len();
            let changes: Vec<Change> = lifecycle::over_cap(weights, max)
                .into_iter()
                .map(|(id, weight)| {
                    let reason = format!(
                        "over the cap of {max} active memories ({count} active); among the weakest ({weight:.3})"
                    );
                    report.transitions.push(AppliedTransition {
                        id,
                        from: StatusKind::Active,
                        to: StatusKind::Archived,
                        reason: reason.clone(),
                    });
                    Change::SetStatus {
                        id,
                        status: Status::Archived,
                        event: HistoryEvent::Transitioned,
                        reason,
                        sources: Vec::new(),
                    }
                })
                .collect();
            for chunk in changes.chunks(PAGE) {
                self.apply_changes(ChangeSet { tenant: tenant.clone(), at: now, changes: chunk.to_vec() })?;
            }
        }
        Ok(())
    }
}
