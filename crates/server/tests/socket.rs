//! The real thing: the server on a TCP socket, spoken to with plain HTTP/1.1.

use std::sync::Arc;

use mnemo_server::{AppState, KeyStore};

use crate::common::http;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_tcp() {
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
