//! What can stop a LoCoMo run before it produces numbers: an unreadable or malformed dataset,
//! options that would measure nothing, an engine that fails on a conversation.

use std::path::PathBuf;

/// Why the LoCoMo harness could not produce a report.
///
/// A malformed conversation aborts the run instead of being skipped: a silently dropped
/// conversation would change the numbers without anyone noticing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocomoError {
    /// The dataset file could not be read.
    #[error("reading the LoCoMo dataset {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The dataset is not JSON, or not in the LoCoMo shape; the message says where and what.
    #[error("{}: {message}", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong and where (conversation, session, question).
        message: String,
    },
    /// One conversation of the dataset is not in the LoCoMo shape: its sample id, the field and
    /// what the field must hold, so the file can be fixed.
    #[error("{}: {source}", .path.display())]
    Conversation {
        /// The file.
        path: PathBuf,
        /// What is wrong in which conversation.
        #[source]
        source: super::data::FormatError,
    },
    /// The options would measure nothing (no budgets, k of zero, zero conversations).
    #[error("invalid LoCoMo options: {0}")]
    Options(String),
    /// A temporary store could not be created.
    #[error("creating a temporary store for {conversation}: {source}")]
    TempDir {
        /// The conversation's sample id.
        conversation: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The engine failed while ingesting a conversation or answering a question.
    #[error("{conversation}: {during}: {source}")]
    Engine {
        /// The conversation's sample id.
        conversation: String,
        /// What the harness was doing ("ingesting session_3", "context for question 12").
        during: String,
        /// The engine error (boxed: it is large, and errors are the rare path).
        #[source]
        source: Box<mnemo::Error>,
    },
}
