//! SQLite-specific behaviour: durability across a crash, fail points between write and commit,
//! cache coherence between processes sharing one file.

use std::process::Command;

use chrono::Duration;
use mnemo_core::{HistoryEvent, Kind, Memory, MemoryId, Message, MessageId, Scope, Status};
use mnemo_store::prelude::*;
use mnemo_store::{Change, ChangeSet, Embedding, SqliteStore, Store};

use crate::conformance::{axis, changes, insert, insertion, memory, msg, scope, t0};

pub(crate) fn open_temp() -> (tempfile::TempDir, Box<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
    (dir, Box::new(store))
}

/// Child half of the crash test: applies one change set and aborts without any cleanup. Not a
/// test of its own: `an_acknowledged_write_survives_a_crash` runs it in a child process.
#[test]
#[ignore = "the child process of an_acknowledged_write_survives_a_crash, which runs it"]
fn crash_child() {
    let path = std::env::var("MNEMO_CRASH_DB").expect("run by an_acknowledged_write_survives_a_crash");
    let id: MemoryId = std::env::var("MNEMO_CRASH_ID").unwrap().parse().unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let owner = scope("acme", Some("dana"), None);
    let mut m = memory(&owner, Kind::Profile, "User survives crashes");
    m.id = id;
    insert(&store, &m, Some(axis(0, 1, 0.0)));
    std::process::abort();
}

#[test]
fn an_acknowledged_write_survives_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let id = MemoryId::new();
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["sqlite::crash_child", "--exact", "--ignored", "--nocapture"])
        .env("MNEMO_CRASH_DB", &path)
        .env("MNEMO_CRASH_ID", id.to_string())
        .status()
        .unwrap();
    assert!(!status.success(), "the child must have aborted");
    let store = SqliteStore::open(&path).unwrap();
    let owner = scope("acme", Some("dana"), None);
    let got = store.get(&owner.tenant, id).unwrap().expect("acknowledged write lost in a crash");
    assert_eq!(got.content, "User survives crashes");
    assert_eq!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 5).unwrap()[0].0, id);
}

#[test]
fn a_second_handle_sees_writes_of_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    let owner = scope("acme", Some("dana"), None);
    let first = memory(&owner, Kind::Profile, "User's name is Dana");
    insert(&a, &first, Some(axis(0, 1, 0.0)));
    assert_eq!(b.vector(&owner, "test:8", &axis(0, 1, 0.0), 5).unwrap().len(), 1);
    let second = memory(&owner, Kind::Profile, "User lives in Lisbon");
    insert(&a, &second, Some(axis(1, 0, 0.0)));
    assert_eq!(b.vector(&owner, "test:8", &axis(0, 1, 0.0), 5).unwrap().len(), 2, "stale vector cache");
}

/// A deterministic unit vector of 32 dimensions: distinct seeds are far apart (cosine well
/// under 0.9), so a memory's own vector finds it first.
fn spread(seed: usize) -> Vec<f32> {
    let mut x = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let v: Vec<f32> = (0..32)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// Two handles on one file write the same user from two threads (inserts, and archives of
/// earlier inserts) while three threads read through the first handle and one through the
/// second. A reader that knows an insert committed must find it, one that knows an archive
/// committed must not; at the end both handles answer as a handle loading from the file does.
#[test]
fn concurrent_writers_and_readers_see_every_committed_change() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PER_WRITER: usize = 90;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let handles = [Arc::new(SqliteStore::open(&path).unwrap()), Arc::new(SqliteStore::open(&path).unwrap())];
    let owner = scope("acme", Some("dana"), None);
    let rows: Vec<Vec<Memory>> = (0..2)
        .map(|w| (0..PER_WRITER).map(|i| memory(&owner, Kind::Fact, &format!("Fact {i} of writer {w}"))).collect())
        .collect();
    // Memory i of a writer is archived by the writer's change set i + 1 when i % 3 == 1.
    let archived = |i: usize| i % 3 == 1;
    let seed = |w: usize, i: usize| w * PER_WRITER + i;
    let done: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let checks = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (w, store) in handles.iter().enumerate() {
            let (rows, done, owner) = (&rows[w], done.clone(), &owner);
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    let mut set = vec![insertion(&rows[i], Some(("test:32", spread(seed(w, i)))))];
                    if i > 0 && archived(i - 1) {
                        set.push(Change::SetStatus {
                            id: rows[i - 1].id,
                            status: Status::Archived,
                            event: HistoryEvent::Closed,
                            reason: "done".into(),
                            sources: vec![],
                        });
                    }
                    store.apply(&changes(owner, set)).unwrap();
                    done[w].store(i + 1, Ordering::SeqCst);
                }
            });
        }
        for r in 0..4 {
            let (store, done, rows, owner, checks) =
                (&handles[usize::from(r == 3)], done.clone(), &rows, &owner, &checks);
            s.spawn(move || {
                let mut k = r * 7;
                loop {
                    let finished = done.iter().all(|d| d.load(Ordering::SeqCst) == PER_WRITER);
                    k += 1;
                    let w = k % 2;
                    let committed = done[w].load(Ordering::SeqCst);
                    if committed == 0 {
                        continue;
                    }
                    let i = (k * 31) % committed;
                    let hits = store.vector(owner, "test:32", &spread(seed(w, i)), 3).unwrap();
                    let ids: Vec<MemoryId> = hits.iter().map(|(id, _)| *id).collect();
                    if archived(i) && i + 1 < committed {
                        assert!(!ids.contains(&rows[w][i].id), "writer {w}'s archived memory {i} still found");
                    } else if !archived(i) {
                        assert_eq!(ids.first(), Some(&rows[w][i].id), "writer {w}'s memory {i} not found first");
                    }
                    checks.fetch_add(1, Ordering::Relaxed);
                    if finished {
                        break;
                    }
                }
            });
        }
    });
    assert!(checks.load(Ordering::Relaxed) > 100, "the readers ran alongside the writers");
    let fresh = SqliteStore::open(&path).unwrap();
    for w in 0..2 {
        for i in 0..PER_WRITER {
            let q = spread(seed(w, i));
            let want = fresh.vector(&owner, "test:32", &q, 5).unwrap();
            assert_eq!(handles[0].vector(&owner, "test:32", &q, 5).unwrap(), want);
            assert_eq!(handles[1].vector(&owner, "test:32", &q, 5).unwrap(), want);
        }
    }
}

#[test]
fn reopening_keeps_everything_and_refuses_a_future_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User's name is Dana");
    {
        let s = SqliteStore::open(&path).unwrap();
        insert(&s, &m, None);
    }
    let s = SqliteStore::open(&path).unwrap();
    assert!(s.get(&owner.tenant, m.id).unwrap().is_some());
    drop(s);
    rusqlite::Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
}

#[test]
fn mixing_vector_dimensions_is_refused() {
    let (_d, store) = open_temp();
    let owner = scope("acme", Some("dana"), None);
    insert(&*store, &memory(&owner, Kind::Profile, "User's name is Dana"), Some(axis(0, 1, 0.0)));
    let m = memory(&owner, Kind::Profile, "User lives in Lisbon");
    let cs = ChangeSet {
        tenant: owner.tenant,
        at: t0(),
        changes: vec![Change::Insert {
            memory: m,
            embedding: Some(Embedding { model: "test:8".into(), vector: vec![1.0; 3] }),
            reason: "w".into(),
        }],
    };
    let err = store.apply(&cs).unwrap_err().to_string();
    assert!(err.contains("dimension 3") && err.contains("`mnemo maintain`") && !err.contains("reembed"), "{err}");
}

/// Messages stored before archival recall existed (schema 1) are indexed by the migration.
#[test]
fn upgrading_from_schema_1_indexes_earlier_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let chat = scope("acme", Some("dana"), Some("c1"));
    {
        let s = SqliteStore::open(&path).unwrap();
        s.append_messages(&[msg(&chat, "d1", "We adopted a greyhound", t0())]).unwrap();
    }
    // Back to schema 1 exactly: the objects of versions 2 to 4, 8 to 11 and the rule column of 6 dropped.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE observations; DROP TABLE installation; DROP TABLE document_vectors; DROP TABLE documents; DROP TABLE user_states; DROP TABLE extraction_queue; DROP TABLE chat_progress; DROP TABLE message_fts; DROP TABLE message_embeddings; DROP INDEX messages_by_user; \
             ALTER TABLE messages DROP COLUMN withheld; ALTER TABLE memories DROP COLUMN rule; ALTER TABLE memories DROP COLUMN metadata; DROP TABLE message_versions; DROP INDEX memories_constraints; ALTER TABLE memories DROP COLUMN constraints; PRAGMA user_version = 1;",
        )
        .unwrap();
    let s = SqliteStore::open(&path).unwrap();
    let hits = s.search_messages(&scope("acme", Some("dana"), None), &["greyhound".into()], 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(s.search_messages(&chat, &["greyhound".into()], 5).unwrap().len(), 1);
}

/// Memories stored before constraints were kept (schema 13) get theirs from the migration, so
/// the safety half finds an allergy said long before the upgrade.
#[test]
fn upgrading_from_schema_13_keeps_the_constraints_of_earlier_memories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let dana = scope("acme", Some("dana"), None);
    let peanuts = memory(&dana, Kind::Profile, "User is allergic to peanuts");
    let tea = memory(&dana, Kind::Preference, "User likes green tea");
    {
        let s = SqliteStore::open(&path).unwrap();
        insert(&s, &peanuts, None);
        insert(&s, &tea, None);
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE message_versions; DROP INDEX memories_constraints; ALTER TABLE memories DROP COLUMN constraints; PRAGMA user_version = 13;",
        )
        .unwrap();
    let s = SqliteStore::open(&path).unwrap();
    let found = s.constraints(&dana, mnemo_core::safety::query_domains("a dessert for the party"), 10).unwrap();
    assert_eq!(found.into_iter().map(|m| m.id).collect::<Vec<_>>(), vec![peanuts.id]);
}

/// Messages embedded before the users' message versions existed (schema 14) are found after the
/// upgrade: the migration gives every user with vectors a version to stamp the cache with.
#[test]
fn upgrading_from_schema_14_finds_messages_embedded_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let chat = scope("acme", Some("dana"), Some("c1"));
    {
        let s = SqliteStore::open(&path).unwrap();
        s.append_messages(&[msg(&chat, "d1", "We adopted a greyhound", t0())]).unwrap();
        s.embed_messages(&chat, &[(MessageId::new("d1").unwrap(), embedding(axis(0, 1, 0.0)).into())]).unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE message_versions; PRAGMA user_version = 14;")
        .unwrap();
    let s = SqliteStore::open(&path).unwrap();
    let near = s.nearest_messages(&chat.without_chat(), "test:8", &axis(0, 1, 0.0), 5, None).unwrap();
    assert_eq!(near.len(), 1);
}

/// A store written before schema 16 deleted from its lexical indexes by appending delete
/// markers, which carry the deleted words and which 'optimize' did not always drop. The upgrade
/// writes both indexes anew (no marker survives it) and turns FTS5's secure-delete on, so the
/// next delete removes the words themselves.
#[test]
fn upgrading_from_schema_15_drops_the_words_earlier_deletes_left_in_the_lexical_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let (dana, eve) = (scope("acme", Some("dana"), Some("c1")), scope("acme", Some("eve"), Some("c1")));
    {
        let s = SqliteStore::open(&path).unwrap();
        s.append_messages(&[msg(&dana, "d1", "We adopted a dog named Qwrtzplkbnm", t0())]).unwrap();
        s.append_messages(&[msg(&eve, "e1", "We adopted a cat named Vhgkdfrtwx", t0())]).unwrap();
    }
    let index_holds = |conn: &rusqlite::Connection, table: &str, word: &str| -> bool {
        let blobs: Vec<Vec<u8>> = conn
            .prepare(&format!("SELECT block FROM {table}_data"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        blobs.iter().any(|b| b.windows(word.len()).any(|w| w == word.as_bytes()))
    };
    let secure_delete = |conn: &rusqlite::Connection, table: &str| -> i64 {
        conn.query_row(&format!("SELECT v FROM {table}_config WHERE k = 'secure-delete'"), [], |r| r.get(0)).unwrap()
    };
    {
        // Dana's message leaves the index as a schema-15 store deleted: with a delete marker.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "INSERT INTO message_fts (message_fts, rank) VALUES ('secure-delete', 0); \
             DELETE FROM message_fts WHERE rowid IN (SELECT rowid FROM messages WHERE user_id = 'dana'); \
             PRAGMA user_version = 15;",
        )
        .unwrap();
        assert!(index_holds(&conn, "message_fts", "tzplkbnm"), "the delete marker must hold the word first");
    }
    let s = SqliteStore::open(&path).unwrap();
    drop(s);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert!(!index_holds(&conn, "message_fts", "tzplkbnm"), "the upgrade leaves a deleted word in the index");
    assert!(index_holds(&conn, "message_fts", "vhgkdfrtwx"), "the upgrade drops a word still indexed");
    assert_eq!(secure_delete(&conn, "message_fts"), 1);
    assert_eq!(secure_delete(&conn, "memory_fts"), 1);
    drop(conn);
    let s = SqliteStore::open(&path).unwrap();
    assert_eq!(s.search_messages(&eve, &["Vhgkdfrtwx".into()], 5).unwrap().len(), 1, "still found after the upgrade");
}

/// Every write of another handle to a user's message vectors reaches this handle's cached copy
/// of them: a new vector, a withheld message, an erasure, and a user written again after it.
#[test]
fn another_handles_message_writes_reach_this_handles_archive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let (a, b) = (SqliteStore::open(&path).unwrap(), SqliteStore::open(&path).unwrap());
    let chat = scope("acme", Some("dana"), Some("c1"));
    let dana = chat.without_chat();
    let id = |s: &str| MessageId::new(s).unwrap();
    let found = |q: Vec<f32>| -> Vec<String> {
        let hits = a.nearest_messages(&dana, "test:8", &q, 5, None).unwrap();
        hits.into_iter().map(|(m, _)| m.as_str().to_owned()).collect()
    };
    let say = |s: &SqliteStore, name: &str, v: Vec<f32>| {
        s.append_messages(&[msg(&chat, name, "a turn", t0())]).unwrap();
        s.embed_messages(&chat, &[(id(name), embedding(v).into())]).unwrap();
    };
    say(&b, "d1", axis(0, 1, 0.0));
    assert_eq!(found(axis(0, 1, 0.0)), ["d1"]);
    say(&b, "d2", axis(2, 3, 0.0));
    assert_eq!(found(axis(2, 3, 0.0))[0], "d2", "the other handle's new vector is seen");
    let withhold = Change::Withhold { owner: chat.clone(), messages: vec![id("d1")] };
    b.apply(&ChangeSet { tenant: chat.tenant.clone(), at: t0(), changes: vec![withhold] }).unwrap();
    assert_eq!(found(axis(0, 1, 0.0)), ["d2"], "the withheld message is gone");
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    b.erase_user(&chat.tenant, chat.user.as_ref().unwrap(), &event).unwrap();
    assert!(found(axis(2, 3, 0.0)).is_empty(), "an erased user's vectors are gone");
    say(&b, "d3", axis(4, 5, 0.0));
    assert_eq!(found(axis(2, 3, 0.0)), ["d3"], "only what was said after the erasure");
}

fn embedding(vector: Vec<f32>) -> Embedding {
    Embedding { model: "test:8".into(), vector }
}

/// Writes many memories in one change set (one commit, not one fsync each).
fn insert_all(store: &dyn Store, memories: Vec<Memory>) {
    let cs = ChangeSet {
        tenant: memories[0].owner.tenant.clone(),
        at: t0(),
        changes: memories
            .into_iter()
            .map(|memory| Change::Insert { memory, embedding: None, reason: "written".into() })
            .collect(),
    };
    store.apply(&cs).unwrap();
}

/// Dana's rows for the ranking test: "oboe" is rare among them, "bread" common, the rest filler.
fn danas_rows(dana: &Scope) -> (Vec<Memory>, Vec<Message>) {
    let texts = [
        "Dana plays the oboe",
        "Dana bakes bread weekly",
        "Dana buys bread at the market on Saturdays",
        "Dana shares bread",
        "Dana lives in Porto",
        "Dana works as a nurse",
        "Dana has a cat named Miso",
        "Dana likes long walks by the river",
        "Dana is learning Portuguese",
        "Dana visits her sister in June",
    ];
    let chat = Scope::parse(dana.tenant.as_str(), None, Some("dana"), Some("c1")).unwrap();
    let memories = texts.iter().map(|t| memory(dana, Kind::Profile, t)).collect();
    let messages =
        texts.iter().enumerate().map(|(i, t)| msg(&chat, &format!("d{i}"), t, t0() + Duration::minutes(i as i64)));
    (memories, messages.collect())
}

/// The ranking a user gets depends on that user's rows only: other users flooding the store
/// with one of the query's words (here 300 rows saying "oboe", which would make it the most
/// common word of a shared index and so the weakest) changes neither the memories' nor the
/// messages' order. Before the index was partitioned, BM25 weighed "oboe" by its frequency in the
/// whole store and the flood pushed Dana's oboe memory below her bread ones.
#[test]
fn a_users_lexical_ranking_ignores_other_users_rows() {
    let (_d, store) = open_temp();
    let dana = scope("acme", Some("dana"), None);
    let (memories, messages) = danas_rows(&dana);
    let oboe = memories[0].id;
    insert_all(&*store, memories);
    store.append_messages(&messages).unwrap();
    let terms = vec!["oboe".to_string(), "bread".to_string()];
    let ranked = |store: &dyn Store| {
        let lexical = store.lexical(&dana, &terms, 20).unwrap();
        let archival = store.search_messages(&dana, &terms, 20).unwrap();
        (lexical.into_iter().map(|h| h.0).collect::<Vec<_>>(), archival.into_iter().map(|h| h.0).collect::<Vec<_>>())
    };
    let alone = ranked(&*store);
    assert_eq!(alone.0.len(), 4, "{alone:?}");
    assert_eq!(alone.0[0], oboe, "the rarer word weighs more within Dana's own rows");
    assert_eq!(alone.1.len(), 4, "{alone:?}");
    assert_eq!(alone.1[0], MessageId::new("d0").unwrap());

    for u in 0..30 {
        let other = scope("acme", Some(&format!("user{u}")), None);
        let chat = scope("acme", Some(&format!("user{u}")), Some("c1"));
        let texts: Vec<String> = (0..10).map(|i| format!("Practised the oboe for {i} hours")).collect();
        insert_all(&*store, texts.iter().map(|t| memory(&other, Kind::Event, t)).collect());
        let msgs: Vec<Message> =
            texts.iter().enumerate().map(|(i, t)| msg(&chat, &format!("u{u}m{i}"), t, t0())).collect();
        store.append_messages(&msgs).unwrap();
    }
    assert_eq!(ranked(&*store), alone, "other users' rows changed Dana's ranking");
    // The flood itself is searchable by its owners: the words are indexed, just per partition.
    assert_eq!(store.lexical(&scope("acme", Some("user7"), None), &terms, 20).unwrap().len(), 10);
}

/// A query's lexical work is bounded for a very large user: when one of its words is in more
/// rows than one query ranks (2,000), that word is left out and the rarer one ranks alone, for
/// memories and messages alike; the same query over a small user ranks both words. Before the
/// bound, the 2,100 rows saying "walk" were all ranked and filled the 50 results.
#[test]
fn a_word_most_of_a_large_users_rows_share_is_left_out_of_the_ranking() {
    let (_d, store) = open_temp();
    let dana = scope("acme", Some("dana"), None);
    let chat = scope("acme", Some("dana"), Some("c1"));
    let mut texts: Vec<String> = (0..2_100).map(|i| format!("Took a walk around the block, day {i}")).collect();
    texts.extend((0..5).map(|i| format!("Took a walk with Mia, time {i}")));
    insert_all(&*store, texts.iter().map(|t| memory(&dana, Kind::Event, t)).collect());
    let msgs: Vec<Message> = texts.iter().enumerate().map(|(i, t)| msg(&chat, &format!("m{i}"), t, t0())).collect();
    store.append_messages(&msgs).unwrap();
    let terms = vec!["walk".to_string(), "mia".to_string()];
    let memories = store.lexical(&dana, &terms, 50).unwrap();
    assert_eq!(memories.len(), 5, "only the rows of the rare word are ranked: {}", memories.len());
    assert_eq!(store.search_messages(&dana, &terms, 50).unwrap().len(), 5);
    // Only the common word: too many rows to rank, no lexical hits (the vector half ranks them).
    assert!(store.lexical(&dana, &["walk".to_string()], 50).unwrap().is_empty());

    let eve = scope("acme", Some("eve"), None);
    insert_all(&*store, texts[2_100..].iter().chain(&texts[..20]).map(|t| memory(&eve, Kind::Event, t)).collect());
    assert_eq!(store.lexical(&eve, &terms, 50).unwrap().len(), 25, "a small user ranks every matching row");
}

/// A store written at schema 4 (FTS5 doing its own porter stemming, a `part` column holding the
/// partition) answers lexical and archival searches after the upgrade to per-partition indexes:
/// the migration rebuilds both from the rows, active memories and messages not withheld only.
#[test]
fn upgrading_from_schema_4_rebuilds_the_lexical_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let dana = scope("acme", Some("dana"), None);
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let eve = scope("acme", Some("eve"), None);
    let mut keyed = memory(&dana, Kind::Profile, "User works in product design");
    keyed.key = Some("job".into());
    let greyhound = memory(&dana, Kind::Profile, "Dana adopted two greyhounds");
    let archived = memory(&dana, Kind::Profile, "Dana once adopted a parrot");
    let in_chat = memory(&c1, Kind::Event, "Dana adopted a kitten in chat one");
    let evens = memory(&eve, Kind::Profile, "Eve adopted a greyhound");
    {
        let s = SqliteStore::open(&path).unwrap();
        for m in [&keyed, &greyhound, &archived, &in_chat, &evens] {
            insert(&s, m, None);
        }
        s.apply(&ChangeSet {
            tenant: dana.tenant.clone(),
            at: t0(),
            changes: vec![Change::SetStatus {
                id: archived.id,
                status: Status::Archived,
                event: HistoryEvent::Forgotten,
                reason: "forgotten".into(),
                sources: vec![],
            }],
        })
        .unwrap();
        s.append_messages(&[
            msg(&c1, "d1", "We are adopting a greyhound", t0()),
            msg(&scope("acme", Some("dana"), Some("c2")), "d3", "Pottery classes on Tuesday", t0()),
            msg(&scope("acme", Some("eve"), Some("c1")), "e1", "My greyhound hates rain", t0()),
        ])
        .unwrap();
        s.append_messages(&[msg(&c1, "d2", "My card is stolen, greyhound or not", t0())]).unwrap();
        s.apply(&ChangeSet {
            tenant: dana.tenant.clone(),
            at: t0(),
            changes: vec![Change::Withhold { owner: c1.clone(), messages: vec![MessageId::new("d2").unwrap()] }],
        })
        .unwrap();
    }
    // Back to schema 4 exactly: its FTS tables, filled the way it filled them (every active
    // memory and every message not withheld, FTS5 tokenizing the raw text).
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE observations; DROP TABLE installation; DROP TABLE document_vectors; DROP TABLE documents; DROP TABLE memory_fts; DROP TABLE message_fts; \
             CREATE VIRTUAL TABLE memory_fts USING fts5 (content, part, tokenize = 'porter unicode61'); \
             CREATE VIRTUAL TABLE message_fts USING fts5 (content, part, tokenize = 'porter unicode61'); \
             INSERT INTO memory_fts (rowid, content, part) \
               SELECT rowid, content, 'zp0000000000000000' FROM memories WHERE status = 'active'; \
             INSERT INTO message_fts (rowid, content, part) \
               SELECT rowid, content, 'zp0000000000000000 zp0000000000000001' FROM messages WHERE withheld = 0; \
             ALTER TABLE memories DROP COLUMN rule; ALTER TABLE message_embeddings DROP COLUMN passages; ALTER TABLE memories DROP COLUMN metadata; DROP TABLE message_versions; DROP INDEX memories_constraints; ALTER TABLE memories DROP COLUMN constraints; PRAGMA user_version = 4;",
        )
        .unwrap();
    let s = SqliteStore::open(&path).unwrap();
    let ids = |hits: Vec<(MemoryId, f32)>| {
        let mut v: Vec<MemoryId> = hits.into_iter().map(|h| h.0).collect();
        v.sort();
        v
    };
    let mut adopted = vec![greyhound.id];
    assert_eq!(ids(s.lexical(&dana, &["adopted".into()], 10).unwrap()), adopted, "archived and chat rows stay out");
    adopted.push(in_chat.id);
    adopted.sort();
    assert_eq!(ids(s.lexical(&c1, &["adopt".into()], 10).unwrap()), adopted, "stems match across word forms");
    assert_eq!(ids(s.lexical(&dana, &["occupation".into()], 10).unwrap()), vec![keyed.id], "key words indexed");
    assert!(s.lexical(&dana, &["parrot".into()], 10).unwrap().is_empty());
    assert_eq!(ids(s.lexical(&eve, &["greyhound".into()], 10).unwrap()), vec![evens.id]);
    let found = |scope: &Scope, term: &str| {
        s.search_messages(scope, &[term.to_string()], 10)
            .unwrap()
            .into_iter()
            .map(|h| h.0.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(found(&dana, "greyhounds"), ["d1"], "withheld d2 and Eve's e1 stay out");
    assert_eq!(found(&c1, "greyhound"), ["d1"]);
    assert_eq!(found(&dana, "class"), ["d3"]);
    assert!(found(&c1, "class").is_empty(), "a chat's search stays in the chat");
    // The new tables have no `part` column: every token carries its partition instead.
    let columns: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM pragma_table_info('memory_fts') WHERE name = 'part'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(columns, 0);
    // Writes after the upgrade land in the new index.
    let later = memory(&dana, Kind::Profile, "Dana adopted a tortoise");
    insert(&s, &later, None);
    assert_eq!(ids(s.lexical(&dana, &["tortoise".into()], 10).unwrap()), vec![later.id]);
}
