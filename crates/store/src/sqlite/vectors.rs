//! Exact vector search within scope, over an in-process cache of each ownership partition.
//!
//! Per-user sets are small, so exact scoring beats approximate indexes. Each partition's
//! vectors are loaded once and kept while the partition's version (bumped by every apply that
//! touches it, from any process) is unchanged.
//!
//! A scan is bound by memory bandwidth, not arithmetic, so it runs over an int8 copy of the
//! vectors (a quarter of the bytes) and the shortlist is then rescored exactly in f32: returned
//! cosines are exact; only the order of near-ties at the shortlist's edge can differ.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mnemo_core::{MemoryId, Scope};
use rusqlite::{Connection, params};

use super::rows::blob_vector;
use crate::error::{Result, StoreError};
use crate::rows::Row;

type PartKey = (String, String, String, String, String);

/// One partition's active vectors of one model, stored flat for cache-friendly scans.
struct Part {
    version: i64,
    ids: Vec<MemoryId>,
    index: HashMap<MemoryId, usize>,
    dim: usize,
    data: Vec<f32>,
    /// int8 copy of `data`, each vector scaled so its largest component is ±127.
    quantized: Vec<i8>,
    /// Per-vector scale: `data ≈ quantized / scale`.
    scales: Vec<f32>,
}

/// Extra candidates the int8 scan keeps beyond `limit` before exact rescoring.
const SHORTLIST_SLACK: usize = 32;

/// Quantises one vector to int8 with its own scale.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { 127.0 / max } else { 1.0 };
    out.extend(v.iter().map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

/// Integer dot product; integer addition is associative, so this vectorises.
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

/// The cache, shared by all readers of one store handle.
#[derive(Default)]
pub(crate) struct VectorCache {
    parts: Mutex<HashMap<PartKey, Arc<Part>>>,
}

/// Dot product with independent accumulators so the compiler can vectorise it.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

impl VectorCache {
    /// The current parts visible to the scope, reloading any whose version moved.
    fn visible(&self, conn: &Connection, scope: &Scope, model: &str) -> Result<Vec<Arc<Part>>> {
        let [t, a, u, c] = scope.key_parts();
        let mut stmt = conn
            .prepare_cached(
                "SELECT agent, user_id, chat, version FROM partitions \
                 WHERE tenant = ?1 AND agent IN ('', ?2) AND user_id IN ('', ?3) AND chat IN ('', ?4)",
            )
            .map_err(StoreError::sql("vector search"))?;
        let rows: Vec<(String, String, String, i64)> = stmt
            .query_map(params![t, a, u, c], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .and_then(|rows| rows.collect())
            .map_err(StoreError::sql("vector search"))?;
        let mut out = Vec::with_capacity(rows.len());
        for (agent, user, chat, version) in rows {
            let key = (t.to_string(), agent, user, chat, model.to_string());
            let cached = self.parts.lock().expect("vector cache lock").get(&key).cloned();
            let part = match cached {
                Some(p) if p.version == version => p,
                _ => {
                    let p = Arc::new(load(conn, &key, version)?);
                    self.parts.lock().expect("vector cache lock").insert(key, p.clone());
                    p
                }
            };
            out.push(part);
        }
        Ok(out)
    }

    /// Drops every cached partition of one user of a tenant (after an erasure: the bytes should
    /// not outlive the rows even in memory).
    pub(crate) fn forget_user(&self, tenant: &str, user: &str) {
        self.parts.lock().expect("vector cache lock").retain(|k, _| !(k.0 == tenant && k.2 == user));
    }

    /// Top `limit` by cosine (vectors are normalised, so dot = cosine).
    pub(crate) fn search(
        &self,
        conn: &Connection,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>> {
        let mut qq = Vec::with_capacity(query.len());
        let qscale = quantize(query, &mut qq);
        let parts = self.visible(conn, scope, model)?;
        // Approximate scan: (part, row, approximate cosine).
        let mut approx: Vec<(usize, usize, f32)> = Vec::new();
        for (pi, part) in parts.iter().enumerate() {
            check_dim(model, part.dim, query.len())?;
            for (row, (v, s)) in part.quantized.chunks_exact(part.dim.max(1)).zip(&part.scales).enumerate() {
                approx.push((pi, row, dot_i8(v, &qq) as f32 / (s * qscale)));
            }
        }
        let shortlist = limit.saturating_add(SHORTLIST_SLACK);
        if approx.len() > shortlist && shortlist > 0 {
            approx.select_nth_unstable_by(shortlist - 1, |a, b| b.2.total_cmp(&a.2));
            approx.truncate(shortlist);
        }
        let mut scored: Vec<(MemoryId, f32)> = approx
            .into_iter()
            .map(|(pi, row, _)| {
                let p = &parts[pi];
                (p.ids[row], dot(&p.data[row * p.dim..(row + 1) * p.dim], query))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(scored)
    }

    /// Cosines of specific ids (those without a vector of this model are omitted).
    pub(crate) fn cosines(
        &self,
        conn: &Connection,
        scope: &Scope,
        model: &str,
        query: &[f32],
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, f32)>> {
        let parts = self.visible(conn, scope, model)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            for p in &parts {
                if let Some(&i) = p.index.get(id) {
                    check_dim(model, p.dim, query.len())?;
                    out.push((*id, dot(&p.data[i * p.dim..(i + 1) * p.dim], query)));
                }
            }
        }
        Ok(out)
    }
}

fn check_dim(model: &str, expected: usize, got: usize) -> Result<()> {
    if expected != 0 && expected != got {
        return Err(StoreError::Dimension { model: model.to_string(), expected, got });
    }
    Ok(())
}

fn load(conn: &Connection, key: &PartKey, version: i64) -> Result<Part> {
    let (t, a, u, c, model) = key;
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.id, e.vector FROM memories m JOIN embeddings e ON e.memory_rowid = m.rowid \
             WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 AND m.chat = ?4 \
             AND m.status = 'active' AND e.model = ?5 ORDER BY m.rowid",
        )
        .map_err(StoreError::sql("load vectors"))?;
    let mut part = Part {
        version,
        ids: Vec::new(),
        index: HashMap::new(),
        dim: 0,
        data: Vec::new(),
        quantized: Vec::new(),
        scales: Vec::new(),
    };
    let mut rows = stmt.query(params![t, a, u, c, model]).map_err(StoreError::sql("load vectors"))?;
    while let Some(row) = rows.next().map_err(StoreError::sql("load vectors"))? {
        let id: MemoryId = row.parse(0)?;
        let blob: Vec<u8> = row.get(1).map_err(StoreError::sql("load vectors"))?;
        let v = blob_vector(&blob);
        if part.dim == 0 {
            part.dim = v.len();
        }
        check_dim(model, part.dim, v.len())?;
        part.index.insert(id, part.ids.len());
        part.ids.push(id);
        part.data.extend_from_slice(&v);
        part.scales.push(quantize(&v, &mut part.quantized));
    }
    Ok(part)
}

#[cfg(test)]
mod tests {
    #[test]
    fn int8_cosines_track_f32_cosines() {
        let mk = |seed: u32| -> Vec<f32> {
            let v: Vec<f32> =
                (0..384).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / n).collect()
        };
        let (a, b) = (mk(7), mk(11));
        let (mut qa, mut qb) = (Vec::new(), Vec::new());
        let (sa, sb) = (super::quantize(&a, &mut qa), super::quantize(&b, &mut qb));
        let approx = super::dot_i8(&qa, &qb) as f32 / (sa * sb);
        assert!((approx - super::dot(&a, &b)).abs() < 0.02, "{approx} vs {}", super::dot(&a, &b));
    }

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((super::dot(&a, &b) - naive).abs() < 1e-4);
    }
}
