//! The `mnemo` binary across backends and processes: moving a SQLite store to PostgreSQL with
//! `mnemo copy`, two `mnemo serve` processes on one database, and maintenance running once when
//! several processes start it.
//!
//! The PostgreSQL tests need a server: `scripts/pg.sh start` and
//! `export MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url)`. Without it they skip with a message,
//! except under CI (`CI` set), where they fail instead.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use mnemo::store::{Change, ChangeSet, JobLocks, Memories, PostgresStore, SqliteStore, TempDatabase};

/// A database of this test, or `None` (after saying why) when no server is configured.
fn pg_database(test: &str) -> Option<TempDatabase> {
    match TempDatabase::from_env() {
        Ok(Some(db)) => Some(db),
        Ok(None) => {
            eprintln!(
                "skipping {test}: MNEMO_TEST_DATABASE_URL is not set (run `scripts/pg.sh start` and \
                 `export MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url)` to run it)"
            );
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// The binary with a data directory, the fast deterministic embedder, and nothing inherited
/// that could point it elsewhere.
fn mnemo(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mnemo"));
    c.arg("--data-dir")
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env_remove("MNEMO_CONFIG")
        .env_remove("MNEMO_DATABASE_URL")
        .env_remove("MNEMO_ADMIN_KEY");
    c
}

fn run(c: &mut Command) -> (Output, String, String) {
    let o = c.output().expect("run mnemo");
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    (o, out, err)
}

const SCOPE: &[&str] = &["--tenant", "acme", "--user", "dana", "--chat", "c1"];

fn chat(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("chat.jsonl");
    let lines = [
        ("m1", "My name is Dana."),
        ("m2", "I live in Lisbon."),
        ("m3", "I have a dog named Biscuit."),
        ("m4", "I prefer short answers."),
        ("m5", "Actually, I moved to Porto last month."),
        ("m6", "I need to renew my passport by Friday."),
    ];
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(i, (id, content))| {
            format!(
                "{}\n",
                serde_json::json!({"id": id, "role": "user", "content": content, "at": format!("2026-03-02T09:0{i}:00Z")})
            )
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// Moving up: memories ingested into a SQLite data directory, copied to PostgreSQL, are listed
/// identically from there; a second copy into the now non-empty database is refused.
#[test]
fn a_sqlite_store_copied_to_postgres_lists_the_same_memories() {
    let Some(db) = pg_database("a_sqlite_store_copied_to_postgres_lists_the_same_memories") else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = chat(dir.path());
    let (o, out, err) = run(mnemo(&data).arg("ingest").arg(&file).args(SCOPE));
    assert!(o.status.success(), "{out}{err}");
    let (o, _, err) = run(mnemo(&data).args(["recall", "where do I live?"]).args(SCOPE));
    assert!(o.status.success(), "{err}");
    let list = |c: &mut Command| {
        let (o, out, err) = run(c.args(["list", "--json"]).args(SCOPE));
        assert!(o.status.success(), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let before = list(&mut mnemo(&data));
    assert!(before.as_array().unwrap().len() >= 4, "the chat should leave several memories: {before}");
    assert!(before.to_string().contains("superseded"), "the correction should supersede: {before}");

    let (o, out, err) = run(mnemo(&data).args(["copy", "--from"]).arg(&data).args(["--to", db.url(), "--batch", "5"]));
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("copy verified"), "{out}");
    for table in ["messages", "memories", "embeddings", "history", "links", "traces"] {
        let line = out.lines().find(|l| l.starts_with(&format!("{table} "))).unwrap_or_else(|| panic!("{out}"));
        assert!(line.ends_with("ok"), "{line}");
    }
    assert!(out.contains(": equal") && !out.contains("DIFFERS"), "{out}");

    let after = list(mnemo(&data).env("MNEMO_DATABASE_URL", db.url()));
    assert_eq!(after, before);
    // The copied store is live: recall finds the copied memories through PostgreSQL's indexes.
    let (o, out, err) = run(mnemo(&data).env("MNEMO_DATABASE_URL", db.url()).args(["recall", "Porto"]).args(SCOPE));
    assert!(o.status.success() && out.contains("Porto"), "{out}{err}");
    let now = list(mnemo(&data).env("MNEMO_DATABASE_URL", db.url()));

    let (o, out, err) = run(mnemo(&data).args(["copy", "--from"]).arg(&data).args(["--to", db.url()]));
    assert!(!o.status.success(), "{out}");
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(list(mnemo(&data).env("MNEMO_DATABASE_URL", db.url())), now, "a refused copy writes nothing");
}

#[test]
fn copy_explains_a_source_that_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("nothing-here");
    let (o, _, err) = run(mnemo(dir.path()).args(["copy", "--from"]).arg(&empty).arg("--to").arg(dir.path().join("t")));
    assert!(!o.status.success());
    assert!(err.contains("holds no mnemo store"), "{err}");
    assert!(!empty.exists(), "a missing source is not created");
}

/// A second `mnemo maintain` while another process holds the job lock does nothing and says so.
#[test]
fn maintain_skips_while_another_process_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = chat(dir.path());
    assert!(run(mnemo(&data).arg("ingest").arg(&file).args(SCOPE)).0.status.success());
    let store = SqliteStore::open(data.join("mnemo.db")).unwrap();
    let held = store.try_job_lock("maintain").unwrap().expect("the lock is free");
    let (o, out, err) = run(mnemo(&data).arg("maintain"));
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("skipped: another process is running maintenance"), "{out}");
    let (_, json, _) = run(mnemo(&data).args(["maintain", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["skipped"].is_string() && v["examined"] == 0, "{v}");
    drop(held);
    let (o, out, err) = run(mnemo(&data).arg("maintain"));
    assert!(o.status.success(), "{err}");
    assert!(out.contains("examined") && !out.contains("skipped"), "{out}");
}

/// A `mnemo serve` child process, killed when the test ends however it ends.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, url: &str) -> Server {
    let mut child = mnemo(data)
        .args(["serve", "--addr", "127.0.0.1:0"])
        // The address is read from the default `info` log line, in text.
        .env_remove("MNEMO_LOG")
        .env_remove("RUST_LOG")
        .env_remove("MNEMO_LOG_FORMAT")
        .env("MNEMO_DATABASE_URL", url)
        .env("MNEMO_ADMIN_KEY", ADMIN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the server exited before listening").unwrap();
        if let Some(a) = line.split("listening on http://").nth(1) {
            break a.trim().parse().unwrap();
        }
    };
    // Keep draining its stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server { child, addr }
}

const ADMIN: &str = "admin-secret-for-the-two-servers-test";

/// One HTTP/1.1 request on a fresh connection; the status code and the body as JSON.
fn http(addr: SocketAddr, method: &str, path: &str, key: &str, body: &str) -> (u16, serde_json::Value) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or(serde_json::Value::String(body.to_string())))
}

/// An active memory whose time-to-live ran out long ago: the next maintenance archives it.
fn expired_memory() -> mnemo::core::Memory {
    let owner = mnemo::Scope::parse("acme", None, Some("dana"), None).unwrap();
    let at: chrono::DateTime<chrono::Utc> = "2020-01-01T00:00:00Z".parse().unwrap();
    let content = "User is at a conference this week";
    mnemo::core::Memory {
        id: mnemo::core::MemoryId::new(),
        owner,
        kind: mnemo::core::Kind::Event,
        content: content.into(),
        key: None,
        value: None,
        confidence: 0.9,
        salience: 0.6,
        pinned: false,
        surface: mnemo::core::Kind::Event.default_surface(),
        status: mnemo::core::Status::Active,
        due_at: None,
        valid_from: None,
        valid_until: None,
        provenance: mnemo::core::Provenance {
            sources: vec![],
            chat: None,
            extractor: "test".into(),
            extractor_version: "1".into(),
            rule: None,
        },
        content_hash: mnemo::core::text::content_hash(content),
        created_at: at,
        updated_at: at,
        last_accessed: None,
        last_surfaced: None,
        access_count: 0,
        distinct_sessions: 0,
        reinforcements: 0,
        expires_at: Some(at + chrono::Duration::days(1)),
        sensitivity: mnemo::core::Sensitivity::Normal,
        metadata: None,
    }
}

/// Several servers, one database: what one writes the other recalls, and maintenance started on
/// both at once runs on one. The overlap is made certain, not left to timing: the test holds a
/// row lock that the first server's maintenance needs, waits until PostgreSQL shows that server
/// waiting on it (so it holds the job lock), asks the second server, then lets the first finish.
#[test]
fn two_servers_on_one_database_share_memory_and_run_maintenance_once() {
    let Some(db) = pg_database("two_servers_on_one_database_share_memory_and_run_maintenance_once") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (o, key, err) = run(mnemo(&data).args(["keys", "create", "--tenant", "acme"]));
    assert!(o.status.success(), "{err}");
    let key = key.trim().to_string();
    let one = serve(&data, db.url());
    let two = serve(&data, db.url());

    let body = r#"{"user_id":"dana","chat_id":"c1","messages":[{"role":"user","content":"I live in Lisbon."}]}"#;
    let (status, written) = http(one.addr, "POST", "/v1/messages", &key, body);
    assert_eq!(status, 200, "{written}");
    let (status, recalled) = http(two.addr, "POST", "/v1/recall", &key, r#"{"user_id":"dana","query":"Lisbon"}"#);
    assert_eq!(status, 200, "{recalled}");
    assert!(recalled.to_string().contains("User lives in Lisbon"), "server two recalls what one wrote: {recalled}");

    let expired = expired_memory();
    let store = PostgresStore::connect(db.url()).unwrap();
    let insert = Change::Insert { memory: expired.clone(), embedding: None, reason: "test".into() };
    store
        .apply(&ChangeSet { tenant: expired.owner.tenant.clone(), at: expired.created_at, changes: vec![insert] })
        .unwrap();

    let mut blocker = db.client().unwrap();
    let mut row_lock = blocker.transaction().unwrap();
    row_lock.execute("SELECT 1 FROM memories WHERE id = $1 FOR UPDATE", &[&expired.id.to_string()]).unwrap();
    let one_addr = one.addr;
    let first = std::thread::spawn(move || http(one_addr, "POST", "/v1/maintain", ADMIN, "").1);

    let mut watcher = db.client().unwrap();
    let started = Instant::now();
    loop {
        let waiting: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'",
                &[],
            )
            .unwrap()
            .get(0);
        if waiting > 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "server one's maintenance never reached the row");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, second) = http(two.addr, "POST", "/v1/maintain", ADMIN, "");
    assert_eq!(status, 200, "{second}");
    assert!(
        second["skipped"].as_str().is_some_and(|s| s.contains("another process")),
        "server two must skip while server one runs: {second}"
    );
    assert_eq!(second["examined"], 0);
    assert!(!first.is_finished(), "server one is still waiting on the test's row lock");
    row_lock.rollback().unwrap();
    let first = first.join().unwrap();
    assert!(first.get("skipped").is_none(), "server one ran: {first}");
    let moved = first["transitions"].as_array().unwrap();
    assert_eq!(moved.len(), 1, "{first}");
    assert_eq!(moved[0]["id"], expired.id.to_string());
    assert_eq!(moved[0]["to"], "archived");
    // Once the first run is over, the job is free again: a run on server two does it (and finds
    // nothing left to change).
    let (_, again) = http(two.addr, "POST", "/v1/maintain", ADMIN, "");
    assert!(again.get("skipped").is_none() && again["transitions"].as_array().unwrap().is_empty(), "{again}");
}
