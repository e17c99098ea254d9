//! The read path: path A (exact, exhaustive), path B (hybrid candidates within scope, fused and
//! ranked, with the cascade hybrid → vector → lexical → substring), assembly, trace envelopes.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use mnemo_core::archive::{Asked, Excerpt, MessageHits, rank_excerpts, with_neighbours};
use mnemo_core::assemble::{AssemblyInput, ContextBlock, assemble};
use mnemo_core::common;
use mnemo_core::extract::{Extractor, HeuristicExtractor};
use mnemo_core::period::{self, Period};
use mnemo_core::recall::ExactReason;
use mnemo_core::recall::{Candidate, ExactSet, Ranked, asks_for_plans, rank, select_exact};
use mnemo_core::reconsolidate::outdated_by;
use mnemo_core::safety;
use mnemo_core::text::{as_user_query, query_terms, search_terms};
use mnemo_core::trace::{TraceEnvelope, TraceOp, TracedItem};
use mnemo_core::vocative;
use mnemo_core::{
    Kind, Memory as Row, MemoryId, Message, MessageId, Policy, RecallItem, RecallMode, Role, Scope, StatusKind,
    Surface, UserState,
};
use mnemo_models::{blend, cut};
use mnemo_store::ListFilter;
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::config::MemoryScope;
use crate::error::Result;

/// What `recall` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallResult {
    /// Turn id of the trace envelope this call left.
    pub turn_id: String,
    /// Which retrieval signals path B used.
    pub mode: RecallMode,
    /// Path A: policies in force.
    pub policies: Vec<Policy>,
    /// Path A: pinned, preferences, protocols, loops due soon.
    pub exact: Vec<RecallItem>,
    /// Path B: ranked items, best first.
    pub items: Vec<RecallItem>,
    /// Archival recall: the user's past messages that bear on the query, best first.
    pub excerpts: Vec<Excerpt>,
    /// Wall time of the call in microseconds.
    pub micros: u64,
    /// Of which: embedding the query.
    pub embed_micros: u64,
    /// Set when the user is paused or disabled: nothing about the user was searched (only
    /// policies are returned), and for a disabled user no trace was recorded (`turn_id` empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserState>,
}

/// What `context` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextResult {
    /// Turn id of the trace envelope this call left.
    pub turn_id: String,
    /// Which retrieval signals path B used.
    pub mode: RecallMode,
    /// The assembled block.
    pub block: ContextBlock,
    /// Wall time of the call in microseconds.
    pub micros: u64,
    /// Of which: embedding the query.
    pub embed_micros: u64,
    /// Set when the user is paused or disabled: the block holds policies and the chat's recent
    /// window only (no memories, excerpts or memos), and for a disabled user no trace was
    /// recorded (`turn_id` empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserState>,
}

/// Path B's raw candidates.
pub(crate) struct Found {
    pub(crate) list: Vec<Candidate>,
    pub(crate) mode: RecallMode,
    pub(crate) degraded: Option<String>,
    pub(crate) embed_micros: u64,
}

/// The query's vector (or why there is none) and the time the model took.
struct QueryVector {
    vector: std::result::Result<Vec<f32>, String>,
    micros: u64,
}

struct Retrieval {
    exact: ExactSet,
    ranked: Ranked,
    excerpts: Vec<Excerpt>,
    mode: RecallMode,
    degraded: Option<String>,
    embed_micros: u64,
}

/// Flags the recalled items the current message contradicts (see `mnemo_core::reconsolidate`):
/// the heuristic extractor reads the message as it would at ingest, without writing anything.
fn reconsolidate<'a>(
    scope: &Scope,
    message: &str,
    now: DateTime<Utc>,
    items: impl Iterator<Item = &'a mut RecallItem>,
) {
    let Ok(id) = MessageId::new("current-message") else { return };
    let current = Message { id, scope: scope.clone(), role: Role::User, content: message.to_string(), at: now };
    let ops = HeuristicExtractor.extract(std::slice::from_ref(&current));
    if ops.is_empty() {
        return;
    }
    let mut items: Vec<&mut RecallItem> = items.collect();
    let flagged = outdated_by(&ops, &items.iter().map(|i| &i.memory).collect::<Vec<_>>());
    for item in &mut items {
        item.possibly_outdated = flagged.get(&item.memory.id).cloned();
    }
}

/// Open loops a planning question brings at most (the soonest due first).
const PLANNING_LOOPS: usize = 10;

/// Constraints the safety half reads at most, newest first (a user has a handful; this bounds
/// the work for one who has stated many).
const SAFETY_CANDIDATES: usize = 20;

/// The lexical half's hits (or why there are none), and the rows of those already read.
type LexicalHits = (std::result::Result<Vec<(MemoryId, f32)>, mnemo_store::StoreError>, Vec<Row>);

/// The query a turn's envelope keeps: none for a paused or disabled user, whose words are not
/// kept (the envelope still says what was withheld and why).
fn traced_query(state: UserState, query: &str) -> &str {
    if state.learns() { query } else { "" }
}

fn turn_id() -> String {
    format!("turn-{}", MemoryId::new())
}

impl Memory {
    /// Hybrid candidates within scope: lexical and vector halves, each signal normalised.
    pub(crate) fn candidates(&self, scope: &Scope, query: &str, limit: usize) -> Result<Found> {
        let lexical = self.store.lexical(scope, &search_terms(query), limit);
        self.fuse_candidates(scope, query, limit, (lexical, Vec::new()), self.embed_query(query, &[]))
    }

    /// The query's vector and what it took, or why there is none. With `common` (the byte
    /// ranges of words most of the user's messages share, [`common`]), those words are weighed
    /// down: the query as asked and the query without them are embedded in one call, and the
    /// two vectors averaged.
    fn embed_query(&self, query: &str, common: &[Range<usize>]) -> QueryVector {
        let started = Instant::now();
        let vector = match common {
            [] => self
                .embed_query_texts(&[query])
                .and_then(|mut v| v.pop().ok_or_else(|| "no vector returned".to_string())),
            _ => self.embed_query_texts(&[query, &cut(query, common)]).and_then(|v| match v.as_slice() {
                [whole, without] => Ok(blend(whole, without, 1.0)),
                _ => Err("the model returned no vector for one of the query's two forms".to_string()),
            }),
        };
        QueryVector { vector, micros: started.elapsed().as_micros() as u64 }
    }

    /// Where in `query` the words most of the user's messages share stand ([`common`]), when
    /// there is a model to weigh them down: counted over the archive archival recall searches.
    fn common_words(&self, scope: &Scope, query: &str) -> Result<Vec<Range<usize>>> {
        if self.embedder.is_none() || self.tuning.ranking.common_term_share <= 0.0 {
            return Ok(Vec::new());
        }
        let terms = query_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let spread = self.store.term_spread(&self.archive_scope(scope), &terms)?;
        Ok(common::common_spans(query, &common::common_terms(&terms, &spread, &self.tuning)))
    }

    /// Path B's candidates from the lexical half's hits (with those of their rows already read)
    /// and the query's vector: the vector half, cosines for lexical hits it missed, and the
    /// substring rung when both failed.
    fn fuse_candidates(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
        (lexical, read): LexicalHits,
        embedded: QueryVector,
    ) -> Result<Found> {
        let terms = query_terms(query);
        let mut problems = Vec::new();
        let lexical = match lexical {
            Ok(hits) => Some(hits),
            Err(e) => {
                problems.push(format!("lexical: {e}"));
                None
            }
        };
        let embed_micros = embedded.micros;
        let qvec = match embedded.vector {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("vector: {e}"));
                None
            }
        };
        let model = self.embedder_id().unwrap_or_default().to_string();
        let vector = match &qvec {
            Some(q) => match self.store.vector(scope, &model, q, limit) {
                Ok(hits) => Some(hits),
                Err(e) => {
                    problems.push(format!("vector: {e}"));
                    None
                }
            },
            None => None,
        };

        let mut lex: HashMap<MemoryId, f32> = HashMap::new();
        if let Some(hits) = &lexical {
            let best = hits.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
            for (id, s) in hits {
                lex.insert(*id, if best > 0.0 { (s / best).clamp(0.0, 1.0) } else { 0.0 });
            }
        }
        let mut vec: HashMap<MemoryId, f32> = vector.iter().flatten().copied().collect();
        if let Some(q) = &qvec {
            let missing: Vec<MemoryId> = lex.keys().filter(|id| !vec.contains_key(id)).copied().collect();
            if !missing.is_empty() {
                vec.extend(self.store.cosines(scope, &model, q, &missing)?);
            }
        }
        let mode = match (lexical.is_some(), vector.is_some()) {
            (true, true) => RecallMode::Hybrid,
            (false, true) => RecallMode::VectorOnly,
            (true, false) => RecallMode::LexicalOnly,
            (false, false) => RecallMode::Substring,
        };
        let mut ids: Vec<MemoryId> =
            lex.keys().chain(vec.keys()).copied().collect::<HashSet<_>>().into_iter().collect();
        if mode == RecallMode::Substring || (ids.is_empty() && vector.is_none()) {
            // Last rung: plain substring match, scored by the share of query terms present.
            let hits = self.store.substring(scope, &terms, limit)?;
            let rows = self.store.get_many(scope, &hits)?;
            let list = rows
                .into_iter()
                .map(|m| {
                    let text = m.content.to_lowercase();
                    let share =
                        terms.iter().filter(|t| text.contains(t.as_str())).count() as f32 / terms.len().max(1) as f32;
                    Candidate { memory: m, lexical: Some(share), vector: None }
                })
                .collect();
            let degraded =
                Some(if problems.is_empty() { "no lexical or vector hits".to_string() } else { problems.join("; ") });
            return Ok(Found { list, mode: RecallMode::Substring, degraded, embed_micros });
        }
        ids.sort();
        let mut rows: HashMap<MemoryId, Row> = read.into_iter().map(|m| (m.id, m)).collect();
        let unread: Vec<MemoryId> = ids.iter().filter(|id| !rows.contains_key(id)).copied().collect();
        rows.extend(self.store.get_many(scope, &unread)?.into_iter().map(|m| (m.id, m)));
        let list = ids
            .iter()
            .filter_map(|id| rows.remove(id))
            .map(|m| Candidate { lexical: lex.get(&m.id).copied(), vector: vec.get(&m.id).copied(), memory: m })
            .collect();
        Ok(Found { list, mode, degraded: (!problems.is_empty()).then(|| problems.join("; ")), embed_micros })
    }

    /// Path A, path B's top `k`, and up to `excerpts` archival excerpts (none of `verbatim`,
    /// the messages the block already carries).
    ///
    /// The query is embedded on a thread of its own while path A and both lexical halves
    /// (memories, messages) read the store: the model is most of a turn's time, and nothing but
    /// the two vector halves waits for it.
    fn retrieve(
        &self,
        scope: &Scope,
        query: &str,
        (k, excerpts): (usize, usize),
        verbatim: &HashSet<MessageId>,
        now: DateTime<Utc>,
    ) -> Result<Retrieval> {
        let user_query = as_user_query(query, &self.user_names(scope)?);
        // What archival recall matched on: a name the query asks about that a turn only
        // addresses ("Thanks, Mel!") is no match (see mnemo_core::vocative).
        let (terms, names) = (query_terms(query), vocative::query_names(query));
        let period = period::asked(query, now);
        // Counting the query's words over the user's messages is bounded and cheap next to
        // the model, so it goes before the embedding rather than beside it. Failing, it costs
        // the query its blend, not the turn.
        let mut problems = None;
        let common = self.common_words(scope, &user_query).unwrap_or_else(|e| {
            crate::add_problem(&mut problems, format!("common words: {e}"));
            Vec::new()
        });
        std::thread::scope(|s| {
            // Without an embedder there is nothing to wait for, so no thread.
            let pending = self.embedder.is_some().then(|| s.spawn(|| self.embed_query(&user_query, &common)));
            let due_by = now + Duration::seconds((self.tuning.ranking.due_soon_days * 86_400.0) as i64);
            let candidates = self.tuning.ranking.candidates;
            let lexical = self.store.lexical(scope, &search_terms(&user_query), candidates);
            // The lexical hits' rows are read while the query is embedded, so only the vector
            // half's other hits are read after it. A failed read here is left to that later
            // read, which tries those rows again and reports the failure.
            let read = match (&lexical, &pending) {
                (Ok(hits), Some(_)) => {
                    let ids: Vec<MemoryId> = hits.iter().map(|(id, _)| *id).collect();
                    self.store.get_many(scope, &ids).unwrap_or_default()
                }
                _ => Vec::new(),
            };
            let message_lexical = self.message_lexical(scope, query, excerpts);
            let mut exact = select_exact(
                self.store.exact_candidates(scope, due_by)?,
                self.store.policies(scope)?,
                now,
                &self.tuning,
            );
            self.add_constraints(scope, query, &mut exact, now)?;
            self.add_open_loops(scope, query, &mut exact, now)?;
            let embedded = match pending {
                Some(thread) => thread
                    .join()
                    .unwrap_or_else(|_| QueryVector { vector: Err("the embedding thread panicked".into()), micros: 0 }),
                None => self.embed_query(&user_query, &[]),
            };
            // Archival recall needs only the query's vector, so it runs beside fusion and
            // ranking, on the core the model has just let go of.
            let query_vector = embedded.vector.as_ref().ok().cloned();
            let period = period.as_ref();
            let archival = s.spawn(move || {
                message_lexical.and_then(|lexical| {
                    let asked = Asked { terms: &terms, names: &names };
                    self.excerpts(scope, &lexical, (query_vector.as_deref(), asked), (verbatim, excerpts, period))
                })
            });
            let found = self.fuse_candidates(scope, &user_query, candidates, (lexical, read), embedded)?;
            let exclude: HashSet<MemoryId> = exact.items.iter().map(|i| i.memory.id).collect();
            let mut ranked = rank(found.list, &exclude, k, now, period, &self.tuning);
            reconsolidate(scope, query, now, exact.items.iter_mut().chain(ranked.items.iter_mut()));
            let mut degraded = found.degraded;
            if let Some(problem) = problems {
                crate::add_problem(&mut degraded, problem);
            }
            let archival = match archival.join() {
                Ok(found) => found.map_err(|e| e.to_string()),
                Err(_) => Err("the archival recall thread panicked".to_string()),
            };
            let excerpts = match archival {
                Ok(e) => e,
                // The conversation's index failing must not take the memories' answer down with it.
                Err(e) => {
                    let problem = format!("archival recall: {e}");
                    crate::add_problem(&mut degraded, problem);
                    Vec::new()
                }
            };
            Ok(Retrieval { exact, ranked, excerpts, mode: found.mode, degraded, embed_micros: found.embed_micros })
        })
    }

    /// The names the user is known by (their profile's `name`), so a query that speaks of them
    /// by name finds memories that say "User".
    ///
    /// Read by key where a name can be owned (where this scope's extraction writes, the user,
    /// the chat), each one indexed lookup: scanning the user's memories for the word "name" cost
    /// more than the rest of recall at 10,000 memories.
    fn user_names(&self, scope: &Scope) -> Result<Vec<String>> {
        let mut owners = vec![self.owner_of(scope), scope.without_chat(), scope.clone()];
        owners.dedup();
        let mut names = Vec::new();
        for owner in owners.iter().filter(|o| scope.can_see(o)) {
            if let Some(value) = self.store.find_by_key(owner, Kind::Profile, "name")?.and_then(|m| m.value) {
                if !names.contains(&value) {
                    names.push(value);
                }
            }
        }
        Ok(names)
    }

    /// Path A's safety half: when the request is about food, medication, exercise or travel,
    /// the user's constraints that bear on it (an allergy for a recipe, asthma for a hike) join
    /// the exact items, whatever words the request uses. Nothing is searched otherwise.
    fn add_constraints(&self, scope: &Scope, query: &str, exact: &mut ExactSet, now: DateTime<Utc>) -> Result<()> {
        let domains = safety::query_domains(query);
        if domains.is_empty() {
            return Ok(());
        }
        let present: HashSet<MemoryId> = exact.items.iter().map(|i| i.memory.id).collect();
        for m in self.store.constraints(scope, domains, SAFETY_CANDIDATES)? {
            if !present.contains(&m.id)
                && mnemo_core::lifecycle::is_live(&m, now, &self.tuning.lifecycle)
                && m.surface != Surface::Avoid
            {
                exact.items.push(RecallItem {
                    memory: m,
                    exact: Some(ExactReason::Safety),
                    score: None,
                    tier: None,
                    possibly_outdated: None,
                });
            }
        }
        Ok(())
    }

    /// Path A's planning half: a request that asks what to do ("what should I focus on this
    /// week?") gets every open loop, due or not, soonest first.
    fn add_open_loops(&self, scope: &Scope, query: &str, exact: &mut ExactSet, now: DateTime<Utc>) -> Result<()> {
        if !asks_for_plans(query) {
            return Ok(());
        }
        let filter =
            ListFilter { kinds: vec![Kind::OpenLoop], statuses: vec![StatusKind::Active], ..ListFilter::default() };
        let present: HashSet<MemoryId> = exact.items.iter().map(|i| i.memory.id).collect();
        let mut loops: Vec<_> = self
            .store
            .list(scope, &filter)?
            .into_iter()
            .filter(|m| !present.contains(&m.id) && mnemo_core::lifecycle::is_live(m, now, &self.tuning.lifecycle))
            .collect();
        loops.sort_by(|a, b| {
            a.due_at
                .unwrap_or(DateTime::<Utc>::MAX_UTC)
                .cmp(&b.due_at.unwrap_or(DateTime::<Utc>::MAX_UTC))
                .then(a.id.cmp(&b.id))
        });
        exact.items.extend(loops.into_iter().take(PLANNING_LOOPS).map(|m| RecallItem {
            memory: m,
            exact: Some(ExactReason::Planning),
            score: None,
            tier: None,
            possibly_outdated: None,
        }));
        Ok(())
    }

    /// The agent's approved skills, placed whole at the start of a session (path A): moved out
    /// of the ranked items if recall found one there too.
    fn add_session_skills(&self, scope: &Scope, r: &mut Retrieval) -> Result<()> {
        let skills = self.session_skills(scope)?;
        let ids: HashSet<MemoryId> = skills.iter().map(|m| m.id).collect();
        r.ranked.items.retain(|i| !ids.contains(&i.memory.id));
        r.exact.items.retain(|i| !ids.contains(&i.memory.id));
        r.exact.items.extend(skills.into_iter().map(|m| RecallItem {
            memory: m,
            exact: Some(ExactReason::Skill),
            score: None,
            tier: None,
            possibly_outdated: None,
        }));
        Ok(())
    }

    /// What a paused or disabled user's recall finds: policies in force, nothing about the user.
    fn withheld(&self, scope: &Scope, state: UserState, now: DateTime<Utc>) -> Result<Retrieval> {
        Ok(Retrieval {
            exact: select_exact(Vec::new(), self.store.policies(scope)?, now, &self.tuning),
            ranked: Ranked::default(),
            excerpts: Vec::new(),
            // The rung path B would have used; nothing was searched (the result says why).
            mode: if self.embedder.is_some() { RecallMode::Hybrid } else { RecallMode::LexicalOnly },
            degraded: Some(format!("user is {state}: memories, excerpts and memos withheld")),
            embed_micros: 0,
        })
    }

    /// Records a turn's envelope unless the user is disabled (nothing of theirs is stored, the
    /// query included); returns the turn id, empty when nothing was recorded.
    fn record_unless_disabled(&self, state: UserState, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<String> {
        if !state.stores() {
            return Ok(String::new());
        }
        self.turns.record(crate::redact::envelope(env.clone()), accessed)?;
        Ok(env.turn_id.clone())
    }

    /// Where archival recall searches: the user's messages in every chat, unless memory is
    /// chat-scoped (then only this chat's).
    fn archive_scope(&self, scope: &Scope) -> Scope {
        match self.config.memory_scope {
            MemoryScope::User => scope.without_chat(),
            MemoryScope::Chat => scope.clone(),
        }
    }

    /// Hits each half of archival recall takes for `limit` excerpts.
    fn archive_candidates(&self, limit: usize) -> usize {
        self.tuning.ranking.candidates.max(limit)
    }

    /// Archival recall's lexical half (nothing when no excerpt is wanted).
    fn message_lexical(&self, scope: &Scope, query: &str, limit: usize) -> Result<Vec<(MessageId, f32)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let want = self.archive_candidates(limit);
        Ok(self.store.search_messages(&self.archive_scope(scope), &search_terms(query), want)?)
    }

    /// Archival recall: the user's own past messages, the lexical half's hits and the vector
    /// half fused, then the best hits' neighbours.
    fn excerpts(
        &self,
        scope: &Scope,
        lexical: &[(MessageId, f32)],
        (query_vector, asked): (Option<&[f32]>, Asked<'_>),
        (verbatim, limit, period): (&HashSet<MessageId>, usize, Option<&Period>),
    ) -> Result<Vec<Excerpt>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let within = self.archive_scope(scope);
        let want = self.archive_candidates(limit);
        let (vector, in_period) = match (query_vector, self.embedder_id()) {
            (Some(q), Some(model)) => {
                let extra = self.tuning.ranking.period_candidates;
                let in_period = match period.map(Period::said) {
                    Some(said) if extra > 0 => self.store.nearest_messages(&within, model, q, extra, Some(&said))?,
                    _ => Vec::new(),
                };
                (Some(self.store.nearest_messages(&within, model, q, want, None)?), in_period)
            }
            _ => (None, Vec::new()),
        };
        let hits = MessageHits { lexical, vector: vector.as_deref(), in_period: &in_period, asked };
        let messages = self.store.messages(&within, &hits.ids())?;
        let ranked = rank_excerpts(hits, messages, verbatim, limit, period, &self.tuning);
        let seeds: Vec<MessageId> =
            ranked.iter().take(self.tuning.ranking.neighbour_seeds).map(|e| e.message.id.clone()).collect();
        let adjacent = self.store.adjacent_messages(&within, &seeds, 1)?;
        Ok(with_neighbours(ranked, adjacent, verbatim, limit, &self.tuning))
    }

    /// Recall for a query: path A in full, path B's top `k` (the default when `None`).
    ///
    /// Recalled items are reinforced (access count, distinct sessions) and the call leaves a
    /// trace envelope. For a paused or disabled user only policies come back (`user_state` says
    /// why).
    #[tracing::instrument(name = "recall", level = "debug", skip_all, fields(%scope, k))]
    pub fn recall(&self, scope: &Scope, query: &str, k: Option<usize>) -> Result<RecallResult> {
        let started = Instant::now();
        scope.require_user()?;
        crate::limits::check_recall(&self.tuning, query, k)?;
        let now = self.clock.now();
        let k = k.unwrap_or(self.tuning.ranking.default_top_k);
        let state = self.user_state(scope)?;
        let r = match state.learns() {
            true => self.retrieve(scope, query, (k, k), &HashSet::new(), now)?,
            false => self.withheld(scope, state, now)?,
        };
        let ids: Vec<MemoryId> = r.ranked.items.iter().map(|i| i.memory.id).collect();
        let env = self.envelope(scope, TraceOp::Recall, traced_query(state, query), now, &r, started);
        let turn_id = self.record_unless_disabled(state, &env, &ids)?;
        Ok(RecallResult {
            turn_id,
            mode: r.mode,
            policies: r.exact.policies,
            exact: r.exact.items,
            items: r.ranked.items,
            excerpts: r.excerpts,
            micros: env.micros,
            embed_micros: env.embed_micros,
            user_state: (!state.learns()).then_some(state),
        })
    }

    /// The prompt block for the next turn of the scope's chat, within `budget` tokens
    /// (the configured default when `None`). For a paused or disabled user the block holds
    /// policies and the chat's recent window only (`user_state` says why).
    #[tracing::instrument(name = "context", level = "debug", skip_all, fields(%scope, budget))]
    pub fn context(&self, scope: &Scope, message: &str, budget: Option<usize>) -> Result<ContextResult> {
        let started = Instant::now();
        scope.require_user()?;
        crate::limits::check_context(&self.tuning, message, budget)?;
        let now = self.clock.now();
        let (recent, surfaced_recently) = match &scope.chat {
            Some(_) => (
                self.store.recent_messages(scope, self.tuning.assembly.recent_pairs * 2)?,
                self.surfaced_every_recent_turn(scope)?,
            ),
            None => (Vec::new(), HashSet::new()),
        };
        let verbatim: HashSet<MessageId> = recent.iter().map(|m| m.id.clone()).collect();
        let limits = (self.tuning.assembly.ranked_items, self.tuning.assembly.excerpts);
        let state = self.user_state(scope)?;
        let (mut r, memos) = match state.learns() {
            true => (self.retrieve(scope, message, limits, &verbatim, now)?, self.context_memos(scope)?),
            false => (self.withheld(scope, state, now)?, Vec::new()),
        };
        // A session starts with the agent's approved skills: a chat with no messages yet.
        if state.learns() && scope.chat.is_some() && recent.is_empty() {
            self.add_session_skills(scope, &mut r)?;
        }
        let budget = budget.unwrap_or(self.tuning.assembly.default_budget_tokens);
        let block = assemble(
            AssemblyInput {
                exact: &r.exact,
                ranked: &r.ranked.items,
                recent: &recent,
                excerpts: &r.excerpts,
                memos: &memos,
                surfaced_recently: &surfaced_recently,
                budget,
                query_terms: &query_terms(message),
            },
            &self.tuning.assembly,
        );
        let surfaced = block.memory_ids();
        let mut env = self.envelope(scope, TraceOp::Context, traced_query(state, message), now, &r, started);
        env.surfaced = surfaced;
        env.held_back = block.held_back.clone();
        env.shed = block.shed.clone();
        env.tokens = Some(block.tokens);
        env.budget = Some(budget);
        let turn_id = self.record_unless_disabled(state, &env, &env.surfaced)?;
        Ok(ContextResult {
            turn_id,
            mode: r.mode,
            block,
            micros: env.micros,
            embed_micros: env.embed_micros,
            user_state: (!state.learns()).then_some(state),
        })
    }

    /// Memories placed in every one of the chat's last `over_reference_turns` blocks: a third
    /// consecutive mention is what reads as obsessive, so those are held back.
    fn surfaced_every_recent_turn(&self, scope: &Scope) -> Result<HashSet<MemoryId>> {
        let turns = self.tuning.assembly.over_reference_turns;
        let mut counts: HashMap<MemoryId, usize> = HashMap::new();
        self.turns.settle_context(scope);
        for id in self.store.recently_surfaced(scope, turns)? {
            *counts.entry(id).or_default() += 1;
        }
        Ok(counts.into_iter().filter(|(_, n)| *n >= turns).map(|(id, _)| id).collect())
    }

    fn envelope(
        &self,
        scope: &Scope,
        op: TraceOp,
        query: &str,
        at: DateTime<Utc>,
        r: &Retrieval,
        started: Instant,
    ) -> TraceEnvelope {
        let traced = |i: &RecallItem| TracedItem { id: i.memory.id, exact: i.exact, score: i.score, tier: i.tier };
        TraceEnvelope {
            turn_id: turn_id(),
            scope: scope.clone(),
            op,
            at,
            query: query.to_string(),
            mode: Some(r.mode),
            retrieved: r.exact.items.iter().chain(&r.ranked.items).map(traced).collect(),
            surfaced: Vec::new(),
            below_floor: r.ranked.below_floor.clone(),
            held_back: Vec::new(),
            shed: Vec::new(),
            degraded: r.degraded.clone(),
            tokens: None,
            budget: None,
            micros: started.elapsed().as_micros() as u64,
            embed_micros: r.embed_micros,
            verdicts: Vec::new(),
            llm: Vec::new(),
        }
    }

    /// A stored trace envelope, for explaining or replaying a turn.
    pub fn trace(&self, scope: &Scope, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        self.turns.settle_tenant(&scope.tenant);
        Ok(self.store.trace(&scope.tenant, turn_id)?)
    }

    /// The latest `limit` trace envelopes of the scope's user (of its chat when it names one),
    /// newest first: the past turns a person can open to see what the model was told and why.
    /// Retention sweeps them like any envelope (`retention.*`).
    pub fn traces(&self, scope: &Scope, limit: usize) -> Result<Vec<TraceEnvelope>> {
        scope.require_user()?;
        self.turns.settle_user(scope);
        Ok(self.store.recent_traces(scope, limit)?)
    }
}
