//! An acknowledged write survives a crash: `mnemo serve` is killed with SIGKILL while writers
//! are sending messages, three times over, and after each restart every message the server had
//! answered 200 for is still there (sending it again appends nothing: replay is idempotent by
//! message id, so a survivor is a duplicate).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use support::{create_key, serve};

/// POSTs `body` to `path` over one connection; `None` when the connection fails or breaks (a
/// killed server), else the status and the JSON body.
fn post(base: &str, key: &str, path: &str, body: &Value) -> Option<(u16, Value)> {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {key}\r\n\
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

fn message(id: &str, text: &str) -> Value {
    json!({"user_id": "dana", "chat_id": "c1", "messages": [{"id": id, "role": "user", "content": text}]})
}

/// Writers send one message per request until stopped; each returns the ids answered 200.
fn writers(base: &str, key: &str, round: usize, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<Vec<String>>> {
    (0..4)
        .map(|w| {
            let (base, key, stop) = (base.to_string(), key.to_string(), stop.clone());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let id = format!("r{round}-w{w}-{i}");
                    let text =
                        format!("Round {round}, writer {w}: on day {i} I repotted fern number {i} by the window.");
                    match post(&base, &key, "/v1/messages", &message(&id, &text)) {
                        Some((200, _)) => acked.push(id),
                        Some((status, body)) => panic!("{id}: {status} {body}"),
                        None => break, // the server is gone
                    }
                }
                acked
            })
        })
        .collect()
}

#[test]
fn every_acknowledged_message_survives_kill_9_three_times() {
    let dir = tempfile::tempdir().unwrap();
    let data: &Path = dir.path();
    let key = create_key(data, "acme");
    let mut all_acked: Vec<String> = Vec::new();
    for round in 0..3 {
        let server = serve(data);
        let stop = Arc::new(AtomicBool::new(false));
        let handles = writers(&server.base, &key, round, &stop);
        // Let acknowledged writes pile up, then crash the server under them.
        std::thread::sleep(Duration::from_millis(700));
        server.kill_9();
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<String> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        assert!(!acked.is_empty(), "round {round}: no write was acknowledged before the kill");
        all_acked.extend(acked);

        // Restarted, the server has every message it acknowledged, in this round and before.
        let server = serve(data);
        for id in &all_acked {
            let (status, body) = post(&server.base, &key, "/v1/messages", &message(id, &format!("replay of {id}")))
                .unwrap_or_else(|| panic!("{id}: the restarted server did not answer"));
            assert_eq!(status, 200, "{id}: {body}");
            assert_eq!(body["appended"], 0, "round {round}: acknowledged message {id} was lost: {body}");
        }
        server.kill_9();
    }
}
