//! An acknowledged write survives a crash: `mnemo serve` is killed with SIGKILL while writers
//! are sending messages and memories, three times over, and after each restart every message
//! and memory the server had answered 200 for is still there (sending a message again appends
//! nothing: replay is idempotent by message id, so a survivor is a duplicate; a memory is read
//! back by id). The same holds when the kill lands during maintenance, which must also leave no
//! half-applied state behind: the SQLite file and its full-text indexes check out, and the next
//! maintenance run completes.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::{create_key, serve_with};

/// The admin key `POST /v1/maintain` needs.
const ADMIN: &str = "crash-test-admin-key-of-at-least-32-characters";

/// No per-tenant rate limit: the writers send as fast as the server answers, and every write
/// must be answered 200 (this test is about durability, not the limit).
const NO_RATE_LIMIT: (&str, &str) = ("MNEMO_LIMITS__REQUESTS_PER_SECOND", "0");

/// Sends `method path` with an optional JSON body over one connection; `None` when the
/// connection fails or breaks (a killed server), else the status and the JSON body.
fn send(base: &str, key: &str, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, Value)> {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let json = response.split_once("\r\n\r\n").and_then(|(_, b)| serde_json::from_str(b).ok())?;
    Some((status, json))
}

fn post(base: &str, key: &str, path: &str, body: &Value) -> Option<(u16, Value)> {
    send(base, key, "POST", path, Some(body))
}

fn message(id: &str, text: &str) -> Value {
    json!({"user_id": "dana", "chat_id": "c1", "messages": [{"id": id, "role": "user", "content": text}]})
}

/// A write the server answered 200 for.
#[derive(Debug, Clone)]
enum Acked {
    /// A message id.
    Message(String),
    /// The id of the memory an add's verdict named.
    Memory(String),
}

/// Four writer threads and what they share: the stop flag and a count of acknowledged writes.
struct Writers {
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
    handles: Vec<std::thread::JoinHandle<Vec<Acked>>>,
}

impl Writers {
    /// Waits until `n` writes were acknowledged (a loaded machine answers the first ones late),
    /// for at most a minute.
    fn wait_for(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.acked.load(Ordering::Relaxed) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the writers (the server is gone or going) and returns every acknowledged write.
    fn join(self) -> Vec<Acked> {
        self.stop.store(true, Ordering::Relaxed);
        self.handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    }
}

/// Writers send one message or one memory per request, alternately, until stopped; each keeps
/// what was answered 200.
fn writers(base: &str, key: &str, round: usize) -> Writers {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let handles = (0..4)
        .map(|w| {
            let (base, key, stop, count) = (base.to_string(), key.to_string(), stop.clone(), count.clone());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let id = format!("r{round}-w{w}-{i}");
                    let got = if i % 2 == 0 {
                        let text =
                            format!("Round {round}, writer {w}: on day {i} I repotted fern number {i} by the window.");
                        post(&base, &key, "/v1/messages", &message(&id, &text))
                    } else {
                        let content = format!("Dana's fern {id} gets watered on weekday {}", i % 7);
                        post(
                            &base,
                            &key,
                            "/v1/memories",
                            &json!({"user_id": "dana", "kind": "fact", "content": content}),
                        )
                    };
                    match got {
                        Some((200, _)) if i % 2 == 0 => acked.push(Acked::Message(id)),
                        Some((200, body)) => {
                            acked.extend(body["verdict"]["memory_id"].as_str().map(|m| Acked::Memory(m.to_string())))
                        }
                        Some((status, body)) => panic!("{id}: {status} {body}"),
                        None => break, // the server is gone
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                }
                acked
            })
        })
        .collect();
    Writers { stop, acked: count, handles }
}

/// Every acknowledged write is on the restarted server at `base`.
fn assert_all_there(base: &str, key: &str, acked: &[Acked], round: usize) {
    for a in acked {
        match a {
            Acked::Message(id) => {
                let (status, body) = post(base, key, "/v1/messages", &message(id, &format!("replay of {id}")))
                    .unwrap_or_else(|| panic!("{id}: the restarted server did not answer"));
                assert_eq!(status, 200, "{id}: {body}");
                assert_eq!(body["appended"], 0, "round {round}: acknowledged message {id} was lost: {body}");
            }
            Acked::Memory(id) => {
                let (status, body) = send(base, key, "GET", &format!("/v1/memories/{id}?user_id=dana"), None)
                    .unwrap_or_else(|| panic!("{id}: the restarted server did not answer"));
                assert_eq!(status, 200, "round {round}: acknowledged memory {id} was lost: {body}");
            }
        }
    }
}

#[test]
fn every_acknowledged_write_survives_kill_9_three_times() {
    let dir = tempfile::tempdir().unwrap();
    let data: &Path = dir.path();
    let key = create_key(data, "acme");
    let mut all_acked: Vec<Acked> = Vec::new();
    for round in 0..3 {
        let server = serve_with(data, &[NO_RATE_LIMIT]);
        let writers = writers(&server.base, &key, round);
        // Let acknowledged writes pile up, then crash the server under them.
        writers.wait_for(40);
        server.kill_9();
        let acked = writers.join();
        assert!(!acked.is_empty(), "round {round}: no write was acknowledged before the kill");
        all_acked.extend(acked);

        // Restarted, the server has every write it acknowledged, in this round and before.
        let server = serve_with(data, &[NO_RATE_LIMIT]);
        assert_all_there(&server.base, &key, &all_acked, round);
        server.kill_9();
    }
}

/// What must hold of the SQLite file whatever was interrupted: SQLite's own check, both FTS5
/// indexes against their rows, the lexical index holding exactly the active memories and the
/// messages not withheld, every superseded memory pointing at a memory that exists, no vector
/// without its memory, and each memory with a history in the status its last history event
/// moved it to (a transition is applied with its history row or not at all; the aged store's
/// rows, written beneath the engine, start without one).
fn assert_consistent(db: &Path, round: usize) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok", "round {round}: PRAGMA integrity_check");
    for fts in ["memory_fts", "message_fts"] {
        conn.execute(&format!("INSERT INTO {fts} ({fts}) VALUES ('integrity-check')"), [])
            .unwrap_or_else(|e| panic!("round {round}: {fts} fails its integrity check: {e}"));
    }
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    for (what, sql) in [
        (
            "indexed memories that are not active",
            "SELECT count(*) FROM memory_fts WHERE rowid NOT IN (SELECT rowid FROM memories WHERE status = 'active')",
        ),
        (
            "active memories missing from the index",
            "SELECT count(*) FROM memories WHERE status = 'active' AND rowid NOT IN (SELECT rowid FROM memory_fts)",
        ),
        (
            "indexed messages that are withheld or gone",
            "SELECT count(*) FROM message_fts WHERE rowid NOT IN (SELECT rowid FROM messages WHERE withheld = 0)",
        ),
        (
            "messages missing from the index",
            "SELECT count(*) FROM messages WHERE withheld = 0 AND rowid NOT IN (SELECT rowid FROM message_fts)",
        ),
        (
            "superseded memories whose successor does not exist",
            "SELECT count(*) FROM memories WHERE status = 'superseded' AND superseded_by NOT IN (SELECT id FROM memories)",
        ),
        (
            "vectors without their memory",
            "SELECT count(*) FROM embeddings WHERE memory_rowid NOT IN (SELECT rowid FROM memories)",
        ),
        (
            "memories whose status is not the one their last history event set",
            "SELECT count(*) FROM memories m WHERE m.status <> \
             (SELECT json_extract(h.to_status, '$.status') FROM history h WHERE h.memory_id = m.id ORDER BY h.rowid DESC LIMIT 1)",
        ),
    ] {
        assert_eq!(count(sql), 0, "round {round}: {what}");
    }
}

/// Answers `POST /v1/maintain` on a server over `data`, or `None` when the server died first.
fn maintain(base: &str) -> Option<(u16, Value)> {
    post(base, ADMIN, "/v1/maintain", &json!({}))
}

/// The environment of the servers below: the admin key for `/v1/maintain`, a per-user cap
/// low enough that the aged store's users are over it, and no rate limit for the writers.
fn maintenance_env() -> [(&'static str, &'static str); 3] {
    [("MNEMO_ADMIN_KEY", ADMIN), ("MNEMO_LIFECYCLE__MAX_ACTIVE_PER_USER", support::aged::CAP), NO_RATE_LIMIT]
}

/// History rows on the aged store's users `users`: their rows start without history, so each is
/// a transition a maintenance run committed.
fn committed_transitions(db: &Path, users: std::ops::Range<usize>) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    let names: Vec<String> = users.map(|u| format!("'user-{u}'")).collect();
    let sql = format!(
        "SELECT count(*) FROM history h JOIN memories m ON m.id = h.memory_id WHERE m.user_id IN ({})",
        names.join(", ")
    );
    conn.query_row(&sql, [], |r| r.get(0)).unwrap()
}

/// Seconds one uninterrupted `POST /v1/maintain` takes over a fresh aged store of `users` users
/// on this machine: what the kill delays below are fractions of.
fn time_one_maintenance(users: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    support::aged::build(dir.path(), 0..users);
    let server = serve_with(dir.path(), &maintenance_env());
    let started = Instant::now();
    let (status, body) = maintain(&server.base).expect("the reference maintenance run answered");
    assert_eq!(status, 200, "{body}");
    assert!(!body["transitions"].as_array().unwrap().is_empty(), "the aged store gave maintenance work: {body}");
    started.elapsed()
}

#[test]
fn kill_9_during_maintenance_loses_no_write_and_leaves_no_half_applied_state() {
    const USERS_PER_ROUND: usize = 3;
    let whole = time_one_maintenance(USERS_PER_ROUND);
    let dir = tempfile::tempdir().unwrap();
    let data: &Path = dir.path();
    let db = data.join("mnemo.db");
    let key = create_key(data, "acme");
    let env = maintenance_env();
    let mut all_acked: Vec<Acked> = Vec::new();
    // Kills that landed inside a run: it never answered, yet had committed part of its work.
    let mut mid_run = 0;
    // Each round brings fresh aged users, so every run has as much to do as the timed one, and
    // kills it at a different point of it, with writers running beside it.
    for (round, fraction) in [0.1, 0.4, 0.7].into_iter().enumerate() {
        let users = round * USERS_PER_ROUND..(round + 1) * USERS_PER_ROUND;
        support::aged::build(data, users.clone());
        let server = serve_with(data, &env);
        let writers = writers(&server.base, &key, round);
        writers.wait_for(4);
        let base = server.base.clone();
        let run = std::thread::spawn(move || maintain(&base));
        std::thread::sleep(whole.mul_f64(fraction));
        server.kill_9();
        match run.join().unwrap() {
            None => mid_run += usize::from(committed_transitions(&db, users) > 0),
            Some((status, body)) => assert_eq!(status, 200, "round {round}: {body}"),
        }
        all_acked.extend(writers.join());

        assert_consistent(&db, round);
        let server = serve_with(data, &env);
        assert_all_there(&server.base, &key, &all_acked, round);
        server.kill_9();
    }
    eprintln!("{mid_run} of 3 kills landed inside a maintenance run (one takes {whole:?} here)");
    assert!(mid_run > 0, "no kill landed inside a maintenance run (one takes {whole:?} here)");

    // The job lock died with the killed server: the next run is not skipped, completes, and
    // leaves nothing for a further run to do.
    let server = serve_with(data, &env);
    let (status, first) = maintain(&server.base).expect("maintenance after the kills answered");
    assert_eq!(status, 200, "{first}");
    assert!(first.get("skipped").is_none(), "a lock of a killed server is still held: {first}");
    let (status, second) = maintain(&server.base).expect("a second maintenance run answered");
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["transitions"], json!([]), "a completed run left work undone: {second}");
    assert_all_there(&server.base, &key, &all_acked, 3);
    server.kill_9();
    assert_consistent(&db, 3);
}
