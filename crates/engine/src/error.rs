//! The engine's error: one enum over every layer, each variant saying what to fix.

use std::path::PathBuf;

/// Everything `Memory` operations can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request was invalid (bad id, missing scope, bad message); nothing was written.
    #[error("invalid request: {0}")]
    Invalid(#[from] mnemo_core::CoreError),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] mnemo_store::StoreError),
    /// The embedding model failed to load or run.
    #[error(transparent)]
    Model(#[from] mnemo_models::ModelError),
    /// The configuration could not be read or is invalid.
    #[error("configuration error in {source_name}: {reason}")]
    Config {
        /// Where the bad value came from: a file path, an environment variable.
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// A memory id does not exist in this tenant.
    #[error("memory {id} not found for tenant {tenant}")]
    NotFound {
        /// Tenant searched.
        tenant: String,
        /// Id searched.
        id: String,
    },
    /// The input was refused by the rules every memory passes (too short or long, PII); nothing
    /// was written.
    #[error("{what} rejected: {reason}")]
    Rejected {
        /// What was refused, e.g. "memo".
        what: &'static str,
        /// Why, in the gate's words.
        reason: String,
    },
    /// Another worker holds what the call needs (a chat being extracted) past the wait; nothing
    /// was built. Retrying shortly works.
    #[error("{what} is busy: {reason}; try again shortly")]
    Busy {
        /// What is busy, e.g. "chat c1".
        what: String,
        /// Why the call could not go on.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Result alias for the engine.
pub type Result<T> = std::result::Result<T, Error>;
