//! The write path: validate → trace → extract → gate → apply, one transaction per op.

use mnemo_core::extract::llm::{EXTRACTOR_NAME, EXTRACTOR_VERSION};
use mnemo_core::extract::when;
use mnemo_core::gate::{self, Decision, Existing, GateContext, Replacement};
use mnemo_core::message::validate_batch;
use mnemo_core::passage;
use mnemo_core::verdict::DedupBy;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use mnemo_core::score::fuse;
use mnemo_core::shape::recent_enough;
use mnemo_core::text::{content_hash, query_terms, search_text, tidy};
use mnemo_core::trace::{LlmCall, TraceEnvelope, TraceOp, TracedSurface, TracedVerdict};
use mnemo_core::{
    Action, Draft, HistoryEvent, Kind, Link, LinkKind, Memory as Row, MemoryId, Message, MessageId, NewMessage,
    ProposedOp, Provenance, Scope, Status, StatusKind, Surface, Target, TenantId, UserState, Verdict,
};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter, MessageVectors, StoreError};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::config::{ExtractorKind, MemoryScope};
use crate::error::{Error, Result};

/// One proposed op and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    /// The op as proposed.
    pub op: ProposedOp,
    /// The gate's verdict after apply.
    pub verdict: Verdict,
}

/// What an ingest did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IngestReport {
    /// Messages appended to the trace.
    pub appended: usize,
    /// Messages already present (same id): ignored.
    pub duplicates: usize,
    /// Every proposed op with its verdict.
    pub ops: Vec<OpRecord>,
    /// Set when embeddings were unavailable for this batch (gate dedup by hash only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// Turn id of the trace envelope holding these verdicts (none when nothing was proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// Messages queued for extraction off the request path (LLM extractor): their ops come
    /// from `flush`, the worker or `mnemo maintain`, not in this report.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queued: usize,
    /// Set when the user is not active, saying what this call did not do: `paused` (the
    /// messages were kept in the trace but nothing was extracted or queued, and they never
    /// enter archival recall) or `disabled` (nothing at all was stored; see `discarded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserState>,
    /// Messages not stored because the user is disabled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discarded: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A fresh trace turn id.
pub(crate) fn new_turn_id() -> String {
    format!("turn-{}", MemoryId::new())
}

/// A target must match at least this well (fused relevance) to be acted on.
const TARGET_MATCH: f32 = 0.45;

/// Times one extracted op is judged and written when the row it was judged against keeps
/// vanishing before the write (each attempt reads afresh; a second is almost always enough).
const STALE_ATTEMPTS: usize = 3;

/// Verbs so common in plans that sharing one says nothing about which plan is meant.
const GENERIC_VERBS: &[&str] = &[
    "call", "send", "book", "finish", "do", "did", "done", "get", "got", "make", "go", "went", "see", "buy", "pay",
    "write", "talk", "meet", "visit", "email", "text", "message", "check", "fix", "take", "submit", "reply", "need",
    "have", "plan", "remind", "forget", "remember", "deal", "sort", "handle", "ask", "tell", "give",
];

/// Cosine at which a target counts as a paraphrase even without shared words.
const PARAPHRASE_MATCH: f32 = 0.65;

impl Memory {
    /// Appends messages to the trace and extracts memories from the new ones.
    ///
    /// The whole batch is validated first: an empty or oversized message, a bad id or a scope
    /// without user or chat is an error naming what and where, and nothing is written.
    /// Re-sending a message id is a no-op, so replays never extract twice.
    ///
    /// A paused user's messages are kept in the trace but withheld from archival recall and
    /// never extracted; a disabled user's are not stored at all. The report's `user_state` says
    /// which (see [`Memory::pause`], [`Memory::disable`]).
    ///
    /// With the LLM extractor the messages are queued in the store before this returns and
    /// extracted off the request path (see [`Memory::flush`]): an acknowledged message is never
    /// lost to extraction, and the model's latency or failure never reaches the caller.
    #[tracing::instrument(name = "ingest", level = "debug", skip_all, fields(%scope, messages = messages.len()))]
    pub fn ingest(&self, scope: &Scope, messages: Vec<NewMessage>) -> Result<IngestReport> {
        let started = Instant::now();
        let now = self.clock.now();
        let batch = validate_batch(scope, messages, now, &self.tuning.ingest)?;
        let state = self.user_state(scope)?;
        if state == UserState::Disabled {
            return Ok(IngestReport { user_state: Some(state), discarded: batch.len(), ..IngestReport::default() });
        }
        let fresh = self.store.append_messages(&batch)?;
        let ids: Vec<MessageId> = batch.iter().map(|m| m.id.clone()).collect();
        if state == UserState::Paused {
            return self.keep_paused(scope, ids, &fresh);
        }
        let new: Vec<Message> = batch.into_iter().zip(&fresh).filter(|(_, f)| **f).map(|(m, _)| m).collect();
        let duplicates = fresh.len() - new.len();
        let unindexed = self.index_messages(scope, &new, ids.len());
        let mut report = match self.config.extractor {
            ExtractorKind::Llm => {
                // Every id of the batch, not only the new ones: a message appended by a call
                // that crashed before queueing it is queued by the client's retry.
                let queued = self.store.enqueue(scope, &ids, true, now)?;
                IngestReport { queued, ..IngestReport::default() }
            }
            ExtractorKind::Heuristic => {
                let report = self.extract_and_apply(scope, &new, started)?;
                if self.config.llm_enabled() {
                    // Extracted already; registered for the chat's memos.
                    self.store.enqueue(scope, &ids, false, now)?;
                }
                report
            }
        };
        report.appended = new.len();
        report.duplicates = duplicates;
        if let Some(problem) = unindexed {
            crate::add_problem(&mut report.degraded, problem);
        }
        Ok(report)
    }

    /// The rest of an ingest for a paused user: the messages stay in the trace (the chat's
    /// recent window still shows them) but are withheld from archival recall, and neither
    /// extracted nor queued. Every id of the batch is withheld, not only the new ones, so a retry
    /// after a crash between the two writes still withholds what the first attempt appended.
    fn keep_paused(&self, scope: &Scope, ids: Vec<MessageId>, fresh: &[bool]) -> Result<IngestReport> {
        let appended = fresh.iter().filter(|f| **f).count();
        let withhold = ChangeSet {
            tenant: scope.tenant.clone(),
            at: self.clock.now(),
            changes: vec![Change::Withhold { owner: scope.clone(), messages: ids }],
        };
        self.apply_changes(withhold)?;
        Ok(IngestReport {
            appended,
            duplicates: fresh.len() - appended,
            user_state: Some(UserState::Paused),
            ..IngestReport::default()
        })
    }

    /// Gives new messages their vectors, for archival recall. A failure is reported, never fatal:
    /// the messages are stored and stay lexically searchable.
    ///
    /// Each vector leans toward the turn before it in the chat (`ranking.turn_context`): a reply
    /// is found by the topic of the question it answers. The turn before the first new message
    /// is usually an earlier call's, so it is read back and embedded beside the batch. A longer
    /// message's passages (`ranking.max_passages`, [`mnemo_core::passage`]) get vectors of their
    /// own, leaning toward the same turn, in the same model call.
    fn index_messages(&self, scope: &Scope, messages: &[Message], batch_len: usize) -> Option<String> {
        let model = self.embedder_id()?;
        if messages.is_empty() {
            return None;
        }
        let weight = self.tuning.ranking.turn_context;
        let before = match weight > 0.0 {
            true => match self.turns_before(scope, messages, batch_len) {
                Ok(b) => b,
                Err(e) => return Some(format!("message vectors: {e}")),
            },
            false => vec![None; messages.len()],
        };
        // The batch's own texts first, then each earlier turn the batch does not hold.
        let position: HashMap<&MessageId, usize> = messages.iter().enumerate().map(|(i, m)| (&m.id, i)).collect();
        let mut texts: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
        let context: Vec<Option<usize>> = before
            .iter()
            .map(|b| {
                b.as_ref().map(|b| match position.get(&b.id) {
                    Some(&i) => i,
                    None => {
                        texts.push(b.content.as_str());
                        texts.len() - 1
                    }
                })
            })
            .collect();
        // Then every message's passages, each message's as one run of texts.
        let passages: Vec<Vec<String>> =
            messages.iter().map(|m| passage::passages(&m.content, self.tuning.ranking.max_passages)).collect();
        let first_passage = texts.len();
        texts.extend(passages.iter().flatten().map(String::as_str));
        let vectors = match self.embed(&texts) {
            Ok(v) => v,
            Err(e) => return Some(format!("message vectors: {e}")),
        };
        let mut next_passage = first_passage;
        let pairs: Vec<(MessageId, MessageVectors)> = messages
            .iter()
            .zip(&context)
            .zip(&passages)
            .enumerate()
            .map(|(i, ((m, c), own))| {
                let lean = |v: &Vec<f32>| match c {
                    Some(c) => mnemo_models::blend(v, &vectors[*c], weight),
                    None => v.clone(),
                };
                let parts = &vectors[next_passage..next_passage + own.len()];
                next_passage += own.len();
                let embedding = Embedding { model: model.to_string(), vector: lean(&vectors[i]) };
                (m.id.clone(), MessageVectors { embedding, passages: parts.iter().map(lean).collect() })
            })
            .collect();
        self.store.embed_messages(scope, &pairs).err().map(|e| format!("message vectors: {e}"))
    }

    /// The turn just before each message in its chat, if the chat's tail holds one: the batch
    /// was appended already, so the tail is the batch and whatever came before it.
    fn turns_before(&self, scope: &Scope, messages: &[Message], batch_len: usize) -> Result<Vec<Option<Message>>> {
        let tail = self.store.recent_messages(scope, batch_len + 1)?;
        let at: HashMap<&MessageId, usize> = tail.iter().enumerate().map(|(i, m)| (&m.id, i)).collect();
        Ok(messages.iter().map(|m| at.get(&m.id).filter(|&&i| i > 0).map(|&i| tail[i - 1].clone())).collect())
    }

    /// Runs extraction over messages again without appending them to the trace.
    ///
    /// The trace is idempotent by message id, so re-ingesting is a no-op; this is how a batch is
    /// re-extracted (after an extractor upgrade, or to check that a replay adds no duplicates).
    ///
    /// With the LLM extractor the model reads the batch now (the heuristic standing in if it
    /// fails), synchronously: re-extraction is an explicit request, not a conversation turn.
    /// For a paused or disabled user it extracts nothing, and the report's `user_state` says so.
    pub fn reextract(&self, scope: &Scope, messages: Vec<NewMessage>) -> Result<IngestReport> {
        let started = Instant::now();
        let batch = validate_batch(scope, messages, self.clock.now(), &self.tuning.ingest)?;
        let state = self.user_state(scope)?;
        if !state.learns() {
            return Ok(IngestReport { user_state: Some(state), ..IngestReport::default() });
        }
        if self.config.extractor == ExtractorKind::Llm && !batch.is_empty() {
            let extraction = self.extract_with_model(scope, &batch, &[], None)?;
            if let Ok((ops, _)) = extraction.outcome {
                let (records, degraded) = self.apply_ops(scope, ops, EXTRACTOR_NAME, EXTRACTOR_VERSION)?;
                let turn_id = self.record_batch(
                    scope,
                    TraceOp::Extract,
                    &records,
                    degraded.clone(),
                    vec![extraction.call],
                    started,
                )?;
                return Ok(IngestReport { ops: records, degraded, turn_id: Some(turn_id), ..IngestReport::default() });
            }
        }
        self.extract_and_apply(scope, &batch, started)
    }

    fn extract_and_apply(&self, scope: &Scope, messages: &[Message], started: Instant) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        if messages.is_empty() {
            return Ok(report);
        }
        let ops = self.extractor.extract(messages);
        if ops.is_empty() {
            return Ok(report);
        }
        let (records, degraded) = self.apply_ops(scope, ops, self.extractor.name(), self.extractor.version())?;
        let turn_id = self.record_batch(scope, TraceOp::Ingest, &records, degraded.clone(), Vec::new(), started)?;
        report.turn_id = Some(turn_id);
        report.ops = records;
        report.degraded = degraded;
        Ok(report)
    }

    /// Leaves the trace envelope of a write batch: its verdicts, what the chat model did and
    /// cost. Returns the envelope's turn id.
    pub(crate) fn record_batch(
        &self,
        scope: &Scope,
        op: TraceOp,
        records: &[OpRecord],
        degraded: Option<String>,
        llm: Vec<LlmCall>,
        started: Instant,
    ) -> Result<String> {
        self.record_batch_as(new_turn_id(), scope, op, records, degraded, llm, started)
    }

    /// [`Memory::record_batch`] under a turn id chosen before the batch ran.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_batch_as(
        &self,
        turn_id: String,
        scope: &Scope,
        op: TraceOp,
        records: &[OpRecord],
        degraded: Option<String>,
        llm: Vec<LlmCall>,
        started: Instant,
    ) -> Result<String> {
        let env = TraceEnvelope {
            turn_id,
            scope: scope.clone(),
            op,
            at: self.clock.now(),
            query: String::new(),
            mode: None,
            retrieved: Vec::new(),
            surfaced: Vec::new(),
            below_floor: Vec::new(),
            held_back: Vec::new(),
            shed: Vec::new(),
            degraded,
            tokens: None,
            budget: None,
            micros: started.elapsed().as_micros() as u64,
            embed_micros: 0,
            verdicts: records
                .iter()
                .map(|r| TracedVerdict {
                    op: r.op.action.name().to_string(),
                    kind: r.op.draft.kind,
                    content: r.op.draft.content.clone(),
                    sources: r.op.sources.clone(),
                    rule: r.op.draft.rule.clone(),
                    surface: Some(TracedSurface {
                        policy: r.op.draft.effective_surface(),
                        by: r.op.draft.surface_basis(),
                    }),
                    verdict: r.verdict.clone(),
                })
                .collect(),
            llm,
        };
        self.record_turn(&env, &[])?;
        Ok(env.turn_id)
    }

    /// Puts proposed ops through the gate and applies each verdict in its own transaction.
    ///
    /// Ops are judged in order against the state the previous ones left, so two mentions of the
    /// same fact in one batch become one memory and a reinforcement. Ops drawn from messages
    /// need a user (what a conversation says belongs to its user); only a person's own words
    /// (no sources) may be written tenant- or agent-wide.
    pub fn apply_ops(
        &self,
        scope: &Scope,
        ops: Vec<ProposedOp>,
        extractor: &str,
        version: &str,
    ) -> Result<(Vec<OpRecord>, Option<String>)> {
        self.apply_batch_ops(scope, ops, (extractor, version), None)
    }

    /// [`Memory::apply_ops`] for a traced batch: each new memory's history names the batch's
    /// turn, so `mnemo show` can say what its extraction cost.
    pub(crate) fn apply_batch_ops(
        &self,
        scope: &Scope,
        ops: Vec<ProposedOp>,
        (extractor, version): (&str, &str),
        turn: Option<&str>,
    ) -> Result<(Vec<OpRecord>, Option<String>)> {
        if ops.iter().any(|o| !o.sources.is_empty()) {
            scope.require_user()?;
        }
        let owner = self.owner_of(scope);
        // Only ops that may write a memory need a vector (for near-duplicate dedup and storage);
        // forget, close and reinforce act on an existing row.
        let writes = |o: &ProposedOp| matches!(o.action, Action::Add | Action::Update(_) | Action::Contradict(_));
        let search: Vec<String> = ops
            .iter()
            .filter(|o| writes(o))
            .map(|o| search_text(&tidy(&o.draft.content), o.draft.key.as_deref()))
            .collect();
        let texts: Vec<&str> = search.iter().map(String::as_str).collect();
        let (mut embedded, degraded) = match texts.is_empty() {
            true => (Vec::new().into_iter(), None),
            false => match self.embed(&texts) {
                Ok(v) => (v.into_iter(), None),
                Err(why) => (Vec::new().into_iter(), Some(why)),
            },
        };
        let vectors: Vec<Option<Vec<f32>>> =
            ops.iter().map(|o| if writes(o) { embedded.next() } else { None }).collect();
        let mut records = Vec::with_capacity(ops.len());
        for (op, vector) in ops.into_iter().zip(vectors) {
            // An amendment's text is its target's with the correction beside it, known only once
            // the ops before it are written (the target may be one of them).
            let (written, vector) = match &op.action {
                Action::Amend(target) => {
                    let write = self.amendment(scope, &owner, target, &op)?;
                    let text = search_text(&tidy(&write.draft.content), write.draft.key.as_deref());
                    (Some(write), self.embed(&[&text]).ok().and_then(|mut v| v.pop()))
                }
                _ => (None, vector),
            };
            // "Never mind about the hat" aimed at a memory that also holds a wedding: what does
            // not name the hat is kept, as a memory of its own, once the whole is forgotten.
            let kept = match &op.action {
                Action::Forget(target @ Target::Matching(topic)) => self
                    .resolve_target(scope, &owner, target, &op)?
                    .and_then(|m| mnemo_core::forget::remainder(&m.content, naming(topic)).map(|rest| (m, rest))),
                _ => None,
            };
            let applied = written.as_ref().unwrap_or(&op);
            let mut attempt = 1;
            let verdict = loop {
                match self.apply_op(scope, &owner, applied, vector.clone(), (extractor, version), turn) {
                    // The row the gate judged against was deleted between its reads and this
                    // write (an erasure, a reset or a delete racing the ingest): judge again on
                    // what is there now rather than fail the whole batch.
                    Err(Error::Store(StoreError::MemoryNotFound { .. })) if attempt < STALE_ATTEMPTS => attempt += 1,
                    got => break got?,
                }
            };
            if let (Verdict::Forgotten { .. }, Some((old, rest))) = (&verdict, kept) {
                self.keep_the_rest(scope, &owner, &old, &rest, (extractor, version), turn)?;
            }
            if matches!(verdict, Verdict::Written { .. } | Verdict::Superseded { .. })
                && op.draft.key.as_deref() == Some("employer")
            {
                self.leave_the_trade(scope, &owner, &op, (extractor, version), turn)?;
            }
            records.push(OpRecord { op, verdict });
        }
        Ok((records, degraded))
    }

    /// Writes what a forget left of `old` (see [`mnemo_core::forget`]) as a new memory.
    fn keep_the_rest(
        &self,
        scope: &Scope,
        owner: &Scope,
        old: &Row,
        rest: &str,
        by: (&str, &str),
        turn: Option<&str>,
    ) -> Result<Verdict> {
        self.write_again(scope, owner, old, rest, old.value.clone(), Action::Add, by, turn)
    }

    /// A new workplace written to the employer slot takes the old one out of the job's slot
    /// ("User is a mechanic at the First bus depot" becomes "User is a mechanic" when the user
    /// starts at the Larkfield garage; see [`mnemo_core::workplace`]), superseding it.
    fn leave_the_trade(
        &self,
        scope: &Scope,
        owner: &Scope,
        employer: &ProposedOp,
        by: (&str, &str),
        turn: Option<&str>,
    ) -> Result<()> {
        let Some(job) = self.store.find_by_key(owner, Kind::Profile, "job")? else { return Ok(()) };
        let place = employer.draft.value.as_deref().unwrap_or(&employer.draft.content);
        let Some(trade) = mnemo_core::workplace::without_workplace(&job.content, place) else { return Ok(()) };
        let value = job.value.as_deref().map(|v| mnemo_core::workplace::trade(v).to_string());
        self.write_again(scope, owner, &job, &trade, value, Action::Update(Target::Key("job".into())), by, turn)?;
        Ok(())
    }

    /// Writes `content` in `old`'s place through the gate: `old`'s kind, slot, surface, dates,
    /// client data, rule and sources carried over (see [`carried_over`]), `value` for the slot.
    #[allow(clippy::too_many_arguments)]
    fn write_again(
        &self,
        scope: &Scope,
        owner: &Scope,
        old: &Row,
        content: &str,
        value: Option<String>,
        action: Action,
        by: (&str, &str),
        turn: Option<&str>,
    ) -> Result<Verdict> {
        let mut draft = carried_over(old, content, old.confidence);
        draft.value = value;
        draft.rule = old.provenance.rule.clone();
        let op = ProposedOp { action, draft, sources: old.provenance.sources.clone() };
        let text = search_text(&tidy(content), old.key.as_deref());
        let vector = self.embed(&[&text]).ok().and_then(|mut v| v.pop());
        self.apply_op(scope, owner, &op, vector, by, turn)
    }

    /// The partition extracted memories of this request are owned by. Without a user, the scope
    /// itself: a tenant- or agent-wide write stays exactly as wide as it was asked to be.
    pub(crate) fn owner_of(&self, scope: &Scope) -> Scope {
        if scope.user.is_none() {
            return scope.clone();
        }
        let mut owner = match self.config.memory_scope {
            MemoryScope::User => scope.without_chat(),
            MemoryScope::Chat => scope.clone(),
        };
        if self.config.share_across_agents {
            owner.agent = None;
        }
        owner
    }

    fn apply_op(
        &self,
        scope: &Scope,
        owner: &Scope,
        op: &ProposedOp,
        vector: Option<Vec<f32>>,
        (extractor, version): (&str, &str),
        turn: Option<&str>,
    ) -> Result<Verdict> {
        let now = self.clock.now();
        let draft = &op.draft;
        let content = tidy(&draft.content);
        let hash = content_hash(&content);
        let existing = |m: &Row| Existing { id: m.id, kind: m.kind, status: m.status, value: m.value.clone() };

        let mut ctx = GateContext { owner_layer: Some(owner.layer()), ..Default::default() };
        let same_hash = self.store.by_hash(scope, &hash)?;
        ctx.same_hash = same_hash.iter().find(|m| m.status == Status::Active).map(existing);
        if !op.sources.is_empty() {
            ctx.replay_of =
                same_hash.iter().find(|m| op.sources.iter().all(|s| m.provenance.sources.contains(s))).map(existing);
        }
        if let Some(key) = &draft.key {
            ctx.same_key = self.store.find_by_key(owner, draft.kind, key)?.map(|m| existing(&m));
        }
        if let (Some(v), Some(model)) = (&vector, self.embedder_id()) {
            let near = self.store.vector(scope, model, v, 5)?;
            let ids: Vec<MemoryId> = near.iter().map(|(id, _)| *id).collect();
            let rows = self.store.get_many(scope, &ids)?;
            ctx.nearest = near.iter().find_map(|(id, cos)| {
                rows.iter().find(|m| m.id == *id && m.kind == draft.kind).map(|m| (existing(m), *cos))
            });
        }
        if let Some(target) = op.action.target() {
            ctx.target = self.resolve_target(scope, owner, target, op)?.map(|m| existing(&m));
        }

        let decision = gate::judge(op, &ctx, &self.tuning.gate);
        let session = scope.chat.as_ref().map(|c| c.to_string());
        let (changes, verdict) = match decision {
            Decision::Reject(reason) => return Ok(Verdict::Rejected { reason }),
            Decision::Replay { existing } => return Ok(Verdict::Deduplicated { existing, by: DedupBy::Replay }),
            Decision::Reinforce { existing, .. } if self.already_cites(&scope.tenant, existing, &op.sources)? => {
                // Re-derived from the very messages that taught it (a batch re-run after a
                // crash, a retry after a fallback): not new evidence, so nothing changes.
                return Ok(Verdict::Deduplicated { existing, by: DedupBy::Replay });
            }
            Decision::Reinforce { existing, by } => {
                let verdict = Verdict::Deduplicated { existing, by };
                let change = Change::Reinforce {
                    id: existing,
                    sources: op.sources.clone(),
                    session,
                    reason: verdict.to_string(),
                };
                (vec![change], verdict)
            }
            Decision::Close { target } => {
                let verdict = Verdict::Closed { target };
                (vec![self.transition(target, Status::Archived, HistoryEvent::Closed, &verdict, op)], verdict)
            }
            Decision::Forget { target } => {
                let verdict = Verdict::Forgotten { target };
                // Neither what was forgotten nor the request to forget it is quoted back later.
                let mut changes = vec![
                    self.transition(target, Status::Archived, HistoryEvent::Forgotten, &verdict, op),
                    Change::Withhold { owner: scope.clone(), messages: op.sources.clone() },
                ];
                changes.extend(self.withhold_sources_of(&scope.tenant, target)?);
                (changes, verdict)
            }
            Decision::Write { status, replaces } => {
                let row = Row {
                    key: draft.key.clone(),
                    value: draft.value.clone(),
                    confidence: draft.confidence.clamp(0.0, 1.0),
                    salience: draft.salience.clamp(0.0, 1.0),
                    surface: draft.effective_surface(),
                    status,
                    due_at: draft.due_at,
                    valid_from: draft.valid_from,
                    provenance: Provenance {
                        sources: op.sources.clone(),
                        chat: scope.chat.clone(),
                        extractor: extractor.to_string(),
                        extractor_version: version.to_string(),
                        rule: draft.rule.clone(),
                    },
                    distinct_sessions: u32::from(session.is_some()),
                    expires_at: draft.expires_at,
                    sensitivity: draft.sensitivity,
                    metadata: draft.metadata.clone(),
                    ..Row::new(owner.clone(), draft.kind, content, now)
                };
                let id = row.id;
                let verdict = match replaces {
                    None => Verdict::Written { id, status: status.kind() },
                    Some((old, Replacement::Supersedes)) => Verdict::Superseded { id, old },
                    Some((old, Replacement::Contradicts)) => Verdict::Contradicted { id, old },
                };
                let embedding =
                    vector.zip(self.embedder_id()).map(|(v, m)| Embedding { model: m.to_string(), vector: v });
                // A boundary's own words are not excerpts either: raising them is what it forbids.
                let quiet = if row.surface == Surface::Avoid { op.sources.clone() } else { Vec::new() };
                let reason = match turn {
                    Some(t) => format!("{verdict} (batch {t})"),
                    None => verdict.to_string(),
                };
                let mut changes = vec![Change::Insert { memory: row, embedding, reason }];
                if !quiet.is_empty() {
                    changes.push(Change::Withhold { owner: scope.clone(), messages: quiet });
                }
                if let Some((old, how)) = replaces {
                    let (status, event, link) = match how {
                        Replacement::Supersedes => {
                            (Status::Superseded { by: id }, HistoryEvent::Superseded, LinkKind::Supersedes)
                        }
                        Replacement::Contradicts => {
                            (Status::Contradicted, HistoryEvent::Contradicted, LinkKind::Contradicts)
                        }
                    };
                    changes.push(self.transition(old, status, event, &verdict, op));
                    changes.push(Change::Link(Link { from: id, to: old, kind: link, at: now }));
                    // The corrected statement is not quoted back as if it still held.
                    changes.extend(self.withhold_corrected(&scope.tenant, old)?);
                }
                (changes, verdict)
            }
        };
        self.apply_changes(ChangeSet { tenant: scope.tenant.clone(), at: now, changes })?;
        Ok(verdict)
    }

    /// True when the memory already cites every one of `sources` (and there is at least one).
    fn already_cites(&self, tenant: &TenantId, id: MemoryId, sources: &[MessageId]) -> Result<bool> {
        if sources.is_empty() {
            return Ok(false);
        }
        let cited = self.store.get(tenant, id)?.map(|m| m.provenance.sources).unwrap_or_default();
        Ok(sources.iter().all(|s| cited.contains(s)))
    }

    /// The memory an amendment corrects. Named by the wrong detail's words ("tues"), it is an
    /// active memory holding every one of them, found by the words themselves (a word or two is
    /// too little for the relevance a paraphrase would need): of several, the one sharing most
    /// words with the correction ("not tues, the derby is sat"), then the one written last.
    fn amended_target(&self, scope: &Scope, owner: &Scope, target: &Target, op: &ProposedOp) -> Result<Option<Row>> {
        let Target::Matching(detail) = target else { return self.resolve_target(scope, owner, target, op) };
        let wanted: Vec<String> = mnemo_core::text::words(detail).collect();
        let said = query_terms(&op.draft.content);
        // A day set against another, nothing more, must also name the thing it moves.
        let beyond_the_day = op.draft.rule.as_deref() == Some(mnemo_core::extract::DAY_FOR_DAY_RULE);
        Ok(self
            .candidates(scope, detail, 20)?
            .list
            .into_iter()
            .filter(|c| c.memory.status == Status::Active)
            .filter_map(|c| {
                // A possessive holds its word ("Carluccio's" holds "carluccio").
                let have: HashSet<String> = mnemo_core::text::words(&c.memory.content)
                    .flat_map(|w| {
                        let bare = w.strip_suffix("'s").map(str::to_string);
                        std::iter::once(w).chain(bare)
                    })
                    .collect();
                let holds = !wanted.is_empty()
                    && wanted
                        .iter()
                        .all(|w| have.contains(w) || have.iter().any(|h| mnemo_core::text::same_word(h, w)));
                let shared = said.iter().filter(|w| have.contains(*w)).count();
                // The thing's own words, not the days or the quote's frame ("User said").
                let named = said
                    .iter()
                    .filter(|w| have.contains(*w) && names_a_thing(w))
                    .filter(|w| !wanted.iter().any(|d| mnemo_core::text::same_word(d, w)))
                    .count();
                let rank = if beyond_the_day { named } else { shared };
                (holds && (!beyond_the_day || named > 0)).then_some((rank, c.memory))
            })
            .max_by_key(|(rank, m)| (*rank, m.updated_at))
            .map(|(_, m)| m))
    }

    /// Withholds the messages a corrected memory came from, but not one another active memory
    /// of its owner still draws on: one statement corrected must not take the rest of its
    /// message out of recall ("I live in Leeds. I cook after 7pm, 30 minutes max"). `None` when
    /// the memory is gone or every message it came from is still drawn on.
    fn withhold_corrected(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Change>> {
        let Some(m) = self.store.get(tenant, id)? else { return Ok(None) };
        let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
        let others = self.store.list(&m.owner, &active)?;
        let drawn_on: HashSet<&MessageId> =
            others.iter().filter(|o| o.id != m.id).flat_map(|o| o.provenance.sources.iter()).collect();
        let messages: Vec<MessageId> = m.provenance.sources.iter().filter(|s| !drawn_on.contains(s)).cloned().collect();
        Ok((!messages.is_empty()).then(|| Change::Withhold { owner: m.owner.without_chat(), messages }))
    }

    /// Withholds the messages a stored memory came from (none when it is gone).
    fn withhold_sources_of(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Change>> {
        Ok(self.store.get(tenant, id)?.map(|m| withhold_sources(&m)))
    }

    fn transition(
        &self,
        id: MemoryId,
        status: Status,
        event: HistoryEvent,
        verdict: &Verdict,
        op: &ProposedOp,
    ) -> Change {
        Change::SetStatus { id, status, event, reason: verdict.to_string(), sources: op.sources.clone() }
    }

    /// What an amendment writes: its target's text with the user's dated correction after it
    /// ("On 2026-09-07 User said: \"… its tues at 7 …\". On 2026-09-09 User corrected: \"its
    /// not tues its wed\""), superseding the target, so what the detail belonged to stays with
    /// the correction. A plain move of a day or a time is written into the target's text instead
    /// ("Keith is having his knee replaced on the 9th of June"; see [`mnemo_core::restate`]).
    /// The target's kind, key, surface, dates and client data carry over, and the new memory
    /// cites both turns. With no active memory to amend, the correction is kept
    /// as written: the user's dated words, never dropped.
    fn amendment(&self, scope: &Scope, owner: &Scope, target: &Target, op: &ProposedOp) -> Result<ProposedOp> {
        // Kept alone, read again it is a replay of the same words (the gate's hash check).
        let Some(old) = self.amended_target(scope, owner, target, op)? else {
            return Ok(ProposedOp { action: Action::Add, ..op.clone() });
        };
        // Read again (a re-extraction), the target still holds the detail and already carries
        // this correction.
        if !op.sources.is_empty() && op.sources.iter().all(|s| old.provenance.sources.contains(s)) {
            return Ok(ProposedOp { action: Action::Reinforce(Target::Id(old.id)), ..op.clone() });
        }
        // A plain move of a day or a time is written into the statement ("… on the 9th of June"),
        // so the model reads one day, not two; a due date moves with it.
        let restated = mnemo_core::restate::restate(&old.content, &op.draft.content);
        let due_at = match (&restated, old.due_at, old.valid_from) {
            (Some(text), Some(_), Some(said)) => when::find(text, said).map(|p| p.at).or(old.due_at),
            _ => old.due_at,
        };
        let content = restated.unwrap_or_else(|| {
            // A quote that ends its own sentence inside its marks ('… 4 years."') needs no full
            // stop after them.
            let before = old.content.trim_end().trim_end_matches('.');
            let stop = if [".\"", "!\"", "?\""].iter().any(|end| before.ends_with(end)) { " " } else { ". " };
            format!("{before}{stop}{}", op.draft.content.trim())
        });
        let mut sources = old.provenance.sources.clone();
        sources.extend(op.sources.iter().filter(|s| !old.provenance.sources.contains(s)).cloned());
        let draft = Draft {
            kind: old.kind,
            content,
            key: old.key.clone(),
            value: old.value.clone(),
            confidence: old.confidence.max(op.draft.confidence),
            salience: old.salience.max(op.draft.salience),
            surface: Some(old.surface),
            due_at,
            valid_from: old.valid_from,
            expires_at: old.expires_at,
            sensitivity: old.sensitivity,
            rule: op.draft.rule.clone(),
            metadata: old.metadata.clone(),
            surface_by: None,
        };
        Ok(ProposedOp { action: Action::Update(Target::Id(old.id)), draft, sources })
    }

    /// Finds the active memory an op is about.
    fn resolve_target(&self, scope: &Scope, owner: &Scope, target: &Target, op: &ProposedOp) -> Result<Option<Row>> {
        let active = |m: Row| (m.status == Status::Active).then_some(m);
        match target {
            Target::Id(id) => Ok(self.store.get_many(scope, &[*id])?.into_iter().next().and_then(active)),
            Target::Key(key) => Ok(self.store.find_by_key(owner, op.draft.kind, key)?),
            Target::Matching(text) => {
                let kind = match op.action {
                    Action::CloseLoop(_) => Some(Kind::OpenLoop),
                    _ => None,
                };
                self.best_match(scope, text, kind)
            }
            Target::Latest(shape) => {
                // Said shortly before the take-back, by the same user: a take-back that names
                // no old value answers what was just said, never last month's plan.
                // The newest few hundred are read, not a long-time user's whole memory.
                let Some(at) = op.draft.valid_from else { return Ok(None) };
                let active =
                    ListFilter { statuses: vec![StatusKind::Active], limit: LATEST_SCAN, ..ListFilter::default() };
                let recent: Vec<Row> = self
                    .store
                    .list(owner, &active)?
                    .into_iter()
                    .filter(|m| m.kind.is_extractable() && shape.named_in(&m.content))
                    .filter(|m| m.valid_from.is_some_and(|said| recent_enough(said, at)))
                    .collect();
                // A pasted transcript's line ("Pat: Correction, it's now Saturday 8 August")
                // takes back what its own speaker said, never the user's or another speaker's.
                let speaker = self.speakers(owner, &op.sources)?.into_values().next();
                // Of memories said in the same message, the one naming what the take-back names
                // ("The birthday is the 14th but the party is on Saturday 21st" after "70th
                // birthday on 14 March … I must book the flights until Friday").
                let said = query_terms(&op.draft.content);
                let naming = |m: &Row| {
                    let have: HashSet<String> = mnemo_core::text::words(&m.content).collect();
                    said.iter().filter(|w| names_a_thing(w) && have.contains(*w)).count()
                };
                let latest = |ms: Vec<Row>| ms.into_iter().max_by_key(|m| (m.valid_from, naming(m), m.updated_at));
                let Some(speaker) = speaker else { return Ok(latest(recent)) };
                // One read for every candidate's sources.
                let sources: Vec<MessageId> =
                    recent.iter().flat_map(|m| m.provenance.sources.iter().cloned()).collect();
                let speakers = self.speakers(owner, &sources)?;
                Ok(latest(
                    recent
                        .into_iter()
                        .filter(|m| m.provenance.sources.iter().any(|id| speakers.get(id) == Some(&speaker)))
                        .collect(),
                ))
            }
        }
    }

    /// The speaker each pasted transcript's line among `sources` names; the user's own words
    /// name none and are left out.
    fn speakers(&self, owner: &Scope, sources: &[MessageId]) -> Result<HashMap<MessageId, String>> {
        if sources.is_empty() {
            return Ok(HashMap::new());
        }
        Ok(self
            .store
            .messages(&owner.without_chat(), sources)?
            .into_iter()
            .filter_map(|m| mnemo_core::extract::speaker(&m.content).map(|s| (m.id.clone(), s.to_string())))
            .collect())
    }

    /// The active memory in scope that best matches `text`, if it matches well enough.
    ///
    /// Fused relevance alone is relative (lexical scores are scaled to the best hit), so sharing
    /// one word is not evidence: "called the dentist" must not close "call mom". A target must
    /// share a distinctive word with the text — not a generic verb like call, send, book — or be
    /// a close paraphrase by embedding. "Talked to my mum" still closes "call my mother".
    pub(crate) fn best_match(&self, scope: &Scope, text: &str, kind: Option<Kind>) -> Result<Option<Row>> {
        let found = self.candidates(scope, text, 10)?;
        let shares_words = naming(text);
        let mut scored: Vec<(Row, f32, bool)> = found
            .list
            .into_iter()
            .filter(|c| kind.is_none_or(|k| c.memory.kind == k))
            .map(|c| {
                let r = fuse(c.lexical, c.vector, &self.tuning);
                let close = c.vector.is_some_and(|v| v >= PARAPHRASE_MATCH);
                (c.memory, r, close)
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(scored
            .into_iter()
            .find(|(m, r, close)| *r >= TARGET_MATCH && (*close || shares_words(&m.content)))
            .map(|(m, _, _)| m))
    }
}

/// Whether a query word can name a thing a day is set for: a word, not a number, a weekday
/// (it moves with the day) or the frame a quote is kept in ("User said"). A month counts: the
/// old day in the month the sentence names ("Saturday 18 July not the 11th" for "married in
/// Apia on 11 July") is the same day.
fn names_a_thing(word: &str) -> bool {
    const QUOTE_FRAME: &[&str] = &["corrected", "said", "user"];
    word.chars().all(char::is_alphabetic)
        && !QUOTE_FRAME.contains(&word)
        && !mnemo_core::shape::WEEKDAY_NAMES.contains(&word)
}

/// A draft of `content` that keeps `old`'s kind, slot, surface, dates, sensitivity and client
/// data: what a user's edit and what a forget leaves of a memory are written as. The slot's
/// value is not carried: new words may no longer say it.
pub(crate) fn carried_over(old: &Row, content: &str, confidence: f32) -> Draft {
    Draft {
        key: old.key.clone(),
        value: None,
        surface: Some(old.surface),
        due_at: old.due_at,
        valid_from: old.valid_from,
        expires_at: old.expires_at,
        sensitivity: old.sensitivity,
        metadata: old.metadata.clone(),
        ..Draft::new(old.kind, content, confidence, old.salience)
    }
}

/// Whether a text shares a distinctive word with `text` (compared on a five-letter stem, generic
/// verbs such as call, send, book left out): what a target must do to be the thing meant.
fn naming(text: &str) -> impl Fn(&str) -> bool {
    let distinctive: Vec<String> = query_terms(text)
        .into_iter()
        .filter(|t| !GENERIC_VERBS.iter().any(|v| t.starts_with(v)))
        // A plural names its thing ("the extractor fans" is "the fan"): the stem is taken
        // from the singular.
        .map(|t| match t.strip_suffix('s') {
            Some(one) if one.chars().count() >= 3 && !one.ends_with('s') => one.chars().take(5).collect(),
            _ => t.chars().take(5).collect(),
        })
        .collect();
    move |content: &str| mnemo_core::text::words(content).any(|w| distinctive.iter().any(|t| w.starts_with(t.as_str())))
}

/// How many of the user's newest active memories a take-back naming only its new value is
/// compared with: what it corrects was written a moment before.
const LATEST_SCAN: usize = 200;

/// Takes a memory's source messages out of archival recall. They are the messages of the
/// memory's own user (any of their chats: reinforcement may come from another one), never
/// another user's that happen to share an id.
pub(crate) fn withhold_sources(m: &Row) -> Change {
    Change::Withhold { owner: m.owner.without_chat(), messages: m.provenance.sources.clone() }
}
