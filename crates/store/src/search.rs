//! Recall's candidate paths over memories: lexical, vector, substring.

use mnemo_core::{MemoryId, Scope};

use crate::error::Result;

/// Ranked candidate sets over active memories visible to a scope: the lexical, vector and
/// substring paths of recall. Scope filters before ranking, so rows of other scopes never shape
/// a candidate set.
pub trait Search {
    /// Lexical search over active memories visible to the scope: ids with a BM25 score
    /// (higher is better), best first.
    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>>;

    /// Exact cosine search over active memories visible to the scope with vectors of `model`,
    /// best first.
    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>>;

    /// Cosine of specific memories with the query (for candidates found lexically).
    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>>;

    /// Last resort of the cascade: active memories visible to the scope containing any term.
    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>>;

    /// What the backend's in-process caches hold now, so an operator can tell a cache filling
    /// toward its budget from memory that grows without one (the server's `/metrics`).
    fn cache_usage(&self) -> CacheUsage {
        CacheUsage::default()
    }
}

/// Bytes held by a store handle's in-process caches, roughly (vectors and their bookkeeping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Memories' vectors, per ownership partition: recall's vector half.
    pub memory_vectors: usize,
    /// Users' message vectors: archival recall's semantic half.
    pub message_vectors: usize,
}

/// How many bytes a store handle's in-process caches may hold: past its budget a cache lets its
/// least recently used users go (they are read from the database again when next asked), so a
/// server's memory stops growing with the users and messages it has served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBudgets {
    /// Memories' vectors (recall), all partitions together.
    pub memory_vectors: usize,
    /// Users' message vectors (archival recall), all users together; a user whose archive would
    /// take more than half of it is scored from the rows as they are read.
    pub message_vectors: usize,
    /// SQLite's own heap, page caches above all, every connection of the process together
    /// (SQLite's soft heap limit; 0 leaves it unlimited). Each connection may cache 16 MB of
    /// pages, and a server keeps several open: without this they fill as the database grows.
    pub sqlite_heap: usize,
}

/// SQLite's heap budget unless configured: room for the pages a recall touches on several
/// connections at once. Pages past it are read again from the file, which the operating
/// system's cache mostly holds; 64 MiB let a server's memory grow for an hour.
pub const DEFAULT_SQLITE_HEAP: usize = 8 << 20;

impl Default for CacheBudgets {
    fn default() -> Self {
        Self {
            memory_vectors: crate::vectors::DEFAULT_BUDGET,
            message_vectors: crate::message_vectors::DEFAULT_BUDGET,
            sqlite_heap: DEFAULT_SQLITE_HEAP,
        }
    }
}
