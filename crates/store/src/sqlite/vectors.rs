//! SQLite's partitions for the shared vector cache ([`crate::vectors`]): versions from the
//! `partitions` table, a partition's vectors from `embeddings`, both on one reader connection.

use mnemo_core::{MemoryId, Scope};
use rusqlite::{Connection, OptionalExtension, params};

use super::rows::blob_vector;
use crate::error::{Result, StoreError};
use crate::plan::apply::PartKey;
use crate::rows::Row;
use crate::vectors::{Loaded, PartSource};

/// A reader connection as the cache's source of partitions.
pub(crate) struct Parts<'c>(pub(crate) &'c Connection);

impl PartSource for Parts<'_> {
    fn versions(&mut self, scope: &Scope) -> Result<Vec<(PartKey, i64)>> {
        let [t, a, u, c] = scope.key_parts();
        self.0
            .prepare_cached(
                "SELECT agent, user_id, chat, version FROM partitions \
                 WHERE tenant = ?1 AND agent IN ('', ?2) AND user_id IN ('', ?3) AND chat IN ('', ?4)",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![t, a, u, c], |r| {
                    Ok(([t.to_string(), r.get(0)?, r.get(1)?, r.get(2)?], r.get(3)?))
                })?
                .collect()
            })
            .map_err(StoreError::sql("vector search"))
    }

    fn load(&mut self, key: &PartKey, model: &str, max: usize) -> Result<Loaded> {
        let [t, a, u, c] = key;
        let snapshot = self.0.unchecked_transaction().map_err(StoreError::sql("load vectors"))?;
        let version: Option<i64> = snapshot
            .prepare_cached(
                "SELECT version FROM partitions WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4",
            )
            .and_then(|mut s| s.query_row(params![t, a, u, c], |r| r.get(0)).optional())
            .map_err(StoreError::sql("load vectors"))?;
        let Some(version) = version else { return Ok(Loaded::Gone) };
        let mut stmt = snapshot
            .prepare_cached(
                "SELECT m.id, e.vector FROM memories m JOIN embeddings e ON e.memory_rowid = m.rowid \
                 WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 AND m.chat = ?4 \
                 AND m.status = 'active' AND e.model = ?5 ORDER BY m.rowid",
            )
            .map_err(StoreError::sql("load vectors"))?;
        let mut out = Vec::new();
        let mut rows = stmt.query(params![t, a, u, c, model]).map_err(StoreError::sql("load vectors"))?;
        while let Some(row) = rows.next().map_err(StoreError::sql("load vectors"))? {
            if out.len() == max {
                return Ok(Loaded::TooBig);
            }
            let id: MemoryId = row.parse(0)?;
            let blob: Vec<u8> = row.get(1).map_err(StoreError::sql("load vectors"))?;
            out.push((id, blob_vector(&blob)));
        }
        drop(rows);
        drop(stmt);
        snapshot.finish().map_err(StoreError::sql("load vectors"))?;
        Ok(Loaded::Part(version, out))
    }
}
