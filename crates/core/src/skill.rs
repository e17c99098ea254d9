//! Skill mining: an agent's observations (see [`crate::observation`]) that recur across
//! sessions become skill candidates — rules such as "When using edit_file on swiftui view:
//! check accessibility modifiers" — that a person approves or rejects like crystallization
//! candidates, and approved skills are placed at the start of every session of the agent.
//!
//! Pure and deterministic: the consolidation job hands in one agent partition's recent
//! observations with their stored vectors and writes the drafts returned here. Two observations
//! are one pattern when they used the same tool, ended the same way, their arguments and notes
//! share distinctive words and (when both have vectors) their vectors are close. Corrections are
//! replayed first (prioritized replay): a cluster of corrections needs fewer sessions
//! (`consolidation.skill_correction_min_sessions`, 2) than a plain pattern
//! (`consolidation.skill_min_sessions`, 3), and ranks above every plain one. The rule is
//! extractive, built without a model: the tool, the words the cluster's arguments share, and
//! the newest member's note (a correction's statement of what was right); a cluster of
//! successes without any note teaches nothing and is not proposed.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::consolidate::{Clusters, ConsolidationTuning, distinctive, dot, stem};
use crate::id::ObservationId;
use crate::observation::{Observation, Outcome};
use crate::text::words;

/// Most situation words a rule names.
const SITUATION_WORDS: usize = 6;

/// One observation as mining sees it, with its stored vector (of one model; the job passes only
/// those of the model most rows carry).
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The observation.
    pub observation: &'a Observation,
    /// Its unit vector, if it has one.
    pub vector: Option<&'a [f32]>,
}

/// A skill candidate to write from one cluster of observations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDraft {
    /// The rule, "When using <tool> on <situation>: <what to do>".
    pub rule: String,
    /// What identifies the pattern across runs (outcome, tool, the stems its arguments share):
    /// stored as the skill's key, so a rerun, or a rejected candidate's pattern seen again,
    /// proposes nothing new.
    pub signature: String,
    /// The tool.
    pub tool: String,
    /// How the cluster's actions ended; `Corrected` clusters rank first.
    pub outcome: Outcome,
    /// Distinct sessions (user and chat) the pattern was seen in.
    pub sessions: usize,
    /// The observations, oldest first.
    pub members: Vec<ObservationId>,
}

impl SkillDraft {
    /// Whether a person corrected the agent in this pattern: such skills rank first.
    pub fn is_correction(&self) -> bool {
        self.outcome == Outcome::Corrected
    }
}

/// The session an observation belongs to: its user (if any) and chat.
fn session(o: &Observation) -> (Option<&str>, Option<&str>) {
    (o.owner.user.as_ref().map(|u| u.as_str()), o.owner.chat.as_ref().map(|c| c.as_str()))
}

/// The fewest sessions a cluster of `outcome` must span (never fewer than two: one session is
/// not a pattern across sessions).
pub fn min_sessions(outcome: Outcome, t: &ConsolidationTuning) -> usize {
    match outcome {
        Outcome::Corrected => t.skill_correction_min_sessions,
        Outcome::Success | Outcome::Failure => t.skill_min_sessions,
    }
    .max(2)
}

/// Skill drafts from one agent partition's observations, best first: corrections before plain
/// patterns, then by sessions spanned, then by size, then by signature (so the order depends
/// only on the observations).
pub fn mine(rows: &[Observed<'_>], t: &ConsolidationTuning) -> Vec<SkillDraft> {
    let rows = &rows[..rows.len().min(t.skill_max_observations)];
    let bags: Vec<BTreeSet<String>> =
        rows.iter().map(|r| distinctive(&format!("{} {}", r.observation.args_summary, note(r.observation)))).collect();
    let mut clusters = Clusters::new(rows.len());
    for a in 0..rows.len() {
        for b in a + 1..rows.len() {
            let (x, y) = (rows[a].observation, rows[b].observation);
            let same = x.outcome == y.outcome
                && x.tool.eq_ignore_ascii_case(&y.tool)
                && x.owner.tenant == y.owner.tenant
                && x.owner.agent == y.owner.agent;
            if !same || bags[a].intersection(&bags[b]).count() < t.skill_shared_words {
                continue;
            }
            let close = match (rows[a].vector, rows[b].vector) {
                (Some(u), Some(v)) => dot(u, v) >= t.skill_cosine,
                _ => true,
            };
            if close {
                clusters.join(a, b);
            }
        }
    }
    let mut out = Vec::new();
    for group in clusters.groups() {
        let mut members: Vec<&Observation> = group.iter().map(|&i| rows[i].observation).collect();
        members.sort_by_key(|o| (o.at, o.id));
        let outcome = members[0].outcome;
        let sessions = members.iter().map(|o| session(o)).collect::<BTreeSet<_>>().len();
        if sessions < min_sessions(outcome, t) {
            continue;
        }
        // A pattern teaches something only with a lesson: a note, or a failure or correction
        // to warn of. Routine successes nobody commented on are not skills.
        let Some(lesson) = lesson(&members, outcome) else { continue };
        out.push(draft(&members, outcome, sessions, &lesson));
    }
    out.sort_by(|a, b| {
        b.is_correction()
            .cmp(&a.is_correction())
            .then(b.sessions.cmp(&a.sessions))
            .then(b.members.len().cmp(&a.members.len()))
            .then(a.signature.cmp(&b.signature))
    });
    out
}

fn note(o: &Observation) -> &str {
    o.text.as_deref().unwrap_or("")
}

/// What a cluster teaches (members oldest first): the newest note, else for a failure or a
/// correction a warning; `None` for successes without a note.
fn lesson(members: &[&Observation], outcome: Outcome) -> Option<String> {
    let note = members.iter().rev().find_map(|o| o.text.as_deref());
    match (note, outcome) {
        (Some(t), _) => Some(t.trim().trim_end_matches('.').to_string()),
        (None, Outcome::Corrected) => Some("a person corrected this before; ask what they expect".into()),
        (None, Outcome::Failure) => Some("it failed in earlier sessions; check why before repeating it".into()),
        (None, Outcome::Success) => None,
    }
}

/// The rule of one cluster (members oldest first) and its lesson.
fn draft(members: &[&Observation], outcome: Outcome, sessions: usize, lesson: &str) -> SkillDraft {
    let newest = members[members.len() - 1];
    // Stems of the arguments shared by more than half the members: the situation.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for o in members {
        for s in distinctive(&o.args_summary) {
            *counts.entry(s).or_default() += 1;
        }
    }
    let common: BTreeSet<String> = counts.into_iter().filter(|(_, n)| 2 * n > members.len()).map(|(s, _)| s).collect();
    // Shown in the newest member's words and order.
    let mut shown: Vec<String> = Vec::new();
    let mut named = BTreeSet::new();
    for w in words(&newest.args_summary) {
        if let Some(s) = stem(&w) {
            if common.contains(&s) && named.insert(s) && shown.len() < SITUATION_WORDS {
                shown.push(w);
            }
        }
    }
    let situation = if shown.is_empty() { newest.args_summary.clone() } else { shown.join(" ") };
    let tool = newest.tool.clone();
    SkillDraft {
        rule: format!("When using {tool} on {situation}: {lesson}."),
        signature: format!(
            "{outcome}:{}:{}",
            tool.to_lowercase(),
            common.iter().map(String::as_str).collect::<Vec<_>>().join(" ")
        ),
        tool,
        outcome,
        sessions,
        members: members.iter().map(|o| o.id).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;
    use chrono::{DateTime, Duration, Utc};
    use proptest::prelude::*;

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn obs(
        user: &str,
        chat: &str,
        tool: &str,
        args: &str,
        outcome: Outcome,
        text: Option<&str>,
        day: i64,
    ) -> Observation {
        let owner = Scope::parse("acme", Some("coder"), Some(user), Some(chat)).unwrap();
        Observation::new(owner, tool, args, outcome, text, t0() + Duration::days(day)).unwrap()
    }

    fn plain(rows: &[Observation]) -> Vec<Observed<'_>> {
        rows.iter().map(|o| Observed { observation: o, vector: None }).collect()
    }

    fn swift(chat: &str, day: i64) -> Observation {
        obs(
            "dana",
            chat,
            "edit_file",
            &format!("SwiftUI view Screen{day}View.swift"),
            Outcome::Failure,
            Some("Check accessibility modifiers."),
            day,
        )
    }

    #[test]
    fn three_sessions_of_one_pattern_make_one_skill() {
        let rows = vec![swift("s1", 1), swift("s2", 2), swift("s3", 3), swift("s3", 4)];
        let drafts = mine(&plain(&rows), &ConsolidationTuning::default());
        assert_eq!(drafts.len(), 1, "{drafts:?}");
        let d = &drafts[0];
        assert_eq!((d.sessions, d.members.len()), (3, 4));
        assert_eq!(d.rule, "When using edit_file on swiftui view swift: Check accessibility modifiers.");
        assert_eq!(d.signature, "failure:edit_file:swift swiftui view");
        // Two sessions are not enough for a plain pattern.
        assert!(mine(&plain(&rows[..2]), &ConsolidationTuning::default()).is_empty());
    }

    #[test]
    fn corrections_need_fewer_sessions_and_rank_first() {
        let mut rows = vec![swift("s1", 1), swift("s2", 2), swift("s3", 3), swift("s4", 4)];
        let fix = "Use tabs for indentation in Go files";
        rows.push(obs("sam", "s5", "write_file", "Go handler main.go indentation", Outcome::Corrected, Some(fix), 5));
        rows.push(obs("sam", "s6", "write_file", "Go handler server.go indentation", Outcome::Corrected, Some(fix), 6));
        let drafts = mine(&plain(&rows), &ConsolidationTuning::default());
        assert_eq!(drafts.len(), 2, "{drafts:?}");
        assert!(drafts[0].is_correction() && drafts[0].sessions == 2, "{drafts:?}");
        assert_eq!(
            drafts[0].rule,
            "When using write_file on handler indentation: Use tabs for indentation in Go files."
        );
        assert_eq!(drafts[1].sessions, 4);
    }

    #[test]
    fn other_tools_outcomes_and_distant_vectors_are_other_patterns() {
        let mut rows = vec![swift("s1", 1), swift("s2", 2)];
        let mut other_tool = swift("s3", 3);
        other_tool.tool = "read_file".into();
        let mut other_outcome = swift("s4", 4);
        other_outcome.outcome = Outcome::Success;
        rows.extend([other_tool, other_outcome]);
        assert!(mine(&plain(&rows), &ConsolidationTuning::default()).is_empty());
        // Vectors far apart keep word-sharing observations apart.
        let rows = [swift("s1", 1), swift("s2", 2), swift("s3", 3)];
        let (a, b) = ([1.0f32, 0.0], [0.0f32, 1.0]);
        let observed: Vec<Observed<'_>> = rows
            .iter()
            .enumerate()
            .map(|(i, o)| Observed { observation: o, vector: Some(if i == 2 { &b[..] } else { &a[..] }) })
            .collect();
        assert!(mine(&observed, &ConsolidationTuning::default()).is_empty());
    }

    #[test]
    fn a_failure_without_notes_warns_and_a_routine_success_teaches_nothing() {
        let rows = |outcome: Outcome| -> Vec<Observation> {
            (1..=3)
                .map(|d| obs("dana", &format!("s{d}"), "run_tests", "cargo test workspace", outcome, None, d))
                .collect()
        };
        let drafts = mine(&plain(&rows(Outcome::Failure)), &ConsolidationTuning::default());
        assert_eq!(
            drafts[0].rule,
            "When using run_tests on cargo test workspace: it failed in earlier sessions; check why before repeating it."
        );
        assert!(mine(&plain(&rows(Outcome::Success)), &ConsolidationTuning::default()).is_empty());
        let mut noted = rows(Outcome::Success);
        noted[0].text = Some("Run it with --no-fail-fast to see every failure".into());
        let drafts = mine(&plain(&noted), &ConsolidationTuning::default());
        assert!(drafts[0].rule.ends_with(": Run it with --no-fail-fast to see every failure."), "{drafts:?}");
    }

    proptest! {
        /// Mining depends on the observations, not on the order they are handed in, and never
        /// proposes a pattern seen in fewer sessions than its outcome's threshold.
        #[test]
        fn order_free_and_thresholds_hold(order in Just((0..8usize).collect::<Vec<_>>()).prop_shuffle(), sessions in 1usize..5) {
            let rows: Vec<Observation> = (0..8)
                .map(|i| {
                    let outcome = if i % 2 == 0 { Outcome::Corrected } else { Outcome::Failure };
                    let chat = format!("s{}", i % sessions);
                    obs("dana", &chat, "edit_file", "SwiftUI view layout", outcome, Some("check accessibility"), i as i64)
                })
                .collect();
            let t = ConsolidationTuning::default();
            let a = mine(&plain(&rows), &t);
            let shuffled: Vec<Observation> = order.iter().map(|&i| rows[i].clone()).collect();
            let b = mine(&plain(&shuffled), &t);
            prop_assert_eq!(&a, &b);
            for d in &a {
                prop_assert!(d.sessions >= min_sessions(d.outcome, &t));
            }
            prop_assert!(a.windows(2).all(|w| w[0].is_correction() >= w[1].is_correction()));
        }
    }
}
