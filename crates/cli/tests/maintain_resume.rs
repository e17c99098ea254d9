//! Acceptance of issue 5: `mnemo maintain` killed halfway (SIGKILL after its first committed
//! page) and run again ends in exactly the state of one uninterrupted run on a copy of the same
//! store, compared through the engine's whole-state rendering.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use mnemo::store::{SqliteStore, Store};
use mnemo::{Config, ManualClock, Memory};
use support::aged::{CAP, USERS, at, build, scope};

mod support;

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
    build(&killed, 0..USERS);
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
