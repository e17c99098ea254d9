//! Recall, the pure half: path A selection (exact, exhaustive) and path B ranking (scored,
//! tiered, floored). The engine fetches candidates within scope; this module decides.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::config::Tuning;
use crate::id::MemoryId;
use crate::kind::{Kind, text_enum};
use crate::memory::Memory;
use crate::period::Period;
use crate::policy::Policy;
use crate::score::{ScoreParts, Tier, composite, tier};

text_enum!(
    /// Which retrieval signals produced path B's candidates: the cascade's rung, recorded so a
    /// degraded recall shows up in the trace instead of failing.
    RecallMode, "recall mode" {
        /// Lexical and vector.
        Hybrid => "hybrid",
        /// Vector only (lexical unavailable or empty).
        VectorOnly => "vector_only",
        /// Lexical only (no embedder).
        LexicalOnly => "lexical_only",
        /// Plain substring match, the last resort.
        Substring => "substring",
    }
);

text_enum!(
    /// Why path A included a memory.
    ExactReason, "exact reason" {
        /// Pinned by a person.
        Pinned => "pinned",
        /// A preference (most specific layer wins).
        Preference => "preference",
        /// A protocol or boundary.
        Protocol => "protocol",
        /// An open loop overdue or due soon.
        DueSoon => "due_soon",
        /// The request asks what to do ("what should I focus on this week?"): every open thread.
        Planning => "planning",
        /// A constraint that protects the user (allergy, condition, accessibility, diet) in the
        /// domain the request is about (see `safety`).
        Safety => "safety",
        /// An approved skill of the agent, placed at the start of a session (see `skill`).
        Skill => "skill",
    }
);

/// One recalled memory with how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallItem {
    /// The memory.
    pub memory: Memory,
    /// Path A: why it is always included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactReason>,
    /// Path B: its score parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreParts>,
    /// Path B: its tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// Set when the current message contradicts it (reconsolidation): what the user just said.
    /// The model should confirm such a memory, not assert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub possibly_outdated: Option<String>,
}

impl RecallItem {
    /// The score used for ordering: path A items first, then by total.
    pub fn total(&self) -> f32 {
        self.score.map_or(f32::INFINITY, |s| s.total)
    }
}

/// Path A's result: everything that applies to this turn, no top-k.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExactSet {
    /// Policies in force.
    pub policies: Vec<Policy>,
    /// Pinned memories, preferences, protocols, loops due soon; in a deterministic order.
    pub items: Vec<RecallItem>,
    /// Preferences shadowed by a more specific layer: (shadowed, winner).
    pub shadowed: Vec<(MemoryId, MemoryId)>,
}

/// Open loops due soon that path A takes at most, the soonest due first: the block shows a few
/// under CONTINUE, and a user with hundreds due this week (an agent's task list, a script's
/// reminders) made every recall return and trace all of them (350 loops, 20 KB a trace, in a
/// load run). The rest are still found by path B when a turn is about them.
pub const MAX_DUE_SOON: usize = 10;

/// Picks path A's items from the active memories of exact kinds, pinned rows and open loops.
///
/// Preferences with the same key resolve to one: the most specific layer wins, then the newest.
/// Output order depends only on the state, never on query or retrieval order, so the block's
/// stable prefix stays byte-identical between turns.
pub fn select_exact(candidates: Vec<Memory>, policies: Vec<Policy>, now: DateTime<Utc>, t: &Tuning) -> ExactSet {
    let due_by = now + Duration::seconds((t.ranking.due_soon_days * 86_400.0) as i64);
    let mut keyed: BTreeMap<(Kind, String), Vec<Memory>> = BTreeMap::new();
    let mut items = Vec::new();
    let mut shadowed = Vec::new();
    let mut seen = HashSet::new();
    for m in candidates {
        if !seen.insert(m.id) || !crate::lifecycle::is_live(&m, now, &t.lifecycle) {
            continue;
        }
        let reason = if m.pinned {
            ExactReason::Pinned
        } else if m.kind == Kind::Preference && m.key.as_deref().is_some_and(in_force_everywhere) {
            // Keyed preferences that shape every answer (a diet, an answer length) are looked
            // up exactly; favourites and unkeyed likes are ranked by path B.
            ExactReason::Preference
        } else if m.kind == Kind::Protocol {
            ExactReason::Protocol
        } else if m.kind == Kind::OpenLoop && m.due_at.is_some_and(|d| d <= due_by) {
            ExactReason::DueSoon
        } else {
            continue;
        };
        match (&m.key, reason) {
            (Some(k), ExactReason::Preference | ExactReason::Protocol) => {
                keyed.entry((m.kind, k.clone())).or_default().push(m);
            }
            _ => items.push(RecallItem {
                memory: m,
                exact: Some(reason),
                score: None,
                tier: None,
                possibly_outdated: None,
            }),
        }
    }
    for (_, mut group) in keyed {
        group.sort_by(|a, b| {
            b.owner.layer().cmp(&a.owner.layer()).then(b.created_at.cmp(&a.created_at)).then(b.id.cmp(&a.id))
        });
        let winner = group.remove(0);
        shadowed.extend(group.iter().map(|m| (m.id, winner.id)));
        let reason = if winner.kind == Kind::Protocol { ExactReason::Protocol } else { ExactReason::Preference };
        items.push(RecallItem {
            memory: winner,
            exact: Some(reason),
            score: None,
            tier: None,
            possibly_outdated: None,
        });
    }
    let mut due: Vec<&RecallItem> = items.iter().filter(|i| i.exact == Some(ExactReason::DueSoon)).collect();
    if due.len() > MAX_DUE_SOON {
        due.sort_by(|a, b| a.memory.due_at.cmp(&b.memory.due_at).then(a.memory.id.cmp(&b.memory.id)));
        let soonest: HashSet<MemoryId> = due[..MAX_DUE_SOON].iter().map(|i| i.memory.id).collect();
        items.retain(|i| i.exact != Some(ExactReason::DueSoon) || soonest.contains(&i.memory.id));
    }
    items.sort_by(|a, b| {
        let (x, y) = (&a.memory, &b.memory);
        a.exact
            .cmp(&b.exact)
            .then(x.kind.cmp(&y.kind))
            .then(x.key.cmp(&y.key))
            .then(x.owner.layer().cmp(&y.owner.layer()))
            .then(x.created_at.cmp(&y.created_at))
            .then(x.id.cmp(&y.id))
    });
    let mut policies: Vec<Policy> = policies.into_iter().filter(|p| p.in_force(now)).collect();
    policies.sort_by(|a, b| a.key.cmp(&b.key).then(a.agent.cmp(&b.agent)).then(a.version.cmp(&b.version)));
    ExactSet { policies, items, shadowed }
}

/// Whether a keyed preference bears on every answer, whatever is asked: how to answer (length,
/// tone, language) and what the user eats. A favourite ("favorite:recipe") is keyed so that a new
/// one replaces the old, but it bears on the questions about it only: placed in every block, it
/// spent the budget of questions about anything else ("Audrey's favorite recipe is Chicken Pot
/// Pie" above a question about her dogs).
pub fn in_force_everywhere(key: &str) -> bool {
    // Keys may be namespaced ("person:jolene:favorite:dishes" for a named speaker).
    !key.split(':').any(|part| part == "favorite")
}

/// Whether a request asks what the user has to do ("what should I focus on this week?",
/// "what's on my plate?", "any deadlines?"): then every open loop belongs in the block, not
/// only those due soon, because the question is about them whatever words it uses.
pub fn asks_for_plans(query: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(?:focus\s+on|on\s+my\s+plate|to-?do|todo\s+list|deadlines?|what\s+(?:do|should|must)\s+i\s+(?:do|tackle|finish|work\s+on|prioriti[sz]e)|what(?:'s|\s+is)\s+(?:next|left|pending|due|coming\s+up)|open\s+(?:loops|threads|tasks)|remind\s+me\s+what|what\s+did\s+i\s+(?:promise|plan|say\s+i\s+would)|my\s+(?:plans|tasks|priorities|week|agenda)|plan\s+my\s+(?:week|day))",
        )
        .expect("planning regex")
    })
    .is_match(query)
}

/// A path B candidate: a memory within scope and its raw signals.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The memory.
    pub memory: Memory,
    /// Lexical signal normalised to 0..=1 against the best lexical hit of this query.
    pub lexical: Option<f32>,
    /// Cosine with the query.
    pub vector: Option<f32>,
}

/// Path B's result before assembly.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ranked {
    /// Items above the floor, best first, at most k.
    pub items: Vec<RecallItem>,
    /// Candidates dropped for relevance below the floor.
    pub below_floor: Vec<(MemoryId, f32)>,
}

/// Scores, floors, orders and cuts path B's candidates. `exclude` holds path A's ids.
pub fn rank(
    candidates: Vec<Candidate>,
    exclude: &HashSet<MemoryId>,
    k: usize,
    now: DateTime<Utc>,
    period: Option<&Period>,
    t: &Tuning,
) -> Ranked {
    let mut out = Ranked::default();
    let mut seen = HashSet::new();
    for c in candidates {
        if exclude.contains(&c.memory.id)
            || !seen.insert(c.memory.id)
            || !crate::lifecycle::is_live(&c.memory, now, &t.lifecycle)
        {
            continue;
        }
        let mut parts = composite(&c.memory, c.lexical, c.vector, now, t);
        if period.is_some_and(|p| p.covers(c.memory.created_at)) && t.ranking.period_boost > 0.0 {
            parts = parts.lifted(t.ranking.period_boost, t);
        }
        if parts.relevance < t.ranking.min_relevance {
            out.below_floor.push((c.memory.id, parts.relevance));
            continue;
        }
        out.items.push(RecallItem {
            tier: Some(tier(parts.relevance, t)),
            score: Some(parts),
            exact: None,
            possibly_outdated: None,
            memory: c.memory,
        });
    }
    out.items.sort_by(|a, b| b.total().total_cmp(&a.total()).then(a.memory.id.cmp(&b.memory.id)));
    out.items.truncate(k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kind::Surface;

    use crate::scope::Scope;

    fn now() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    fn mem(kind: Kind, owner: Scope, content: &str) -> Memory {
        Memory { confidence: 0.9, salience: 0.6, ..Memory::new(owner, kind, content, now()) }
    }

    fn user() -> Scope {
        Scope::parse("acme", None, Some("dana"), None).unwrap()
    }

    #[test]
    fn most_specific_layer_wins_per_key() {
        let tenant = Scope::parse("acme", None, None, None).unwrap();
        let mut general = mem(Kind::Preference, tenant, "Answers are detailed");
        general.key = Some("answer_length".into());
        let mut mine = mem(Kind::Preference, user(), "User wants short answers");
        mine.key = Some("answer_length".into());
        let unkeyed = mem(Kind::Preference, user(), "User likes dry humour");
        let set = select_exact(vec![general.clone(), mine.clone(), unkeyed], vec![], now(), &Tuning::default());
        let ids: Vec<_> = set.items.iter().map(|i| i.memory.id).collect();
        assert_eq!(ids, vec![mine.id], "unkeyed preferences belong to path B");
        assert_eq!(set.shadowed, vec![(general.id, mine.id)]);
    }

    #[test]
    fn a_diet_is_in_force_everywhere_a_favourite_only_where_it_is_asked_about() {
        let mut diet = mem(Kind::Preference, user(), "User is vegetarian");
        diet.key = Some("diet".into());
        let mut favourite = mem(Kind::Preference, user(), "User's favorite recipe is Chicken Pot Pie");
        favourite.key = Some("favorite:recipe".into());
        let mut named = mem(Kind::Preference, user(), "Jolene's favorite dish is lasagna");
        named.key = Some("person:jolene:favorite:dish".into());
        let set = select_exact(vec![diet.clone(), favourite, named], vec![], now(), &Tuning::default());
        let ids: Vec<_> = set.items.iter().map(|i| i.memory.id).collect();
        assert_eq!(ids, vec![diet.id], "a favourite belongs to path B");
    }

    #[test]
    fn path_a_takes_the_soonest_due_loops_only_up_to_its_cap() {
        // Thirty loops due within the window, in no particular order of due time.
        let loops: Vec<Memory> = (0..30)
            .map(|i| {
                let mut m = mem(Kind::OpenLoop, user(), &format!("task {i}"));
                m.due_at = Some(now() + Duration::hours(((i * 7) % 30 + 1) as i64));
                m
            })
            .collect();
        let mut want: Vec<&Memory> = loops.iter().collect();
        want.sort_by_key(|m| m.due_at);
        let want: HashSet<MemoryId> = want[..MAX_DUE_SOON].iter().map(|m| m.id).collect();
        let mut pinned = mem(Kind::Event, user(), "pinned event");
        pinned.pinned = true;
        let mut candidates = loops.clone();
        candidates.push(pinned.clone());
        let set = select_exact(candidates, vec![], now(), &Tuning::default());
        let due: HashSet<MemoryId> =
            set.items.iter().filter(|i| i.exact == Some(ExactReason::DueSoon)).map(|i| i.memory.id).collect();
        assert_eq!(due, want);
        // The cap is on loops only: the pinned row stays.
        assert!(set.items.iter().any(|i| i.memory.id == pinned.id));
        // Deterministic: the same state gives the same list in the same order.
        let again = select_exact(loops.into_iter().rev().chain([pinned]).collect(), vec![], now(), &Tuning::default());
        let ids = |s: &ExactSet| s.items.iter().map(|i| i.memory.id).collect::<Vec<_>>();
        assert_eq!(ids(&set), ids(&again));
    }

    #[test]
    fn path_a_takes_pinned_protocols_and_loops_due_soon_only() {
        let mut pinned = mem(Kind::Event, user(), "pinned event");
        pinned.pinned = true;
        let boundary = mem(Kind::Protocol, user(), "never mention the divorce");
        let mut soon = mem(Kind::OpenLoop, user(), "call mom");
        soon.due_at = Some(now() + Duration::days(1));
        let mut later = mem(Kind::OpenLoop, user(), "renew passport");
        later.due_at = Some(now() + Duration::days(30));
        let plain = mem(Kind::Profile, user(), "name is Dana");
        let set = select_exact(
            vec![plain, later, soon.clone(), boundary.clone(), pinned.clone()],
            vec![],
            now(),
            &Tuning::default(),
        );
        let got: Vec<_> = set.items.iter().map(|i| (i.memory.id, i.exact.unwrap())).collect();
        assert_eq!(
            got,
            vec![
                (pinned.id, ExactReason::Pinned),
                (boundary.id, ExactReason::Protocol),
                (soon.id, ExactReason::DueSoon)
            ]
        );
    }

    #[test]
    fn path_a_order_is_independent_of_input_order() {
        let ms: Vec<_> = (0..6)
            .map(|i| {
                let mut m = mem(Kind::Preference, user(), &format!("pref {i}"));
                m.key = Some(format!("k{}", i % 3));
                m.created_at = now() - Duration::minutes(i);
                m
            })
            .collect();
        let a = select_exact(ms.clone(), vec![], now(), &Tuning::default());
        let mut rev = ms;
        rev.reverse();
        let b = select_exact(rev, vec![], now(), &Tuning::default());
        assert_eq!(a, b);
    }

    #[test]
    fn ranking_floors_orders_and_excludes() {
        let t = Tuning::default();
        let a = mem(Kind::Profile, user(), "a");
        let b = mem(Kind::Profile, user(), "b");
        let c = mem(Kind::Profile, user(), "c");
        let excluded = mem(Kind::Profile, user(), "d");
        let cands = vec![
            Candidate { memory: a.clone(), lexical: None, vector: Some(0.5) },
            Candidate { memory: b.clone(), lexical: Some(1.0), vector: Some(0.6) },
            Candidate { memory: c, lexical: None, vector: Some(0.1) },
            Candidate { memory: excluded.clone(), lexical: Some(1.0), vector: Some(0.9) },
        ];
        let r = rank(cands, &HashSet::from([excluded.id]), 10, now(), None, &t);
        let ids: Vec<_> = r.items.iter().map(|i| i.memory.id).collect();
        assert_eq!(ids, vec![b.id, a.id]);
        assert_eq!(r.below_floor.len(), 1);
        assert_eq!(r.items[0].tier, Some(Tier::High));
        assert_eq!(r.items[0].memory.surface, Surface::Speak);
    }

    #[test]
    fn questions_about_what_to_do_ask_for_plans() {
        for q in [
            "what should I focus on this week?",
            "What I should focus on this week?",
            "what's on my plate this week?",
            "what deadlines do I have?",
            "help me plan my week",
            "what's left to do",
        ] {
            assert!(super::asks_for_plans(q), "{q}");
        }
        for q in ["what's the capital of Peru?", "focus group results for the product", "how do I plan a wedding"] {
            assert!(!super::asks_for_plans(q), "{q}");
        }
    }
}
