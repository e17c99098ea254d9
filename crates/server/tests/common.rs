//! A fresh engine, key store and router per test, with keys for two tenants; a plain HTTP/1.1
//! client and an upstream that never answers, for the tests over real sockets.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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

/// No per-tenant rate limit (it is on by default), for tests that send one tenant's requests
/// by the hundred as fast as they are answered and are about something else.
pub(crate) fn without_rate_limit(config: &mut Config) {
    config.limits.requests_per_second = 0.0;
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
    serving(memory, dir)
}

/// [`configured`] with the real local model, batched as `mnemo serve` runs it
/// (`Memory::open`): for tests of what the model's runs do to other requests.
pub(crate) fn with_local_model(tune: impl FnOnce(&mut Config)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    config.embedder.kind = mnemo::models::EmbedderKind::Local;
    tune(&mut config);
    let memory = Memory::open(config)
        .unwrap_or_else(|e| panic!("the local model is required for this test: {e}\nrun scripts/fetch-model.sh first"));
    serving(Arc::new(memory), dir)
}

/// The app over `memory`, with tenants `acme` and `globex` and their keys in `dir`.
fn serving(memory: Arc<Memory>, dir: tempfile::TempDir) -> Fixture {
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

/// A minimal valid value of `schema` (references resolved in `doc`): required properties, plus
/// the scope's user and chat wherever the schema has them, so the route gets past validation to
/// the ids under test.
pub(crate) fn example(doc: &Value, schema: &Value, name: &str, user: &str, chat: &str) -> Value {
    let schema = resolved(doc, schema);
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = ["oneOf", "anyOf", "allOf"].iter().find_map(|k| schema[*k].as_array().and_then(|v| v.first()))
    {
        return example(doc, first, name, user, chat);
    }
    let types = types(schema);
    let kind = if types.is_empty() { "object" } else { types.into_iter().find(|t| *t != "null").unwrap_or("null") };
    match kind {
        "string" => serde_json::json!(match name {
            "user_id" => user,
            "chat_id" => chat,
            "kind" => "fact",
            _ => "fuzzing text about bees",
        }),
        "integer" => serde_json::json!(1),
        "number" => serde_json::json!(0.5),
        "boolean" => serde_json::json!(false),
        "array" => serde_json::json!([]),
        "null" => Value::Null,
        _ => {
            let required: Vec<&str> =
                schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let mut out = serde_json::Map::new();
            for (prop, sub) in schema["properties"].as_object().into_iter().flatten() {
                if required.contains(&prop.as_str()) || prop == "user_id" || prop == "chat_id" {
                    out.insert(prop.clone(), example(doc, sub, prop, user, chat));
                }
            }
            Value::Object(out)
        }
    }
}

/// `schema` with a reference resolved in `doc` (the OpenAPI document, or a tool's input schema).
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => resolved(doc, doc.pointer(&r.replace("#/", "/")).unwrap_or_else(|| panic!("unresolved {r}"))),
        None => schema,
    }
}

/// The JSON types a schema allows (`["integer", "null"]`); none for a reference or a union.
pub(crate) fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// Where the properties `keep` picks (by name and resolved schema) sit in a value of `schema`:
/// the property names down to each, `[]` for an array's items.
pub(crate) fn fields(doc: &Value, schema: &Value, keep: &dyn Fn(&str, &Value) -> bool) -> Vec<Vec<String>> {
    fn walk(
        doc: &Value,
        schema: &Value,
        at: &[String],
        keep: &dyn Fn(&str, &Value) -> bool,
        out: &mut Vec<Vec<String>>,
    ) {
        let schema = resolved(doc, schema);
        if at.last().is_some_and(|name| keep(name, schema)) {
            out.push(at.to_vec());
        }
        if types(schema).contains(&"array") {
            walk(doc, &schema["items"], &[at, &["[]".to_string()]].concat(), keep, out);
        }
        for (prop, sub) in schema["properties"].as_object().into_iter().flatten() {
            walk(doc, sub, &[at, std::slice::from_ref(prop)].concat(), keep, out);
        }
    }
    let mut out = Vec::new();
    walk(doc, schema, &[], keep, &mut out);
    out
}

/// An [`example`] of `schema` with `value` at `field` (see [`fields`]), objects and one-item
/// arrays made on the way down.
pub(crate) fn with_value(doc: &Value, schema: &Value, field: &[String], value: Value, user: &str, chat: &str) -> Value {
    let schema = resolved(doc, schema);
    let Some((head, rest)) = field.split_first() else { return value };
    if head == "[]" {
        return Value::Array(vec![with_value(doc, &schema["items"], rest, value, user, chat)]);
    }
    let mut out = example(doc, schema, "", user, chat);
    out[head] = with_value(doc, &schema["properties"][head], rest, value, user, chat);
    out
}

/// One HTTP/1.1 request over a fresh connection; returns the status line and the body. A server
/// that has not answered in 30 s fails the test rather than hanging it.
pub(crate) fn http(addr: SocketAddr, method: &str, path: &str, key: Option<&str>, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = key.map(|k| format!("Authorization: Bearer {k}\r\n")).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap_or_else(|e| panic!("{method} {path}: no whole answer: {e}"));
    let (head, body) =
        response.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{method} {path}: not an HTTP answer: {response:?}"));
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// An upstream that accepts connections and never answers, as a stalled model server does.
/// Dropping it closes every connection it holds, so the calls waiting on it end.
pub(crate) struct Hanging {
    addr: SocketAddr,
    held: Arc<Mutex<Vec<TcpStream>>>,
    closed: Arc<AtomicBool>,
}

impl Hanging {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (held, closed) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let (keep, stop) = (held.clone(), closed.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                keep.lock().unwrap().push(stream);
            }
        });
        Hanging { addr, held, closed }
    }

    /// The base URL to configure as `proxy.upstream_url`.
    pub(crate) fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Waits until `n` connections are held (calls the proxy has made), for at most 10 s.
    pub(crate) async fn wait_for(&self, n: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.connections() < n {
            assert!(std::time::Instant::now() < deadline, "the upstream got {} calls, not {n}", self.connections());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The connections it holds.
    pub(crate) fn connections(&self) -> usize {
        self.held.lock().unwrap().len()
    }
}

impl Drop for Hanging {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which sees the flag and ends, closing the listener.
        let _ = TcpStream::connect(self.addr);
        for stream in self.held.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}
