//! Errors raised by the pure rules of mnemo-core: bad identifiers, bad scope, bad messages.

/// Everything that can be wrong with input before it ever reaches storage.
///
/// Each variant names the offending field so the caller can fix the request without guessing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// An identifier (tenant, agent, user, chat, message) failed validation.
    #[error("invalid {field}: {reason}")]
    InvalidId {
        /// Which identifier, e.g. `user_id`.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A scope lacks a part the operation needs, e.g. ingest without a user.
    #[error("missing scope: {0} is required for this operation")]
    MissingScope(&'static str),
    /// A message failed validation.
    #[error("message {index}{}: {reason}", id.as_ref().map(|i| format!(" (id {i})")).unwrap_or_default())]
    InvalidMessage {
        /// Position of the message in the batch (0-based).
        index: usize,
        /// Its id, when it had one.
        id: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A textual enum value (kind, status, surface, role) was not one of the known ones.
    #[error("unknown {what} {value:?}; expected one of: {expected}")]
    UnknownVariant {
        /// Which enum.
        what: &'static str,
        /// The value received.
        value: String,
        /// The accepted values, comma separated.
        expected: &'static str,
    },
    /// A value from a client is out of the range one request may ask for (a query too long, an
    /// offset too large).
    #[error("invalid {field}: {reason}")]
    OutOfRange {
        /// Which field of the request, e.g. `offset`.
        field: &'static str,
        /// The value, the limit and the setting behind it.
        reason: String,
    },
    /// A configuration value is out of its valid range.
    #[error("invalid configuration {key}: {reason}")]
    InvalidConfig {
        /// Dotted path of the setting.
        key: String,
        /// Why it is invalid.
        reason: String,
    },
}

/// Result alias for mnemo-core.
pub type Result<T> = std::result::Result<T, CoreError>;
