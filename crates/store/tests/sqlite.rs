//! SQLite-specific behaviour: durability across a crash, fail points between write and commit,
//! cache coherence between processes sharing one file.

use std::process::Command;

use mnemo_core::{Kind, MemoryId};
use mnemo_store::{Change, ChangeSet, Embedding, SqliteStore, Store};

use crate::conformance::{axis, insert, memory, msg, scope, t0};

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
    assert!(err.contains("dimension 3") && err.contains("reembed"), "{err}");
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
    // Back to schema 1 exactly: the objects of versions 2 to 4 dropped.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE user_states; DROP TABLE extraction_queue; DROP TABLE chat_progress; DROP TABLE message_fts; DROP TABLE message_embeddings; DROP INDEX messages_by_user; \
             ALTER TABLE messages DROP COLUMN withheld; PRAGMA user_version = 1;",
        )
        .unwrap();
    let s = SqliteStore::open(&path).unwrap();
    let hits = s.search_messages(&scope("acme", Some("dana"), None), &["greyhound".into()], 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(s.search_messages(&chat, &["greyhound".into()], 5).unwrap().len(), 1);
}
