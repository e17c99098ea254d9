//! The one error type of this crate, so callers can tell a missing model from a dead server
//! and print a message that says what to do next.

use std::path::PathBuf;

/// Everything that can go wrong while opening or running an embedder.
///
/// Variants carry the path, URL or numbers involved so the message alone is enough to act
/// on; the enum is non-exhaustive so new failure modes do not break downstream matches.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The model directory lacks `config.json`, `model.safetensors` or `tokenizer.json`.
    #[error(
        "no model at {dir}: run `mnemo model fetch` (or scripts/fetch-model.sh) or set MNEMO_MODEL_DIR to a directory with config.json, model.safetensors and tokenizer.json"
    )]
    ModelNotFound {
        /// Directory that was searched.
        dir: PathBuf,
    },

    /// A model file exists but could not be parsed or turned into a model.
    #[error("cannot load {path}: {reason} (delete the model directory and fetch it again)")]
    Load {
        /// File that failed to load.
        path: PathBuf,
        /// What the loader complained about.
        reason: String,
    },

    /// The HTTP request could not be completed (connection refused, DNS, TLS, timeout...).
    #[error("request to {url} failed: {reason} (check the base URL and that the server is up)")]
    Http {
        /// Full URL that was requested.
        url: String,
        /// Transport-level reason.
        reason: String,
    },

    /// The server answered with a non-2xx status.
    #[error("{url} answered HTTP {status}: {body_excerpt} (check the API key, model name and quota)")]
    HttpStatus {
        /// Full URL that was requested.
        url: String,
        /// HTTP status code received.
        status: u16,
        /// The first few hundred characters of the response body.
        body_excerpt: String,
    },

    /// The server answered 2xx but the payload is not a usable embeddings reply.
    #[error("unexpected reply from {url}: {reason} (is this an OpenAI-compatible /embeddings endpoint?)")]
    BadResponse {
        /// Full URL that was requested.
        url: String,
        /// What was wrong with the reply.
        reason: String,
    },

    /// A vector's length differs from the embedder's dimension.
    #[error(
        "embedding dimension mismatch: expected {expected}, got {got} (fix the configured dimension or re-embed the store)"
    )]
    DimensionMismatch {
        /// Dimension the embedder promised.
        expected: usize,
        /// Dimension actually produced.
        got: usize,
    },

    /// Tokenisation or the forward pass failed.
    #[error("inference failed: {0}")]
    Inference(String),

    /// The requested embedder needs a cargo feature this build lacks.
    #[error(
        "this build of mnemo lacks the `{0}` feature: rebuild with `--features {0}` or choose another embedder kind"
    )]
    FeatureDisabled(&'static str),

    /// A setting has a value that can never work.
    #[error("invalid setting `{field}`: {reason}")]
    InvalidSettings {
        /// Name of the offending setting.
        field: &'static str,
        /// Why it is rejected and what is accepted.
        reason: String,
    },

    /// Downloading or unpacking the model failed.
    #[error("model fetch failed: {0}")]
    Fetch(String),

    /// A filesystem operation failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// Path being read or written.
        path: PathBuf,
        /// Underlying OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ModelError {
    /// Builds an [`ModelError::Io`] from a path-like value, sparing call sites the boilerplate.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }
}

/// Result alias used throughout the crate so signatures stay short.
pub type Result<T> = std::result::Result<T, ModelError>;
