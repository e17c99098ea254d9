//! A scripted chat model: answers from a queue of canned replies and records what it was
//! asked. For fast tests of code that *uses* a model (extraction fallback, memos, retries
//! later) beside the real HTTP path, which is tested against a loopback server.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::usage::{Usage, estimate_tokens};
use super::{ChatError, ChatModel, ChatReply, ChatRequest, ChatResult, FormatUsed, reply_json};

/// One canned answer of a [`ScriptedChat`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// The model writes this text.
    Text {
        /// What it writes.
        text: String,
        /// Why it stops (`stop`, `length`...).
        finish_reason: String,
        /// Reported (prompt, completion) tokens; estimated when `None`.
        tokens: Option<(u64, u64)>,
    },
    /// The call fails with this error.
    Fail(ChatError),
}

impl ScriptedReply {
    /// A complete answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), finish_reason: "stop".into(), tokens: None }
    }

    /// An answer cut off by the token limit (`finish_reason: length`).
    pub fn truncated(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), finish_reason: "length".into(), tokens: None }
    }

    /// A failed call.
    pub fn fail(error: ChatError) -> Self {
        Self::Fail(error)
    }

    /// The same answer with reported token counts.
    pub fn with_tokens(self, prompt: u64, completion: u64) -> Self {
        match self {
            Self::Text { text, finish_reason, .. } => {
                Self::Text { text, finish_reason, tokens: Some((prompt, completion)) }
            }
            fail => fail,
        }
    }
}

/// A [`ChatModel`] that plays a script: each call takes the next reply from the queue (an
/// exhausted script fails like an unreachable server) and records the request.
///
/// JSON is extracted from the text exactly as the HTTP client does it.
#[derive(Debug, Default)]
pub struct ScriptedChat {
    replies: Mutex<VecDeque<ScriptedReply>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl ScriptedChat {
    /// A model that will give these replies, in order.
    pub fn new(replies: impl IntoIterator<Item = ScriptedReply>) -> Self {
        Self { replies: Mutex::new(replies.into_iter().collect()), seen: Mutex::default() }
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: ScriptedReply) {
        lock(&self.replies).push_back(reply);
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.seen).clone()
    }

    /// Replies not yet given.
    pub fn remaining(&self) -> usize {
        lock(&self.replies).len()
    }
}

/// A test double must not turn one panicking test into a cascade of poisoned locks.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ChatModel for ScriptedChat {
    fn id(&self) -> &str {
        "scripted"
    }

    fn complete(&self, req: &ChatRequest) -> ChatResult<ChatReply> {
        req.validate()?;
        lock(&self.seen).push(req.clone());
        let next = lock(&self.replies).pop_front();
        let (text, finish_reason, tokens) = match next {
            Some(ScriptedReply::Text { text, finish_reason, tokens }) => (text, finish_reason, tokens),
            Some(ScriptedReply::Fail(e)) => return Err(e),
            None => {
                return Err(ChatError::Transport {
                    url: "scripted://".into(),
                    reason: "the script has no more replies".into(),
                    usage: Usage { calls: 1, ..Usage::default() },
                });
            }
        };
        let (prompt_tokens, completion_tokens, estimated_calls) = match tokens {
            Some((p, c)) => (p, c, 0),
            None => (req.messages.iter().map(|m| estimate_tokens(&m.content) + 4).sum(), estimate_tokens(&text), 1),
        };
        let (json, repairs) = reply_json(req, &text);
        Ok(ChatReply {
            json,
            repairs,
            format: if req.schema.is_some() { FormatUsed::JsonSchema } else { FormatUsed::Text },
            finish_reason: Some(finish_reason),
            model: "scripted".into(),
            usage: Usage { calls: 1, prompt_tokens, completion_tokens, estimated_calls, ..Usage::default() },
            text,
        })
    }
}
