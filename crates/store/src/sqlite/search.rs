//! Recall's candidate paths on SQLite: FTS5 (BM25 per partition), the vector cache, substrings.

use mnemo_core::{MemoryId, Scope};
use rusqlite::params_from_iter;

use super::rows::parse;
use super::{SqliteStore, fts, vectors};
use crate::error::{Result, StoreError};
use crate::sql::{Dialect, VISIBLE};
use crate::{CacheUsage, Search};

impl Search for SqliteStore {
    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // The index holds active rows only, every token prefixed with its row's partition token:
        // a query names the partitions the scope can see, so ranking only ever sees rows the
        // caller may see, and BM25's document frequencies are those of these partitions alone.
        self.read(|conn| fts::search_memories(conn, scope, terms, limit).map_err(StoreError::sql("lexical search")))
    }

    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        // No bound on a part's size: the in-process scan is SQLite's only vector search.
        self.read(|conn| {
            let found = self.vectors.search(&mut vectors::Parts(conn), scope, model, (query, limit), usize::MAX)?;
            Ok(found.unwrap_or_default())
        })
    }

    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>> {
        self.read(|conn| self.vectors.cosines(&mut vectors::Parts(conn), scope, model, query, ids))
    }

    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let like = (0..terms.len())
            .map(|i| format!("instr(lower(m.content), ?{}) > 0", i + 5))
            .collect::<Vec<_>>()
            .join(" OR ");
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {VISIBLE} AND m.status = 'active' AND ({like}) \
             ORDER BY m.updated_at DESC LIMIT {limit}"
        );
        let args = [t, a, u, c].into_iter().map(str::to_string).chain(terms.iter().map(|t| t.to_lowercase()));
        self.read(|conn| {
            let mut stmt = conn.prepare(&Dialect::Sqlite.sql(&sql)).map_err(StoreError::sql("substring search"))?;
            stmt.query_map(params_from_iter(args), |r| parse::<MemoryId>(r, 0))
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("substring search"))
        })
    }

    fn cache_usage(&self) -> CacheUsage {
        CacheUsage { memory_vectors: self.vectors.bytes(), message_vectors: self.message_vectors.bytes() }
    }
}
