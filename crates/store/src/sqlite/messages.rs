//! The trace on SQLite: messages with their FTS5 entries, and archival recall over them.

use std::collections::BTreeMap;
use std::ops::Range;

use chrono::{DateTime, Utc};
use mnemo_core::archive::Adjacent;
use mnemo_core::common::TermSpread;
use mnemo_core::{Message, MessageId, Scope};
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::apply::bump_messages;
use super::rows::{blob_vector, message_partition, parse, query, vector_blob};
use super::{SqliteStore, fts};
use crate::Messages;
use crate::error::{Result, StoreError};
use crate::message_vectors::{Archive, Entry, Reach, Stored};
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
        self.write_then(
            "embed messages",
            |tx| {
                let err = StoreError::sql("embed messages");
                let mut find = tx
                    .prepare_cached(
                        "SELECT rowid, agent, user_id, chat, at FROM messages WHERE tenant = ?1 AND id = ?2 \
                         AND withheld = 0 AND ?3 IN ('', user_id) AND ?4 IN ('', chat)",
                    )
                    .map_err(err)?;
                let mut put = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO message_embeddings (message_rowid, model, dim, vector, passages) \
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                    )
                    .map_err(err)?;
                // What the write did to each user's vectors, for this handle's cache.
                let mut by_user: BTreeMap<String, Vec<(String, usize, Entry)>> = BTreeMap::new();
                for (id, v) in vectors {
                    let e = &v.embedding;
                    let rows: Vec<(i64, String, String, String, i64)> = find
                        .query_map(params![t, id.as_str(), u, c], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                        })
                        .and_then(|r| r.collect())
                        .map_err(err)?;
                    for (rowid, agent, user, chat, at) in rows {
                        let args = params![
                            rowid,
                            e.model,
                            e.vector.len() as i64,
                            vector_blob(&e.vector),
                            passages_blob(&v.passages)
                        ];
                        put.execute(args).map_err(err)?;
                        let all = e.vector.iter().chain(v.passages.iter().flatten()).copied().collect();
                        let entry =
                            Entry { rowid, id: id.clone(), agent: agent.into(), chat: chat.into(), at, vectors: all };
                        by_user.entry(user).or_default().push((e.model.clone(), e.vector.len(), entry));
                    }
                }
                by_user
                    .into_iter()
                    .map(|(user, entries)| {
                        let (from, to) = bump_messages(tx, t, &user)?;
                        Ok((user, Stored { from, to, entries }))
                    })
                    .collect::<Result<Vec<_>>>()
            },
            |stored| {
                for (user, s) in stored {
                    self.message_vectors.advance(t, &user, &s);
                }
            },
        )
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

    fn adjacent_messages(&self, owner: &Scope, ids: &[MessageId], span: usize) -> Result<Vec<Adjacent>> {
        if ids.is_empty() || span == 0 {
            return Ok(Vec::new());
        }
        let sql = sql::adjacent(Dialect::Sqlite);
        let [t, u, c] = owner_key(owner);
        self.read(|conn| {
            let mut out = Vec::new();
            for id in ids {
                let args = params![t, u, c, id.as_str(), span as i64];
                let found = query(conn, "adjacent messages", &sql, args, |r| decode::adjacent(r, id))?;
                out.extend(found);
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
        let reach = Reach { agent: a, chat: c, from, to };
        let archive = self.read(|conn| {
            let Some(version) = message_version(conn, t, u)? else {
                // Nothing stored, or erased by another handle: a copy held here goes too.
                self.message_vectors.forget_user(t, u);
                return Ok(None);
            };
            if let Some(current) = self.message_vectors.current(t, u, model, version) {
                return Ok(Some(current));
            }
            let loaded = load_archive(conn, t, u, model)?;
            Ok(loaded.map(|a| self.message_vectors.keep(t, u, a)))
        })?;
        archive.map_or(Ok(Vec::new()), |a| a.nearest(reach, query, limit))
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

/// The user's message version as `conn` sees it now; none when no vector of theirs was ever
/// stored (or they were erased), so there is nothing to search.
fn message_version(conn: &Connection, tenant: &str, user: &str) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT version FROM message_versions WHERE tenant = ?1 AND user_id = ?2")
        .and_then(|mut s| s.query_row(params![tenant, user], |r| r.get(0)).optional())
        .map_err(StoreError::sql("nearest messages"))
}

/// The user's message vectors of `model` and the version they are of, read from one snapshot
/// (the rows may be newer than the version, never older); none when the user has no version
/// any more.
fn load_archive(conn: &Connection, tenant: &str, user: &str, model: &str) -> Result<Option<Archive>> {
    let err = StoreError::sql("load message vectors");
    let snapshot = conn.unchecked_transaction().map_err(err)?;
    let Some(version) = message_version(&snapshot, tenant, user)? else { return Ok(None) };
    let mut archive = Archive::new(model, version);
    let mut stmt = snapshot
        .prepare_cached(
            "SELECT m.rowid, m.id, m.agent, m.chat, m.at, e.dim, e.vector, e.passages FROM messages m \
             JOIN message_embeddings e ON e.message_rowid = m.rowid \
             WHERE m.tenant = ?1 AND m.user_id = ?2 AND e.model = ?3",
        )
        .map_err(err)?;
    let mut rows = stmt.query(params![tenant, user, model]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let read = || -> rusqlite::Result<(usize, Entry)> {
            let blob = |idx: usize| -> rusqlite::Result<&[u8]> {
                let value = r.get_ref(idx)?;
                value
                    .as_blob_or_null()
                    .map(Option::unwrap_or_default)
                    .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, value.data_type(), Box::new(e)))
            };
            let mut vectors = blob_vector(blob(6)?);
            vectors.extend(blob_vector(blob(7)?));
            let (agent, chat): (String, String) = (r.get(2)?, r.get(3)?);
            let entry = Entry {
                rowid: r.get(0)?,
                id: parse(r, 1)?,
                agent: agent.into(),
                chat: chat.into(),
                at: r.get(4)?,
                vectors: vectors.into(),
            };
            Ok((r.get::<_, i64>(5)? as usize, entry))
        };
        let (dim, entry) = read().map_err(err)?;
        archive.put(dim, entry)?;
    }
    drop(rows);
    drop(stmt);
    snapshot.finish().map_err(err)?;
    Ok(Some(archive))
}

/// Passage vectors as one blob (NULL for none), the layout migration 12 gives
/// `message_embeddings.passages`.
pub(super) fn passages_blob(passages: &[Vec<f32>]) -> Option<Vec<u8>> {
    (!passages.is_empty()).then(|| passages.iter().flat_map(|v| vector_blob(v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sqlite::tests::plan;

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

    /// This handle's own writes of message vectors reach its cached archive without a reload,
    /// and leave it answering as a handle that reads the file does; a withheld message (which
    /// moves the version without a delta) is a reload, and is gone.
    #[test]
    fn this_handles_message_vectors_follow_its_writes_without_a_reload() {
        use crate::{ChangeSet, Embedding, Memories};
        use mnemo_core::{Message, Role};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnemo.db");
        let store = SqliteStore::open(&path).unwrap();
        let chat = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
        let dana = chat.without_chat();
        let t0: DateTime<Utc> = "2026-03-02T09:00:00Z".parse().unwrap();
        let id = |i: usize| MessageId::new(format!("d{i}")).unwrap();
        let unit =
            |i: usize| -> Vec<f32> { (0..8).map(|j| if j == i % 8 { 1.0 } else { 0.1 * (i / 8) as f32 }).collect() };
        let add = |i: usize, passages: Vec<Vec<f32>>| {
            let m = Message { id: id(i), scope: chat.clone(), role: Role::User, content: format!("turn {i}"), at: t0 };
            store.append_messages(&[m]).unwrap();
            let embedding = Embedding { model: "test:8".into(), vector: unit(i) };
            store.embed_messages(&chat, &[(id(i), MessageVectors { embedding, passages })]).unwrap();
        };
        for i in 0..5 {
            add(i, vec![]);
        }
        let near = |s: &SqliteStore, q: usize| s.nearest_messages(&dana, "test:8", &unit(q), 3, None).unwrap();
        assert_eq!(near(&store, 2)[0].0, id(2));
        assert_eq!(store.message_vectors.loads(), 1);

        add(5, vec![unit(17)]);
        assert_eq!(near(&store, 17)[0].0, id(5), "a new message's passage is found");
        // Re-embedded under another model, a message leaves this model's archive.
        let other = Embedding { model: "other:8".into(), vector: unit(3) };
        store.embed_messages(&chat, &[(id(3), other.into())]).unwrap();
        assert!(!near(&store, 3).iter().any(|(m, _)| *m == id(3)));
        assert_eq!(store.message_vectors.loads(), 1, "no write of this handle made it reload");

        let reference = SqliteStore::open(&path).unwrap();
        for q in [0, 2, 4, 17] {
            assert_eq!(near(&store, q), near(&reference, q));
        }

        let withhold = crate::Change::Withhold { owner: chat.clone(), messages: vec![id(2)] };
        store.apply(&ChangeSet { tenant: chat.tenant.clone(), at: t0, changes: vec![withhold] }).unwrap();
        assert!(!near(&store, 2).iter().any(|(m, _)| *m == id(2)), "a withheld message is never found");
        assert_eq!(store.message_vectors.loads(), 2);
        assert_eq!(near(&store, 4), near(&reference, 4));

        // Erased through another handle: this one's copy of the vectors is dropped too.
        let event = crate::DeletionEvent { subject: "s".into(), at: t0, digest: "d".into() };
        crate::Users::erase_user(&reference, &chat.tenant, chat.user.as_ref().unwrap(), &event).unwrap();
        assert!(near(&store, 4).is_empty());
        assert_eq!(store.message_vectors.held(), 0, "no erased vector stays in memory");
    }
}
