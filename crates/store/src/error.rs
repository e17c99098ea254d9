//! Storage errors. Each says which operation failed and, where it helps, what to do.

use std::path::PathBuf;

/// What can go wrong in a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database reported an error during an operation.
    #[error("storage error during {op}: {source}")]
    Sqlite {
        /// The operation, e.g. "apply".
        op: &'static str,
        /// The driver's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The PostgreSQL server reported an error during an operation (feature `postgres`).
    /// The driver's own message is only a category ("db error"); the server's words are its
    /// cause, so they are spelled out here too.
    #[cfg(feature = "postgres")]
    #[error(
        "storage error during {op}: {source}{}",
        ::std::error::Error::source(.source).map(|c| format!(": {c}")).unwrap_or_default()
    )]
    Postgres {
        /// The operation, e.g. "apply".
        op: &'static str,
        /// The driver's error.
        #[source]
        source: ::postgres::Error,
    },
    /// The data directory or database file could not be created or opened.
    #[error("cannot open the store at {path}: {reason}")]
    Open {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The database was written by a newer mnemo.
    #[error("the store's schema is version {found}, newer than this build supports ({supported}); upgrade mnemo")]
    SchemaTooNew {
        /// Version on disk.
        found: i64,
        /// Latest version this build knows.
        supported: i64,
    },
    /// A row could not be decoded: the file was edited by hand or is damaged.
    #[error("corrupt {what} in the store: {detail}")]
    Corrupt {
        /// What kind of row.
        what: &'static str,
        /// The offending detail.
        detail: String,
    },
    /// A change names a memory that is not in this tenant.
    #[error("memory {id} not found in tenant {tenant}")]
    MemoryNotFound {
        /// Tenant searched.
        tenant: String,
        /// Id searched.
        id: String,
    },
    /// A vector does not have the dimension of the others of its model: the embedder now
    /// answers with another size under the same model id (a changed `dimensions` setting, or
    /// another model behind the same name). Vectors are kept per model id, and `mnemo maintain`
    /// embeds every memory that lacks a vector of the configured model.
    #[error(
        "embedding dimension {got} does not match {expected} of model {model}: configure the embedder that wrote \
         the stored vectors again, or give the new one its own model name and run `mnemo maintain` to embed the \
         existing memories with it"
    )]
    Dimension {
        /// The model id.
        model: String,
        /// Expected dimension.
        expected: usize,
        /// Received dimension.
        got: usize,
    },
    /// A fail point fired (tests only).
    #[error("injected failure at {0}")]
    Injected(String),
    /// A whole-store copy (export, import, counts) cannot go on; nothing of the refused batch
    /// was written.
    #[error("cannot {op}: {reason}")]
    Transfer {
        /// What was attempted, e.g. "import".
        op: &'static str,
        /// Why not, and what to do.
        reason: String,
    },
}

impl StoreError {
    /// Wraps a driver error with the operation it interrupted.
    pub(crate) fn sql(op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + Copy {
        move |source| StoreError::Sqlite { op, source }
    }
}

/// Result alias for mnemo-store.
pub type Result<T> = std::result::Result<T, StoreError>;
