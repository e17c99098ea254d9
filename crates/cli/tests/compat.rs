//! Client applications written for other memory and model APIs, unchanged, against
//! `mnemo serve`: mem0's Python SDK (`mem0ai` from PyPI) through `/mem0` and the self-hosted
//! mem0 server's routes (docs/mem0.md), and OpenAI's (`openai`) through the proxy at
//! `/openai/v1` (docs/openai-proxy.md).
//!
//! mem0's TypeScript SDK runs too, from the packages `scripts/compat-npm.sh` installs.
//!
//! The Python SDKs live in a virtualenv that `scripts/compat-venv.sh` prepares
//! (`MNEMO_COMPAT_VENV`, default `~/.cache/mnemo/compat-venv`), the TypeScript one in
//! `MNEMO_COMPAT_NPM` (default `~/.cache/mnemo/compat-npm`). Without them these tests skip with
//! a message, except under CI (`CI` set), where they fail instead.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{create_key, serve, venv_python, wait_with_deadline};

fn python() -> Option<PathBuf> {
    venv_python("MNEMO_COMPAT_VENV", "compat-venv", ".mnemo-compat-version", "scripts/compat-venv.sh")
}

/// The `node_modules` holding `mem0ai`, or `None` (after saying why) when it is not installed.
fn node_modules() -> Option<PathBuf> {
    let dir = match std::env::var_os("MNEMO_COMPAT_NPM") {
        Some(v) => PathBuf::from(v),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("mnemo").join("compat-npm")
        }
    };
    if dir.join(".mnemo-compat-version").is_file() {
        return Some(dir.join("node_modules"));
    }
    let why = format!("mem0ai is not installed in {}: run `scripts/compat-npm.sh`", dir.display());
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    None
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests").join(name)
}

#[test]
fn mem0s_python_sdk_sync_and_async_and_its_servers_routes_work_unchanged() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key_a = create_key(&data, "acme");
    let key_b = create_key(&data, "globex");
    let server = serve(&data);
    let child = Command::new(python)
        .arg(script("mem0_client.py"))
        .args(["--base", &server.base, "--key-a", &key_a, "--key-b", &key_b])
        .env("MEM0_TELEMETRY", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the mem0 client script");
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(180));
    assert!(ok, "the mem0 client failed\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}

#[test]
fn openais_python_sdk_gets_memory_through_the_proxy_streamed_or_not() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key = create_key(&data, "acme");
    // The script starts its scripted upstream first, then `mnemo serve` pointed at it.
    let child = Command::new(python)
        .arg(script("openai_client.py"))
        .args(["--binary", env!("CARGO_BIN_EXE_mnemo"), "--key", &key, "--data-dir"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the OpenAI client script");
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(180));
    assert!(ok, "the OpenAI client failed\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}

#[test]
fn mem0s_typescript_sdk_works_unchanged() {
    let Some(modules) = node_modules() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key_a = create_key(&data, "acme");
    let key_b = create_key(&data, "globex");
    let server = serve(&data);
    let child = Command::new("node")
        .arg(script("mem0_client.cjs"))
        .args(["--base", &server.base, "--key-a", &key_a, "--key-b", &key_b])
        .env("NODE_PATH", &modules)
        .env("MEM0_TELEMETRY", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run node (Node.js 18 or newer)");
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(180));
    assert!(ok, "the mem0 TypeScript client failed\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(out.contains("checks passed"), "{out}");
}
