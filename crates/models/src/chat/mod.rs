//! Chat models: the [`ChatModel`] trait every LLM-backed feature (extraction, memos, summaries,
//! reflections) talks to, its request and reply types, and the one generic call they need —
//! "ask for JSON matching this schema" ([`ask_json`]).
//!
//! Backends: [`OpenAiChat`] for any OpenAI-compatible `/chat/completions` server (OpenAI, vLLM,
//! llama.cpp server, Ollama), and [`ScriptedChat`], a scripted double for tests beside the real
//! path. Both run the reply through the same JSON repair ([`extract_json`]).

mod error;
mod openai;
mod ordered;
mod repair;
mod scripted;
mod settings;
#[cfg(feature = "test-server")]
pub mod testing;
mod usage;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::{ChatError, ChatResult};
pub use openai::{OpenAiChat, chat_completions_url, open_chat_model};
pub use repair::{Repair, Repaired, extract_json};
pub use scripted::{ScriptedChat, ScriptedReply};
pub use settings::{LLM_ENV_VARS, LlmSettings, ResponseFormat};
pub use usage::{Usage, estimate_tokens};

/// How much of a text to quote in error messages: enough to see what the model did.
const EXCERPT_CHARS: usize = 300;

/// A model that answers a conversation with text.
///
/// Synchronous on purpose: the engine is synchronous and servers call it from a blocking pool.
/// Object-safe, so the engine holds an `Arc<dyn ChatModel>` chosen at start-up.
pub trait ChatModel: Send + Sync {
    /// Stable identifier such as `openai:gpt-4o-mini`, recorded with what the model produced.
    fn id(&self) -> &str;

    /// Sends one request and returns the reply, retrying transient failures as configured.
    ///
    /// When the request carries a schema, [`ChatReply::json`] holds the value found in the
    /// reply (repaired if needed) or `None`; a reply without usable JSON is not an error here,
    /// so the caller decides (see [`ask_json`]).
    fn complete(&self, req: &ChatRequest) -> ChatResult<ChatReply>;
}

/// Who wrote a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    /// Instructions to the model.
    System,
    /// The caller's input.
    User,
    /// The model's earlier output (few-shot examples, conversation history).
    Assistant,
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: ChatRole,
    /// What it says.
    pub content: String,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: ChatRole::System, content: content.into() }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: ChatRole::User, content: content.into() }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: ChatRole::Assistant, content: content.into() }
    }
}

/// The JSON shape a reply must have: sent as `response_format` where the server supports it,
/// described in the prompt where it does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// Short name (`[a-zA-Z0-9_-]`, at most 64 characters), required by OpenAI.
    pub name: String,
    /// The JSON Schema document. Sent with each object's properties in the order of its
    /// `required` list, which is the order constrained decoding writes them in.
    pub schema: Value,
    /// Ask for strict schema adherence (OpenAI structured outputs: every property required,
    /// no additional properties).
    pub strict: bool,
}

/// One chat completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation, system message first.
    pub messages: Vec<ChatMessage>,
    /// The reply's JSON shape, when JSON is wanted.
    pub schema: Option<JsonSchema>,
    /// Completion token limit; the settings' default when `None`.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; the settings' default when `None`.
    pub temperature: Option<f32>,
    /// Longest the whole call may take, retries and backoff included: a caller that waits (a
    /// one-shot `mnemo ingest`) bounds its wait here; each attempt's own timeout still applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<std::time::Duration>,
}

impl ChatRequest {
    /// A plain-text request with the configured limits.
    pub fn new(messages: Vec<ChatMessage>) -> Self {
        Self { messages, schema: None, max_tokens: None, temperature: None, time_limit: None }
    }

    /// The same request asking for JSON matching `schema` (strict).
    pub fn with_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.schema = Some(JsonSchema { name: name.into(), schema, strict: true });
        self
    }

    /// The same request with a completion token limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The same request with a sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same request bounded to `limit` in all (see [`ChatRequest::time_limit`]).
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// Checks what every backend needs before anything is sent.
    pub fn validate(&self) -> ChatResult<()> {
        let bad = |reason: String| Err(ChatError::InvalidRequest(reason));
        if self.messages.is_empty() {
            return bad("the request holds no messages".into());
        }
        if let Some(i) = self.messages.iter().position(|m| m.content.trim().is_empty()) {
            return bad(format!("message {i} is empty"));
        }
        if let Some(s) = &self.schema {
            let name_ok = !s.name.is_empty()
                && s.name.len() <= 64
                && s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !name_ok {
                return bad(format!("schema name {:?} must be 1-64 characters of a-z, A-Z, 0-9, _ or -", s.name));
            }
            if !s.schema.is_object() {
                return bad(format!("schema {:?} must be a JSON object", s.name));
            }
        }
        if self.max_tokens == Some(0) {
            return bad("max_tokens must be at least 1".into());
        }
        if let Some(t) = self.temperature {
            if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
                return bad(format!("temperature {t} must be between 0 and 2"));
            }
        }
        Ok(())
    }
}

/// How a reply's JSON was asked for, in the end (after any fallback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatUsed {
    /// No JSON was asked for.
    Text,
    /// `response_format` with the JSON schema.
    JsonSchema,
    /// `response_format: json_object`, the schema in the prompt.
    JsonObject,
    /// The schema in the prompt only.
    Prompt,
}

/// A model's answer to one [`ChatRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatReply {
    /// What the model wrote.
    pub text: String,
    /// The JSON value found in `text` when the request carried a schema (after repair).
    pub json: Option<Value>,
    /// What it took to get `json` out of `text`.
    pub repairs: Vec<Repair>,
    /// How the JSON was asked for in the end.
    pub format: FormatUsed,
    /// Why the model stopped: `stop`, `length` (out of tokens)...
    pub finish_reason: Option<String>,
    /// The model that answered, as the server names it.
    pub model: String,
    /// What the call cost, retries and fallbacks included.
    pub usage: Usage,
}

impl ChatReply {
    /// True when the model ran out of tokens, so `text` (and maybe `json`) is cut short.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length") || self.repairs.contains(&Repair::Truncated)
    }
}

/// A reply whose JSON was deserialised into the caller's type.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonReply<T> {
    /// The value.
    pub value: T,
    /// The reply it came from (text, repairs, usage).
    pub reply: ChatReply,
}

/// The generic structured call: sends `req` (which should carry a schema) and deserialises the
/// reply's JSON into `T`.
///
/// Errors: whatever [`ChatModel::complete`] returns, [`ChatError::NoJson`] when no JSON can be
/// found or repaired in the text, [`ChatError::SchemaMismatch`] when it does not fit `T`; both
/// carry the call's usage, so failed attempts are still accounted for.
pub fn ask_json<T: DeserializeOwned, M: ChatModel + ?Sized>(model: &M, req: &ChatRequest) -> ChatResult<JsonReply<T>> {
    let mut reply = model.complete(req)?;
    if reply.json.is_none() {
        if let Some(r) = extract_json(&reply.text) {
            reply.json = Some(r.value);
            reply.repairs = r.repairs;
        }
    }
    let Some(json) = &reply.json else {
        return Err(ChatError::NoJson {
            finish_reason: reply.finish_reason.clone(),
            excerpt: excerpt(&reply.text),
            usage: reply.usage,
        });
    };
    match T::deserialize(json) {
        Ok(value) => Ok(JsonReply { value, reply }),
        Err(e) => Err(ChatError::SchemaMismatch {
            reason: e.to_string(),
            excerpt: excerpt(&json.to_string()),
            usage: reply.usage,
        }),
    }
}

/// The JSON found in a reply's text for a request with a schema, with its repairs.
pub(crate) fn reply_json(req: &ChatRequest, text: &str) -> (Option<Value>, Vec<Repair>) {
    if req.schema.is_none() {
        return (None, vec![]);
    }
    match extract_json(text) {
        Some(r) => (Some(r.value), r.repairs),
        None => (None, vec![]),
    }
}

/// The instruction that carries a schema in the prompt when `response_format` cannot.
pub(crate) fn schema_instruction(schema: &JsonSchema) -> String {
    format!(
        "Reply with one JSON value only - no prose, no Markdown code fences - that matches this JSON Schema \
         (named {}):\n{}",
        schema.name,
        ordered::to_string(&schema.schema)
    )
}

/// The first few hundred characters of a text, on one line, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(EXCERPT_CHARS).collect();
    if one_line.chars().count() > EXCERPT_CHARS {
        out.push_str("...");
    }
    if out.is_empty() {
        out.push_str("<empty>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req() -> ChatRequest {
        ChatRequest::new(vec![ChatMessage::system("be brief"), ChatMessage::user("hi")])
    }

    #[test]
    fn requests_are_validated_before_sending() {
        req().validate().unwrap();
        req().with_schema("memory_ops", json!({"type": "object"})).validate().unwrap();
        let err = |r: ChatRequest| r.validate().unwrap_err().to_string();
        assert!(err(ChatRequest::new(vec![])).contains("no messages"));
        assert!(err(ChatRequest::new(vec![ChatMessage::user("  ")])).contains("message 0 is empty"));
        assert!(err(req().with_schema("has space", json!({}))).contains("schema name"));
        assert!(err(req().with_schema("ok", json!([]))).contains("JSON object"));
        assert!(err(req().with_max_tokens(0)).contains("max_tokens"));
        assert!(err(req().with_temperature(f32::NAN)).contains("temperature"));
    }

    #[test]
    fn excerpts_are_short_single_lines() {
        let e = excerpt(&"word\n".repeat(500));
        assert!(e.ends_with("...") && !e.contains('\n') && e.chars().count() <= EXCERPT_CHARS + 3);
        assert_eq!(excerpt(""), "<empty>");
    }

    #[test]
    fn ask_json_repairs_and_types_the_reply() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Ops {
            ops: Vec<String>,
        }
        let model = ScriptedChat::new([
            ScriptedReply::text("Sure:\n```json\n{\"ops\": [\"a\", \"b\"],}\n```"),
            ScriptedReply::text("I cannot help with that."),
            ScriptedReply::text("{\"ops\": 3}"),
        ]);
        let r = req().with_schema("ops", json!({"type": "object"}));
        let got: JsonReply<Ops> = ask_json(&model, &r).unwrap();
        assert_eq!(got.value, Ops { ops: vec!["a".into(), "b".into()] });
        assert_eq!(got.reply.repairs, vec![Repair::CodeFence, Repair::TrailingCommas]);
        assert_eq!(got.reply.usage.calls, 1);
        match ask_json::<Ops, _>(&model, &r) {
            Err(ChatError::NoJson { excerpt, usage, .. }) => {
                assert!(excerpt.contains("cannot help"));
                assert_eq!(usage.calls, 1, "a failed parse still accounts for the call");
            }
            other => panic!("expected NoJson, got {other:?}"),
        }
        let dynamic: &dyn ChatModel = &model;
        match ask_json::<Ops, _>(dynamic, &r) {
            Err(ChatError::SchemaMismatch { reason, .. }) => assert!(reason.contains("invalid type"), "{reason}"),
            other => panic!("expected SchemaMismatch, got {other:?}"),
        }
    }
}
