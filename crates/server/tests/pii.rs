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

/// Values planted per run: every format five times (different values and sentences).
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

/// Plants every value through every route and tool; waits until the proxied turns are
/// ingested. Returns the calls each route and tool got.
async fn plant_everywhere(f: &Fixture, planted: &[Planted]) -> BTreeMap<&'static str, [usize; 2]> {
    let mut calls = Calls::default();
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    // What the edits target: a clean memory, memo and mem0 memories written first.
    let clean = json!({"user_id": "dana", "kind": "fact", "content": "User keeps a notebook of travel plans"});
    let mut memory = id_at(&calls.http(f, "memories", "POST", "/v1/memories", clean).await, "/verdict/memory_id", "");
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
    let [updated, batched, oss] = <[String; 3]>::try_from(mem0).unwrap();

    for (i, p) in planted.iter().enumerate() {
        let (chat, value) = (format!("c{}", i % 3), p.recognisable());
        // A source is one line: a PEM block's sentence as a source is refused for its newlines.
        let source = value.replace(char::is_control, " ");
        let line = format!("{} {}", mark(i), p.sentence);
        // Metadata holds the value as a string, nested, and as a key.
        let metadata = json!({"note": value, "about": {"said": [line]}, format!("k {value}"): true});

        let messages = json!({"user_id": "dana", "chat_id": chat, "messages": [
            {"role": "user", "content": line}, {"role": "assistant", "content": format!("Noted: {line}")}]});
        calls.http(f, "messages", "POST", "/v1/messages", messages).await;
        let fact = json!({"user_id": "dana", "kind": "fact", "content": format!("User said {line}")});
        calls.http(f, "memories: content", "POST", "/v1/memories", fact).await;
        let detail = format!("User's detail number {}", mark(i));
        let keyed = json!({"user_id": "dana", "kind": "profile", "content": detail, "key": format!("detail {value}")});
        calls.http(f, "memories: key", "POST", "/v1/memories", keyed).await;
        let valued = json!({"user_id": "dana", "kind": "profile", "content": detail, "key": "detail", "value": value});
        calls.http(f, "memories: value", "POST", "/v1/memories", valued).await;
        let candidate = json!({"kind": "fact", "content": format!("Everyone should know {line}")});
        calls.http(f, "memories: tenant-wide", "POST", "/v1/memories", candidate).await;
        let edit = json!({"user_id": "dana", "content": format!("User keeps a notebook: {line}")});
        let edited = calls.http(f, "memories: edit", "PATCH", &format!("/v1/memories/{memory}"), edit).await;
        memory = id_at(&edited, "/memory/id", &memory);
        calls.http(f, "memos", "POST", "/v1/memos", json!({"user_id": "dana", "chat_id": chat, "text": line})).await;
        let fix = json!({"user_id": "dana", "chat_id": "c0", "text": format!("Planned a trip: {line}")});
        calls.http(f, "memos: edit", "PATCH", &format!("/v1/memos/{memo}"), fix).await;
        let document = json!({"user_id": "dana", "owner": "user", "kind": "note", "source": source,
                              "text": format!("# Notes {}\n\n{}", mark(i), p.sentence)});
        calls.http(f, "documents", "POST", "/v1/documents", document).await;
        calls
            .http(f, "documents: search", "POST", "/v1/documents/search", json!({"user_id": "dana", "query": line}))
            .await;
        let similar = json!({"user_id": "dana", "text": line, "source": source});
        calls.http(f, "documents: similar", "POST", "/v1/documents/similar", similar).await;
        let observation = json!({"user_id": "dana", "chat_id": chat, "tool": "send", "outcome": "failure",
                                 "args_summary": format!("{} {value}", mark(i)), "text": line});
        calls.http(f, "observations", "POST", "/v1/observations", observation).await;
        let policy = json!({"key": format!("note-{i}"), "text": line, "value": metadata});
        calls.http(f, "policies", "POST", "/v1/policies", policy).await;
        calls.http(f, "recall", "POST", "/v1/recall", json!({"user_id": "dana", "chat_id": chat, "query": line})).await;
        let context = json!({"user_id": "dana", "chat_id": chat, "message": line});
        calls.http(f, "context", "POST", "/v1/context", context).await;
        if i % 20 == 19 {
            let rotate = json!({"user_id": "dana"});
            calls.http(f, "sessions: rotate", "POST", &format!("/v1/sessions/{chat}/rotate"), rotate).await;
        }

        // mem0's routes: the platform's under /mem0, the self-hosted server's at the root.
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

        // The OpenAI proxy: the turn and the upstream's reply are ingested after the answer.
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

        // MCP tools.
        calls.tool(f, &session, "remember", json!({"user_id": "dana", "chat_id": chat, "content": line})).await;
        let remember = json!({"user_id": "dana", "kind": "fact", "content": format!("User said {line}")});
        calls.tool(f, &session, "remember", remember).await;
        calls.tool(f, &session, "recall", json!({"user_id": "dana", "query": line})).await;
        calls.tool(f, &session, "context", json!({"user_id": "dana", "chat_id": chat, "message": line})).await;
        let document = json!({"user_id": "dana", "owner": "user", "kind": "research", "source": source, "text": line});
        calls.tool(f, &session, "store_document", document).await;
        let similar = json!({"user_id": "dana", "text": line, "source": source});
        calls.tool(f, &session, "find_similar_documents", similar).await;
        let observe = json!({"user_id": "dana", "chat_id": chat, "tool": "send", "outcome": "corrected",
                             "args_summary": format!("{} {value}", mark(i)), "text": line});
        calls.tool(f, &session, "observe", observe).await;
        if i % 20 == 9 {
            calls.tool(f, &session, "rotate_session", json!({"user_id": "dana", "chat_id": chat})).await;
        }
    }
    wait_for_proxied_turns(f, planted.len()).await;
    calls.0
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
