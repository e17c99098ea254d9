//! `mnemo serve` as an operator runs it: stopped with SIGTERM (systemd, Docker, Kubernetes) it
//! drains the request in flight and exits 0, and an admin key too short to be safe stops it
//! before it listens.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn mnemo(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mnemo"));
    c.arg("--data-dir")
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env_remove("MNEMO_CONFIG")
        .env_remove("MNEMO_DATABASE_URL")
        .env_remove("MNEMO_EXTRACTOR")
        .env_remove("MNEMO_LLM_BASE_URL")
        .env_remove("FAILPOINTS");
    c
}

/// A child killed when the test ends however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_short_admin_key_stops_the_server_before_it_listens() {
    let dir = tempfile::tempdir().unwrap();
    let o = mnemo(dir.path()).args(["serve", "--addr", "127.0.0.1:0"]).env("MNEMO_ADMIN_KEY", " x ").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("MNEMO_ADMIN_KEY") && err.contains("at least 32"), "{err}");
    assert!(!err.contains("listening on"), "{err}");
}

#[test]
fn sigterm_drains_the_request_in_flight_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let key = mnemo(dir.path()).args(["keys", "create", "--tenant", "acme"]).output().unwrap();
    assert!(key.status.success(), "{}", String::from_utf8_lossy(&key.stderr));
    let key = String::from_utf8_lossy(&key.stdout).trim().to_string();

    // Every write commits 1.5 s late, so the request is surely in flight when SIGTERM comes.
    let mut child = mnemo(dir.path())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("FAILPOINTS", "store::apply::before_commit=sleep(1500)")
        .env("MNEMO_ADMIN_KEY", "k".repeat(40))
        .env_remove("MNEMO_LOG")
        .env_remove("RUST_LOG")
        .env_remove("MNEMO_LOG_FORMAT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let server = Guard(child);
    let addr: SocketAddr = loop {
        let line = lines.next().expect("the server exited before listening").unwrap();
        if let Some(a) = line.split("listening on http://").nth(1) {
            break a.trim().parse().unwrap();
        }
    };
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));

    let body = r#"{"user_id": "dana", "kind": "fact", "content": "User keeps bees on the roof"}"#;
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /v1/memories HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let pid = server.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());

    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "the request in flight is answered, not reset: {response:?}");
    assert!(response.contains("User keeps bees on the roof"), "{response}");

    let mut server = server;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the server did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = log.join().unwrap();
    assert!(status.success(), "exit {status:?}; log:\n{log}");
    assert!(log.contains("SIGTERM"), "{log}");
    // Nothing listens any more.
    assert!(TcpStream::connect(addr).is_err());
}
