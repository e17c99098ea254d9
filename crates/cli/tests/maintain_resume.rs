//! Acceptance of issue 5: `mnemo maintain` killed halfway (SIGKILL after its first committed
//! page) and run again ends in exactly the state of one uninterrupted run on a copy of the same
//! store, compared through the engine's whole-state rendering.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use mnemo::core::{ChatId, Kind, Memory as Row, MessageId, Provenance, Scope, Status};
use mnemo::store::{Change, ChangeSet, Embedding, Memories, SqliteStore, Store};
use mnemo::{Config, ManualClock, Memory};

const USERS: usize = 3;
const PER_USER: usize = 700;
/// Lower than the default so the cap archives some of every user's rows.
const CAP: &str = "60";

fn t0() -> DateTime<Utc> {
    "2026-01-01T09:00:00Z".parse().unwrap()
}

fn at() -> DateTime<Utc> {
    "2026-06-01T00:00:00Z".parse().unwrap()
}

fn unit(i: usize, mix: f32) -> Vec<f32> {
    let mut v = [0.0f32; 16];
    v[i % 16] = 1.0;
    v[(i + 1) % 16] = mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

fn scope(u: usize) -> Scope {
    Scope::parse("acme", None, Some(&format!("user-{u}")), None).unwrap()
}

/// 2,100 memories over three users (three pages of the job): due and not-due transitions of
/// every kind, near-duplicate pairs, recurring events across chats, over the cap of 60.
fn build(dir: &Path) {
    let store = SqliteStore::open(dir.join("mnemo.db")).unwrap();
    for u in 0..USERS {
        let owner = scope(u);
        let mut changes = Vec::new();
        for i in 0..PER_USER {
            let (kind, status, days_ago) = match i % 10 {
                0 => (Kind::Ephemeral, Status::Active, 10),
                1 => (Kind::Event, Status::Active, 45),
                2 => (Kind::OpenLoop, Status::Active, 70),
                3 => (Kind::Event, Status::Stale, 120),
                4 => (Kind::Fact, Status::Active, 20),
                5 => (Kind::Fact, Status::Active, (i % 50) as i64),
                6 => (Kind::Event, Status::Active, 5),
                7 => (Kind::Preference, Status::Active, (i % 90) as i64),
                8 => (Kind::Profile, Status::Active, (i % 30) as i64),
                _ => (Kind::Lore, Status::Active, (i % 200) as i64),
            };
            // Rows i and i+10 share a vector: near-duplicates where the kind is the same and
            // still active. Facts of class 5 repeat a sentence across two chats (merged, and
            // knowledge); events of class 6 recur across two chats (knowledge).
            let content = match i % 10 {
                5 => format!("User {u} keeps fact number {} about the garden shed", i / 20),
                6 => format!("User {u} went climbing at the gym with group {}", i / 20),
                _ => format!("User {u} memory {i} of kind {kind}"),
            };
            let created = at() - Duration::days(days_ago) - Duration::minutes(i as i64);
            let mut m = Row::new(owner.clone(), kind, content, created.max(t0()));
            m.status = status;
            if i % 10 == 4 {
                m.expires_at = Some(m.created_at + Duration::days(1));
            }
            m.salience = 0.3 + (i % 7) as f32 / 10.0;
            m.provenance = Provenance {
                sources: vec![MessageId::new(format!("m{u}-{i}")).unwrap()],
                chat: Some(ChatId::new(format!("c{}", (i / 10) % 2)).unwrap()),
                extractor: "test".into(),
                extractor_version: "1".into(),
                rule: None,
            };
            let vector = unit(i / 20, if i % 20 < 10 { 0.0 } else { 0.05 });
            changes.push(Change::Insert {
                memory: m,
                embedding: Some(Embedding { model: "test:16".into(), vector }),
                reason: "seed".into(),
            });
        }
        store.apply(&ChangeSet { tenant: owner.tenant.clone(), at: t0(), changes }).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

fn maintain(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mnemo"));
    c.args(["maintain", "--at", &at().to_rfc3339(), "--data-dir"])
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_LIFECYCLE__MAX_ACTIVE_PER_USER", CAP)
        .env_remove("MNEMO_CONFIG")
        .env_remove("FAILPOINTS")
        .env_remove("RUST_LOG")
        .env_remove("MNEMO_LOG");
    c
}

fn run_to_completion(data: &Path) -> String {
    let out = maintain(data).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn state(data: &Path) -> String {
    let config = Config { data_dir: data.to_path_buf(), ..Config::default() };
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(config.db_path()).unwrap());
    let memory = Memory::from_parts(config, store, None, Arc::new(ManualClock::new(at())));
    (0..USERS).map(|u| memory.render_state(&scope(u)).unwrap()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_killed_maintain_run_resumes_to_the_same_state_as_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (killed, whole) = (dir.path().join("killed"), dir.path().join("whole"));
    std::fs::create_dir_all(&killed).unwrap();
    build(&killed);
    copy_dir(&killed, &whole);
    let before = state(&killed);

    let summary = run_to_completion(&whole);
    for what in ["ttl expiry", "event not reinforced", "open loop silent", "stale archived", "per-user cap"] {
        assert!(summary.contains(what), "the uninterrupted run did {what}:\n{summary}");
    }
    assert!(summary.contains("near-duplicates merged") && summary.contains("knowledge derived"), "{summary}");
    let expected = state(&whole);

    // The interrupted run: stopped by SIGKILL right after committing its first page. The fail
    // point pauses the job there (the binary of a test build has fail points compiled in), and
    // the debug event logged just before it says the page is committed.
    let mut child = maintain(&killed)
        .env("FAILPOINTS", "engine::maintain::after_page=pause")
        .env("MNEMO_LOG", "warn,mnemo::jobs=debug")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut paused = false;
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if line.contains("lifecycle page committed") && line.contains("page=1") {
            paused = true;
            break;
        }
    }
    assert!(paused, "the child never reached its first page");
    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup
    let status = child.wait().unwrap();
    assert!(!status.success());
    let halfway = state(&killed);
    assert_ne!(halfway, before, "the first page was committed before the kill");
    assert_ne!(halfway, expected, "the kill left work undone");

    run_to_completion(&killed);
    let resumed = state(&killed);
    if resumed != expected {
        let diff: Vec<(&str, &str)> = resumed.lines().zip(expected.lines()).filter(|(a, b)| a != b).take(10).collect();
        panic!("resumed state differs from the uninterrupted run; first differing lines: {diff:#?}");
    }
    // And a further run changes nothing at all.
    let again = run_to_completion(&killed);
    assert!(again.contains("nothing to change"), "{again}");
}
