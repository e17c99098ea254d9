//! PII never reaches storage through the server: generated values of every format the detector
//! knows, planted in sentences through every HTTP route and MCP tool that stores text (messages;
//! memories with PII in content, key or value, tenant-wide and edited; memos and their edits;
//! documents and their searches; observations; policies; recall and context queries; session
//! rotation; mem0's adds, updates, batch updates, searches and feedback on both route sets,
//! metadata included; a turn through the OpenAI proxy, whose scripted upstream answers with the
//! value again; MCP `remember`, `recall`, `context`, `store_document`,
//! `find_similar_documents`, `observe`, `rotate_session`), and then no file under the data
//! directory, and no PostgreSQL row, holds any of them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, header};
use mnemo::core::pii::samples::{self, FORMATS, Planted, mark};
use mnemo_models::testing::{ScriptedServer, completion};
use serde_json::{Value, json};

use crate::common::{Fixture, call, on_store, send, without_rate_limit};
use crate::mcp::{V2025_06, initialize, tool};

/// Values planted per run: every format five times (different values and sentences), each copy
/// through messages and one group of the other routes ([`group`]).
const PLANTED: usize = FORMATS * 5;

/// The chat the proxied turns name (`X-Mnemo-Chat`), so the test can wait for their ingestion.
const PROXY_CHAT: &str = "proxied";

fn planted(seed: u64) -> Vec<Planted> {
    samples::planted(PLANTED, seed)
}

/// An upstream for the proxy that answers every chat by quoting the user's message back, so
/// the reply the proxy ingests carries the planted value too.
fn echoing_upstream() -> ScriptedServer {
    ScriptedServer::respond(|_, seen| completion(&format!("You said: {}", seen.user())))
}

/// Per route or tool: calls answered with success, and calls refused (a memo or an update
/// whose text holds PII is refused whole: 422, "never stored"). None may be a server error.
#[derive(Default)]
struct Calls(BTreeMap<&'static str, [usize; 2]>);

impl Calls {
    fn count(&mut self, name: &'static str, success: bool) {
        self.0.entry(name).or_default()[usize::from(!success)] += 1;
    }

    /// Sends a request with tenant A's key and returns the answer.
    async fn http(&mut self, f: &Fixture, name: &'static str, method: &str, uri: &str, body: Value) -> Value {
        let (status, reply) = call(&f.app, method, uri, &f.a, Some(body)).await;
        assert!(status.as_u16() < 500, "{name}: {method} {uri}: {status} {reply}");
        self.count(name, status.is_success());
        reply
    }

    /// Calls an MCP tool in `session`.
    async fn tool(&mut self, f: &Fixture, session: &str, name: &'static str, arguments: Value) {
        let result = tool(&f.app, &f.a, session, name, arguments).await;
        self.count(name, result["isError"] == false);
    }
}

/// The id at `pointer` of an answer, or the one passed in when the answer has none (an edit the
/// gate refused leaves the old version current).
fn id_at(reply: &Value, pointer: &str, or: &str) -> String {
    reply.pointer(pointer).and_then(Value::as_str).unwrap_or(or).to_string()
}

/// Which routes the `i`-th value goes through besides messages (which every value takes, so
/// its mark is stored): the native routes (0), mem0's (1), or the proxy and the MCP tools (2),
/// by the value's copy of its format. Five copies of each format over three groups still put
/// every format through every route, in about a third of the calls.
fn group(i: usize) -> usize {
    (i / FORMATS) % 3
}

/// One planted value as the routes send it.
struct Said {
    i: usize,
    chat: String,
    value: String,
    /// A source is one line: a PEM block's sentence as a source is refused for its newlines.
    source: String,
    line: String,
    /// Metadata holds the value as a string, nested, and as a key.
    metadata: Value,
}

impl Said {
    fn new(i: usize, p: &Planted) -> Self {
        let value = p.recognisable();
        let line = format!("{} {}", mark(i), p.sentence);
        let metadata = json!({"note": value, "about": {"said": [line]}, format!("k {value}"): true});
        Self {
            i,
            chat: format!("c{}", i % 3),
            source: value.replace(char::is_control, " "),
            value: value.to_string(),
            line,
            metadata,
        }
    }
}

/// What the edits target: a clean memory, memo and mem0 memories written first.
struct Targets {
    memory: String,
    memo: String,
    /// mem0's platform memory, its batch-updated one and the self-hosted server's.
    mem0: [String; 3],
}

/// Plants every value through messages and one group of the other routes and tools (see
/// [`group`]); waits until the proxied turns are ingested. Returns the calls each route and
/// tool got.
async fn plant_everywhere(f: &Fixture, planted: &[Planted]) -> BTreeMap<&'static str, [usize; 2]> {
    let mut calls = Calls::default();
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    let clean = json!({"user_id": "dana", "kind": "fact", "content": "User keeps a notebook of travel plans"});
    let memory = id_at(&calls.http(f, "memories", "POST", "/v1/memories", clean).await, "/verdict/memory_id", "");
    let memo = json!({"user_id": "dana", "chat_id": "c0", "text": "Dana and the assistant planned a trip"});
    let memo = id_at(&calls.http(f, "memos", "POST", "/v1/memos", memo).await, "/id", "");
    let mut mem0 = Vec::new();
    for (uri, text) in [
        ("/mem0/v3/memories/add/", "Dana keeps bees."),
        ("/mem0/v1/memories/", "Dana bakes bread."),
        ("/memories", "Dana grows tomatoes."),
    ] {
        let add = json!({"messages": [{"role": "user", "content": text}], "user_id": "dana", "infer": false});
        mem0.push(id_at(&calls.http(f, "mem0: add", "POST", uri, add).await, "/results/0/id", ""));
    }
    assert!(!memory.is_empty() && !memo.is_empty() && mem0.iter().all(|m| !m.is_empty()), "{memory} {memo} {mem0:?}");
    let mut targets = Targets { memory, memo, mem0: <[String; 3]>::try_from(mem0).unwrap() };

    for (i, p) in planted.iter().enumerate() {
        let s = Said::new(i, p);
        let messages = json!({"user_id": "dana", "chat_id": s.chat, "messages": [
            {"role": "user", "content": s.line}, {"role": "assistant", "content": format!("Noted: {}", s.line)}]});
        calls.http(f, "messages", "POST", "/v1/messages", messages).await;
        match group(i) {
            0 => plant_native(f, &mut calls, &s, p, &mut targets).await,
            1 => plant_mem0(f, &mut calls, &s, &targets).await,
            _ => plant_proxy_and_tools(f, &mut calls, &s, &session).await,
        }
    }
    wait_for_proxied_turns(f, (0..planted.len()).filter(|&i| group(i) == 2).count()).await;
    calls.0
}

/// The native routes that store text, messages aside.
async fn plant_native(f: &Fixture, calls: &mut Calls, s: &Said, p: &Planted, targets: &mut Targets) {
    let Said { i, chat, value, source, line, metadata } = s;
    let fact = json!({"user_id": "dana", "kind": "fact", "content": format!("User said {line}")});
    calls.http(f, "memories: content", "POST", "/v1/memories", fact).await;
    let detail = format!("User's detail number {}", mark(*i));
    let keyed = json!({"user_id": "dana", "kind": "profile", "content": detail, "key": format!("detail {value}")});
    calls.http(f, "memories: key", "POST", "/v1/memories", keyed).await;
    let valued = json!({"user_id": "dana", "kind": "profile", "content": detail, "key": "detail", "value": value});
    calls.http(f, "memories: value", "POST", "/v1/memories", valued).await;
    let candidate = json!({"kind": "fact", "content": format!("Everyone should know {line}")});
    calls.http(f, "memories: tenant-wide", "POST", "/v1/memories", candidate).await;
    let edit = json!({"user_id": "dana", "content": format!("User keeps a notebook: {line}")});
    let edited = calls.http(f, "memories: edit", "PATCH", &format!("/v1/memories/{}", targets.memory), edit).await;
    targets.memory = id_at(&edited, "/memory/id", &targets.memory);
    calls.http(f, "memos", "POST", "/v1/memos", json!({"user_id": "dana", "chat_id": chat, "text": line})).await;
    let fix = json!({"user_id": "dana", "chat_id": "c0", "text": format!("Planned a trip: {line}")});
    calls.http(f, "memos: edit", "PATCH", &format!("/v1/memos/{}", targets.memo), fix).await;
    let document = json!({"user_id": "dana", "owner": "user", "kind": "note", "source": source,
                          "text": format!("# Notes {}\n\n{}", mark(*i), p.sentence)});
    calls.http(f, "documents", "POST", "/v1/documents", document).await;
    calls.http(f, "documents: search", "POST", "/v1/documents/search", json!({"user_id": "dana", "query": line})).await;
    let similar = json!({"user_id": "dana", "text": line, "source": source});
    calls.http(f, "documents: similar", "POST", "/v1/documents/similar", similar).await;
    let observation = json!({"user_id": "dana", "chat_id": chat, "tool": "send", "outcome": "failure",
                             "args_summary": format!("{} {value}", mark(*i)), "text": line});
    calls.http(f, "observations", "POST", "/v1/observations", observation).await;
    let policy = json!({"key": format!("note-{i}"), "text": line, "value": metadata});
    calls.http(f, "policies", "POST", "/v1/policies", policy).await;
    calls.http(f, "recall", "POST", "/v1/recall", json!({"user_id": "dana", "chat_id": chat, "query": line})).await;
    let context = json!({"user_id": "dana", "chat_id": chat, "message": line});
    calls.http(f, "context", "POST", "/v1/context", context).await;
    if i % 10 == 9 {
        let rotate = json!({"user_id": "dana"});
        calls.http(f, "sessions: rotate", "POST", &format!("/v1/sessions/{chat}/rotate"), rotate).await;
    }
}

/// mem0's routes: the platform's under /mem0, the self-hosted server's at the root.
async fn plant_mem0(f: &Fixture, calls: &mut Calls, s: &Said, targets: &Targets) {
    let Said { chat, line, metadata, .. } = s;
    let [updated, batched, oss] = &targets.mem0;
    let said = json!([{"role": "user", "content": line}]);
    let add = json!({"messages": said, "user_id": "dana", "infer": false, "metadata": metadata});
    calls.http(f, "mem0: add", "POST", "/mem0/v3/memories/add/", add).await;
    let inferred = json!({"messages": line, "user_id": "dana", "run_id": chat, "metadata": metadata});
    calls.http(f, "mem0: add (inferred)", "POST", "/mem0/v1/memories/", inferred).await;
    // An update's text with PII is refused whole, so its metadata goes alone as well.
    let update = json!({"text": format!("Dana keeps bees: {line}"), "metadata": metadata});
    let tagged = json!({"metadata": metadata});
    for body in [&update, &tagged] {
        calls.http(f, "mem0: update", "PUT", &format!("/mem0/v1/memories/{updated}/"), body.clone()).await;
        calls.http(f, "mem0 server: update", "PUT", &format!("/memories/{oss}"), body.clone()).await;
        let mut item = body.clone();
        item["memory_id"] = json!(batched);
        calls.http(f, "mem0: batch update", "PUT", "/mem0/v1/batch/", json!({"memories": [item]})).await;
    }
    let search = json!({"query": line, "filters": {"user_id": "dana"}});
    calls.http(f, "mem0: search", "POST", "/mem0/v3/memories/search/", search).await;
    let feedback = json!({"memory_id": updated, "feedback": "NEGATIVE", "feedback_reason": line});
    calls.http(f, "mem0: feedback", "POST", "/mem0/v1/feedback/", feedback).await;
    let add = json!({"messages": said, "user_id": "dana", "infer": false, "metadata": metadata});
    calls.http(f, "mem0 server: add", "POST", "/memories", add).await;
    calls.http(f, "mem0 server: search", "POST", "/search", json!({"query": line, "user_id": "dana"})).await;
}

/// The OpenAI proxy (the turn and the upstream's reply are ingested after the answer) and the
/// MCP tools.
async fn plant_proxy_and_tools(f: &Fixture, calls: &mut Calls, s: &Said, session: &str) {
    let Said { i, chat, value, source, line, .. } = s;
    let chat_request = json!({"model": "m", "user": "dana", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": line}]});
    let req = Request::builder()
        .method("POST")
        .uri("/openai/v1/chat/completions")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.a))
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-mnemo-chat", PROXY_CHAT)
        .body(Body::from(chat_request.to_string()))
        .unwrap();
    let (status, answer) = send(&f.app, req).await;
    assert!(status.is_success(), "proxy: {status} {answer}");
    calls.count("openai proxy", true);

    calls.tool(f, session, "remember", json!({"user_id": "dana", "chat_id": chat, "content": line})).await;
    let remember = json!({"user_id": "dana", "kind": "fact", "content": format!("User said {line}")});
    calls.tool(f, session, "remember", remember).await;
    calls.tool(f, session, "recall", json!({"user_id": "dana", "query": line})).await;
    calls.tool(f, session, "context", json!({"user_id": "dana", "chat_id": chat, "message": line})).await;
    let document = json!({"user_id": "dana", "owner": "user", "kind": "research", "source": source, "text": line});
    calls.tool(f, session, "store_document", document).await;
    let similar = json!({"user_id": "dana", "text": line, "source": source});
    calls.tool(f, session, "find_similar_documents", similar).await;
    let observe = json!({"user_id": "dana", "chat_id": chat, "tool": "send", "outcome": "corrected",
                         "args_summary": format!("{} {value}", mark(*i)), "text": line});
    calls.tool(f, session, "observe", observe).await;
    if i % 10 == 9 {
        calls.tool(f, session, "rotate_session", json!({"user_id": "dana", "chat_id": chat})).await;
    }
}

/// The proxy ingests a turn after its answer has gone out: waits until every proxied user
/// message and reply is in the chat.
async fn wait_for_proxied_turns(f: &Fixture, turns: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let uri = format!("/v1/messages?user_id=dana&chat_id={PROXY_CHAT}&limit=500");
    loop {
        let (_, listed) = call(&f.app, "GET", &uri, &f.a, None).await;
        let stored = listed["items"].as_array().map_or(0, Vec::len);
        if stored >= 2 * turns {
            return;
        }
        assert!(Instant::now() < deadline, "{stored} of {} proxied messages were ingested", 2 * turns);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn pii_through_every_route_and_tool_reaches_no_file() {
    let upstream = echoing_upstream();
    let base = upstream.base().to_string();
    let tune = |c: &mut mnemo::Config| {
        c.proxy.upstream_url = base;
        without_rate_limit(c);
    };
    let f = on_store(tune, |c| Arc::new(mnemo::store::SqliteStore::open(c.db_path()).unwrap()));
    let planted = planted(0x1505);
    let calls = plant_everywhere(&f, &planted).await;
    let files = samples::file_texts(&f.memory.config().data_dir).unwrap();
    samples::assert_stored_redacted(&files, &planted, &calls);
    eprintln!("pii: {} values in {FORMATS} formats, {} files scanned, calls {calls:?}", planted.len(), files.len());
    drop(upstream);
}

/// The same planting over PostgreSQL: no row of any table, read as text, holds a value, nor
/// does any file of the data directory (the key store). Skipped unless
/// `MNEMO_TEST_DATABASE_URL` names a server (required when `CI` is set). A plain test with a
/// runtime of its own: the blocking PostgreSQL client must not be opened (or dropped) on a
/// thread that drives one, as `mnemo serve` opens it before its runtime starts.
#[test]
fn pii_through_every_route_and_tool_reaches_no_postgres_row() {
    let Some(db) = mnemo::store::TempDatabase::from_env().unwrap() else { return };
    let store: Arc<dyn mnemo::store::Store> = Arc::new(mnemo::store::PostgresStore::connect(db.url()).unwrap());
    let upstream = echoing_upstream();
    let base = upstream.base().to_string();
    let tune = |c: &mut mnemo::Config| {
        c.proxy.upstream_url = base;
        without_rate_limit(c);
    };
    let f = on_store(tune, |_| store);
    let planted = planted(0x1506);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let calls = runtime.block_on(plant_everywhere(&f, &planted));
    let mut stored = db.rows_as_text().unwrap();
    assert!(stored.len() >= 10, "every table: {:?}", stored.iter().map(|(t, _)| t).collect::<Vec<_>>());
    stored.extend(samples::file_texts(&f.memory.config().data_dir).unwrap());
    samples::assert_stored_redacted(&stored, &planted, &calls);
    drop(upstream);
}
