//! Why a chat completion failed, with the URL, status and cost involved, so the caller can log
//! one line that says what to fix and still account for what the failed attempts spent.

use std::time::Duration;

use super::usage::Usage;

/// Everything that can go wrong while configuring or calling a chat model.
///
/// Variants for failed calls carry the [`Usage`] the attempts cost (calls, retries, time), so a
/// failure still shows up in cost accounting. The enum is non-exhaustive so new failure modes
/// do not break downstream matches.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChatError {
    /// A setting has a value that can never work.
    #[error("invalid LLM setting `{field}`: {reason}")]
    InvalidSettings {
        /// Name of the offending setting (as in `mnemo.toml`'s `[llm]` table).
        field: &'static str,
        /// Why it is rejected and what is accepted.
        reason: String,
    },

    /// The request itself is unusable (no messages, a bad schema...); nothing was sent.
    #[error("invalid chat request: {0}")]
    InvalidRequest(String),

    /// The server could not be reached or the connection broke (refused, DNS, TLS, reset).
    #[error(
        "request to {url} failed after {} attempt(s): {reason} (check MNEMO_LLM_BASE_URL and that the server is up)",
        usage.calls
    )]
    Transport {
        /// Full URL that was requested.
        url: String,
        /// Transport-level reason of the last attempt.
        reason: String,
        /// What the attempts cost.
        usage: Usage,
    },

    /// No complete reply arrived within the per-request timeout.
    #[error(
        "{url} did not answer within {timeout:?} ({} attempt(s)); raise MNEMO_LLM_TIMEOUT_SECS or use a faster model",
        usage.calls
    )]
    Timeout {
        /// Full URL that was requested.
        url: String,
        /// The per-request deadline.
        timeout: Duration,
        /// What the attempts cost.
        usage: Usage,
    },

    /// The server answered with a non-2xx status (after retries, when it was retryable).
    #[error(
        "{url} answered HTTP {status} after {} attempt(s): {body_excerpt} (check the API key, model name and quota)",
        usage.calls
    )]
    HttpStatus {
        /// Full URL that was requested.
        url: String,
        /// HTTP status code of the last attempt.
        status: u16,
        /// The first few hundred characters of the response body.
        body_excerpt: String,
        /// What the attempts cost.
        usage: Usage,
    },

    /// The server answered 2xx but not with a usable chat completion.
    #[error("unexpected reply from {url}: {reason} (is this an OpenAI-compatible /chat/completions endpoint?)")]
    BadResponse {
        /// Full URL that was requested.
        url: String,
        /// What was wrong with the reply.
        reason: String,
        /// What the call cost.
        usage: Usage,
    },

    /// JSON was asked for, but none could be found or repaired in the model's text.
    #[error(
        "the model's reply holds no usable JSON{}: {excerpt}",
        finish_reason.as_deref().map(|r| format!(" (finish_reason {r})")).unwrap_or_default()
    )]
    NoJson {
        /// Why the model stopped, e.g. `length` when it ran out of tokens.
        finish_reason: Option<String>,
        /// The start of the text it produced.
        excerpt: String,
        /// What the call cost.
        usage: Usage,
    },

    /// The reply's JSON does not have the shape the caller asked for.
    #[error("the model's JSON does not match the expected shape: {reason}; reply starts: {excerpt}")]
    SchemaMismatch {
        /// What the deserializer complained about.
        reason: String,
        /// The start of the JSON text.
        excerpt: String,
        /// What the call cost.
        usage: Usage,
    },
}

impl ChatError {
    /// What the failed attempts cost; empty for errors raised before anything was sent.
    pub fn usage(&self) -> Usage {
        match self {
            Self::InvalidSettings { .. } | Self::InvalidRequest(_) => Usage::default(),
            Self::Transport { usage, .. }
            | Self::Timeout { usage, .. }
            | Self::HttpStatus { usage, .. }
            | Self::BadResponse { usage, .. }
            | Self::NoJson { usage, .. }
            | Self::SchemaMismatch { usage, .. } => *usage,
        }
    }

    /// Whether trying the same work again later may succeed (a server down, overloaded or
    /// rate-limiting; a model that produced bad JSON this time), as opposed to a configuration
    /// or request that will fail the same way every time.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::InvalidSettings { .. } | Self::InvalidRequest(_) => false,
            Self::HttpStatus { status, .. } => is_retryable_status(*status),
            Self::Transport { .. }
            | Self::Timeout { .. }
            | Self::BadResponse { .. }
            | Self::NoJson { .. }
            | Self::SchemaMismatch { .. } => true,
        }
    }
}

/// Statuses worth retrying: timeouts, conflicts, rate limits and server-side failures, but not
/// "not implemented" or "HTTP version not supported", which will never change on their own.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || ((500..600).contains(&status) && !matches!(status, 501 | 505))
}

/// Result alias for chat calls.
pub type ChatResult<T> = std::result::Result<T, ChatError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        for s in [408, 409, 425, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 422, 501, 505] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn messages_name_url_attempts_and_remedy() {
        let usage = Usage { calls: 3, retries: 2, ..Usage::default() };
        let e = ChatError::HttpStatus {
            url: "http://h/v1/chat/completions".into(),
            status: 503,
            body_excerpt: "busy".into(),
            usage,
        };
        let msg = e.to_string();
        assert!(
            msg.contains("503") && msg.contains("3 attempt") && msg.contains("http://h/v1") && msg.contains("busy"),
            "{msg}"
        );
        assert_eq!(e.usage().calls, 3);
        assert!(e.is_transient());
        let e = ChatError::NoJson { finish_reason: Some("length".into()), excerpt: "{\"ops\": [".into(), usage };
        assert!(e.to_string().contains("finish_reason length"), "{e}");
        let e = ChatError::InvalidSettings { field: "model", reason: "empty".into() };
        assert!(!e.is_transient() && e.usage().is_empty());
    }
}
