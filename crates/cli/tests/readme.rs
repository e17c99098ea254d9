//! The README's shell examples, run as a newcomer would paste them: a fenced `sh` block taken
//! from README.md as written, with only the port changed (8080 may be taken) and `mnemo` on the
//! PATH being this build. Each example must show memory working, not merely answer 200.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The first fenced ```sh block after `heading` in README.md.
fn sh_block(heading: &str) -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let after = text.split(heading).nth(1).unwrap_or_else(|| panic!("README has no {heading:?}"));
    let block = after.split("```sh\n").nth(1).expect("a sh block").split("```").next().unwrap();
    block.to_string()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A directory holding a `mnemo` that is this build, for the PATH.
fn bin_dir(scratch: &Path) -> PathBuf {
    let dir = scratch.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mnemo"), dir.join("mnemo")).unwrap();
    dir
}

/// Runs `script` with bash in `scratch`, this build first on the PATH and its data there; the
/// server a script starts in the background is stopped with the script's process group.
fn run(scratch: &Path, script: &str) -> (String, String) {
    let path = format!("{}:{}", bin_dir(scratch).display(), std::env::var("PATH").unwrap_or_default());
    // Whatever the script leaves running in the background is killed on the way out.
    let wrapped = format!("set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{script}");
    let o = Command::new("bash")
        .arg("-c")
        .arg(wrapped)
        .current_dir(scratch)
        .env("PATH", path)
        .env("MNEMO_DATA_DIR", scratch.join("data"))
        .env("CURL_HOME", scratch)
        .env_remove("MNEMO_CONFIG")
        .env_remove("MNEMO_EMBEDDER")
        .env_remove("MNEMO_API_KEY")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "the README's example failed:\n{script}\nstdout:\n{out}\nstderr:\n{err}");
    (out, err)
}

#[test]
fn the_readme_http_example_remembers_the_city() {
    let curl = Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|o| o.status.success()),
        "the README's HTTP example needs curl (Debian: apt-get install curl)"
    );
    let block = sh_block("## HTTP API");
    let port = free_port().to_string();
    assert!(block.contains("8080"), "the example names its port: {block}");
    let mut script = block.replace("8080", &port);
    // The server is started in the background; the example's next line must find it listening.
    script = script.replace(
        &format!("mnemo serve --addr 127.0.0.1:{port} &\n"),
        &format!(
            "mnemo serve --addr 127.0.0.1:{port} &\nfor _ in $(seq 1 600); do curl -s localhost:{port}/healthz >/dev/null && break; sleep 0.1; done\n"
        ),
    );
    let scratch = tempfile::tempdir().unwrap();
    // Each curl's answer on its own line (curl's own configuration file, not the example's text).
    std::fs::write(scratch.path().join(".curlrc"), "-w \"\\n\"\n").unwrap();
    let (out, _) = run(scratch.path(), &script);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 3, "one JSON answer per curl:\n{out}");
    let context: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    let text = context["text"].as_str().unwrap_or_default();
    assert!(text.contains("Lisbon"), "the block for the weekend question knows the city:\n{context:#}");
    let listed: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    assert!(listed.to_string().contains("Lisbon"), "the user's memories list the city: {listed:#}");
}
