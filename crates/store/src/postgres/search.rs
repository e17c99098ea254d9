//! Recall's candidate paths on PostgreSQL: `ts_rank_cd` over the tsvector, exact or HNSW vector
//! search by scope size, substrings.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use mnemo_core::{MemoryId, Scope};

use super::rows::{get, vector_text};
use super::{BIG_SCOPE_TTL, PostgresStore, exact_vector_sql, ids_text, terms_tsquery, tune_vector_search, vector_sql};
use crate::Search;
use crate::error::{Result, StoreError};
use crate::rows::Row;
use crate::sql::VISIBLE;

impl Search for PostgresStore {
    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let query = terms_tsquery(6, terms.len());
        // Scope and status in the WHERE clause, so ranking only ever sees rows the caller may see;
        // the scope's ids and words come from the covering btree `memories_lexical` (migration 6).
        let sql = format!(
            "SELECT m.id, ts_rank_cd(m.tsv, {query})::real AS score FROM memories m \
             WHERE {VISIBLE} AND m.status = 'active' AND m.tsv @@ ({query}) ORDER BY score DESC, m.id LIMIT $5"
        );
        let limit = limit as i64;
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &c, &limit];
        params.extend(terms.iter().map(|t| t as &(dyn postgres::types::ToSql + Sync)));
        self.read("lexical search", t, |tx| {
            tx.query(&sql, &params)?.iter().map(|r| Ok((r.parse(0)?, r.real(1)?))).collect()
        })
    }

    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        let Some(dim) = self.dim(t, model)? else { return Ok(Vec::new()) };
        if dim != query.len() {
            return Err(StoreError::Dimension { model: model.to_string(), expected: dim, got: query.len() });
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let q = vector_text(query);
        let row = |r: &postgres::Row| Ok((r.parse(0)?, r.real(1)?));
        // Small scopes exactly: scoring a few thousand rows beats walking the graph until
        // enough of them pass the filter (a user with 1% of a million rows: 22 ms against 124),
        // and loses nothing. A scope found too big is remembered and goes to the index.
        let exact_max = self.exact_scan_max.load(Ordering::Relaxed);
        let key = scope.key_parts().map(str::to_string);
        let big =
            self.big_scopes.lock().expect("big scopes lock").get(&key).is_some_and(|at| at.elapsed() < BIG_SCOPE_TTL);
        if exact_max > 0 && !big {
            let sql = exact_vector_sql(dim);
            let cap = exact_max as i64 + 1;
            let rows = self
                .read("vector search", t, |tx| tx.query(&sql, &[&t, &a, &u, &c, &model, &q, &(limit as i64), &cap]))?;
            let scoped = rows.first().map_or(Ok(0), |r| get::<i64>(r, 2))?;
            if scoped < cap {
                return rows.iter().map(row).collect();
            }
            self.big_scopes.lock().expect("big scopes lock").insert(key, Instant::now());
        }
        let sql = vector_sql(dim);
        self.read("vector search", t, |tx| {
            tune_vector_search(tx, limit)?;
            tx.query(&sql, &[&t, &a, &u, &c, &model, &q, &(limit as i64)])?.iter().map(row).collect()
        })
    }

    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let Some(dim) = self.dim(t, model)? else { return Ok(Vec::new()) };
        if dim != query.len() {
            return Err(StoreError::Dimension { model: model.to_string(), expected: dim, got: query.len() });
        }
        let q = vector_text(query);
        let sql = format!(
            "SELECT m.id, (1 - ((m.embedding::vector({dim})) <=> $7::text::vector({dim})))::real FROM memories m \
             WHERE m.id = ANY($6) AND {VISIBLE} AND m.model = $5 AND m.status = 'active'"
        );
        let found: HashMap<MemoryId, f32> = self.read("cosines", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &model, &ids_text(ids), &q])?
                .iter()
                .map(|r| Ok((r.parse(0)?, r.real(1)?)))
                .collect()
        })?;
        Ok(ids.iter().filter_map(|id| found.get(id).map(|s| (*id, *s))).collect())
    }

    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let lowered: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
             AND EXISTS (SELECT 1 FROM unnest($5::text[]) AS term WHERE strpos(lower(m.content), term) > 0) \
             ORDER BY m.updated_at DESC, m.id DESC LIMIT $6"
        );
        self.read("substring search", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &lowered, &(limit as i64)])?.iter().map(|r| r.parse(0)).collect()
        })
    }
}
