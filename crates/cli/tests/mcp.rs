//! MCP as a client application sees it: the official Python SDK (`mcp` from PyPI) against
//! `mnemo serve` (streamable HTTP on a loopback port) and `mnemo mcp` (stdio), with keys for two
//! tenants; plus `mnemo mcp` refusing to start without a valid key.
//!
//! The SDK lives in a virtualenv that `scripts/mcp-venv.sh` prepares (`MNEMO_MCP_VENV`, default
//! `~/.cache/mnemo/mcp-venv`). Without it the SDK test skips with a message, except under CI
//! (`CI` set), where it fails instead.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{create_key, mnemo, serve, text, venv_python, wait_with_deadline};

#[test]
fn the_official_python_sdk_uses_every_tool_over_http_and_stdio() {
    let Some(python) = venv_python("MNEMO_MCP_VENV", "mcp-venv", ".mnemo-mcp-version", "scripts/mcp-venv.sh") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key_a = create_key(&data, "acme");
    let key_b = create_key(&data, "globex");
    let server = serve(&data);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/mcp_client.py");
    let child = Command::new(python)
        .arg(&script)
        .args(["--url", &format!("{}/mcp", server.base), "--binary", env!("CARGO_BIN_EXE_mnemo"), "--data-dir"])
        .arg(&data)
        .args(["--key-a", &key_a, "--key-b", &key_b])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the MCP client script");
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(180));
    assert!(ok, "the MCP client failed\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(out.contains("checks passed"), "{out}");
    drop(server);
}

#[test]
fn mcp_refuses_to_start_without_a_valid_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = mnemo(&data).arg("mcp").stdin(Stdio::null()).output().unwrap();
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(out.is_empty(), "nothing but JSON-RPC on stdout: {out}");
    assert!(err.contains("MNEMO_API_KEY") && err.contains("mnemo keys create"), "{err}");

    let o = mnemo(&data).arg("mcp").env("MNEMO_API_KEY", "mnemo_acme_wrong").stdin(Stdio::null()).output().unwrap();
    let (out, err) = text(&o);
    assert!(!o.status.success() && out.is_empty());
    assert!(err.contains("not a valid key"), "{err}");
}

#[test]
fn mcp_over_stdio_answers_line_by_line_as_the_keys_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key = create_key(&data, "acme");
    let mut child = mnemo(&data)
        .arg("mcp")
        .env("MNEMO_API_KEY", &key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"user_id":"dana","content":"I live in Lisbon."}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_memories","arguments":{"user_id":"dana"}}}"#,
    ];
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let (ok, out, err) = wait_with_deadline(child, Duration::from_secs(60));
    assert!(ok, "{err}");
    let replies: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(replies.len(), 3, "{out}");
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(replies[1]["result"]["isError"], false, "{}", replies[1]);
    let listed = replies[2]["result"]["structuredContent"]["items"].to_string();
    assert!(listed.contains("Lisbon"), "{listed}");
    assert!(err.contains("serving tenant acme"), "{err}");

    // What stdio wrote is the tenant's, in the same store the CLI reads.
    let o = mnemo(&data).args(["list", "--tenant", "acme", "--user", "dana"]).output().unwrap();
    assert!(text(&o).0.contains("Lisbon"), "{:?}", text(&o));
}
