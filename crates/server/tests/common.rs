//! A fresh engine, key store and router per test, with keys for two tenants.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use mnemo::models::HashEmbedder;
use mnemo::store::{SqliteStore, Store};
use mnemo::{Config, Memory, SystemClock};
use mnemo_server::{AppState, KeyStore};
use serde_json::Value;
use tower::ServiceExt;

pub(crate) const ADMIN: &str = "test-admin-key-of-at-least-32-characters";

pub(crate) struct Fixture {
    pub(crate) app: Router,
    pub(crate) memory: Arc<Memory>,
    /// Tenant `acme`.
    pub(crate) a: String,
    /// Tenant `globex`.
    pub(crate) b: String,
    _dir: tempfile::TempDir,
}

pub(crate) fn fixture() -> Fixture {
    configured(|_| {})
}

/// [`fixture`] with settings changed from the defaults by `tune`.
pub(crate) fn configured(tune: impl FnOnce(&mut Config)) -> Fixture {
    on_store(tune, |config| Arc::new(SqliteStore::open(config.db_path()).unwrap()))
}

/// [`configured`] over the store `open` makes for the settings (PostgreSQL, say); the key
/// store and any other file stay in the fixture's data directory.
pub(crate) fn on_store(tune: impl FnOnce(&mut Config), open: impl FnOnce(&Config) -> Arc<dyn Store>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    tune(&mut config);
    let store = open(&config);
    let memory =
        Arc::new(Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(384))), Arc::new(SystemClock)));
    let keys = KeyStore::open(&dir.path().join("keys.db")).unwrap();
    let (a, _) = keys.create("acme").unwrap();
    let (b, _) = keys.create("globex").unwrap();
    let state = AppState::new(memory.clone(), keys).with_admin_key(Some(ADMIN)).unwrap();
    Fixture { app: mnemo_server::app(state), memory, a, b, _dir: dir }
}

/// Sends a request and returns the status and the body as JSON (`Value::String` for non-JSON).
pub(crate) async fn send(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, body)
}

/// A request with an optional bearer key and an optional JSON body.
pub(crate) fn request(method: &str, uri: &str, key: Option<&str>, body: Option<&Value>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    match body {
        Some(v) => b.header(header::CONTENT_TYPE, "application/json").body(Body::from(v.to_string())).unwrap(),
        None => b.body(Body::empty()).unwrap(),
    }
}

pub(crate) async fn call(app: &Router, method: &str, uri: &str, key: &str, body: Option<Value>) -> (StatusCode, Value) {
    send(app, request(method, uri, Some(key), body.as_ref())).await
}

/// Asserts the error shape: exactly `{message, code}` with the given status and code.
#[track_caller]
pub(crate) fn assert_error(got: &(StatusCode, Value), status: StatusCode, code: &str) {
    let (s, body) = got;
    assert_eq!(*s, status, "body: {body}");
    let obj = body.as_object().unwrap_or_else(|| panic!("error body is not an object: {body}"));
    assert_eq!(obj.len(), 2, "error body has exactly message and code: {body}");
    assert_eq!(obj["code"], code, "{body}");
    assert!(obj["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

/// The conversation the tests ingest: a name, a home and a preference.
pub(crate) fn dana_messages(user: &str, chat: &str) -> Value {
    serde_json::json!({
        "user_id": user,
        "chat_id": chat,
        "messages": [
            {"id": "m1", "role": "user", "content": "My name is Dana and I live in Lisbon."},
            {"id": "m2", "role": "assistant", "content": "Nice to meet you, Dana!"},
            {"id": "m3", "role": "user", "content": "I prefer short answers, please."}
        ]
    })
}
