//! A scope's whole memory state rendered as text: every memory the scope sees (any status) with
//! its strength, links and history, ids replaced by stable labels. What snapshot tests compare
//! and what the kill-and-resume test checks, so a job's effect is read as a diff of plain text.

use std::collections::HashMap;
use std::fmt::Write as _;

use mnemo_core::decay::strength;
use mnemo_core::{Memory as Row, MemoryId, Scope, Status};
use mnemo_store::ListFilter;

use crate::Memory;
use crate::error::Result;

/// The owner's layer in words: "tenant", "agent", "user", "user+agent", "chat:<id>".
fn layer(owner: &Scope) -> String {
    match (&owner.agent, &owner.user, &owner.chat) {
        (_, _, Some(c)) => format!("chat:{c}"),
        (None, None, None) => "tenant".into(),
        (Some(a), None, None) => format!("agent:{a}"),
        (None, Some(u), None) => format!("user:{u}"),
        (Some(a), Some(u), None) => format!("user:{u}+agent:{a}"),
    }
}

/// The order labels follow: nothing random (ids are), everything a run determines.
fn sort_key(m: &Row) -> (String, String, String, i64, String) {
    (layer(&m.owner), m.kind.as_str().to_string(), m.content.clone(), m.created_at.timestamp_millis(), m.id.to_string())
}

impl Memory {
    /// Renders every memory visible to `scope` (any status) as deterministic text: one block per
    /// memory with status, kind, layer, key, pinned, strength at the engine clock's now (two
    /// decimals), content, links and history; ids become labels `M1, M2, ...` in an order that
    /// depends only on content and times, so two stores reached the same state when their
    /// renderings are equal.
    pub fn render_state(&self, scope: &Scope) -> Result<String> {
        let now = self.clock.now();
        let mut rows = self.store.list(scope, &ListFilter::default())?;
        rows.sort_by_key(sort_key);
        let labels: HashMap<MemoryId, String> =
            rows.iter().enumerate().map(|(i, m)| (m.id, format!("M{}", i + 1))).collect();
        let label = |id: &MemoryId| labels.get(id).cloned().unwrap_or_else(|| "(outside the scope)".into());
        let mut out = String::new();
        let _ = writeln!(out, "state of {} at {} ({} memories)", layer(scope), now.to_rfc3339(), rows.len());
        for m in &rows {
            let status = match m.status {
                Status::Superseded { by } => format!("superseded by {}", label(&by)),
                s => s.kind().to_string(),
            };
            let _ = writeln!(
                out,
                "\n{} [{status}] {} @{}{}{} strength={:.2} reinforcements={} sessions={}",
                label(&m.id),
                m.kind,
                layer(&m.owner),
                m.key.as_ref().map(|k| format!(" key={k}")).unwrap_or_default(),
                if m.pinned { " pinned" } else { "" },
                strength(m, now, &self.tuning.decay),
                m.reinforcements,
                m.distinct_sessions,
            );
            let _ = writeln!(out, "  {:?}", m.content);
            let mut links: Vec<String> = self
                .store
                .links(&scope.tenant, m.id)?
                .into_iter()
                .filter(|l| l.from == m.id)
                .map(|l| format!("{} {}", l.kind, label(&l.to)))
                .collect();
            links.sort();
            for l in links {
                let _ = writeln!(out, "  link: {l}");
            }
            for h in self.store.history(&scope.tenant, m.id)? {
                let from = h.from_status.map(|s| format!("{} -> ", s.kind())).unwrap_or_default();
                let mut reason = h.reason.clone();
                for (id, l) in &labels {
                    reason = reason.replace(&id.to_string(), l);
                }
                let _ = writeln!(
                    out,
                    "  {} {} {from}{}: {reason}",
                    h.at.format("%Y-%m-%dT%H:%M:%SZ"),
                    h.event,
                    h.to_status.kind()
                );
            }
        }
        Ok(out)
    }
}
