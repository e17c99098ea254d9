//! Behavioural learning: an agent records what it did (`observe`), the consolidation job mines
//! patterns that recur across sessions into provisional skill candidates (rules in
//! `mnemo_core::skill`), a person approves or rejects them like crystallization candidates
//! (`approve`, `reject`), and approved skills are placed at the start of every session of the
//! agent and exported one Markdown file each.
//!
//! Observations take the same doors as everything else: limits are checked before any work,
//! PII is redacted before the row and its vector are made, and a paused or disabled user's
//! actions are not learned from.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use mnemo_core::export::{SkillFile, skills};
use mnemo_core::limits::check_count;
use mnemo_core::observation::{self, Observation, Outcome};
use mnemo_core::pii::redact;
use mnemo_core::skill::{self, Observed, SkillDraft};
use mnemo_core::{Kind, Memory as Row, MemoryId, Provenance, Scope, Status, StatusKind, UserState};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::consolidate::common_model;
use crate::error::{Error, Result};

/// A stored observation and whether it was stored without a vector.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObservation {
    /// The observation as stored (redacted).
    pub observation: Observation,
    /// Set when the embedder failed: the observation is kept and mined by its words only.
    pub degraded: Option<String>,
}

/// A skill candidate one consolidation run wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillCandidate {
    /// The new provisional skill memory, owned by the agent (of the tenant when the
    /// observations named no agent); approve or reject it at `/v1/candidates`.
    pub id: MemoryId,
    /// Its rule.
    pub rule: String,
    /// How the pattern's actions ended; corrections come first.
    pub outcome: Outcome,
    /// Distinct sessions the pattern was seen in.
    pub sessions: usize,
    /// Observations in the pattern.
    pub observations: usize,
}

impl Memory {
    /// Records what an agent did in the scope's session (its chat): refuses empty or oversized
    /// texts before anything is done, refuses a paused or disabled user (nothing is learned from
    /// them), redacts PII, embeds the observation and stores it.
    pub fn observe(
        &self,
        scope: &Scope,
        tool: &str,
        args_summary: &str,
        outcome: Outcome,
        text: Option<&str>,
    ) -> Result<StoredObservation> {
        let _span = tracing::debug_span!("observe", tenant = scope.tenant.as_str()).entered();
        observation::check(tool, args_summary, text, &self.tuning.limits)?;
        scope.require_chat()?;
        if scope.user.is_some() {
            let state = self.user_state(scope)?;
            if state != UserState::Active {
                return Err(Error::Rejected {
                    what: "observation",
                    reason: format!(
                        "user {} is {state}, so nothing is learned from what they do; resume or enable the user first",
                        scope.user.as_ref().map_or("", |u| u.as_str())
                    ),
                });
            }
        }
        let text = text.map(redact);
        let o = Observation::new(
            scope.clone(),
            &redact(tool),
            &redact(args_summary),
            outcome,
            text.as_deref(),
            self.clock.now(),
        )?;
        let (embedding, degraded) = match self.embed(&[&o.embedding_text()]) {
            Ok(mut v) if !v.is_empty() => (Some(Embedding { model: self.model_id(), vector: v.remove(0) }), None),
            Ok(_) => (None, Some("the embedder returned no vector".to_string())),
            Err(e) => (None, Some(format!("embedding failed, stored without a vector: {e}"))),
        };
        self.store.put_observation(&o, embedding.as_ref())?;
        Ok(StoredObservation { observation: o, degraded })
    }

    /// The observations of the scope's user with its agent (of its chat when it names one),
    /// newest first (`limit` 1 to 500).
    pub fn observations(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Observation>> {
        check_count("limit", limit, 1, 500, "the largest page of a listing")?;
        check_count("offset", offset, 0, self.tuning.limits.max_offset, "limits.max_offset")?;
        Ok(self.store.observations(scope, limit, offset)?)
    }

    /// The consolidation job's skill half: per agent with recent observations, the patterns of
    /// `mnemo_core::skill::mine` not proposed before (by signature, whatever became of the
    /// earlier candidate: approved, rejected or pending) written as provisional skills at the
    /// agent layer, one change set per agent.
    pub(crate) fn mine_skills(&self, now: DateTime<Utc>, report: &mut Vec<SkillCandidate>) -> Result<()> {
        let t = &self.config.consolidation;
        if !t.enabled {
            return Ok(());
        }
        let since = now - Duration::days(i64::from(t.skill_window_days));
        for agent in self.store.observation_agents(since)? {
            let rows = self.store.agent_observations(&agent, since, t.skill_max_observations)?;
            let model = common_model(rows.iter().filter_map(|(_, e)| e.as_ref()));
            let observed: Vec<Observed<'_>> = rows
                .iter()
                .map(|(o, e)| Observed {
                    observation: o,
                    vector: e.as_ref().filter(|e| Some(&e.model) == model.as_ref()).map(|e| e.vector.as_slice()),
                })
                .collect();
            let drafts = skill::mine(&observed, t);
            if drafts.is_empty() {
                continue;
            }
            let filter = ListFilter { kinds: vec![Kind::Skill], ..ListFilter::default() };
            let known: HashSet<String> = self
                .store
                .list(&agent, &filter)?
                .into_iter()
                .filter(|m| m.owner == agent)
                .filter_map(|m| m.key)
                .collect();
            let fresh: Vec<&SkillDraft> = drafts.iter().filter(|d| !known.contains(&d.signature)).collect();
            if fresh.is_empty() {
                continue;
            }
            let rules: Vec<&str> = fresh.iter().map(|d| d.rule.as_str()).collect();
            let vectors = self.embed(&rules).ok().filter(|v| v.len() == rules.len());
            let mut changes = Vec::new();
            for (i, d) in fresh.iter().enumerate() {
                let embedding = vectors.as_ref().map(|v| Embedding { model: self.model_id(), vector: v[i].clone() });
                let (row, reason) = skill_row(&agent, d, now);
                report.push(SkillCandidate {
                    id: row.id,
                    rule: d.rule.clone(),
                    outcome: d.outcome,
                    sessions: d.sessions,
                    observations: d.members.len(),
                });
                changes.push(Change::Insert { memory: row, embedding, reason });
            }
            self.apply_changes(ChangeSet { tenant: agent.tenant.clone(), at: now, changes })?;
        }
        Ok(())
    }

    /// The approved skills the scope's session starts with: active skills of its agent (and
    /// tenant-wide ones), corrections' rules first (higher salience), then oldest first, at most
    /// `assembly.skills_at_session_start`.
    pub(crate) fn session_skills(&self, scope: &Scope) -> Result<Vec<Row>> {
        let filter =
            ListFilter { kinds: vec![Kind::Skill], statuses: vec![StatusKind::Active], ..ListFilter::default() };
        let mut rows: Vec<Row> =
            self.store.list(scope, &filter)?.into_iter().filter(|m| m.owner.user.is_none()).collect();
        rows.sort_by(|a, b| {
            b.salience.total_cmp(&a.salience).then(a.created_at.cmp(&b.created_at)).then(a.id.cmp(&b.id))
        });
        rows.truncate(self.tuning.assembly.skills_at_session_start);
        Ok(rows)
    }

    /// The `skills` export: the approved skills of the scope's agent (tenant-wide ones when it
    /// names none), one Markdown file each.
    pub fn export_skills(&self, scope: &Scope) -> Result<Vec<SkillFile>> {
        let owner = Scope { user: None, chat: None, ..scope.clone() };
        let filter = ListFilter { kinds: vec![Kind::Skill], ..ListFilter::default() };
        let mut rows: Vec<Row> = self.store.list(&owner, &filter)?.into_iter().filter(|m| m.owner == owner).collect();
        rows.reverse(); // oldest first
        let agent = owner.agent.as_ref().map_or("(every agent)", |a| a.as_str());
        Ok(skills(agent, &rows))
    }
}

/// The provisional skill memory of one draft, and the reason its history starts with.
fn skill_row(agent: &Scope, d: &SkillDraft, now: DateTime<Utc>) -> (Row, String) {
    let mut row = Row::new(agent.clone(), Kind::Skill, d.rule.clone(), now);
    row.status = Status::Provisional;
    row.key = Some(d.signature.clone());
    // Corrections' rules rank first where skills are placed (prioritized replay).
    (row.confidence, row.salience) = if d.is_correction() { (0.9, 0.9) } else { (0.7, 0.7) };
    row.provenance = Provenance {
        sources: Vec::new(),
        chat: None,
        extractor: "job".into(),
        extractor_version: "skills-1".into(),
        rule: None,
    };
    let reason = format!(
        "mined from {} observations ({}) across {} sessions; a skill candidate for the agent, waiting for a person",
        d.members.len(),
        d.outcome,
        d.sessions
    );
    (row, reason)
}
