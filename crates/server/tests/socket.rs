//! The real thing: the server on a TCP socket, spoken to with plain HTTP/1.1.

use std::sync::Arc;

use mnemo_server::{AppState, KeyStore};

use crate::common::http;

/// `mnemo serve` on a loopback port over a fresh store with the hash embedder, a key of tenant
/// `acme`, and the means to stop it.
struct Running {
    _dir: tempfile::TempDir,
    addr: std::net::SocketAddr,
    key: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn running() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let config = mnemo::Config { data_dir: dir.path().to_path_buf(), ..mnemo::Config::default() };
    let store = Arc::new(mnemo::store::SqliteStore::open(config.db_path()).unwrap());
    let embedder = Arc::new(mnemo::models::HashEmbedder::new(384));
    let memory = Arc::new(mnemo::Memory::from_parts(config, store, Some(embedder), Arc::new(mnemo::SystemClock)));
    let keys = KeyStore::open(&dir.path().join("keys.db")).unwrap();
    let (key, _) = keys.create("acme").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(mnemo_server::serve_on(listener, AppState::new(memory, keys), async {
        let _ = stopped.await;
    }));
    Running { _dir: dir, addr, key, stop, server }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_tcp() {
    let Running { _dir, addr, key, stop, server } = running().await;

    let results = tokio::task::spawn_blocking(move || {
        let health = http(addr, "GET", "/healthz", None, "");
        let body = r#"{"user_id":"dana","chat_id":"c1","messages":[{"role":"user","content":"I live in Lisbon."}]}"#;
        let ingest = http(addr, "POST", "/v1/messages", Some(&key), body);
        let recall = http(addr, "POST", "/v1/recall", Some(&key), r#"{"user_id":"dana","query":"Lisbon"}"#);
        let unauthorized = http(addr, "POST", "/v1/recall", None, r#"{"user_id":"dana","query":"Lisbon"}"#);
        (health, ingest, recall, unauthorized)
    })
    .await
    .unwrap();
    let (health, ingest, recall, unauthorized) = results;
    assert!(health.0.contains("200"), "{health:?}");
    assert!(ingest.0.contains("200"), "{ingest:?}");
    assert!(recall.0.contains("200") && recall.1.contains("Lisbon"), "{recall:?}");
    assert!(unauthorized.0.contains("401") && unauthorized.1.contains("\"code\":\"unauthorized\""), "{unauthorized:?}");

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

/// One response read off a kept-alive connection: the head (status line and headers, lower
/// case) and exactly the body its `Content-Length` announces, so the next response on the same
/// connection starts where this one ends. `None` when the server closed the connection first.
fn read_response(stream: &mut std::net::TcpStream) -> Option<(String, String)> {
    use std::io::Read;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(0) | Err(_) => return None,
            Ok(_) => head.push(byte[0]),
        }
    }
    let head = String::from_utf8(head).unwrap().to_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some((head, String::from_utf8(body).unwrap()))
}

/// A POST refused with 401 before its body is read, the body sent whole with the head or a
/// moment later, must leave the connection either usable for the next request (whose answer
/// is its own, not garbled by the refused body) or closed with `Connection: close`, so the
/// client opens a new one. Never a kept-alive connection that then fails the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_post_leaves_the_connection_usable_or_says_it_closes() {
    use std::io::Write;
    let Running { _dir, addr, key, stop, server } = running().await;

    let outcomes = tokio::task::spawn_blocking(move || {
        let mut outcomes = Vec::new();
        // Small bodies, a body larger than a socket read, and bodies that arrive after the head.
        for (size, delay_ms, auth) in [
            (40, 0, ""),
            (40, 0, "Authorization: Bearer wrong-key\r\n"),
            (200_000, 0, ""),
            (40, 300, ""),
            (200_000, 300, "Authorization: Bearer wrong-key\r\n"),
        ] {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
            let body = format!("{{\"user_id\":\"dana\",\"query\":\"{}\"}}", "x".repeat(size));
            write!(
                stream,
                "POST /v1/recall HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            )
            .unwrap();
            if delay_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            }
            // The server may have closed by now: a failed write is what the next read reports.
            let _ = stream.write_all(body.as_bytes());
            let (head, refused) = read_response(&mut stream).expect("the refusal arrives");
            assert!(head.starts_with("http/1.1 401"), "{head}");
            assert!(refused.contains("\"code\":\"unauthorized\""), "{refused}");
            if head.contains("\r\nconnection: close\r\n") {
                // And it is closed: the client's next read ends (EOF, or a reset for the unread
                // body) instead of waiting.
                let mut rest = [0u8; 1];
                let end = std::io::Read::read(&mut stream, &mut rest);
                assert!(
                    matches!(&end, Ok(0))
                        || end.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
                    "size {size}, delay {delay_ms} ms: said close, then {end:?}"
                );
                outcomes.push((size, delay_ms, "closed"));
                continue;
            }
            let next = format!(
                "GET /v1/users HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
            );
            let sent = stream.write_all(next.as_bytes());
            let answer = read_response(&mut stream);
            let ok = answer.as_ref().is_some_and(|(h, b)| h.starts_with("http/1.1 200") && b.starts_with('{'));
            assert!(
                sent.is_ok() && ok,
                "size {size}, delay {delay_ms} ms: the connection was kept alive but the next request got {answer:?}"
            );
            outcomes.push((size, delay_ms, "reused"));
        }
        outcomes
    })
    .await
    .unwrap();
    // A small body sent with its head is read and the connection kept.
    assert_eq!(outcomes[0], (40, 0, "reused"), "{outcomes:?}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}
