//! The HTTP API under schemathesis (pinned, from PyPI): requests generated from the published
//! OpenAPI document, valid and malformed, against `mnemo serve`; no response may be a server
//! error or differ from the documented schema. `scripts/schemathesis.sh` runs it (start a server
//! with a fresh data directory, run, stop); this test drives that script with the binary cargo
//! just built.
//!
//! schemathesis lives in a virtualenv that `scripts/schemathesis.sh install` prepares
//! (`MNEMO_SCHEMATHESIS_VENV`, default `~/.cache/mnemo/schemathesis-venv`). Without it the test
//! skips with a message, except under CI (`CI` set), where it fails instead.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::wait_with_deadline;

/// The version `scripts/schemathesis.sh` pins.
const VERSION: &str = "4.32.5";

/// The prepared virtualenv, or `None` (after saying why) when it is missing.
fn venv() -> Option<PathBuf> {
    let venv = match std::env::var_os("MNEMO_SCHEMATHESIS_VENV") {
        Some(v) => PathBuf::from(v),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("mnemo").join("schemathesis-venv")
        }
    };
    let marker = std::fs::read_to_string(venv.join(".mnemo-schemathesis-version")).unwrap_or_default();
    if marker.trim() == VERSION && venv.join("bin").join("schemathesis").is_file() {
        return Some(venv);
    }
    let why = format!(
        "schemathesis {VERSION} is not prepared at {}: run `scripts/schemathesis.sh install` (or set \
         MNEMO_SCHEMATHESIS_VENV)",
        venv.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping the schemathesis run: {why}");
    None
}

#[test]
fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let Some(venv) = venv() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/schemathesis.sh");
    let child = Command::new("bash")
        .arg(&script)
        .arg("run")
        .env("MNEMO_BIN", env!("CARGO_BIN_EXE_mnemo"))
        .env("MNEMO_SCHEMATHESIS_VENV", &venv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scripts/schemathesis.sh");
    // The script's own cleanup (the server) runs on its EXIT trap; the deadline's kill ends it too.
    let limit = Duration::from_secs(480);
    let (ok, out, err) = wait_with_deadline(child, limit);
    let report = format!("--- stdout\n{out}\n--- stderr\n{err}");
    assert!(ok, "schemathesis found problems or ran past {limit:?}\n{report}");
    assert!(out.contains("No issues found") && out.contains("generated"), "{report}");
}
