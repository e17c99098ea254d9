//! Consolidation (documents 000, 001, 004): near-duplicate clusters merged into their strongest
//! member, and assertions that recur across sessions turned into one `knowledge` memory.
//!
//! Pure: the job hands in one owner partition's active rows with their stored vectors and applies
//! the plan returned here. Both rules are conservative on purpose — a wrong merge hides a memory,
//! a wrong knowledge row invents one — and deterministic, so a rerun plans exactly what is left.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::DecayTuning;
use crate::decay::strength;
use crate::id::{ChatId, MemoryId};
use crate::kind::{Kind, Status};
use crate::memory::Memory;
use crate::text::{is_stopword, words};

/// How eagerly episodes become knowledge. Merging duplicates uses the gate's `dedup_cosine`, so
/// a job never merges what the gate would have kept apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsolidationTuning {
    /// Run consolidation in `maintain` at all.
    pub enabled: bool,
    /// Two events, episodes or facts of one owner assert the same thing when their vectors are
    /// at least this close...
    pub knowledge_cosine: f32,
    /// ...and they share at least this many distinctive words (not stopwords, 4+ letters):
    /// similar sentences about different things ("my sister visited Porto" / "my sister lives
    /// in Porto") are kept apart. The cosine alone is loose on purpose (paraphrases of one
    /// assertion by the local model land around 0.7); the words make it conservative.
    pub knowledge_shared_words: usize,
    /// A cluster becomes knowledge once it spans this many distinct sessions (chats).
    pub knowledge_min_sessions: usize,
    /// Partitions with more active rows than this are only merged by exact content hash (the
    /// pairwise vector comparison is quadratic in the partition; the per-user cap keeps user
    /// partitions far below it).
    pub max_partition: usize,
    /// A recurring pattern of an agent's observations (same tool, same outcome, similar
    /// arguments) becomes a skill candidate once it spans this many distinct sessions.
    pub skill_min_sessions: usize,
    /// The same for patterns of corrections (outcome `corrected`): lower, because a person
    /// correcting the agent twice is a stronger signal than the agent repeating itself
    /// (prioritized replay; see `crate::skill`).
    pub skill_correction_min_sessions: usize,
    /// Two observations belong to one pattern when their vectors are at least this close...
    pub skill_cosine: f32,
    /// ...and their arguments and notes share at least this many distinctive words.
    pub skill_shared_words: usize,
    /// Observations older than this many days are not mined.
    pub skill_window_days: u32,
    /// Most observations of one agent mined per run (the newest): clustering is quadratic.
    pub skill_max_observations: usize,
}

impl Default for ConsolidationTuning {
    fn default() -> Self {
        Self {
            enabled: true,
            knowledge_cosine: 0.70,
            knowledge_shared_words: 3,
            knowledge_min_sessions: 2,
            max_partition: 5_000,
            skill_min_sessions: 3,
            skill_correction_min_sessions: 2,
            skill_cosine: 0.5,
            skill_shared_words: 2,
            skill_window_days: 90,
            skill_max_observations: 2_000,
        }
    }
}

/// One row of a partition as consolidation sees it: the memory and its stored vector (vectors
/// of different models never meet: the job passes only those of one model).
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The row.
    pub memory: &'a Memory,
    /// Its L2-normalised vector, if it has one.
    pub vector: Option<&'a [f32]>,
}

/// One near-duplicate folded into its cluster's survivor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merge {
    /// The row that stays active and takes the duplicate's reinforcements.
    pub survivor: MemoryId,
    /// The row archived with a `duplicate_of` link to the survivor.
    pub duplicate: MemoryId,
    /// Cosine between them (1 for the same content hash).
    pub similarity: f32,
}

/// A knowledge memory to write from a cluster of recurring assertions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeDraft {
    /// The members, oldest first; each gets a `derived_from` link from the new row.
    pub members: Vec<MemoryId>,
    /// The member whose wording becomes the knowledge (the newest active assertion).
    pub newest: MemoryId,
    /// Its text.
    pub content: String,
    /// The distinct sessions the cluster spans.
    pub sessions: Vec<ChatId>,
    /// True when the cluster holds an episode (a completed task of an agent's user): the
    /// knowledge is then a crystallization candidate for the whole agent, written provisional
    /// at the agent layer until a person approves it.
    pub crystallize: bool,
}

/// Smallest-index union-find: cluster representatives do not depend on the order unions happen.
pub(crate) struct Clusters(Vec<usize>);

impl Clusters {
    pub(crate) fn new(n: usize) -> Self {
        Self((0..n).collect())
    }
    fn root(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }
    pub(crate) fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        self.0[hi] = lo;
    }
    pub(crate) fn groups(mut self) -> Vec<Vec<usize>> {
        let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..self.0.len() {
            let r = self.root(i);
            by_root.entry(r).or_default().push(i);
        }
        by_root.into_values().filter(|g| g.len() > 1).collect()
    }
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn similarity(a: &Member<'_>, b: &Member<'_>) -> f32 {
    if a.memory.content_hash == b.memory.content_hash {
        return 1.0;
    }
    match (a.vector, b.vector) {
        (Some(x), Some(y)) => dot(x, y),
        _ => 0.0,
    }
}

/// Whether two rows of one partition may be merged at all: same kind, both active, and nothing
/// that makes them different memories despite similar words (another key or value, another
/// due date, another sensitivity). Policies are authored, never merged.
fn mergeable(a: &Memory, b: &Memory) -> bool {
    a.kind == b.kind
        && !a.kind.is_authored_only()
        && a.owner == b.owner
        && a.status == Status::Active
        && b.status == Status::Active
        && a.key == b.key
        && a.value == b.value
        && a.due_at == b.due_at
        && a.sensitivity == b.sensitivity
}

/// The strongest member of a cluster: pinned first, then decay strength weighted by salience,
/// then the most reinforced, then the oldest (the original wording), then the id.
fn strongest(cluster: &[usize], rows: &[Member<'_>], now: DateTime<Utc>, decay: &DecayTuning) -> usize {
    let weight = |m: &Memory| strength(m, now, decay) * (0.5 + 0.5 * m.salience.clamp(0.0, 1.0));
    let order = |i: &&usize, j: &&usize| {
        let (a, b) = (rows[**i].memory, rows[**j].memory);
        a.pinned
            .cmp(&b.pinned)
            .then(weight(a).total_cmp(&weight(b)))
            .then(a.reinforcements.cmp(&b.reinforcements))
            .then((b.created_at, b.id).cmp(&(a.created_at, a.id)))
    };
    *cluster.iter().max_by(order).expect("clusters have members")
}

/// Near-duplicate clusters of one partition (same content hash, or cosine at least
/// `dedup_cosine`, among mergeable rows) and how to fold each: every member but the strongest
/// is merged into it. Pinned rows are never merged away. Beyond `max_partition` rows only exact
/// hash matches are looked for.
pub fn duplicates(
    rows: &[Member<'_>],
    dedup_cosine: f32,
    max_partition: usize,
    now: DateTime<Utc>,
    decay: &DecayTuning,
) -> Vec<Merge> {
    let mut clusters = Clusters::new(rows.len());
    if rows.len() <= max_partition {
        for i in 0..rows.len() {
            for j in i + 1..rows.len() {
                if mergeable(rows[i].memory, rows[j].memory) && similarity(&rows[i], &rows[j]) >= dedup_cosine {
                    clusters.join(i, j);
                }
            }
        }
    } else {
        let mut by_hash: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            match by_hash.get(r.memory.content_hash.as_str()) {
                Some(&first) if mergeable(rows[first].memory, r.memory) => clusters.join(first, i),
                Some(_) => {}
                None => {
                    by_hash.insert(&r.memory.content_hash, i);
                }
            }
        }
    }
    let mut out = Vec::new();
    for cluster in clusters.groups() {
        let best = strongest(&cluster, rows, now, decay);
        for &i in &cluster {
            if i == best || rows[i].memory.pinned {
                continue;
            }
            out.push(Merge {
                survivor: rows[best].memory.id,
                duplicate: rows[i].memory.id,
                similarity: similarity(&rows[i], &rows[best]),
            });
        }
    }
    out
}

/// Distinctive words of a text: no stopwords, at least four letters, a possessive `'s` and a
/// plural `s` dropped.
pub(crate) fn distinctive(text: &str) -> BTreeSet<String> {
    words(text).filter_map(|w| stem(&w)).collect()
}

/// One lower-cased word as [`distinctive`] counts it, or `None` when it is not distinctive.
pub(crate) fn stem(word: &str) -> Option<String> {
    let w = word.strip_suffix("'s").unwrap_or(word);
    if w.chars().count() < 4 || is_stopword(w) {
        return None;
    }
    Some(match w.strip_suffix('s') {
        Some(stem) if stem.len() >= 4 && !stem.ends_with('s') => stem.to_string(),
        _ => w.to_string(),
    })
}

/// Clusters of one user partition's active events, episodes and facts that assert the same thing
/// (cosine at least `knowledge_cosine` and `knowledge_shared_words` distinctive words in common)
/// across at least `knowledge_min_sessions` sessions, each as a knowledge draft. Corrections come
/// first: superseded and contradicted rows are not active, so they never take part, and the
/// newest active assertion's wording is the knowledge text. Rows without a vector or a session
/// never cluster (there is nothing to compare, or nothing to span).
pub fn knowledge(rows: &[Member<'_>], t: &ConsolidationTuning) -> Vec<KnowledgeDraft> {
    let idx: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            let m = rows[i].memory;
            m.kind.spec().consolidates
                && m.status == Status::Active
                && m.owner.user.is_some()
                && m.owner.chat.is_none()
                && rows[i].vector.is_some()
                && m.provenance.chat.is_some()
        })
        .collect();
    if idx.len() < 2 || idx.len() > t.max_partition {
        return Vec::new();
    }
    let words: Vec<BTreeSet<String>> = idx.iter().map(|&i| distinctive(&rows[i].memory.content)).collect();
    let mut clusters = Clusters::new(idx.len());
    for a in 0..idx.len() {
        for b in a + 1..idx.len() {
            let (ma, mb) = (rows[idx[a]].memory, rows[idx[b]].memory);
            if ma.owner != mb.owner {
                continue;
            }
            let shared = words[a].intersection(&words[b]).count();
            if shared >= t.knowledge_shared_words && similarity(&rows[idx[a]], &rows[idx[b]]) >= t.knowledge_cosine {
                clusters.join(a, b);
            }
        }
    }
    let mut out = Vec::new();
    for cluster in clusters.groups() {
        let mut members: Vec<&Memory> = cluster.iter().map(|&c| rows[idx[c]].memory).collect();
        members.sort_by_key(|m| (m.created_at, m.id));
        let sessions: BTreeSet<ChatId> = members.iter().filter_map(|m| m.provenance.chat.clone()).collect();
        if sessions.len() < t.knowledge_min_sessions.max(2) {
            continue;
        }
        let newest = members[members.len() - 1];
        out.push(KnowledgeDraft {
            members: members.iter().map(|m| m.id).collect(),
            newest: newest.id,
            content: newest.content.clone(),
            sessions: sessions.into_iter().collect(),
            crystallize: newest.owner.agent.is_some() && members.iter().any(|m| m.kind == Kind::Episode),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::memory::Provenance;
    use crate::scope::Scope;
    use chrono::Duration;

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn mem(kind: Kind, content: &str, chat: &str, day: i64) -> Memory {
        let owner = Scope::parse("t", None, Some("u"), None).unwrap();
        let mut m = Memory::new(owner, kind, content, t0() + Duration::days(day));
        m.provenance = Provenance { chat: Some(ChatId::new(chat).unwrap()), ..Provenance::default() };
        m
    }

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn members<'a>(rows: &'a [(Memory, Vec<f32>)]) -> Vec<Member<'a>> {
        rows.iter().map(|(m, v)| Member { memory: m, vector: Some(v) }).collect()
    }

    #[test]
    fn near_duplicates_merge_into_the_strongest_and_others_stay() {
        let mut strong = mem(Kind::Fact, "I work at Acme as a designer", "c1", 0);
        strong.reinforcements = 3;
        let weak = mem(Kind::Fact, "I work at Acme, designing things", "c2", 1);
        let other = mem(Kind::Fact, "My sister lives in Porto", "c2", 1);
        let event = mem(Kind::Event, "I work at Acme as a designer", "c3", 2);
        let rows = vec![
            (weak.clone(), unit(&[1.0, 0.1, 0.0])),
            (strong.clone(), unit(&[1.0, 0.0, 0.0])),
            (other, unit(&[0.0, 1.0, 0.0])),
            (event, unit(&[1.0, 0.0, 0.0])),
        ];
        let merges = duplicates(&members(&rows), 0.9, 100, t0() + Duration::days(3), &DecayTuning::default());
        assert_eq!(merges.len(), 1, "{merges:?}");
        assert_eq!((merges[0].survivor, merges[0].duplicate), (strong.id, weak.id));
        assert!(merges[0].similarity > 0.99);
    }

    #[test]
    fn pinned_rows_other_keys_and_due_dates_are_never_merged_away() {
        let mut pinned = mem(Kind::Fact, "I work at Acme", "c1", 5);
        pinned.pinned = true;
        let plain = mem(Kind::Fact, "I work at Acme", "c2", 0);
        let mut a = mem(Kind::OpenLoop, "Call mom", "c1", 0);
        a.due_at = Some(t0());
        let mut b = mem(Kind::OpenLoop, "Call mom", "c2", 0);
        b.due_at = Some(t0() + Duration::days(7));
        let v = unit(&[1.0, 0.0]);
        let rows = vec![(pinned.clone(), v.clone()), (plain.clone(), v.clone()), (a, v.clone()), (b, v)];
        let merges = duplicates(&members(&rows), 0.9, 100, t0(), &DecayTuning::default());
        assert_eq!(merges, vec![Merge { survivor: pinned.id, duplicate: plain.id, similarity: 1.0 }]);
        // Beyond the partition limit only the exact hash counts, with the same answer here.
        assert_eq!(duplicates(&members(&rows), 0.9, 1, t0(), &DecayTuning::default()).len(), 1);
    }

    #[test]
    fn recurring_assertions_across_sessions_become_knowledge_with_the_newest_wording() {
        let old = mem(Kind::Event, "I went climbing at the gym on Saturday", "c1", 0);
        let new = mem(Kind::Event, "Went climbing at the gym again on Saturday morning", "c2", 7);
        let mut corrected = mem(Kind::Event, "I went climbing at the gym on Saturdays with Ana", "c3", 9);
        corrected.status = Status::Superseded { by: new.id };
        let same_chat = mem(Kind::Fact, "My sister visited Lisbon", "c1", 0);
        let rows = vec![
            (new.clone(), unit(&[1.0, 0.2, 0.0])),
            (old.clone(), unit(&[1.0, 0.0, 0.0])),
            (corrected, unit(&[1.0, 0.1, 0.0])),
            (same_chat, unit(&[0.0, 0.0, 1.0])),
        ];
        let drafts = knowledge(&members(&rows), &ConsolidationTuning::default());
        assert_eq!(drafts.len(), 1, "{drafts:?}");
        let d = &drafts[0];
        assert_eq!(d.members, vec![old.id, new.id]);
        assert_eq!((d.newest, d.content.as_str()), (new.id, new.content.as_str()));
        assert_eq!(d.sessions.len(), 2);
        assert!(!d.crystallize, "no agent, no episode: the user's own knowledge");
    }

    #[test]
    fn one_session_or_different_subjects_stay_episodes() {
        let a = mem(Kind::Event, "My sister visited us in Lisbon", "c1", 0);
        let b = mem(Kind::Event, "My sister visited us in Lisbon again", "c1", 3);
        let c = mem(Kind::Event, "My brother called from Berlin", "c2", 4);
        let v = unit(&[1.0, 0.0]);
        let rows = vec![(a, v.clone()), (b, v.clone()), (c, v)];
        assert!(knowledge(&members(&rows), &ConsolidationTuning::default()).is_empty());
    }

    #[test]
    fn an_agents_recurring_episodes_are_crystallization_candidates() {
        let owner = Scope::parse("t", Some("coder"), Some("u"), None).unwrap();
        let mk = |content: &str, chat: &str, day: i64| Memory {
            owner: owner.clone(),
            ..mem(Kind::Episode, content, chat, day)
        };
        let v = unit(&[1.0, 0.0]);
        let rows = vec![
            (mk("Deployed the service with blue-green deployment scripts", "c1", 0), v.clone()),
            (mk("Deployed the billing service using blue-green deployment", "c2", 5), v),
        ];
        let drafts = knowledge(&members(&rows), &ConsolidationTuning::default());
        assert_eq!(drafts.len(), 1);
        assert!(drafts[0].crystallize);
    }
}
