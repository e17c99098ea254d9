//! The OpenAI-compatible chat client: `POST {base}/chat/completions` over blocking HTTP (ureq),
//! with JSON-schema replies and a plain-text fallback, per-request timeouts, retries with
//! exponential backoff (honouring `Retry-After`) and token accounting. Works with OpenAI, vLLM,
//! llama.cpp server and Ollama alike.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use super::error::is_retryable_status;
use super::ordered;
use super::settings::{LlmSettings, ResponseFormat};
use super::usage::{Usage, estimate_tokens};
use super::{
    ChatError, ChatModel, ChatReply, ChatRequest, ChatResult, FormatUsed, excerpt, reply_json, schema_instruction,
};

/// Largest reply body accepted: a chat completion is text, so a few MiB is already absurd.
const MAX_REPLY_BYTES: u64 = 16 * 1024 * 1024;

/// The full endpoint URL for an API root, so users can paste whatever their server's docs say.
///
/// - a URL already ending in `/chat/completions` is used as is;
/// - a URL with a path (`http://h:8000/v1`, `https://openrouter.ai/api/v1`,
///   `https://generativelanguage.googleapis.com/v1beta/openai`) is the API root and gets
///   `/chat/completions`;
/// - a bare host (`http://127.0.0.1:11434` for Ollama, `http://127.0.0.1:8080` for llama.cpp)
///   gets `/v1/chat/completions`, where all of those servers serve the OpenAI API.
///
/// Trailing slashes are ignored.
pub fn chat_completions_url(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        return base.to_owned();
    }
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    if after_scheme.contains('/') { format!("{base}/chat/completions") } else { format!("{base}/v1/chat/completions") }
}

/// Builds the chat model the settings describe, rejecting settings that can never work before
/// the first call rather than on it. Makes no request.
pub fn open_chat_model(settings: &LlmSettings) -> ChatResult<Arc<dyn ChatModel>> {
    Ok(Arc::new(OpenAiChat::new(settings)?))
}

/// Client for any OpenAI-compatible `/chat/completions` endpoint.
///
/// Per call: one request per attempt, each under `timeout_secs`; transient failures
/// (connection errors, timeouts, 408/409/425/429/5xx) are retried up to `max_retries` times
/// after `backoff_secs * 2^n` (with a little jitter, capped by `max_backoff_secs`) or the
/// server's `Retry-After`. When a request with `response_format` is answered 400 or 422, it is
/// sent once more without it, the schema described in the prompt instead; if that works the
/// client stops sending `response_format` for good.
pub struct OpenAiChat {
    agent: ureq::Agent,
    url: String,
    id: String,
    auth: Option<String>,
    settings: LlmSettings,
    /// Set once the server rejected `response_format` and accepted the plain request.
    format_rejected: AtomicBool,
}

impl fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("url", &self.url)
            .field("model", &self.settings.model)
            .field("auth", &self.auth.as_ref().map(|_| "<redacted>"))
            .field("format_rejected", &self.format_rejected.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Why one attempt failed, before it is turned into a [`ChatError`] with the call's usage.
#[derive(Debug)]
enum Failure {
    /// No connection was made (refused, unknown host): nothing was sent; worth another attempt.
    Unreached(String),
    /// Connection-level trouble after the request went out, worth another attempt.
    Transport(String),
    /// Trouble that will not go away by retrying (bad URL, reply too large, TLS).
    Fatal(String),
    /// No complete answer in time.
    Timeout,
    /// A non-2xx answer.
    Status { status: u16, body_excerpt: String, retry_after: Option<Duration> },
}

impl Failure {
    fn retryable(&self) -> bool {
        match self {
            Failure::Unreached(_) | Failure::Transport(_) | Failure::Timeout => true,
            Failure::Fatal(_) => false,
            Failure::Status { status, .. } => is_retryable_status(*status),
        }
    }

    fn from_ureq(e: ureq::Error) -> Self {
        match e {
            ureq::Error::Timeout(_) => Failure::Timeout,
            ureq::Error::Io(io)
                if matches!(io.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock) =>
            {
                Failure::Timeout
            }
            ureq::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::AddrNotAvailable
                        | std::io::ErrorKind::HostUnreachable
                        | std::io::ErrorKind::NetworkUnreachable
                ) =>
            {
                Failure::Unreached(io.to_string())
            }
            e @ (ureq::Error::ConnectionFailed | ureq::Error::HostNotFound) => Failure::Unreached(e.to_string()),
            e @ (ureq::Error::Io(_) | ureq::Error::Protocol(_)) => Failure::Transport(e.to_string()),
            other => Failure::Fatal(other.to_string()),
        }
    }
}

impl OpenAiChat {
    /// Builds the client without touching the network; settings that can never work are
    /// rejected here, naming the field.
    pub fn new(settings: &LlmSettings) -> ChatResult<Self> {
        settings.validate()?;
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(settings.timeout()))
            .http_status_as_error(false)
            .build()
            .new_agent();
        Ok(Self {
            agent,
            url: chat_completions_url(&settings.base_url),
            id: format!("openai:{}", settings.model.trim()),
            auth: settings.resolved_api_key().map(|k| format!("Bearer {}", k.trim())),
            settings: settings.clone(),
            format_rejected: AtomicBool::new(false),
        })
    }

    /// Full endpoint URL, for logs and error messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the server turned `response_format` down and the client now describes schemas
    /// in the prompt instead.
    pub fn response_format_rejected(&self) -> bool {
        self.format_rejected.load(Ordering::Acquire)
    }

    /// How a request asks for JSON on its first attempt.
    fn initial_format(&self, req: &ChatRequest) -> FormatUsed {
        if req.schema.is_none() {
            return FormatUsed::Text;
        }
        if self.response_format_rejected() {
            return FormatUsed::Prompt;
        }
        match self.settings.response_format {
            ResponseFormat::JsonSchema => FormatUsed::JsonSchema,
            ResponseFormat::JsonObject => FormatUsed::JsonObject,
            ResponseFormat::None => FormatUsed::Prompt,
        }
    }

    /// The request body for one format: the schema goes in `response_format`, or into the
    /// first system message (one is added if there is none, since some chat templates refuse a
    /// system message anywhere but first).
    fn body(&self, req: &ChatRequest, format: FormatUsed) -> Value {
        let mut messages: Vec<Value> =
            req.messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect();
        if let (Some(schema), FormatUsed::JsonObject | FormatUsed::Prompt) = (&req.schema, format) {
            let instruction = schema_instruction(schema);
            match req.messages.first().filter(|m| m.role == super::ChatRole::System) {
                Some(first) => messages[0]["content"] = Value::String(format!("{}\n\n{instruction}", first.content)),
                None => messages.insert(0, json!({"role": "system", "content": instruction})),
            }
        }
        let mut body = json!({
            "model": self.settings.model.trim(),
            "messages": messages,
            "temperature": req.temperature.unwrap_or(self.settings.temperature),
            "max_tokens": req.max_tokens.unwrap_or(self.settings.max_tokens),
            "stream": false,
        });
        match (&req.schema, format) {
            (Some(s), FormatUsed::JsonSchema) => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": s.name, "schema": s.schema, "strict": s.strict},
                });
            }
            (Some(_), FormatUsed::JsonObject) => body["response_format"] = json!({"type": "json_object"}),
            _ => {}
        }
        body
    }

    /// Sends one body, retrying transient failures until `deadline` (the request's time limit);
    /// counts every attempt in `usage`, with the prompt tokens of each one that reached the
    /// server and failed (estimated: a failed call has no usage to read, yet it was paid for).
    fn send(&self, body: &Value, usage: &mut Usage, deadline: Option<Instant>) -> Result<Vec<u8>, Failure> {
        let text = ordered::to_string(body);
        let mut attempt = 0u32;
        loop {
            let timeout = match deadline {
                None => self.settings.timeout(),
                Some(d) => match d.saturating_duration_since(Instant::now()) {
                    left if left.is_zero() => return Err(Failure::Timeout),
                    left => left.min(self.settings.timeout()),
                },
            };
            usage.calls += 1;
            if attempt > 0 {
                usage.retries += 1;
            }
            let failure = match self.send_once(&text, timeout) {
                Ok(bytes) => return Ok(bytes),
                Err(f) => f,
            };
            if !matches!(failure, Failure::Unreached(_)) {
                usage.prompt_tokens += prompt_estimate(body);
                usage.estimated_calls += 1;
            }
            if !failure.retryable() || attempt >= self.settings.max_retries {
                return Err(failure);
            }
            let retry_after = match &failure {
                Failure::Status { retry_after, .. } => *retry_after,
                _ => None,
            };
            let wait = self.delay(attempt, retry_after);
            if deadline.is_some_and(|d| Instant::now() + wait >= d) {
                return Err(failure);
            }
            tracing::debug!(attempt, failure = ?failure, wait_ms = wait.as_millis() as u64, "chat request failed; retrying");
            std::thread::sleep(wait);
            attempt += 1;
        }
    }

    fn send_once(&self, body: &str, timeout: Duration) -> Result<Vec<u8>, Failure> {
        let mut req = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Accept", "application/json")
            .header("Content-Type", "application/json");
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth);
        }
        let mut resp = req.send(body).map_err(Failure::from_ureq)?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let bytes = resp.body_mut().with_config().limit(MAX_REPLY_BYTES).read_to_vec().map_err(Failure::from_ureq)?;
        if !(200..300).contains(&status) {
            return Err(Failure::Status {
                status,
                body_excerpt: excerpt(&String::from_utf8_lossy(&bytes)),
                retry_after,
            });
        }
        Ok(bytes)
    }

    /// Wait before retry number `attempt + 1`: the server's `Retry-After` when it sent one,
    /// else exponential backoff with up to 20% jitter (so clients that failed together do not
    /// retry together); both capped by `max_backoff_secs`.
    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let max = self.settings.max_backoff_secs;
        if let Some(ra) = retry_after {
            return ra.min(Duration::from_secs_f64(max));
        }
        let base = self.settings.backoff_secs * 2f64.powi(attempt.min(30) as i32);
        let unit = RandomState::new().hash_one(attempt) as f64 / u64::MAX as f64;
        Duration::from_secs_f64((base * (0.8 + 0.2 * unit)).min(max))
    }

    fn error(&self, f: Failure, usage: Usage) -> ChatError {
        let url = self.url.clone();
        match f {
            Failure::Unreached(reason) | Failure::Transport(reason) | Failure::Fatal(reason) => {
                ChatError::Transport { url, reason, usage }
            }
            Failure::Timeout => ChatError::Timeout { url, timeout: self.settings.timeout(), usage },
            Failure::Status { status, body_excerpt, .. } => ChatError::HttpStatus { url, status, body_excerpt, usage },
        }
    }

    /// Turns a 2xx body into a reply: text, JSON (repaired), finish reason and token counts
    /// (estimated from what was sent and received when the server reports none).
    fn reply(
        &self,
        req: &ChatRequest,
        sent: &Value,
        bytes: &[u8],
        format: FormatUsed,
        mut usage: Usage,
    ) -> ChatResult<ChatReply> {
        let bad = |reason: String, usage: Usage| ChatError::BadResponse { url: self.url.clone(), reason, usage };
        let body: Completion = match serde_json::from_slice(bytes) {
            Ok(b) => b,
            Err(e) => {
                let text = String::from_utf8_lossy(bytes);
                return Err(bad(
                    format!("not a chat completion JSON object ({e}); body starts: {}", excerpt(&text)),
                    usage,
                ));
            }
        };
        if let Some(err) = &body.error {
            return Err(bad(format!("the server reported an error: {}", excerpt(&err.to_string())), usage));
        }
        let Some(choice) = body.choices.into_iter().next() else {
            return Err(bad("the reply has no choices".into(), usage));
        };
        let content = choice.message.as_ref().and_then(|m| m.content.as_ref()).map(content_text).or(choice.text);
        let text = match (content, choice.message.and_then(|m| m.refusal)) {
            (Some(t), _) if !t.is_empty() => t,
            (_, Some(refusal)) => return Err(bad(format!("the model refused: {}", excerpt(&refusal)), usage)),
            (t, None) => t.unwrap_or_default(),
        };
        match body.usage {
            Some(ApiUsage { prompt_tokens: Some(p), completion_tokens: Some(c) }) => {
                usage.prompt_tokens += p;
                usage.completion_tokens += c;
            }
            _ => {
                usage.prompt_tokens += prompt_estimate(sent);
                usage.completion_tokens += estimate_tokens(&text);
                usage.estimated_calls += 1;
            }
        }
        let (json, repairs) = reply_json(req, &text);
        Ok(ChatReply {
            json,
            repairs,
            format,
            finish_reason: choice.finish_reason,
            model: body.model.unwrap_or_else(|| self.settings.model.trim().to_owned()),
            usage,
            text,
        })
    }
}

impl ChatModel for OpenAiChat {
    fn id(&self) -> &str {
        &self.id
    }

    #[tracing::instrument(name = "chat", level = "debug", skip_all, fields(model = %self.id, messages = req.messages.len()))]
    fn complete(&self, req: &ChatRequest) -> ChatResult<ChatReply> {
        req.validate()?;
        let started = Instant::now();
        let deadline = req.time_limit.map(|limit| started + limit);
        let mut usage = Usage::default();
        let mut format = self.initial_format(req);
        let mut fell_back = false;
        loop {
            let body = self.body(req, format);
            let sent = self.send(&body, &mut usage, deadline);
            usage.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            match sent {
                Ok(bytes) => {
                    if fell_back {
                        self.format_rejected.store(true, Ordering::Release);
                    }
                    return self.reply(req, &body, &bytes, format, usage);
                }
                Err(Failure::Status { status: 400 | 422, .. })
                    if matches!(format, FormatUsed::JsonSchema | FormatUsed::JsonObject) =>
                {
                    tracing::debug!(
                        "the server refused the response format; asking again with the schema in the prompt"
                    );
                    format = FormatUsed::Prompt;
                    fell_back = true;
                }
                Err(f) => return Err(self.error(f, usage)),
            }
        }
    }
}

/// Tokens of a request body's messages, about four characters a token plus a few per message:
/// what a server that reports no usage (or a call that failed) is taken to have been sent.
fn prompt_estimate(body: &Value) -> u64 {
    body["messages"]
        .as_array()
        .map(|ms| ms.iter().map(|m| estimate_tokens(m["content"].as_str().unwrap_or("")) + 4).sum())
        .unwrap_or(0)
}

/// `Retry-After-Ms` (milliseconds, sent by some OpenAI-compatible gateways) or `Retry-After`
/// in seconds; the HTTP-date form is ignored in favour of the client's own backoff.
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(3600.0)));
    }
    number("retry-after").map(|s| Duration::from_secs_f64(s.min(3600.0)))
}

/// Message content as text: a string, or the text parts of a content array.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<ApiUsage>,
    model: Option<String>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<ChoiceMessage>,
    /// Legacy completions-style servers put the text here.
    text: Option<String>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<Value>,
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct ApiUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LlmSettings {
        LlmSettings { model: "m".into(), base_url: "http://127.0.0.1:9/v1".into(), ..LlmSettings::default() }
    }

    #[test]
    fn url_normalisation() {
        for (base, url) in [
            ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
            ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
            ("http://h:11434", "http://h:11434/v1/chat/completions"),
            ("http://h:8080/", "http://h:8080/v1/chat/completions"),
            ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
            ("http://h/v1/chat/completions", "http://h/v1/chat/completions"),
            ("http://h/v1/chat/completions/", "http://h/v1/chat/completions"),
            (" https://api.openai.com/v1 ", "https://api.openai.com/v1/chat/completions"),
        ] {
            assert_eq!(chat_completions_url(base), url, "{base}");
        }
    }

    #[test]
    fn backoff_grows_is_jittered_and_capped() {
        let s = LlmSettings { backoff_secs: 1.0, max_backoff_secs: 5.0, ..settings() };
        let c = OpenAiChat::new(&s).unwrap();
        for attempt in 0..3 {
            let d = c.delay(attempt, None).as_secs_f64();
            let base = 2f64.powi(attempt as i32);
            assert!((0.8 * base..=base).contains(&d), "attempt {attempt}: {d}");
        }
        assert_eq!(c.delay(10, None), Duration::from_secs(5));
        assert_eq!(c.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(c.delay(0, Some(Duration::from_secs(60))), Duration::from_secs(5), "Retry-After is capped");
    }

    #[test]
    fn retry_after_headers() {
        let mut h = ureq::http::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = ureq::http::HeaderMap::new();
        h.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn content_parts_are_joined() {
        assert_eq!(content_text(&json!("hi")), "hi");
        assert_eq!(content_text(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])), "ab");
        assert_eq!(content_text(&json!(null)), "");
    }

    #[test]
    fn debug_redacts_the_key() {
        let c = OpenAiChat::new(&LlmSettings { api_key: Some("sk-secret".into()), ..settings() }).unwrap();
        assert!(!format!("{c:?}").contains("sk-secret"));
        assert_eq!(c.id(), "openai:m");
    }

    #[test]
    fn schema_goes_in_response_format_or_the_system_prompt() {
        let c = OpenAiChat::new(&settings()).unwrap();
        let req =
            ChatRequest::new(vec![super::super::ChatMessage::system("rules"), super::super::ChatMessage::user("x")])
                .with_schema("ops", json!({"type": "object"}));
        let b = c.body(&req, FormatUsed::JsonSchema);
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert_eq!(b["response_format"]["json_schema"]["name"], "ops");
        assert_eq!(b["messages"][0]["content"], "rules");
        let b = c.body(&req, FormatUsed::Prompt);
        assert!(b.get("response_format").is_none());
        assert!(b["messages"][0]["content"].as_str().unwrap().starts_with("rules\n\nReply with one JSON value"));
        assert_eq!(b["messages"].as_array().unwrap().len(), 2);
        let b = c.body(&req, FormatUsed::JsonObject);
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        let no_system = ChatRequest::new(vec![super::super::ChatMessage::user("x")]).with_schema("ops", json!({}));
        let b = c.body(&no_system, FormatUsed::Prompt);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(b["messages"].as_array().unwrap().len(), 2);
        assert_eq!((b["temperature"].as_f64(), b["max_tokens"].as_u64()), (Some(0.0), Some(2048)));
    }
}
