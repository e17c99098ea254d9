//! LLM settings: the `[llm]` table of `mnemo.toml` and the `MNEMO_LLM_*` environment
//! variables, validated with errors that name the offending field.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::ChatError;

/// How the client asks for JSON when a request carries a schema.
///
/// Servers differ: OpenAI and vLLM honour `json_schema`; some llama.cpp and Ollama versions
/// accept only `json_object` or reject `response_format` altogether. Whatever is chosen, a
/// server that answers 400/422 to it is asked again without it (the schema then travels in the
/// prompt and the JSON is repaired from plain text), and the client remembers not to send it
/// again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// `response_format: {type: json_schema, json_schema: {name, schema, strict}}`.
    #[default]
    JsonSchema,
    /// `response_format: {type: json_object}`, the schema described in the prompt.
    JsonObject,
    /// No `response_format`: the schema is described in the prompt and JSON repaired from text.
    None,
}

impl ResponseFormat {
    /// Every accepted spelling, for help texts and error messages.
    pub const CHOICES: [&'static str; 3] = ["json_schema", "json_object", "none"];

    /// The config-file spelling, so `Display` and `FromStr` round-trip.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObject => "json_object",
            Self::None => "none",
        }
    }
}

impl fmt::Display for ResponseFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResponseFormat {
    type Err = ChatError;

    fn from_str(s: &str) -> Result<Self, ChatError> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "json_schema" => Ok(Self::JsonSchema),
            "json_object" => Ok(Self::JsonObject),
            "none" | "off" | "text" => Ok(Self::None),
            other => Err(ChatError::InvalidSettings {
                field: "response_format",
                reason: format!("unknown response format `{other}`; expected one of: {}", Self::CHOICES.join(", ")),
            }),
        }
    }
}

/// The environment variables [`LlmSettings::apply_env`] reads, each with the field it sets;
/// public so the engine's config loader can list them in help and `mnemo config`.
pub const LLM_ENV_VARS: &[(&str, &str)] = &[
    ("MNEMO_LLM_BASE_URL", "base_url"),
    ("MNEMO_LLM_MODEL", "model"),
    ("MNEMO_LLM_API_KEY", "api_key"),
    ("MNEMO_LLM_TIMEOUT_SECS", "timeout_secs"),
    ("MNEMO_LLM_MAX_RETRIES", "max_retries"),
    ("MNEMO_LLM_BACKOFF_SECS", "backoff_secs"),
    ("MNEMO_LLM_MAX_BACKOFF_SECS", "max_backoff_secs"),
    ("MNEMO_LLM_TEMPERATURE", "temperature"),
    ("MNEMO_LLM_MAX_TOKENS", "max_tokens"),
    ("MNEMO_LLM_RESPONSE_FORMAT", "response_format"),
];

/// The `[llm]` section of mnemo's config: which OpenAI-compatible chat model extraction,
/// memos and summaries use, and how patiently to talk to it. Every field has a default, so
/// only `model` (and `base_url` for anything but OpenAI) must be given.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// API root: `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1` (vLLM),
    /// `http://127.0.0.1:8080` (llama.cpp server), `http://127.0.0.1:11434` (Ollama). See
    /// [`chat_completions_url`](crate::chat_completions_url) for how it is completed.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Bearer token; when unset and the base URL is api.openai.com, `OPENAI_API_KEY` is used.
    pub api_key: Option<String>,
    /// Deadline of one HTTP request, in seconds.
    pub timeout_secs: f64,
    /// Extra attempts after a transient failure (connection error, timeout, 408/409/425/429/5xx).
    pub max_retries: u32,
    /// Wait before the first retry, in seconds; doubled for each further one.
    pub backoff_secs: f64,
    /// Longest wait between attempts, in seconds; also caps a server's `Retry-After`.
    pub max_backoff_secs: f64,
    /// Sampling temperature when a request does not set one; 0 keeps extraction repeatable.
    pub temperature: f32,
    /// Completion token limit when a request does not set one.
    pub max_tokens: u32,
    /// How JSON is asked for (see [`ResponseFormat`]).
    pub response_format: ResponseFormat,
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            model: String::new(),
            api_key: None,
            timeout_secs: 60.0,
            max_retries: 2,
            backoff_secs: 0.5,
            max_backoff_secs: 8.0,
            temperature: 0.0,
            max_tokens: 2048,
            response_format: ResponseFormat::JsonSchema,
        }
    }
}

/// Hand-written so an API key never reaches logs through `{:?}`.
impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout_secs", &self.timeout_secs)
            .field("max_retries", &self.max_retries)
            .field("backoff_secs", &self.backoff_secs)
            .field("max_backoff_secs", &self.max_backoff_secs)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("response_format", &self.response_format)
            .finish()
    }
}

impl LlmSettings {
    /// Defaults overlaid with the process environment (see [`LLM_ENV_VARS`]).
    pub fn from_env() -> Result<Self, ChatError> {
        let mut s = Self::default();
        s.apply_env(|name| std::env::var(name).ok())?;
        Ok(s)
    }

    /// Overlays `MNEMO_LLM_*` variables read through `get` (empty values count as unset), so
    /// the precedence is testable without touching the process environment. A value that does
    /// not parse is an error naming the variable; nothing is changed then.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ChatError> {
        let mut next = self.clone();
        for (var, field) in LLM_ENV_VARS {
            let Some(raw) = get(var).filter(|v| !v.trim().is_empty()) else { continue };
            let raw = raw.trim();
            let bad = |what: &str| ChatError::InvalidSettings { field, reason: format!("{var}={raw:?} is not {what}") };
            match *field {
                "base_url" => next.base_url = raw.to_owned(),
                "model" => next.model = raw.to_owned(),
                "api_key" => next.api_key = Some(raw.to_owned()),
                "timeout_secs" => next.timeout_secs = raw.parse().map_err(|_| bad("a number of seconds"))?,
                "max_retries" => next.max_retries = raw.parse().map_err(|_| bad("a whole number"))?,
                "backoff_secs" => next.backoff_secs = raw.parse().map_err(|_| bad("a number of seconds"))?,
                "max_backoff_secs" => next.max_backoff_secs = raw.parse().map_err(|_| bad("a number of seconds"))?,
                "temperature" => next.temperature = raw.parse().map_err(|_| bad("a number"))?,
                "max_tokens" => next.max_tokens = raw.parse().map_err(|_| bad("a whole number"))?,
                "response_format" => next.response_format = raw.parse()?,
                _ => unreachable!("every LLM_ENV_VARS field is handled"),
            }
        }
        *self = next;
        Ok(())
    }

    /// Rejects values that can never work, naming the field and what is accepted.
    pub fn validate(&self) -> Result<(), ChatError> {
        let bad = |field: &'static str, reason: String| Err(ChatError::InvalidSettings { field, reason });
        let base = self.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://")) || base.len() <= "https://".len() {
            return bad("base_url", format!("`{base}` must be an http:// or https:// URL (set MNEMO_LLM_BASE_URL)"));
        }
        if self.model.trim().is_empty() {
            return bad(
                "model",
                "must name the chat model, e.g. gpt-4o-mini or qwen2.5:7b (set MNEMO_LLM_MODEL)".into(),
            );
        }
        if !(self.timeout_secs.is_finite() && self.timeout_secs > 0.0 && self.timeout_secs <= 3600.0) {
            return bad("timeout_secs", format!("{} must be more than 0 and at most 3600 seconds", self.timeout_secs));
        }
        if self.max_retries > 10 {
            return bad("max_retries", format!("{} is more than the limit of 10", self.max_retries));
        }
        if !(self.backoff_secs.is_finite() && (0.0..=600.0).contains(&self.backoff_secs)) {
            return bad("backoff_secs", format!("{} must be between 0 and 600 seconds", self.backoff_secs));
        }
        if !(self.max_backoff_secs.is_finite() && (self.backoff_secs..=600.0).contains(&self.max_backoff_secs)) {
            return bad(
                "max_backoff_secs",
                format!(
                    "{} must be at least backoff_secs ({}) and at most 600 seconds",
                    self.max_backoff_secs, self.backoff_secs
                ),
            );
        }
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return bad("temperature", format!("{} must be between 0 and 2", self.temperature));
        }
        if self.max_tokens == 0 {
            return bad("max_tokens", "must be at least 1".into());
        }
        Ok(())
    }

    /// The per-request deadline.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs.clamp(0.0, 3600.0))
    }

    /// The key actually sent: the configured one, else `OPENAI_API_KEY` for OpenAI's own
    /// endpoint only, so that key never leaks to a third-party server.
    pub fn resolved_api_key(&self) -> Option<String> {
        self.api_key.clone().filter(|k| !k.trim().is_empty()).or_else(|| {
            let official = self.base_url.trim().starts_with("https://api.openai.com/");
            official.then(|| std::env::var("OPENAI_API_KEY").ok()).flatten().filter(|k| !k.trim().is_empty())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn env_overrides_and_names_bad_variables() {
        let mut s = LlmSettings::default();
        s.apply_env(env(&[
            ("MNEMO_LLM_BASE_URL", "http://127.0.0.1:11434"),
            ("MNEMO_LLM_MODEL", "qwen2.5:7b"),
            ("MNEMO_LLM_API_KEY", "sk-x"),
            ("MNEMO_LLM_TIMEOUT_SECS", "2.5"),
            ("MNEMO_LLM_MAX_RETRIES", "4"),
            ("MNEMO_LLM_TEMPERATURE", ""),
            ("MNEMO_LLM_RESPONSE_FORMAT", "json-object"),
        ]))
        .unwrap();
        assert_eq!(s.base_url, "http://127.0.0.1:11434");
        assert_eq!(s.model, "qwen2.5:7b");
        assert_eq!(s.api_key.as_deref(), Some("sk-x"));
        assert_eq!((s.timeout_secs, s.max_retries, s.temperature), (2.5, 4, 0.0));
        assert_eq!(s.response_format, ResponseFormat::JsonObject);
        s.validate().unwrap();

        let before = s.clone();
        let err = s.apply_env(env(&[("MNEMO_LLM_MODEL", "other"), ("MNEMO_LLM_MAX_TOKENS", "lots")])).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("max_tokens") && msg.contains("MNEMO_LLM_MAX_TOKENS") && msg.contains("lots"), "{msg}");
        assert_eq!(s, before, "a bad variable changes nothing");
        let err = s.apply_env(env(&[("MNEMO_LLM_RESPONSE_FORMAT", "xml")])).unwrap_err().to_string();
        assert!(err.contains("json_schema, json_object, none"), "{err}");
    }

    #[test]
    fn validation_names_the_field() {
        let ok = LlmSettings { model: "m".into(), ..LlmSettings::default() };
        ok.validate().unwrap();
        let field = |s: LlmSettings| match s.validate() {
            Err(ChatError::InvalidSettings { field, .. }) => field,
            other => panic!("expected InvalidSettings, got {other:?}"),
        };
        assert_eq!(field(LlmSettings::default()), "model");
        assert_eq!(field(LlmSettings { base_url: "localhost:8080".into(), ..ok.clone() }), "base_url");
        assert_eq!(field(LlmSettings { base_url: "http://".into(), ..ok.clone() }), "base_url");
        assert_eq!(field(LlmSettings { timeout_secs: 0.0, ..ok.clone() }), "timeout_secs");
        assert_eq!(field(LlmSettings { timeout_secs: f64::NAN, ..ok.clone() }), "timeout_secs");
        assert_eq!(field(LlmSettings { max_retries: 11, ..ok.clone() }), "max_retries");
        assert_eq!(field(LlmSettings { backoff_secs: -1.0, ..ok.clone() }), "backoff_secs");
        assert_eq!(field(LlmSettings { max_backoff_secs: 0.1, ..ok.clone() }), "max_backoff_secs");
        assert_eq!(field(LlmSettings { temperature: 3.0, ..ok.clone() }), "temperature");
        assert_eq!(field(LlmSettings { max_tokens: 0, ..ok }), "max_tokens");
    }

    #[test]
    fn debug_redacts_the_key() {
        let s = LlmSettings { api_key: Some("sk-secret".into()), ..LlmSettings::default() };
        assert!(!format!("{s:?}").contains("sk-secret"));
    }

    #[test]
    fn format_spellings_round_trip() {
        for f in [ResponseFormat::JsonSchema, ResponseFormat::JsonObject, ResponseFormat::None] {
            assert_eq!(f.as_str().parse::<ResponseFormat>().unwrap(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
        }
    }
}
