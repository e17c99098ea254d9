//! Talking to the chat model: one extraction batch through core's prompt and parser, the one
//! structured call every chat-model job uses, and the cost of each as a trace [`LlmCall`].

use std::collections::HashSet;
use std::time::Instant;

use mnemo_core::extract::llm::{LlmBatch, PromptOptions, ReplyError, SCHEMA_NAME, reply_schema};
use mnemo_core::trace::LlmCall;
use mnemo_core::{MemoryId, Message, ProposedOp, Scope, StatusKind};
use mnemo_models::{ChatError, ChatMessage, ChatRequest, Usage, ask_json};
use mnemo_store::ListFilter;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Memory;
use crate::error::Result;

/// Why a chat-model job got nothing usable. Never returned to a caller: it becomes the job's
/// gap or the batch's error (in the trace and the queue), and the job is retried or skipped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum AskError {
    /// No chat model to ask: the reason it could not be configured or opened, which names the
    /// setting to fix.
    #[error("{0}")]
    NoModel(String),
    /// The model stopped at its token limit before the JSON was complete.
    #[error("the reply was cut off by the token limit (raise MNEMO_LLM_MAX_TOKENS)")]
    Truncated,
    /// The call failed (transport, status, no JSON, schema mismatch): the client's words.
    #[error(transparent)]
    Chat(#[from] ChatError),
    /// The reply was JSON but not a list of extraction ops.
    #[error(transparent)]
    Reply(#[from] ReplyError),
    /// The reply held ops and every one was rejected: a model that wrote only unusable ops
    /// has not read the batch, so it is a failure (the heuristic stands in, the model is asked
    /// again), never "nothing to remember".
    #[error("no usable op in the reply: all {rejected} were rejected (first: {first})")]
    NothingUsable {
        /// Ops in the reply.
        rejected: usize,
        /// Why the first was rejected.
        first: String,
    },
    /// The reply proposed nothing where the heuristic extractor finds memories: a small model's
    /// empty reply is no evidence that the messages hold nothing, so it counts as a failure
    /// rather than erase what the heuristic would keep.
    #[error("the reply proposed nothing, but the heuristic extractor finds {0} memories in these messages")]
    NothingProposed(usize),
    /// The caller stopped waiting (a one-shot `mnemo ingest`'s wait ran out) before the model
    /// answered: not the model's failure, so a memo range or episode is left for later, never
    /// marked a gap.
    #[error("the wait for the model ran out (background.ingest_wait_secs); left for later")]
    OutOfTime,
}

/// What one extraction call gave: usable ops and the reply's unusable items, or why nothing
/// usable came back. Either way with its cost.
pub(crate) struct Extraction {
    pub(crate) outcome: std::result::Result<(Vec<ProposedOp>, Vec<String>), AskError>,
    pub(crate) call: LlmCall,
}

/// A cost record for `task` from the client's usage.
pub(crate) fn call_record(task: &str, model: &str, usage: Usage) -> LlmCall {
    LlmCall {
        task: task.to_string(),
        model: model.to_string(),
        calls: usage.calls,
        retries: usage.retries,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        estimated_calls: usage.estimated_calls,
        micros: usage.micros,
        outcome: "ok".into(),
        ..LlmCall::default()
    }
}

impl Memory {
    /// Asks the chat model for JSON of shape `T` under schema `name`: the structured call of
    /// memos, summaries, reflections and episodes. Never an error: a failure comes back as
    /// `Err(why)` beside the cost record (a failed job is a gap, not a broken caller). With a
    /// `deadline` (a caller waiting), the call is bounded by it, and one it cut short, or that
    /// could not start in time, is [`AskError::OutOfTime`].
    #[tracing::instrument(name = "llm", level = "debug", skip_all, fields(task))]
    pub(crate) fn ask<T: DeserializeOwned>(
        &self,
        task: &str,
        (system, user): (String, String),
        (name, schema): (&str, Value),
        deadline: Option<Instant>,
    ) -> (std::result::Result<T, AskError>, LlmCall) {
        let model = match &self.chat {
            Ok(m) => m,
            Err(why) => {
                let call = LlmCall {
                    task: task.into(),
                    outcome: "failed".into(),
                    error: Some(why.clone()),
                    ..LlmCall::default()
                };
                return (Err(AskError::NoModel(why.clone())), call);
            }
        };
        let mut req =
            ChatRequest::new(vec![ChatMessage::system(system), ChatMessage::user(user)]).with_schema(name, schema);
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let call = LlmCall {
                    task: task.into(),
                    outcome: "failed".into(),
                    error: Some(AskError::OutOfTime.to_string()),
                    ..LlmCall::default()
                };
                return (Err(AskError::OutOfTime), call);
            }
            req = req.with_time_limit(left);
        }
        match ask_json::<T, _>(model.as_ref(), &req) {
            Ok(reply) => {
                let mut call = call_record(task, model.id(), reply.reply.usage);
                if reply.reply.truncated() {
                    call.outcome = "failed".into();
                    call.error = Some(AskError::Truncated.to_string());
                    return (Err(AskError::Truncated), call);
                }
                (Ok(reply.value), call)
            }
            Err(e) => {
                let mut call = call_record(task, model.id(), e.usage());
                call.outcome = "failed".into();
                // A server's error may echo the prompt: what is traced and logged is redacted.
                let error = mnemo_core::pii::redact(&e.to_string());
                tracing::debug!(task, error = %error, "chat model call failed");
                call.error = Some(error);
                let cut_short = matches!(e, ChatError::Timeout { .. }) && deadline.is_some_and(|d| Instant::now() >= d);
                (Err(if cut_short { AskError::OutOfTime } else { e.into() }), call)
            }
        }
    }

    /// Runs one extraction batch through the model: the prompt lists the scope's active
    /// memories (minus `exclude`, what a retried batch's fallback wrote) and the messages; the
    /// reply is read item by item. A reply cut off by the token limit is a failure as a whole
    /// (the rest of the batch would be lost), so the batch falls back and is retried; so is a
    /// reply whose every op was rejected, and an empty one where the heuristic finds memories.
    #[tracing::instrument(name = "llm_extract", level = "debug", skip_all, fields(%scope, messages = messages.len()))]
    pub(crate) fn extract_with_model(
        &self,
        scope: &Scope,
        messages: &[Message],
        exclude: &[MemoryId],
        deadline: Option<Instant>,
    ) -> Result<Extraction> {
        let opts = PromptOptions::default();
        let skip: HashSet<MemoryId> = exclude.iter().copied().collect();
        let filter =
            ListFilter { statuses: vec![StatusKind::Active], limit: opts.max_existing * 2, ..ListFilter::default() };
        let existing: Vec<mnemo_core::Memory> = self
            .store
            .list(scope, &filter)?
            .into_iter()
            .filter(|m| !m.kind.is_synthesised() && !skip.contains(&m.id))
            .collect();
        let batch = LlmBatch::new(messages, &existing, &self.tuning.gate, opts);
        let prompt = batch.prompt();
        let (reply, mut call) =
            self.ask::<Value>("extract", (prompt.system, prompt.user), (SCHEMA_NAME, reply_schema()), deadline);
        let outcome = match reply {
            Err(why) => Err(why),
            Ok(value) => match batch.parse_value(&value) {
                Err(e) => {
                    call.outcome = "failed".into();
                    call.error = Some(e.to_string());
                    Err(e.into())
                }
                Ok(parsed) => {
                    let item_errors: Vec<String> = parsed.errors.iter().map(ToString::to_string).collect();
                    if !item_errors.is_empty() {
                        call.outcome = "partial".into();
                        call.item_errors = item_errors.clone();
                    }
                    match self.nothing_usable(messages, &parsed.ops, &item_errors) {
                        Some(why) => {
                            call.outcome = "failed".into();
                            call.error = Some(why.to_string());
                            Err(why)
                        }
                        None => Ok((parsed.ops, item_errors)),
                    }
                }
            },
        };
        Ok(Extraction { outcome, call })
    }

    /// Why a reply that parsed is still a failure for its batch: it held ops and none was
    /// usable, or it held none while the heuristic finds something in the same messages.
    /// An empty reply for small talk the heuristic also passes over is agreement, not failure.
    fn nothing_usable(&self, messages: &[Message], ops: &[ProposedOp], item_errors: &[String]) -> Option<AskError> {
        if !ops.is_empty() {
            return None;
        }
        if let Some(first) = item_errors.first() {
            return Some(AskError::NothingUsable { rejected: item_errors.len(), first: first.clone() });
        }
        let found = self.extractor.extract(messages).len();
        (found > 0).then_some(AskError::NothingProposed(found))
    }
}
