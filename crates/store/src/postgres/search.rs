//! Recall's candidate paths on PostgreSQL: the tsvector's matches weighed by how rare their terms
//! are, exact or HNSW vector search by scope size, substrings.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use mnemo_core::{MemoryId, Scope};

use super::pool::Tx;
use super::rows::{get, vector_text};
use super::{BIG_SCOPE_TTL, PostgresStore, ids_text, lexical_sql, tune_vector_search, vector_sql};
use crate::error::{Result, StoreError};
use crate::plan::apply::PartKey;
use crate::rows::Row;
use crate::sql::VISIBLE;
use crate::vectors::{Loaded, PartSource};
use crate::{CacheUsage, Search};

impl Search for PostgresStore {
    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        // Scope and status in the WHERE clause, so ranking only ever sees rows the caller may see;
        // the scope's ids and words come from the covering btree `memories_lexical` (migration 6).
        let rows = format!("memories m WHERE {VISIBLE} AND m.status = 'active'");
        let sql = lexical_sql(&rows, 6, terms, 5);
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
        // Small scopes exactly: scoring a few thousand rows beats walking the graph until
        // enough of them pass the filter (a user with 1% of a million rows: 22 ms against 124),
        // and loses nothing. A scope found too big is remembered and goes to the index.
        let exact_max = self.exact_scan_max.load(Ordering::Relaxed);
        let key = scope.key_parts().map(str::to_string);
        let big =
            self.big_scopes.lock().expect("big scopes lock").get(&key).is_some_and(|at| at.elapsed() < BIG_SCOPE_TTL);
        if exact_max > 0 && !big {
            // The scope's partitions from the in-process cache while their versions stand: one
            // small query instead of reading and scoring every row of the scope from the heap
            // (10,000 rows: ~25 ms), reloaded only after a write moved a version.
            let found = self.read("vector search", t, |tx| {
                self.vectors.search(&mut Parts(tx), scope, model, (query, limit), exact_max)
            })?;
            if let Some(hits) = found {
                return Ok(hits);
            }
            self.big_scopes.lock().expect("big scopes lock").insert(key, Instant::now());
        }
        let q = vector_text(query);
        let row = |r: &postgres::Row| Ok((r.parse(0)?, r.real(1)?));
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

    fn cache_usage(&self) -> CacheUsage {
        CacheUsage { memory_vectors: self.vectors.bytes(), message_vectors: 0 }
    }
}

/// A tenant's read transaction as the vector cache's source of partitions.
struct Parts<'a, 'b>(&'a mut Tx<'b>);

impl PartSource for Parts<'_, '_> {
    fn versions(&mut self, scope: &Scope) -> Result<Vec<(PartKey, i64)>> {
        let [t, a, u, c] = scope.key_parts();
        let rows = self.0.query(
            "SELECT agent, user_id, chat, version FROM partitions \
             WHERE tenant = $1 AND agent IN ('', $2) AND user_id IN ('', $3) AND chat IN ('', $4)",
            &[&t, &a, &u, &c],
        )?;
        rows.iter().map(|r| Ok(([t.to_string(), get(r, 0)?, get(r, 1)?, get(r, 2)?], get(r, 3)?))).collect()
    }

    fn load(&mut self, key: &PartKey, model: &str, max: usize) -> Result<Loaded> {
        let [t, a, u, c] = key;
        // One statement, so one snapshot: the version and the rows it stands for.
        let cap = i64::try_from(max).unwrap_or(i64::MAX - 1) + 1;
        let rows = self.0.query(
            "WITH v AS (SELECT version FROM partitions WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4) \
             SELECT v.version, m.id, m.embedding::real[] FROM v LEFT JOIN LATERAL (SELECT id, embedding FROM memories \
             WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND status = 'active' AND model = $5 \
             LIMIT $6) m ON true",
            &[t, a, u, c, &model, &cap],
        )?;
        let Some(first) = rows.first() else { return Ok(Loaded::Gone) };
        if rows.len() > max {
            return Ok(Loaded::TooBig);
        }
        let version: i64 = get(first, 0)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            // A partition without such rows still has its version: one row of NULLs.
            if get::<Option<String>>(r, 1)?.is_some() {
                out.push((r.parse(1)?, get::<Vec<f32>>(r, 2)?));
            }
        }
        Ok(Loaded::Part(version, out))
    }
}

#[cfg(test)]
mod tests {
    use mnemo_core::{Scope, Status};

    use crate::postgres::{PostgresStore, TempDatabase};
    use crate::vectors::tests::{apply, insert, unit};
    use crate::{Change, Search};

    /// This handle's writes reach its vector cache as deltas, as SQLite's do: a user adding
    /// memories one at a time is not reloaded from the database at every add (it was, at 16 ms
    /// per add at 1,000 memories and 200 ms at 7,000). Needs MNEMO_TEST_DATABASE_URL, as the
    /// crate's PostgreSQL tests do.
    #[test]
    fn this_handles_writes_update_the_cache_in_place() {
        let Some(db) = TempDatabase::from_env().unwrap_or_else(|e| panic!("{e}")) else { return };
        let (store, reference) = (PostgresStore::connect(db.url()).unwrap(), PostgresStore::connect(db.url()).unwrap());
        crate::vectors::tests::writes_update_the_cache_in_place(&store, &|| store.vectors.loads(), &reference);
    }

    /// Writers on several connections of one handle commit in one order and hand their deltas
    /// to the cache in another; searches in between keep reloading and caching parts. Whatever
    /// the interleaving, the cached part ends equal to what the database holds.
    #[test]
    fn concurrent_writers_leave_the_cache_equal_to_the_database() {
        let Some(db) = TempDatabase::from_env().unwrap_or_else(|e| panic!("{e}")) else { return };
        let (store, reference) = (PostgresStore::connect(db.url()).unwrap(), PostgresStore::connect(db.url()).unwrap());
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let first: Vec<Change> = (0..20).map(|i| insert(&owner, i, Status::Active).1).collect();
        apply(&store, &owner, first);
        std::thread::scope(|s| {
            for w in 0..4 {
                let (store, owner) = (&store, &owner);
                s.spawn(move || {
                    for k in 0..25 {
                        let seed = 1_000 + 100 * w + k;
                        apply(store, owner, vec![insert(owner, seed, Status::Active).1]);
                        let found = store.vector(owner, "test:16", &unit(seed), 3).unwrap();
                        assert!(!found.is_empty(), "writer {w}, add {k}");
                    }
                });
            }
        });
        for seed in (0..20).chain((0..4).flat_map(|w| (0..25).map(move |k| 1_000 + 100 * w + k))) {
            let q = unit(seed);
            let cached = store.vector(&owner, "test:16", &q, 10).unwrap();
            assert_eq!(cached, reference.vector(&owner, "test:16", &q, 10).unwrap(), "query {seed}");
            assert!((cached[0].1 - 1.0).abs() < 1e-5, "each memory is its own query's nearest");
        }
    }
}
