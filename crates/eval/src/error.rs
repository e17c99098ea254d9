//! What can stop a scenario run before it produces a report: unreadable or malformed files and
//! an embedder that will not load. Failed checks are not errors; they are the report.

use std::path::PathBuf;

/// Why a run could not produce a report.
///
/// A malformed scenario aborts the whole run rather than being skipped: a silently ignored file
/// would make the pass count look better than it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A file or directory could not be read, or a temporary store could not be created.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A scenario file is malformed; the message names the step (1-based) and the key.
    #[error("{}: {}{message}", .file.display(), .step.map(|n| format!("step {n}: ")).unwrap_or_default())]
    Parse {
        /// The scenario file.
        file: PathBuf,
        /// The step, 1-based, when the problem is inside one.
        step: Option<usize>,
        /// The offending key, when there is one.
        key: Option<String>,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The directory holds no scenario files: running nothing would report a meaningless pass.
    #[error("{}: no *.toml scenario files", .dir.display())]
    NoScenarios {
        /// The directory searched.
        dir: PathBuf,
    },
    /// Two files declare the same scenario name, so reports could not tell them apart.
    #[error("scenario name {name:?} is declared by both {} and {}", .first.display(), .second.display())]
    DuplicateName {
        /// The name.
        name: String,
        /// The first file declaring it.
        first: PathBuf,
        /// The second file declaring it.
        second: PathBuf,
    },
    /// The configured embedder could not be opened.
    #[error("opening the embedder: {0}")]
    Embedder(#[source] mnemo::models::ModelError),
    /// The engine could not be set up for a scenario (temporary store).
    #[error("{}: setting up the scenario's store: {source}", .file.display())]
    Setup {
        /// The scenario file.
        file: PathBuf,
        /// The engine error.
        #[source]
        source: mnemo::Error,
    },
}
