//! The trace on SQLite: messages with their FTS5 entries, and archival recall over them.

use std::ops::Range;

use chrono::{DateTime, Utc};
use mnemo_core::common::TermSpread;
use mnemo_core::{Message, MessageId, Scope};
use rusqlite::{params, params_from_iter};

use super::rows::{blob_vector, message_partition, parse, query, vector_blob};
use super::{SqliteStore, fts};
use crate::Messages;
use crate::error::{Result, StoreError};
use crate::messages::{MessageVectors, archive, owner_key, said_ms};
use crate::rows::{decode, ms};
use crate::sql::{Dialect, messages as sql};

impl Messages for SqliteStore {
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>> {
        self.write("append messages", |tx| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO messages (id, tenant, agent, user_id, chat, role, content, at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(StoreError::sql("append messages"))?;
            messages
                .iter()
                .map(|m| {
                    let [t, a, u, c] = m.scope.key_parts();
                    let fresh = stmt
                        .execute(params![m.id.as_str(), t, a, u, c, m.role.as_str(), m.content, ms(m.at)])
                        .map_err(StoreError::sql("append messages"))?
                        == 1;
                    if fresh {
                        fts::index_message(tx, tx.last_insert_rowid(), [t, a, u, c], &m.content)
                            .map_err(StoreError::sql("append messages"))?;
                    }
                    Ok(fresh)
                })
                .collect()
        })
    }

    fn embed_messages(&self, owner: &Scope, vectors: &[(MessageId, MessageVectors)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        let [t, u, c] = owner_key(owner);
        self.write("embed messages", |tx| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO message_embeddings (message_rowid, model, dim, vector, passages) \
                     SELECT rowid, ?3, ?4, ?5, ?8 FROM messages WHERE tenant = ?1 AND id = ?2 AND withheld = 0 \
                     AND ?6 IN ('', user_id) AND ?7 IN ('', chat)",
                )
                .map_err(StoreError::sql("embed messages"))?;
            for (id, v) in vectors {
                let e = &v.embedding;
                let passages = passages_blob(&v.passages);
                stmt.execute(params![
                    t,
                    id.as_str(),
                    e.model,
                    e.vector.len() as i64,
                    vector_blob(&e.vector),
                    u,
                    c,
                    passages
                ])
                .map_err(StoreError::sql("embed messages"))?;
            }
            Ok(())
        })
    }

    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>> {
        let Some([t, a, u, c]) = archive(scope).filter(|_| !terms.is_empty()) else { return Ok(Vec::new()) };
        // Every token of the index carries its partition: other users' messages are not in the
        // ranked set, and do not even weigh this user's terms.
        let partition = message_partition(t, a, u, c);
        self.read(|conn| {
            fts::search_messages(conn, &partition, terms, limit).map_err(StoreError::sql("search messages"))
        })
    }

    fn term_spread(&self, scope: &Scope, terms: &[String]) -> Result<TermSpread> {
        let Some(owner) = archive(scope) else { return Ok(TermSpread::default()) };
        let [t, a, u, c] = owner;
        let partition = message_partition(t, a, u, c);
        self.read(|conn| fts::term_spread(conn, owner, &partition, terms).map_err(StoreError::sql("term spread")))
    }

    fn adjacent_messages(&self, owner: &Scope, ids: &[MessageId], span: usize) -> Result<Vec<(MessageId, Message)>> {
        if ids.is_empty() || span == 0 {
            return Ok(Vec::new());
        }
        let sql = sql::adjacent(Dialect::Sqlite);
        let [t, u, c] = owner_key(owner);
        self.read(|conn| {
            let mut out = Vec::new();
            for id in ids {
                let args = params![t, u, c, id.as_str(), span as i64];
                let found = query(conn, "adjacent messages", &sql, args, |r| decode::message(r))?;
                out.extend(found.into_iter().map(|m| (id.clone(), m)));
            }
            Ok(out)
        })
    }

    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
        said: Option<&Range<DateTime<Utc>>>,
    ) -> Result<Vec<(MessageId, f32)>> {
        let Some([t, a, u, c]) = archive(scope).filter(|_| limit > 0) else { return Ok(Vec::new()) };
        let (from, to) = said_ms(said);
        type Row = (MessageId, i64, Vec<u8>, Option<Vec<u8>>);
        let rows: Vec<Row> = self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT m.id, e.dim, e.vector, e.passages FROM messages m \
                     JOIN message_embeddings e ON e.message_rowid = m.rowid \
                     WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 AND e.model = ?4 \
                     AND ?5 IN ('', m.chat) AND m.at >= ?6 AND m.at < ?7",
                )
                .map_err(StoreError::sql("nearest messages"))?;
            stmt.query_map(params![t, a, u, model, c, from, to], |r| {
                Ok((parse(r, 0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("nearest messages"))
        })?;
        let mut scored = Vec::with_capacity(rows.len());
        for (id, dim, blob, passages) in rows {
            if dim as usize != query.len() {
                return Err(StoreError::Dimension {
                    model: model.to_string(),
                    expected: dim as usize,
                    got: query.len(),
                });
            }
            let whole = crate::vectors::dot(&blob_vector(&blob), query);
            let closest = passages.map_or(whole, |p| {
                blob_vector(&p).chunks_exact(query.len()).map(|v| crate::vectors::dot(v, query)).fold(whole, f32::max)
            });
            scored.push((id, closest));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(scored)
    }

    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let args = params![t, a, u, c, limit as i64];
        let mut out =
            self.read(|c| query(c, "recent messages", &sql::recent(Dialect::Sqlite), args, |r| decode::message(r)))?;
        out.reverse();
        Ok(out)
    }

    fn messages(&self, owner: &Scope, ids: &[MessageId]) -> Result<Vec<Message>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = sql::by_ids(Dialect::Sqlite, ids.len());
        let args = owner_key(owner).into_iter().chain(ids.iter().map(MessageId::as_str));
        self.read(|conn| query(conn, "messages", &sql, params_from_iter(args), |r| decode::message(r)))
    }
}

/// Passage vectors as one blob (NULL for none), the layout migration 12 gives
/// `message_embeddings.passages`.
pub(super) fn passages_blob(passages: &[Vec<f32>]) -> Option<Vec<u8>> {
    (!passages.is_empty()).then(|| passages.iter().flat_map(|v| vector_blob(v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How SQLite plans `sql` (the detail column of each step), with every parameter bound.
    fn plan(store: &SqliteStore, sql: &str, args: impl rusqlite::Params) -> Vec<String> {
        store
            .read(|conn| {
                let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", Dialect::Sqlite.sql(sql))).unwrap();
                let steps = stmt.query_map(args, |r| r.get::<_, String>(3)).unwrap();
                Ok(steps.map(|s| s.unwrap()).collect())
            })
            .unwrap()
    }

    #[test]
    fn messages_named_by_id_are_found_by_their_id_not_by_walking_the_tenant() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        let adjacent = plan(&store, &sql::adjacent(Dialect::Sqlite), params!["acme", "dana", "", "m1", 1i64]);
        let hit = adjacent.iter().find(|s| s.starts_with("SEARCH h")).expect("the hit is searched");
        assert!(hit.contains("messages_by_id (tenant=? AND id=?)"), "{adjacent:#?}");
        let by_ids = plan(&store, &sql::by_ids(Dialect::Sqlite, 2), params!["acme", "dana", "", "m1", "m2"]);
        assert!(by_ids.iter().any(|s| s.contains("messages_by_id (tenant=? AND id=?)")), "{by_ids:#?}");
    }
}
