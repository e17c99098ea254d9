//! Background jobs, run by `mnemo maintain` or a scheduler: lifecycle transitions for now.
//!
//! Jobs walk the whole store in id order, a page at a time, and apply each page's transitions
//! per tenant in one transaction, so an interrupted run resumes where a rerun finds work left.

use std::collections::BTreeMap;

use mnemo_core::lifecycle;
use mnemo_core::{MemoryId, StatusKind, TenantId};
use mnemo_store::{Change, ChangeSet};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::Result;

/// Memories examined per page.
const PAGE: usize = 1_000;

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
}

impl Memory {
    /// Runs the lifecycle jobs as of the engine clock's now: TTL expiry, ephemeral and event
    /// staleness, open loops closing when overdue or silent, stale rows archived. Idempotent:
    /// a second run at the same time changes nothing.
    pub fn maintain(&self) -> Result<MaintainReport> {
        let now = self.clock.now();
        let mut report = MaintainReport::default();
        let mut after = None;
        loop {
            let page = self.store.scan(&[StatusKind::Active, StatusKind::Stale], after, PAGE)?;
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            report.examined += page.len();
            let mut by_tenant: BTreeMap<TenantId, Vec<Change>> = BTreeMap::new();
            for m in &page {
                if let Some(t) = lifecycle::next(m, now, &self.tuning.lifecycle) {
                    report.transitions.push(AppliedTransition {
                        id: m.id,
                        from: m.status.kind(),
                        to: t.to.kind(),
                        reason: t.reason.clone(),
                    });
                    by_tenant.entry(m.owner.tenant.clone()).or_default().push(Change::SetStatus {
                        id: m.id,
                        status: t.to,
                        event: t.event,
                        reason: t.reason,
                        sources: Vec::new(),
                    });
                }
            }
            for (tenant, changes) in by_tenant {
                self.store.apply(&ChangeSet { tenant, at: now, changes })?;
            }
            if page.len() < PAGE {
                break;
            }
        }
        Ok(report)
    }
}
