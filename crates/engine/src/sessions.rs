//! Context-window management of agent sessions: usage advice (what to step down or release as
//! the window fills) and segment rotation (extract everything, then hand back the bundle a new
//! segment of the same session starts from). The decisions are `mnemo_core::window`'s; this
//! module resolves what the agent holds, drains extraction and gathers the bundle's inputs.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use mnemo_core::decay;
use mnemo_core::detail::Detail;
use mnemo_core::lifecycle::is_live;
use mnemo_core::limits::check_count;
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::window::{
    Bundle, BundleInput, Held, HeldKind, Protection, UsageAdvice, advise, bundle, check_usage, memory_levels,
    message_levels,
};
use mnemo_core::{CoreError, DocumentId, Kind, Memory as Row, MemoryId, MessageId, Scope, StatusKind, Surface};
use mnemo_store::ListFilter;

use crate::Memory;
use crate::error::{Error, Result};

/// What an agent holds in its window, by id, at the level it holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum HeldRef {
    /// A memory.
    Memory(MemoryId),
    /// A stored document.
    Document(DocumentId),
    /// Messages of this session (its chat), in any order.
    Messages(Vec<MessageId>),
}

/// One held item of a usage report.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldItem {
    /// What it is.
    pub item: HeldRef,
    /// The level the agent holds it at.
    pub level: Detail,
    /// What it costs the agent, by its own count; counted here from the text when absent.
    pub tokens: Option<usize>,
}

/// What a rotation did and what the new segment starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotation {
    /// The session (tenant, agent, user, chat): unchanged by the rotation.
    pub scope: Scope,
    /// Messages of the segment whose extraction ran now, before anything was built.
    pub extracted: usize,
    /// Extraction batches that ran now.
    pub batches: usize,
    /// The continuation bundle.
    pub bundle: Bundle,
    /// Trace turn recording the rotation (empty for a disabled user, of whom nothing is stored).
    pub turn_id: String,
    /// Of the call's wall time, draining extraction, in microseconds.
    pub extract_micros: u64,
    /// The call's wall time, in microseconds.
    pub micros: u64,
}

/// Pause between looks at a chat another worker is extracting.
const BUSY_POLL: Duration = Duration::from_millis(20);

/// A memory the agent must keep in view: pinned, or surfaced as "do not raise" (boundaries).
fn protection(m: &Row) -> Option<Protection> {
    match (m.pinned, m.surface) {
        (true, _) => Some(Protection::Pinned),
        (false, Surface::Avoid) => Some(Protection::Boundary),
        _ => None,
    }
}

/// Half-life recency of something said or stored at `at`, in 0..=1.
fn recency(at: DateTime<Utc>, now: DateTime<Utc>, half_life_days: f32) -> f32 {
    0.5f32.powf(decay::days_between(at, now) / half_life_days)
}

fn unknown(index: usize, what: &str, id: impl std::fmt::Display) -> Error {
    Error::Invalid(CoreError::InvalidId {
        field: "items",
        reason: format!("items[{index}] names {what} {id}, which this session cannot see"),
    })
}

impl Memory {
    /// What to do at `used` of `capacity` tokens with `items` in the agent's window: for each
    /// item keep, step down (with its text at the new level) or release, least valuable first;
    /// and whether to rotate. Reads only: a refused report (no capacity, more used than fits,
    /// an id this session cannot see, a duplicate) is an error and nothing is written either way.
    pub fn session_usage(
        &self,
        scope: &Scope,
        used: usize,
        capacity: usize,
        items: &[HeldItem],
    ) -> Result<UsageAdvice> {
        scope.require_user()?;
        scope.require_chat()?;
        let t = &self.tuning.sessions;
        let entries = items.iter().map(|i| if let HeldRef::Messages(ids) = &i.item { ids.len() } else { 1 }).sum();
        check_usage(used, capacity, entries, t)?;
        let now = self.clock.now();
        // The held memories in one read: a window may hold hundreds.
        let wanted: Vec<MemoryId> =
            items.iter().filter_map(|i| if let HeldRef::Memory(id) = i.item { Some(id) } else { None }).collect();
        let memories: HashMap<MemoryId, Row> =
            self.store.get_many(scope, &wanted)?.into_iter().map(|m| (m.id, m)).collect();
        let mut seen = HashSet::new();
        let mut held = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            if let Some(n) = item.tokens {
                check_count("items[].tokens", n, 0, capacity, "the report's capacity_tokens")?;
            }
            let (kind, id, levels, protected, value) = match &item.item {
                HeldRef::Memory(id) => {
                    let m = memories.get(id).ok_or_else(|| unknown(index, "memory", id))?;
                    let value = match is_live(m, now, &self.tuning.lifecycle) {
                        true => m.salience * decay::strength(m, now, &self.tuning.decay),
                        false => 0.0,
                    };
                    (HeldKind::Memory, id.to_string(), memory_levels(&m.content), protection(m), value)
                }
                HeldRef::Document(id) => {
                    let d = self.store.document(scope, *id)?.ok_or_else(|| unknown(index, "document", id))?;
                    let value = recency(d.created_at, now, self.tuning.ranking.recency_half_life_days);
                    let levels = [Detail::Gist, Detail::Focus, Detail::Full].map(|l| d.at(l).to_string());
                    (HeldKind::Document, id.to_string(), levels, None, value)
                }
                HeldRef::Messages(ids) => {
                    if ids.is_empty() {
                        return Err(CoreError::OutOfRange {
                            field: "items",
                            reason: format!("items[{index}] holds messages but names none"),
                        }
                        .into());
                    }
                    let mut found = self.store.messages(scope, ids)?;
                    found.retain(|m| m.scope.chat == scope.chat);
                    if let Some(missing) = ids.iter().find(|id| !found.iter().any(|m| &m.id == *id)) {
                        return Err(unknown(index, "message", missing));
                    }
                    found.sort_by(|a, b| a.at.cmp(&b.at).then(a.id.cmp(&b.id)));
                    let newest = found.last().map_or(now, |m| m.at);
                    let id = match (found.first(), found.last()) {
                        (Some(a), Some(b)) if found.len() > 1 => format!("{}..{}", a.id, b.id),
                        _ => found[0].id.to_string(),
                    };
                    let value = recency(newest, now, self.tuning.ranking.recency_half_life_days);
                    (HeldKind::Messages, id, message_levels(&found), None, value)
                }
            };
            if !seen.insert((kind, id.clone())) {
                return Err(CoreError::OutOfRange {
                    field: "items",
                    reason: format!("items[{index}] repeats {kind} {id}: list each held item once"),
                }
                .into());
            }
            let tokens = item.tokens.unwrap_or_else(|| mnemo_core::tokens::count(&levels[level_rank(item.level)]));
            held.push(Held { index, kind, id, level: item.level, levels, tokens, protected, value });
        }
        Ok(advise(used, capacity, &held, t))
    }

    /// Rotates the session's segment: first runs every pending extraction of the chat ("extract
    /// before you shed": once this returns, every message of the segment has been through the
    /// extractor, so what it said is in memory and its words stay in archival recall), then
    /// builds the continuation bundle within `budget` tokens (`sessions.bundle_tokens` when
    /// `None`). The session keeps its id; the rotation is recorded as a trace turn.
    ///
    /// Waits up to `background.ingest_wait_secs` for a worker that is extracting the same chat,
    /// then fails with [`Error::Busy`], having built nothing.
    #[tracing::instrument(name = "rotate_session", level = "debug", skip_all, fields(%scope))]
    pub fn rotate_session(&self, scope: &Scope, budget: Option<usize>) -> Result<Rotation> {
        let started = Instant::now();
        scope.require_user()?;
        let chat = scope.require_chat()?.clone();
        let t = &self.tuning.sessions;
        if let Some(b) = budget {
            check_count("budget_tokens", b, 1, self.tuning.limits.max_budget_tokens, "limits.max_budget_tokens")?;
        }
        let budget = budget.unwrap_or(t.bundle_tokens);
        let state = self.user_state(scope)?;

        let (mut extracted, mut batches, mut calls) = (0, 0, Vec::new());
        let wait = Duration::from_secs_f64(self.config.background.ingest_wait_secs.max(0.0));
        loop {
            let report = self.flush(scope)?;
            extracted += report.batches.iter().map(|b| b.messages).sum::<usize>();
            batches += report.batches.len();
            calls.extend(report.batches.iter().map(|b| b.llm.clone()).filter(|c| c.calls > 0));
            // Only the LLM extractor leaves messages pending; the heuristic one ran at ingest.
            let pending = match self.config.extractor {
                crate::config::ExtractorKind::Llm => self.store.chat_progress(scope)?.map_or(0, |p| p.pending),
                crate::config::ExtractorKind::Heuristic => 0,
            };
            if report.busy.is_empty() && pending == 0 {
                break;
            }
            if started.elapsed() >= wait {
                return Err(Error::Busy {
                    what: format!("chat {chat}"),
                    reason: format!("{pending} messages still wait for extraction by another worker"),
                });
            }
            std::thread::sleep(BUSY_POLL);
        }
        let extract_micros = started.elapsed().as_micros() as u64;

        let now = self.clock.now();
        let rows: Vec<Row> = match state.learns() {
            true => {
                let filter = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
                self.store
                    .list(scope, &filter)?
                    .into_iter()
                    .filter(|m| is_live(m, now, &self.tuning.lifecycle))
                    .collect()
            }
            false => Vec::new(),
        };
        let parts = BundleParts::of(rows, &chat, now, self);
        let recent = self.store.recent_messages(scope, t.tail_messages)?;
        let user = scope.require_user()?;
        let subject = format!("user {user}");
        let bundle = bundle(
            BundleInput {
                subject: &subject,
                pinned: &parts.pinned,
                knowledge: &parts.knowledge,
                open_loops: &parts.open_loops,
                settled: &parts.settled,
                recent: &recent,
                at: now,
            },
            budget,
            t,
        );
        let env = TraceEnvelope {
            turn_id: crate::write::new_turn_id(),
            scope: scope.clone(),
            op: TraceOp::Rotate,
            at: now,
            query: String::new(),
            mode: None,
            retrieved: Vec::new(),
            surfaced: bundle.parts.iter().flat_map(|p| p.memories.iter().copied()).collect(),
            below_floor: Vec::new(),
            held_back: Vec::new(),
            shed: Vec::new(),
            degraded: None,
            tokens: Some(bundle.tokens),
            budget: Some(budget),
            verdicts: Vec::new(),
            llm: calls,
            micros: started.elapsed().as_micros() as u64,
            embed_micros: 0,
        };
        let turn_id = match state.stores() {
            true => {
                self.record_turn(&env, &[])?;
                env.turn_id
            }
            false => String::new(),
        };
        Ok(Rotation {
            scope: scope.clone(),
            extracted,
            batches,
            bundle,
            turn_id,
            extract_micros,
            micros: started.elapsed().as_micros() as u64,
        })
    }
}

fn level_rank(level: Detail) -> usize {
    match level {
        Detail::Gist => 0,
        Detail::Focus => 1,
        Detail::Full => 2,
    }
}

/// The memories of a bundle, sorted into its parts.
struct BundleParts {
    pinned: Vec<Row>,
    knowledge: Vec<Row>,
    open_loops: Vec<Row>,
    settled: Vec<Row>,
}

impl BundleParts {
    /// Pinned items and boundaries (pinned first, oldest first); the chat's open loops (soonest
    /// due first) and what it settled (newest first, at most `sessions.continuity_items`); every
    /// other memory MEMORY.md shows, most valuable first (salience times decay strength).
    fn of(rows: Vec<Row>, chat: &mnemo_core::ChatId, now: DateTime<Utc>, memory: &Memory) -> Self {
        let t = &memory.tuning;
        let in_chat = |m: &Row| m.provenance.chat.as_ref() == Some(chat);
        let (mut pinned, rest): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|m| protection(m).is_some());
        pinned.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(a.created_at.cmp(&b.created_at)).then(a.id.cmp(&b.id)));
        let (mut open_loops, rest): (Vec<Row>, Vec<Row>) =
            rest.into_iter().partition(|m| m.kind == Kind::OpenLoop && in_chat(m));
        open_loops.sort_by(|a, b| {
            (a.due_at.is_none(), a.due_at, a.created_at, a.id).cmp(&(b.due_at.is_none(), b.due_at, b.created_at, b.id))
        });
        let shown = |m: &Row| m.kind.spec().memory_md.is_some();
        let mut settled: Vec<Row> = rest.iter().filter(|m| in_chat(m) && shown(m)).cloned().collect();
        settled.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        settled.truncate(t.sessions.continuity_items);
        let settled_ids: HashSet<MemoryId> = settled.iter().map(|m| m.id).collect();
        let mut knowledge: Vec<(f32, Row)> = rest
            .into_iter()
            .filter(|m| shown(m) && !settled_ids.contains(&m.id))
            .map(|m| (m.salience * decay::strength(&m, now, &t.decay), m))
            .collect();
        knowledge.sort_by(|(a, x), (b, y)| b.total_cmp(a).then(x.id.cmp(&y.id)));
        Self { pinned, knowledge: knowledge.into_iter().map(|(_, m)| m).collect(), open_loops, settled }
    }
}
