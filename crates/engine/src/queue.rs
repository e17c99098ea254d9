//! Extraction off the request path: batches from the store's durable queue, run when due (N
//! messages waiting, the chat idle for T, a retry due, or an explicit flush), with the
//! heuristic extractor standing in when the model fails and the model asked again later.
//!
//! Order of writes per batch: the ops (each in its own transaction, as in `ingest`), then the
//! batch's settlement. A crash in between leaves the batch queued, and the re-run is harmless:
//! every op of it is recognised as a replay of the same source messages. Of several workers,
//! the one holding the chat's claim runs its batches; the others skip it.

use std::collections::HashSet;
use std::time::{Duration as Wait, Instant};

use chrono::Duration;
use mnemo_core::extract::llm::{EXTRACTOR_NAME, EXTRACTOR_VERSION};
use mnemo_core::text::query_terms;
use mnemo_core::trace::{LlmCall, TraceOp};
use mnemo_core::{HistoryEvent, MemoryId, Message, MessageId, Scope, Status, Verdict};
use mnemo_store::{Change, ChangeSet, ChatProgress, QueueState, Queued, Settlement};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::config::ExtractorKind;
use crate::error::Result;
use crate::write::OpRecord;

/// One extraction batch and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// The chat.
    pub scope: Scope,
    /// Messages in the batch.
    pub messages: usize,
    /// Attempt with the model (1 for the first).
    pub attempt: u32,
    /// True when this was a retry of a batch the heuristic had stood in for.
    pub retry: bool,
    /// Who proposed the ops: `llm`, or `heuristic` when it stood in.
    pub extractor: String,
    /// Every proposed op with its verdict.
    pub ops: Vec<OpRecord>,
    /// Why the model failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Set when this was the last attempt: the fallback's memories stay for good.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gave_up: bool,
    /// Memories of an earlier fallback that the model's extraction replaced (archived).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<MemoryId>,
    /// What the model was asked and what it cost.
    pub llm: LlmCall,
    /// Turn id of the trace envelope with the verdicts and the cost.
    pub turn_id: String,
}

/// One memo range and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoReport {
    /// The chat.
    pub scope: Scope,
    /// First message of the range (position in the chat, 0-based).
    pub from: usize,
    /// One past its last message.
    pub to: usize,
    /// The memo written; `None` when the model found nothing memorable or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<MemoryId>,
    /// Why it failed: the range is left as a gap, never an error to the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
    /// What the model was asked and what it cost.
    pub llm: LlmCall,
}

/// What a pass over due background work did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PendingReport {
    /// Chats looked at.
    pub chats: usize,
    /// Extraction batches run.
    pub batches: Vec<BatchReport>,
    /// Memo ranges handled.
    pub memos: Vec<MemoReport>,
    /// Episodes written from chats that completed a task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub episodes: Vec<MemoryId>,
    /// Chats left alone because another worker holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy: Vec<Scope>,
    /// Set when the caller's wait ran out before all due work was done: the rest stays
    /// queued for the server's worker or `mnemo maintain` (see [`Memory::flush_within`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

impl PendingReport {
    /// The model's cost over the whole pass.
    pub fn cost(&self) -> LlmCall {
        let calls = self.batches.iter().map(|b| &b.llm).chain(self.memos.iter().map(|m| &m.llm));
        let mut total = LlmCall { task: "total".into(), outcome: "ok".into(), ..LlmCall::default() };
        for c in calls {
            total.calls += c.calls;
            total.retries += c.retries;
            total.prompt_tokens += c.prompt_tokens;
            total.completion_tokens += c.completion_tokens;
            total.estimated_calls += c.estimated_calls;
            total.micros += c.micros;
        }
        total
    }
}

/// How long a chat's claim lasts: long enough for a few model calls with their retries, short
/// enough that a crashed worker's chats are picked up again soon.
fn claim_for(memory: &Memory) -> Duration {
    let s = &memory.config.llm;
    let per_call = s.timeout_secs * f64::from(s.max_retries + 1) + s.max_backoff_secs * f64::from(s.max_retries);
    Duration::milliseconds(((per_call * 4.0).max(60.0) * 1000.0) as i64)
}

fn secs(s: f64) -> Duration {
    Duration::milliseconds((s.max(0.0) * 1000.0) as i64)
}

impl Memory {
    /// Runs the chat's background work now: every pending extraction batch whatever its size
    /// or age, retries that are due, and memos for every complete range. What `mnemo ingest`
    /// calls before it exits, and what an application calls at the end of a conversation.
    ///
    /// Model failures are never errors here (they are in the report and the trace); only the
    /// store failing is. When another worker holds the chat, returns with the chat in `busy`.
    pub fn flush(&self, scope: &Scope) -> Result<PendingReport> {
        self.flush_until(scope, None)
    }

    /// [`Memory::flush`] for a caller that waits at most `wait` (a one-shot `mnemo ingest`): no
    /// model call starts after it and none runs past it, so a slow model cannot hold the caller
    /// for minutes. A batch the wait cut short is a model failure like any other (the
    /// heuristic stands in, the model is asked again later); batches, memos and episodes not
    /// reached stay queued, and the report's `deferred` says so.
    pub fn flush_within(&self, scope: &Scope, wait: Wait) -> Result<PendingReport> {
        self.flush_until(scope, Some(Instant::now() + wait))
    }

    fn flush_until(&self, scope: &Scope, deadline: Option<Instant>) -> Result<PendingReport> {
        scope.require_user()?;
        let mut report = PendingReport::default();
        if let Some(progress) = self.store.chat_progress(scope)? {
            report.chats = 1;
            self.run_chat(&progress, true, deadline, &mut report)?;
        }
        Ok(report)
    }

    /// Runs every chat's pending extraction and complete memo ranges now, as [`Memory::flush`]
    /// does for one chat: so a test, an evaluation or a shutdown never depends on batch timing.
    pub fn flush_all(&self) -> Result<PendingReport> {
        let now = self.clock.now();
        let every = self.config.background.memo_every.max(1);
        let mut report = PendingReport::default();
        for progress in self.store.chats_with_work(now, every, now + Duration::days(1), usize::MAX >> 1)? {
            report.chats += 1;
            self.run_chat(&progress, true, None, &mut report)?;
        }
        Ok(report)
    }

    /// Runs due background work across chats (at most `chats` of them, least recently active
    /// first): batches with `batch_messages` waiting or idle for `idle_secs`, due retries,
    /// memos, episodes. What the server's worker and `mnemo maintain` call.
    #[tracing::instrument(name = "run_pending", level = "debug", skip_all, fields(chats))]
    pub fn run_pending(&self, chats: usize) -> Result<PendingReport> {
        let now = self.clock.now();
        let b = &self.config.background;
        let memo_every = if b.memo_every == 0 { usize::MAX } else { b.memo_every };
        let episode_since = match b.episode_idle_secs > 0.0 && self.chat.is_ok() {
            true => now - secs(b.episode_idle_secs) - Duration::days(1),
            false => now + Duration::days(1),
        };
        let mut report = PendingReport::default();
        for progress in self.store.chats_with_work(now, memo_every, episode_since, chats)? {
            report.chats += 1;
            self.run_chat(&progress, false, None, &mut report)?;
        }
        Ok(report)
    }

    /// The chat's background-work progress (queue counts, memo cursor, last failure).
    pub fn chat_work(&self, scope: &Scope) -> Result<Option<ChatProgress>> {
        Ok(self.store.chat_progress(scope)?)
    }

    fn run_chat(
        &self,
        progress: &ChatProgress,
        force: bool,
        deadline: Option<Instant>,
        report: &mut PendingReport,
    ) -> Result<()> {
        let scope = &progress.scope;
        let now = self.clock.now();
        if !self.store.claim_chat(scope, now, now + claim_for(self))? {
            report.busy.push(scope.clone());
            return Ok(());
        }
        let result = self.run_claimed(progress, force, deadline, report);
        // A claim left behind would only delay the next worker until it expires.
        let released = self.store.release_chat(scope);
        result?;
        Ok(released?)
    }

    fn run_claimed(
        &self,
        progress: &ChatProgress,
        force: bool,
        deadline: Option<Instant>,
        report: &mut PendingReport,
    ) -> Result<()> {
        let scope = &progress.scope;
        let b = self.config.background.clone();
        // Past the deadline no model call starts: what is left stays queued.
        let out_of_time = |report: &mut PendingReport| {
            let out = deadline.is_some_and(|d| Instant::now() >= d);
            report.deferred |= out;
            out
        };
        if self.config.extractor == ExtractorKind::Llm {
            let idle = self.clock.now() - progress.last_message_at >= secs(b.idle_secs);
            let max = b.max_batch_messages.max(1);
            loop {
                let rows = self.store.queued(scope, QueueState::Pending, self.clock.now(), max)?;
                if rows.is_empty() || !(force || idle || rows.len() >= b.batch_messages.max(1)) {
                    break;
                }
                if out_of_time(report) {
                    return Ok(());
                }
                report.batches.push(self.run_batch(scope, &rows, false, deadline)?);
            }
            loop {
                let rows = self.store.queued(scope, QueueState::Fallback, self.clock.now(), max)?;
                if rows.is_empty() {
                    break;
                }
                if out_of_time(report) {
                    return Ok(());
                }
                report.batches.push(self.run_batch(scope, &rows, true, deadline)?);
            }
        }
        // A memo or episode call that cannot start in time is left for later, never a gap.
        if self.chat.is_ok() && b.memo_every > 0 {
            self.write_memos(scope, force, deadline, report)?;
        }
        if self.chat.is_ok() && b.episode_idle_secs > 0.0 {
            if let Some(id) = self.check_episode(scope, deadline)? {
                report.episodes.push(id);
            }
        }
        Ok(())
    }

    /// One batch: the model, else the heuristic; then the settlement.
    #[tracing::instrument(name = "extract_batch", level = "debug", skip_all, fields(%scope, messages = rows.len(), retry))]
    fn run_batch(&self, scope: &Scope, rows: &[Queued], retry: bool, deadline: Option<Instant>) -> Result<BatchReport> {
        let started = Instant::now();
        let messages: Vec<Message> = rows.iter().map(|q| q.message.clone()).collect();
        let ids: Vec<MessageId> = messages.iter().map(|m| m.id.clone()).collect();
        let attempt = rows.iter().map(|q| q.attempts).max().unwrap_or(0) + 1;
        let earlier: Vec<MemoryId> = {
            let mut seen = HashSet::new();
            rows.iter().flat_map(|q| q.fallback_memories.iter().copied()).filter(|id| seen.insert(*id)).collect()
        };
        let turn = crate::write::new_turn_id();
        let extraction = self.extract_with_model(scope, &messages, &earlier, deadline)?;
        let mut call = extraction.call;
        call.attempt = attempt;
        let (records, degraded, extractor, error, retired, settlement) = match extraction.outcome {
            Ok((ops, _item_errors)) => {
                let (records, degraded) =
                    self.apply_batch_ops(scope, ops, (EXTRACTOR_NAME, EXTRACTOR_VERSION), Some(&turn))?;
                let retired = self.retire_fallback(scope, &earlier, &ids, &records)?;
                (records, degraded, EXTRACTOR_NAME, None, retired, Settlement::Done)
            }
            Err(error) => {
                // Stored with the chat's progress: a model's error may quote what it was sent.
                let error = mnemo_core::pii::redact(&error.to_string());
                // The turn is never broken: the heuristic extracts the batch now (once: a retry
                // keeps what the first fallback wrote), and the model is asked again later.
                let (records, degraded) = if retry {
                    (Vec::new(), None)
                } else {
                    call.fallback = true;
                    let ops = self.extractor.extract(&messages);
                    self.apply_batch_ops(scope, ops, (self.extractor.name(), self.extractor.version()), Some(&turn))?
                };
                let mut memories = earlier;
                memories.extend(records.iter().filter_map(|r| written(&r.verdict)));
                let b = &self.config.background;
                let settlement = if attempt >= b.max_attempts.max(1) {
                    Settlement::GaveUp { attempts: attempt, error: error.clone() }
                } else {
                    let wait = b.retry_secs * 2f64.powi(attempt.saturating_sub(1).min(16) as i32);
                    Settlement::Fallback {
                        attempts: attempt,
                        retry_at: self.clock.now() + secs(wait),
                        error: error.clone(),
                        memories,
                    }
                };
                let extractor = if retry { EXTRACTOR_NAME } else { self.extractor.name() };
                (records, degraded, extractor, Some(error), Vec::new(), settlement)
            }
        };
        let gave_up = matches!(settlement, Settlement::GaveUp { .. });
        let turn_id =
            self.record_batch_as(turn, scope, TraceOp::Extract, &records, degraded, vec![call.clone()], started)?;
        // Tests crash here: the ops are applied, the batch is not settled yet.
        fail::fail_point!("engine::extract::before_settle", |_| Err(crate::Error::Store(
            mnemo_store::StoreError::Injected("engine::extract::before_settle".into())
        )));
        self.store.settle(scope, &ids, &settlement)?;
        Ok(BatchReport {
            scope: scope.clone(),
            messages: ids.len(),
            attempt,
            retry,
            extractor: extractor.to_string(),
            ops: records,
            error,
            gave_up,
            retired,
            llm: call,
            turn_id,
        })
    }

    /// After a successful retry, a stand-in memory is archived only where one of the model's
    /// ops replaced it: a memory the model wrote (or found already there) from the same
    /// messages, of the same kind and surface, naming the same slot or sharing words of its
    /// content. Each of the model's memories replaces at most one, the closest. Whatever the
    /// model did not address - a boundary, a correction, anything it left out - stays: a weak
    /// model's reply must never cost what the heuristic kept. A stand-in reinforced since by
    /// other messages, or no longer active, is left alone.
    fn retire_fallback(
        &self,
        scope: &Scope,
        earlier: &[MemoryId],
        batch: &[MessageId],
        records: &[OpRecord],
    ) -> Result<Vec<MemoryId>> {
        if earlier.is_empty() {
            return Ok(Vec::new());
        }
        let touched: HashSet<MemoryId> = records.iter().flat_map(|r| touched(&r.verdict)).collect();
        let mut stand_ins = Vec::new();
        for id in earlier {
            let Some(m) = self.store.get(&scope.tenant, *id)? else { continue };
            let only_batch = m.provenance.sources.iter().all(|s| batch.contains(s));
            if m.status == Status::Active && !touched.contains(id) && only_batch {
                stand_ins.push(m);
            }
        }
        let mut changes = Vec::new();
        let mut retired = Vec::new();
        for r in records {
            let Some(id) = produced(&r.verdict).filter(|id| !earlier.contains(id)) else { continue };
            let Some(by_model) = self.store.get(&scope.tenant, id)? else { continue };
            let best = stand_ins
                .iter()
                .enumerate()
                .map(|(i, s)| (i, replaces(&by_model, &r.op.sources, s)))
                .filter(|(_, score)| *score > 0)
                .max_by_key(|(_, score)| *score);
            let Some((i, _)) = best else { continue };
            let s = stand_ins.swap_remove(i);
            changes.push(Change::SetStatus {
                id: s.id,
                status: Status::Archived,
                event: HistoryEvent::Transitioned,
                reason: format!(
                    "replaced by the model's extraction of the same messages ({}; retry after a fallback)",
                    by_model.id
                ),
                sources: Vec::new(),
            });
            retired.push(s.id);
        }
        if !changes.is_empty() {
            self.apply_changes(ChangeSet { tenant: scope.tenant.clone(), at: self.clock.now(), changes })?;
        }
        Ok(retired)
    }
}

/// How well the model's memory `by_model` (proposed from `sources`) stands for the stand-in's
/// `stand_in`; 0 when it does not. Same kind and surface (a boundary only for a boundary), a
/// message in common, then the same slot, else the content words they share.
fn replaces(by_model: &mnemo_core::Memory, sources: &[MessageId], stand_in: &mnemo_core::Memory) -> usize {
    if by_model.kind != stand_in.kind || by_model.surface != stand_in.surface {
        return 0;
    }
    if !stand_in.provenance.sources.iter().any(|m| sources.contains(m)) {
        return 0;
    }
    if let (Some(a), Some(b)) = (&by_model.key, &stand_in.key) {
        if a == b {
            return usize::MAX;
        }
    }
    let words = |text: &str| -> HashSet<String> {
        query_terms(text).into_iter().filter(|w| !matches!(w.as_str(), "user" | "users")).collect()
    };
    words(&by_model.content).intersection(&words(&stand_in.content)).count()
}

/// The memory an op of the model left standing for what it said: the one it wrote, or the
/// one that already said it.
fn produced(v: &Verdict) -> Option<MemoryId> {
    match v {
        Verdict::Written { id, .. } | Verdict::Superseded { id, .. } | Verdict::Contradicted { id, .. } => Some(*id),
        Verdict::Deduplicated { existing, .. } => Some(*existing),
        _ => None,
    }
}

/// The memory a verdict wrote, if it wrote one.
fn written(v: &Verdict) -> Option<MemoryId> {
    match v {
        Verdict::Written { id, .. } | Verdict::Superseded { id, .. } | Verdict::Contradicted { id, .. } => Some(*id),
        _ => None,
    }
}

/// Every memory a verdict names.
fn touched(v: &Verdict) -> Vec<MemoryId> {
    match v {
        Verdict::Written { id, .. } => vec![*id],
        Verdict::Superseded { id, old } | Verdict::Contradicted { id, old } => vec![*id, *old],
        Verdict::Deduplicated { existing, .. } => vec![*existing],
        Verdict::Closed { target } | Verdict::Forgotten { target } => vec![*target],
        Verdict::Rejected { .. } => Vec::new(),
    }
}
