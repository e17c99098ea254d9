//! The console at `/ui` end to end: headless Chromium, driven by `playwright-core` from
//! `console.cjs`, against a real `mnemo serve` on a temporary data directory. The script signs
//! in (a wrong key first), finds a user whose messages were ingested through the API, edits,
//! pins and deletes memories, edits a memo and finds it in the context preview, approves a
//! candidate, sets a policy, and erases the user; each page's screenshot, at 1280 and 375 px
//! wide, goes to `test-artifacts/console/` at the repository root.
//!
//! `scripts/console-npm.sh` installs `playwright-core` (`MNEMO_CONSOLE_NPM`, default
//! `~/.cache/mnemo/console-npm`) and Chromium (`MNEMO_CHROMIUM`, default `/usr/bin/chromium`).
//! Without them this test skips with a message, except under CI (`CI` set), where it fails.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mnemo_models::testing::{ScriptedServer, completion};
use support::{create_key, serve_with, wait_with_deadline};

const ADMIN: &str = "console-test-admin-key-of-32-characters-or-more";

/// The `node_modules` holding `playwright-core` and the Chromium to drive, or `None` (after
/// saying why) when either is missing.
fn prepared() -> Option<(PathBuf, PathBuf)> {
    let dir = match std::env::var_os("MNEMO_CONSOLE_NPM") {
        Some(v) => PathBuf::from(v),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("mnemo").join("console-npm")
        }
    };
    let chromium = std::env::var_os("MNEMO_CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let why = if !dir.join(".mnemo-console-version").is_file() {
        format!("playwright-core is not installed in {}: run `scripts/console-npm.sh`", dir.display())
    } else if !chromium.is_file() {
        format!("no Chromium at {}: run `scripts/console-npm.sh` (or set MNEMO_CHROMIUM)", chromium.display())
    } else {
        return Some((dir.join("node_modules"), chromium));
    };
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    None
}

#[test]
fn the_console_lets_a_person_see_and_correct_what_is_remembered() {
    let Some((modules, chromium)) = prepared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key = create_key(&data, "acme");
    // A scripted chat model writes the chat's rolling memo (every 4 messages, the worker looking
    // every 0.2 s); extraction stays the heuristic's, inside the ingest call.
    let model = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memo_highlights") => completion(
            r#"{"highlights": [{"category": "milestone", "text": "Dana shared that she moved to Lisbon with her dog Biscuit."}]}"#,
        ),
        _ => completion("{}"),
    });
    let server = serve_with(
        &data,
        &[
            ("MNEMO_ADMIN_KEY", ADMIN),
            ("MNEMO_LLM_BASE_URL", model.base()),
            ("MNEMO_LLM_MAX_RETRIES", "0"),
            ("MNEMO_BACKGROUND__MEMO_EVERY", "4"),
            ("MNEMO_BACKGROUND__WORKER_INTERVAL_SECS", "0.2"),
        ],
    );
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-artifacts/console");
    let _ = std::fs::remove_dir_all(&shots);
    let child = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/console.cjs"))
        .args(["--base", &server.base, "--key", &key, "--admin", ADMIN, "--shots"])
        .arg(&shots)
        .env("NODE_PATH", &modules)
        .env("MNEMO_CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run node (Node.js 18 or newer)");
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(120));
    assert!(ok, "the console's end-to-end script failed\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(out.contains("checks passed"), "{out}");
    for page in ["01-sign-in", "04-memories", "08-memo-book", "09-context-preview", "13-erasure-receipt"] {
        for name in [format!("{page}.png"), format!("{page}-375.png")] {
            let png = std::fs::read(shots.join(&name)).unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
            assert!(png.starts_with(b"\x89PNG"), "{name} is not a PNG");
        }
    }
}
