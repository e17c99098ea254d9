//! Background jobs, run by `mnemo maintain` or a scheduler: lifecycle transitions for now.
//!
//! Jobs walk the whole store in id order, a page at a time, and apply each page's transitions
//! per tenant in one transaction, so an interrupted run resumes where a rerun finds work left.
//! Each job runs under the store's job lock of its name, so of several servers sharing one
//! store (or several `mnemo maintain` processes) one runs it and the others skip at once.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use mnemo_core::lifecycle;
use mnemo_core::{HistoryEvent, MemoryId, Status, StatusKind, TenantId, UserId};
use mnemo_store::{Change, ChangeSet};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::Result;

/// Memories examined per page.
const PAGE: usize = 1_000;

/// The job lock `Memory::maintain` runs under.
const MAINTAIN_LOCK: &str = "maintain";

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
        let mut per_user: HashMap<(TenantId, UserId), Vec<(MemoryId, Option<f32>)>> = HashMap::new();
        let mut after = None;
        loop {
            let page = self.store.scan(&[StatusKind::Active, StatusKind::Stale], after, PAGE)?;
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            report.examined += page.len();
            let mut by_tenant: BTreeMap<TenantId, Vec<Change>> = BTreeMap::new();
            for m in &page {
                let next = lifecycle::next(m, now, &self.tuning.lifecycle);
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
                        changes.push(Change::Withhold { messages: m.provenance.sources.clone() });
                    }
                }
            }
            for (tenant, changes) in by_tenant {
                self.store.apply(&ChangeSet { tenant, at: now, changes })?;
            }
            if page.len() < PAGE {
                break;
            }
        }
        self.enforce_cap(per_user, now, &mut report)?;
        Ok(report)
    }

    /// Archives each user's weakest active memories beyond `lifecycle.max_active_per_user`
    /// (document 000: a bounded working set keeps recall sharp). Runs after the lifecycle pass,
    /// so what aged out anyway is not counted; idempotent like the rest.
    fn enforce_cap(
        &self,
        per_user: HashMap<(TenantId, UserId), Vec<(MemoryId, Option<f32>)>>,
        now: DateTime<Utc>,
        report: &mut MaintainReport,
    ) -> Result<()> {
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
                self.store.apply(&ChangeSet { tenant: tenant.clone(), at: now, changes: chunk.to_vec() })?;
            }
        }
        Ok(())
    }
}
