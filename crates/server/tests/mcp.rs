//! MCP over the router without sockets: the lifecycle and sessions of `/mcp`, auth and Origin
//! checks, malformed JSON-RPC, every tool against the real engine, tenant isolation through every
//! tool, and the stdio transport over in-memory pipes.

use std::io::Cursor;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use mnemo::models::HashEmbedder;
use mnemo::store::SqliteStore;
use mnemo::{Config, Memory, SystemClock};
use mnemo_server::KeyStore;
use mnemo_server::mcp::{StdioError, serve_stdio};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::common::fixture;

pub(crate) const V2025_06: &str = "2025-06-18";

/// A POST to /mcp with the headers a streamable-HTTP client sends.
fn post(key: Option<&str>, session: Option<&str>, body: &str) -> Request<Body> {
    let mut b = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, HeaderMap, Value) {
    let res = app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    (status, headers, body)
}

/// Opens a session with `key` asking for `version`; returns the session id and the result.
pub(crate) async fn initialize(app: &Router, key: &str, version: &str) -> (String, Value) {
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let (status, headers, body) = send(app, post(Some(key), None, &msg.to_string())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let session = headers.get("mcp-session-id").expect("initialize issues a session").to_str().unwrap().to_string();
    let (status, _, ack) = send(
        app,
        post(Some(key), Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()),
    )
    .await;
    assert_eq!((status, ack), (StatusCode::ACCEPTED, Value::Null), "a notification gets 202 and no body");
    (session, body["result"].clone())
}

/// A request in a session; returns the HTTP status and the JSON-RPC reply.
pub(crate) async fn rpc(app: &Router, key: &str, session: &str, method: &str, params: Value) -> (StatusCode, Value) {
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, _, body) = send(app, post(Some(key), Some(session), &msg.to_string())).await;
    (status, body)
}

/// Calls a tool and returns its result (`isError`, `content`, `structuredContent`).
pub(crate) async fn tool(app: &Router, key: &str, session: &str, name: &str, arguments: Value) -> Value {
    let (status, reply) = rpc(app, key, session, "tools/call", json!({"name": name, "arguments": arguments})).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["id"], 1);
    let result = reply["result"].clone();
    assert!(result.is_object(), "tools/call {name} answered no result: {reply}");
    result
}

/// The structured result of a tool call that must succeed; its text content is the same JSON.
#[track_caller]
pub(crate) fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), result["structuredContent"]);
    result["structuredContent"].clone()
}

#[track_caller]
pub(crate) fn tool_error(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn initialize_negotiates_the_revision_and_issues_a_session() {
    let f = fixture();
    let (_, result) = initialize(&f.app, &f.a, V2025_06).await;
    assert_eq!(result["protocolVersion"], V2025_06);
    assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
    assert_eq!(result["serverInfo"]["name"], "mnemo");
    let (_, result) = initialize(&f.app, &f.a, "2025-03-26").await;
    assert_eq!(result["protocolVersion"], "2025-03-26", "a supported older revision is kept");
    let (_, result) = initialize(&f.app, &f.a, "2099-01-01").await;
    assert_eq!(result["protocolVersion"], V2025_06, "an unknown revision gets the latest");

    // Each initialize is its own session.
    let (s1, _) = initialize(&f.app, &f.a, V2025_06).await;
    let (s2, _) = initialize(&f.app, &f.a, V2025_06).await;
    assert_ne!(s1, s2);
    assert!(s1.len() >= 32 && s1.bytes().all(|b| b.is_ascii_hexdigit()), "{s1}");

    // initialize without a protocolVersion is an invalid-params error and opens no session.
    let msg = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"capabilities": {}}});
    let (status, headers, body) = send(&f.app, post(Some(&f.a), None, &msg.to_string())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["id"], 9);
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("protocolVersion"), "{body}");
    assert!(headers.get("mcp-session-id").is_none());
}

#[tokio::test]
async fn sessions_are_required_scoped_to_their_tenant_and_end_on_delete() {
    let f = fixture();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let (status, _, body) = send(&f.app, post(Some(&f.a), None, &list)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no session header: {body}");
    assert_eq!(body["error"]["data"]["code"], "missing_session");
    assert!(body["error"]["message"].as_str().unwrap().contains("initialize"));
    let (status, _, body) = send(&f.app, post(Some(&f.a), Some("0123456789abcdef0123456789abcdef"), &list)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["data"]["code"], "session_not_found");

    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    let (status, reply) = rpc(&f.app, &f.a, &session, "ping", json!({})).await;
    assert_eq!((status, &reply["result"]), (StatusCode::OK, &json!({})), "{reply}");

    // Tenant B's key cannot use (or learn of) tenant A's session.
    let (status, _, _) = send(&f.app, post(Some(&f.b), Some(&session), &list)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A protocol header that disagrees with the session is refused.
    let mut req = post(Some(&f.a), Some(&session), &list);
    req.headers_mut().insert("mcp-protocol-version", "2025-03-26".parse().unwrap());
    let (status, _, body) = send(&f.app, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["data"]["code"], "unsupported_protocol_version");
    let mut req = post(Some(&f.a), Some(&session), &list);
    req.headers_mut().insert("mcp-protocol-version", V2025_06.parse().unwrap());
    assert_eq!(send(&f.app, req).await.0, StatusCode::OK);

    // GET offers no stream.
    let get = Request::builder()
        .method("GET")
        .uri("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.a))
        .header("mcp-session-id", &session)
        .body(Body::empty())
        .unwrap();
    let (status, headers, _) = send(&f.app, get).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers[header::ALLOW], "POST, DELETE");

    // DELETE with B's key does not end A's session; with A's it does, and the id is then unknown.
    let delete = |key: &str| {
        Request::builder()
            .method("DELETE")
            .uri("/mcp")
            .header(header::AUTHORIZATION, format!("Bearer {key}"))
            .header("mcp-session-id", &session)
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(send(&f.app, delete(&f.b)).await.0, StatusCode::NOT_FOUND);
    assert_eq!(send(&f.app, rpc_req(&f.a, &session)).await.0, StatusCode::OK);
    assert_eq!(send(&f.app, delete(&f.a)).await.0, StatusCode::NO_CONTENT);
    assert_eq!(send(&f.app, rpc_req(&f.a, &session)).await.0, StatusCode::NOT_FOUND);
    assert_eq!(send(&f.app, delete(&f.a)).await.0, StatusCode::NOT_FOUND);
}

fn rpc_req(key: &str, session: &str) -> Request<Body> {
    post(Some(key), Some(session), &json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string())
}

#[tokio::test]
async fn a_valid_key_and_a_local_origin_are_required() {
    let f = fixture();
    let init =
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": V2025_06}}).to_string();
    for key in [None, Some("mnemo_acme_not-a-real-key")] {
        let (status, headers, body) = send(&f.app, post(key, None, &init)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(headers[header::WWW_AUTHENTICATE], "Bearer");
        assert_eq!(body["error"]["data"]["code"], "unauthorized");
        assert!(headers.get("mcp-session-id").is_none());
    }
    // The admin key is not a tenant key.
    let (status, _, _) = send(&f.app, post(Some(crate::common::ADMIN), None, &init)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let with_origin = |origin: &str| {
        let mut req = post(Some(&f.a), None, &init);
        req.headers_mut().insert(header::ORIGIN, origin.parse().unwrap());
        req
    };
    let (status, _, body) = send(&f.app, with_origin("https://evil.example")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["data"]["code"], "forbidden_origin");
    assert!(body["error"]["message"].as_str().unwrap().contains("MNEMO_MCP_ALLOWED_ORIGINS"));
    assert_eq!(send(&f.app, with_origin("http://localhost:6274")).await.0, StatusCode::OK);
}

#[tokio::test]
async fn malformed_messages_get_json_rpc_errors() {
    let f = fixture();
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    let s = Some(session.as_str());

    let (status, _, body) = send(&f.app, post(Some(&f.a), s, "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!((&body["id"], &body["error"]["code"]), (&Value::Null, &json!(-32700)), "{body}");

    let cases = [
        (json!({"id": 1, "method": "ping"}), -32600, "jsonrpc"),
        (json!({"jsonrpc": "2.0", "id": 1, "method": 7}), -32600, "method"),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}), -32601, "resources/list"),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "teleport"}}),
            -32602,
            "teleport",
        ),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}), -32602, "name"),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": [1]}}),
            -32602,
            "arguments",
        ),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "x"}}), -32602, "cursor"),
        (json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), -32600, "batch"),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}), -32602, "protocolVersion"),
    ];
    for (msg, code, mentions) in cases {
        let (status, _, body) = send(&f.app, post(Some(&f.a), s, &msg.to_string())).await;
        assert_eq!(status, StatusCode::OK, "{msg}: {body}");
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["error"]["code"], code, "{msg}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains(mentions), "{msg}: {body}");
    }

    // A response to a request we never sent, and an unknown notification: accepted, no body.
    for msg in
        [json!({"jsonrpc": "2.0", "id": 3, "result": {}}), json!({"jsonrpc": "2.0", "method": "notifications/x"})]
    {
        let (status, _, body) = send(&f.app, post(Some(&f.a), s, &msg.to_string())).await;
        assert_eq!((status, body), (StatusCode::ACCEPTED, Value::Null));
    }

    // Wrong media types.
    let mut req = post(Some(&f.a), s, "{}");
    req.headers_mut().insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
    assert_eq!(send(&f.app, req).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let mut req = post(Some(&f.a), s, "{}");
    req.headers_mut().insert(header::ACCEPT, "text/event-stream".parse().unwrap());
    assert_eq!(send(&f.app, req).await.0, StatusCode::NOT_ACCEPTABLE);

    // Revision 2025-03-26 allows batches: one reply per request, none for notifications.
    let (old, _) = initialize(&f.app, &f.a, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"}
    ]);
    let (status, _, body) = send(&f.app, post(Some(&f.a), Some(&old), &batch.to_string())).await;
    assert_eq!(status, StatusCode::OK);
    let replies = body.as_array().unwrap();
    assert_eq!(replies.len(), 2, "{body}");
    assert_eq!(replies[0]["id"], "a");
    assert_eq!(replies[1]["result"]["tools"].as_array().unwrap().len(), 10);
}

#[tokio::test]
async fn tools_list_describes_ten_tools_with_schemas() {
    let f = fixture();
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    let (_, reply) = rpc(&f.app, &f.a, &session, "tools/list", json!({})).await;
    let tools = reply["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "remember",
            "recall",
            "context",
            "forget",
            "list_memories",
            "store_document",
            "find_similar_documents",
            "observe",
            "report_context_usage",
            "rotate_session"
        ]
    );
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
        assert!(t["inputSchema"]["properties"]["user_id"].is_object(), "{t}");
        assert!(t["description"].as_str().unwrap().len() > 20, "{t}");
    }
    let recall = &tools[1];
    assert!(recall["outputSchema"]["properties"]["items"].is_object(), "{recall}");
}

#[tokio::test]
async fn every_tool_runs_against_the_engine() {
    let f = fixture();
    let (s, _) = initialize(&f.app, &f.a, V2025_06).await;
    let a = &f.a;

    // remember a message: appended to the chat, extracted, judged by the gate.
    let r = ok(&tool(
        &f.app,
        a,
        &s,
        "remember",
        json!({"user_id": "dana", "chat_id": "c1", "content": "My name is Dana and I live in Lisbon."}),
    )
    .await);
    assert_eq!((r["mode"].as_str(), r["appended"].as_u64()), (Some("message"), Some(1)), "{r}");
    assert!(r["ops"].as_array().unwrap().iter().any(|o| o["verdict"]["verdict"] == "written"), "{r}");
    // A retried message (the same message_id) is a duplicate, not a second message.
    let retry = json!({"user_id": "dana", "chat_id": "c1", "message_id": "q1", "content": "I prefer short answers."});
    let first = ok(&tool(&f.app, a, &s, "remember", retry.clone()).await);
    assert_eq!(first["appended"], 1, "{first}");
    let again = ok(&tool(&f.app, a, &s, "remember", retry).await);
    assert_eq!((again["appended"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(1)), "{again}");

    // remember a memory directly, with a kind.
    let r = ok(&tool(
        &f.app,
        a,
        &s,
        "remember",
        json!({"user_id": "dana", "kind": "fact", "content": "Dana's server runs on Debian 12"}),
    )
    .await);
    assert_eq!(r["mode"], "memory");
    assert_eq!(r["ops"][0]["verdict"]["verdict"], "written", "{r}");
    let debian = r["ops"][0]["verdict"]["memory_id"].as_str().unwrap().to_string();

    // recall and context find them.
    let r =
        ok(&tool(&f.app, a, &s, "recall", json!({"user_id": "dana", "query": "which server OS does Dana run?"})).await);
    assert!(r["items"].to_string().contains("Debian 12"), "{r}");
    assert!(r["turn_id"].as_str().is_some_and(|t| !t.is_empty()));
    let r = ok(&tool(
        &f.app,
        a,
        &s,
        "context",
        json!({"user_id": "dana", "chat_id": "c2", "message": "Where do I live?", "budget_tokens": 400}),
    )
    .await);
    assert!(r["text"].as_str().unwrap().contains("Lisbon"), "{r}");

    // list_memories with filters and paging.
    let r = ok(&tool(&f.app, a, &s, "list_memories", json!({"user_id": "dana", "kind": "fact"})).await);
    let items = r["items"].as_array().unwrap();
    assert!(items.iter().any(|m| m["id"] == debian.as_str()), "{r}");
    assert!(items.iter().all(|m| m["kind"] == "fact"), "{r}");
    let r = ok(&tool(&f.app, a, &s, "list_memories", json!({"user_id": "dana", "limit": 1})).await);
    assert_eq!((r["items"].as_array().unwrap().len(), r["next_offset"].as_u64()), (1, Some(1)), "{r}");

    // forget archives: no longer active, no longer recalled.
    let r = ok(&tool(&f.app, a, &s, "forget", json!({"user_id": "dana", "memory_id": debian})).await);
    assert_eq!(r["memory"]["status"], "archived", "{r}");
    let r = ok(&tool(&f.app, a, &s, "list_memories", json!({"user_id": "dana", "status": "active"})).await);
    assert!(!r.to_string().contains("Debian"), "{r}");
    let r = ok(&tool(&f.app, a, &s, "recall", json!({"user_id": "dana", "query": "Debian server"})).await);
    assert!(!r["items"].to_string().contains("Debian"), "{r}");
}

#[tokio::test]
async fn observations_through_the_tool_become_a_skill_that_opens_the_next_session() {
    let f = fixture();
    let (s, _) = initialize(&f.app, &f.a, V2025_06).await;
    for chat in ["s1", "s2", "s3"] {
        let args = json!({"agent_id": "coder", "user_id": "dana", "chat_id": chat, "tool": "edit_file",
            "args_summary": "SwiftUI view ProfileView.swift", "outcome": "corrected",
            "text": "Add accessibility labels to every SwiftUI control"});
        let r = ok(&tool(&f.app, &f.a, &s, "observe", args).await);
        assert_eq!(
            (r["observation"]["chat_id"].as_str(), r["observation"]["outcome"].as_str()),
            (Some(chat), Some("corrected"))
        );
    }
    let e = tool_error(
        &tool(
            &f.app,
            &f.a,
            &s,
            "observe",
            json!({"chat_id": "s4", "tool": "t", "args_summary": "x", "outcome": "meh"}),
        )
        .await,
    );
    assert!(e.contains("meh") || e.contains("outcome"), "{e}");
    let report = f.memory.maintain().unwrap();
    let id = report.consolidation.skills[0].id;
    f.memory.approve(&mnemo::Scope::parse("acme", Some("coder"), None, None).unwrap(), id).unwrap();
    let ctx = json!({"agent_id": "coder", "user_id": "sam", "chat_id": "new", "message": "Build the settings screen"});
    let r = ok(&tool(&f.app, &f.a, &s, "context", ctx.clone()).await);
    assert!(r["text"].as_str().unwrap().contains("Add accessibility labels"), "{r}");
    // Another tenant with the same ids starts its session without it.
    let (sb, _) = initialize(&f.app, &f.b, V2025_06).await;
    let r = ok(&tool(&f.app, &f.b, &sb, "context", ctx).await);
    assert!(!r["text"].as_str().unwrap().contains("accessibility"), "{r}");
}

#[tokio::test]
async fn research_is_stored_and_found_again_through_the_tools_within_the_tenant() {
    let f = fixture();
    let (s, _) = initialize(&f.app, &f.a, V2025_06).await;
    let text = "# Connection pooling in PostgreSQL\n\nPgBouncer in transaction mode multiplexes many client \
                connections onto a few server connections; session features such as advisory locks need session mode.";
    let args = json!({"agent_id": "coder", "kind": "research", "source": "https://www.pgbouncer.org", "text": text});
    let r = ok(&tool(&f.app, &f.a, &s, "store_document", args).await);
    assert_eq!(r["document"]["gist"], "Connection pooling in PostgreSQL");
    let ask = |text: &str| json!({"agent_id": "coder", "user_id": "sam", "text": text, "threshold": 0.3});
    let r =
        ok(&tool(&f.app, &f.a, &s, "find_similar_documents", ask("PostgreSQL connection pooling with PgBouncer"))
            .await);
    assert_eq!(r["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["items"][0]["document"]["level"], "l1");
    let r = ok(&tool(&f.app, &f.a, &s, "find_similar_documents", ask("Swift view accessibility modifiers")).await);
    assert!(r["items"].as_array().unwrap().is_empty(), "{r}");
    // Another tenant finds nothing; bad input is a tool error that writes nothing.
    let (sb, _) = initialize(&f.app, &f.b, V2025_06).await;
    let r =
        ok(&tool(&f.app, &f.b, &sb, "find_similar_documents", ask("PostgreSQL connection pooling with PgBouncer"))
            .await);
    assert!(r["items"].as_array().unwrap().is_empty(), "{r}");
    let e = tool_error(&tool(&f.app, &f.a, &s, "store_document", json!({"kind": "note", "text": " "})).await);
    assert!(e.contains("empty"), "{e}");
    let e = tool_error(&tool(&f.app, &f.a, &s, "store_document", json!({"kind": "gossip", "text": "x"})).await);
    assert!(e.contains("gossip"), "{e}");
    let scope = mnemo::Scope::parse("acme", Some("coder"), None, None).unwrap();
    assert_eq!(f.memory.documents(&scope, 50, 0).unwrap().len(), 1);
}

#[tokio::test]
async fn the_context_window_tools_advise_and_rotate_within_the_tenant() {
    let f = fixture();
    let (s, _) = initialize(&f.app, &f.a, V2025_06).await;
    let said =
        json!({"user_id": "dana", "chat_id": "w1", "content": "I live in Lisbon and I have a dog named Biscuit."});
    ok(&tool(&f.app, &f.a, &s, "remember", said).await);
    let text = "# Build notes\n\nThe workspace builds with cargo. Tests run with nextest. Clippy must be clean. \
                Formatting is checked in CI with rustfmt before every merge.";
    let doc =
        ok(&tool(&f.app, &f.a, &s, "store_document", json!({"user_id": "dana", "kind": "note", "text": text})).await);
    let doc_id = doc["document"]["id"].as_str().unwrap().to_string();
    let usage = |used: u64| {
        json!({"user_id": "dana", "chat_id": "w1", "used_tokens": used, "capacity_tokens": 100,
               "items": [{"kind": "document", "id": doc_id, "level": "L2"}]})
    };
    let r = ok(&tool(&f.app, &f.a, &s, "report_context_usage", usage(95)).await);
    assert_eq!((r["stage"].as_str(), r["rotate"].as_bool()), (Some("rotate"), Some(true)), "{r}");
    assert_ne!(r["items"][0]["action"], "keep", "{r}");
    let r = ok(&tool(&f.app, &f.a, &s, "report_context_usage", usage(10)).await);
    assert_eq!((r["stage"].as_str(), r["items"][0]["action"].as_str()), (Some("ok"), Some("keep")), "{r}");
    let e = tool_error(
        &tool(
            &f.app,
            &f.a,
            &s,
            "report_context_usage",
            json!({"user_id": "dana", "chat_id": "w1",
        "used_tokens": 0, "capacity_tokens": 0}),
        )
        .await,
    );
    assert!(e.contains("capacity_tokens"), "{e}");

    let r = ok(&tool(&f.app, &f.a, &s, "rotate_session", json!({"user_id": "dana", "chat_id": "w1"})).await);
    assert_eq!(r["chat_id"], "w1", "{r}");
    assert!(r["bundle"]["tokens"].as_u64().unwrap() <= 2_000, "{r}");
    assert!(r["bundle"]["text"].as_str().unwrap().contains("Biscuit"), "{r}");
    // Another tenant's key sees neither the document nor the session's memories.
    let (sb, _) = initialize(&f.app, &f.b, V2025_06).await;
    let e = tool_error(&tool(&f.app, &f.b, &sb, "report_context_usage", usage(95)).await);
    assert!(e.contains("cannot see"), "{e}");
    let r = ok(&tool(&f.app, &f.b, &sb, "rotate_session", json!({"user_id": "dana", "chat_id": "w1"})).await);
    assert!(!r["bundle"]["text"].as_str().unwrap().contains("Biscuit"), "{r}");
}

#[tokio::test]
async fn tool_failures_are_results_with_the_reason_and_change_nothing() {
    let f = fixture();
    let (s, _) = initialize(&f.app, &f.a, V2025_06).await;
    let a = &f.a;
    let cases = [
        ("remember", json!({"user_id": "dana"}), "content"),
        ("remember", json!({"user_id": "dana", "content": "x", "tenant": "globex"}), "tenant"),
        ("remember", json!({"user_id": "dana", "content": "I like tea", "kind": "feeling"}), "feeling"),
        ("remember", json!({"user_id": "dana", "content": "Be formal", "kind": "policy"}), "policies"),
        ("remember", json!({"user_id": "dana", "content": "I like tea", "role": "robot"}), "robot"),
        ("remember", json!({"user_id": "dana", "content": "I like tea", "kind": "preference", "role": "user"}), "role"),
        (
            "remember",
            json!({"user_id": "dana", "content": "I like tea", "kind": "lore", "message_id": "x"}),
            "message_id",
        ),
        ("recall", json!({"user_id": "", "query": "tea"}), "user"),
        ("context", json!({"user_id": "dana", "message": "hi"}), "chat_id"),
        ("forget", json!({"user_id": "dana", "memory_id": "not-an-id"}), "not-an-id"),
        ("forget", json!({"user_id": "dana", "memory_id": mnemo::core::MemoryId::new().to_string()}), "not found"),
        ("list_memories", json!({"user_id": "dana", "limit": 0}), "limit"),
        ("list_memories", json!({"user_id": "dana", "kind": "feeling"}), "feeling"),
        ("list_memories", json!({"user_id": "dana", "top_k": 3}), "top_k"),
    ];
    for (name, args, mentions) in cases {
        let text = tool_error(&tool(&f.app, a, &s, name, args.clone()).await);
        assert!(text.contains(mentions), "{name} {args}: {text}");
    }
    let r = ok(&tool(&f.app, a, &s, "list_memories", json!({"user_id": "dana"})).await);
    assert_eq!(r["items"], json!([]), "refused calls wrote nothing: {r}");
}

/// Everything tenant A writes through MCP is invisible to tenant B through every tool, with the
/// very same user and chat ids, and B cannot forget A's memory.
#[tokio::test]
async fn tenant_b_sees_nothing_of_tenant_a_through_any_tool() {
    let f = fixture();
    let (sa, _) = initialize(&f.app, &f.a, V2025_06).await;
    let (sb, _) = initialize(&f.app, &f.b, V2025_06).await;
    ok(&tool(
        &f.app,
        &f.a,
        &sa,
        "remember",
        json!({"user_id": "dana", "chat_id": "c1", "content": "My name is Dana and I live in Lisbon."}),
    )
    .await);
    let added = ok(&tool(
        &f.app,
        &f.a,
        &sa,
        "remember",
        json!({"user_id": "dana", "chat_id": "c1", "kind": "fact", "content": "Dana's server runs on Debian 12"}),
    )
    .await);
    let a_id = added["ops"][0]["verdict"]["memory_id"].as_str().unwrap().to_string();
    let a_ctx = ok(&tool(
        &f.app,
        &f.a,
        &sa,
        "context",
        json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live and what server do I run?"}),
    )
    .await);
    assert!(a_ctx["text"].as_str().unwrap().contains("Lisbon"), "A sees its own: {a_ctx}");

    let b = |name: &'static str, args: Value| {
        let (app, key, s) = (f.app.clone(), f.b.clone(), sb.clone());
        async move { tool(&app, &key, &s, name, args).await }
    };
    for chat in [json!(null), json!("c1")] {
        let r = ok(&b("list_memories", json!({"user_id": "dana", "chat_id": chat})).await);
        assert_eq!(r["items"], json!([]), "{r}");
        let r = ok(&b("recall", json!({"user_id": "dana", "chat_id": chat, "query": "Lisbon Debian Dana name"})).await);
        for part in ["items", "exact", "policies", "excerpts"] {
            assert_eq!(r[part], json!([]), "{part}: {r}");
        }
    }
    let r = ok(&b("context", json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})).await);
    let text = r.to_string();
    for leak in ["Lisbon", "Dana", "Debian"] {
        assert!(!text.contains(leak), "{leak} leaked into tenant B's context: {text}");
    }
    let err = tool_error(&b("forget", json!({"user_id": "dana", "chat_id": "c1", "memory_id": a_id})).await);
    assert!(err.contains("not found") && !err.contains("acme"), "{err}");

    // A's memory is untouched, and what B remembers stays B's.
    let r = ok(&tool(&f.app, &f.a, &sa, "list_memories", json!({"user_id": "dana", "status": "active"})).await);
    assert!(r["items"].as_array().unwrap().iter().any(|m| m["id"] == a_id.as_str()), "{r}");
    let r = ok(&b(
        "remember",
        json!({"user_id": "dana", "chat_id": "c1", "content": "My name is Dana and I live in Lisbon."}),
    )
    .await);
    assert_eq!(r["appended"], 1, "message ids are per tenant: {r}");
}

struct StdioFixture {
    memory: Memory,
    keys: KeyStore,
    key: String,
    _dir: tempfile::TempDir,
}

fn stdio_fixture() -> StdioFixture {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    let store = Arc::new(SqliteStore::open(config.db_path()).unwrap());
    let memory = Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(384))), Arc::new(SystemClock));
    let keys = KeyStore::open(&dir.path().join("keys.db")).unwrap();
    let (key, _) = keys.create("acme").unwrap();
    StdioFixture { memory, keys, key, _dir: dir }
}

fn stdio(f: &StdioFixture, key: &str, lines: &[String]) -> Result<Vec<Value>, StdioError> {
    let mut out = Vec::new();
    serve_stdio(&f.memory, &f.keys, key, Cursor::new(lines.join("\n")), &mut out)?;
    let text = String::from_utf8(out).unwrap();
    Ok(text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

#[test]
fn stdio_speaks_newline_delimited_json_rpc() {
    let f = stdio_fixture();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": V2025_06}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        String::new(),
        "this is not json".to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "remember", "arguments":
            {"user_id": "dana", "kind": "preference", "content": "Dana prefers short answers"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": "l", "method": "tools/call", "params": {"name": "list_memories", "arguments":
            {"user_id": "dana"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": V2025_06}}).to_string(),
    ];
    let replies = stdio(&f, &f.key, &lines).unwrap();
    assert_eq!(replies.len(), 6, "one line per request, none for the notification and blank line: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], -32600, "a request before initialize: {}", replies[0]);
    assert_eq!(replies[1]["result"]["protocolVersion"], V2025_06);
    assert_eq!(replies[2]["error"]["code"], -32700);
    assert_eq!(replies[3]["result"]["structuredContent"]["ops"][0]["verdict"]["verdict"], "written", "{}", replies[3]);
    assert_eq!(replies[4]["id"], "l");
    let items = replies[4]["result"]["structuredContent"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["content"], "Dana prefers short answers");
    assert!(replies[5]["error"]["message"].as_str().unwrap().contains("already initialized"));
}

#[test]
fn stdio_refuses_an_invalid_key_and_stops_serving_a_revoked_one() {
    let f = stdio_fixture();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": V2025_06}});
    let err = stdio(&f, "mnemo_acme_wrong", &[init.to_string()]).unwrap_err();
    assert!(matches!(err, StdioError::InvalidKey), "{err}");
    assert!(err.to_string().contains("mnemo keys create"), "{err}");

    let prefix = f.keys.list(Some("acme")).unwrap()[0].prefix.clone();
    assert!(f.keys.revoke(&prefix).unwrap());
    // Revoked before the start: refused at once.
    assert!(matches!(stdio(&f, &f.key, &[init.to_string()]), Err(StdioError::InvalidKey)));
}

#[test]
fn stdio_answers_requests_after_a_revocation_with_an_error() {
    let f = stdio_fixture();
    let prefix = f.keys.list(Some("acme")).unwrap()[0].prefix.clone();
    // A reader that revokes the key once the first line has been read.
    struct RevokeAfterFirst<'a> {
        lines: std::vec::IntoIter<String>,
        current: Vec<u8>,
        keys: &'a KeyStore,
        prefix: String,
        served: usize,
    }
    impl std::io::Read for RevokeAfterFirst<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = std::io::BufRead::fill_buf(self)?.len().min(out.len());
            out[..n].copy_from_slice(&self.current[..n]);
            std::io::BufRead::consume(self, n);
            Ok(n)
        }
    }
    impl std::io::BufRead for RevokeAfterFirst<'_> {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            if self.current.is_empty()
                && let Some(line) = self.lines.next()
            {
                if self.served == 1 {
                    self.keys.revoke(&self.prefix).unwrap();
                }
                self.served += 1;
                self.current = format!("{line}\n").into_bytes();
            }
            Ok(&self.current)
        }
        fn consume(&mut self, n: usize) {
            self.current.drain(..n);
        }
    }
    let lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": V2025_06}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(),
    ];
    let input = RevokeAfterFirst { lines: lines.into_iter(), current: Vec::new(), keys: &f.keys, prefix, served: 0 };
    let mut out = Vec::new();
    serve_stdio(&f.memory, &f.keys, &f.key, input, &mut out).unwrap();
    let replies: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(replies.len(), 2);
    assert!(replies[0]["result"].is_object());
    assert_eq!(replies[1]["error"]["code"], -32001, "{}", replies[1]);
}

#[test]
fn stdio_answers_a_line_that_is_not_utf8_and_keeps_serving() {
    let f = stdio_fixture();
    let mut input = b"\xff\xfe{}\n".to_vec();
    input.extend_from_slice(br#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#);
    let mut out = Vec::new();
    serve_stdio(&f.memory, &f.keys, &f.key, Cursor::new(input), &mut out).unwrap();
    let replies: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(replies[0]["error"]["code"], -32700);
    assert_eq!((&replies[1]["id"], &replies[1]["result"]), (&json!(7), &json!({})));
}

/// Sessions are capped per tenant: a tenant opening session after session ends its own oldest
/// ones, never another tenant's live session; and a session unused for too long expires.
#[tokio::test]
async fn one_tenant_opening_many_sessions_never_evicts_another_tenants() {
    let f = crate::common::configured(|c| {
        c.limits.mcp_sessions_per_tenant = 3;
        c.limits.mcp_max_sessions = 8;
    });
    let (theirs, _) = initialize(&f.app, &f.b, V2025_06).await;
    let (first, _) = initialize(&f.app, &f.a, V2025_06).await;
    for _ in 0..20 {
        initialize(&f.app, &f.a, V2025_06).await;
    }
    assert_eq!(rpc(&f.app, &f.b, &theirs, "ping", json!({})).await.0, StatusCode::OK, "B's session lives on");
    assert_eq!(rpc(&f.app, &f.a, &first, "ping", json!({})).await.0, StatusCode::NOT_FOUND, "A's oldest ended");
}

#[tokio::test]
async fn idle_sessions_expire() {
    let f = crate::common::configured(|c| c.limits.mcp_session_idle_secs = 1);
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    assert_eq!(rpc(&f.app, &f.a, &session, "ping", json!({})).await.0, StatusCode::OK);
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert_eq!(rpc(&f.app, &f.a, &session, "ping", json!({})).await.0, StatusCode::NOT_FOUND);
}

/// `list_memories` range-checks its integers like the REST listing: an offset near 2^63 is a
/// tool error naming the field, never a storage error.
#[tokio::test]
async fn list_memories_refuses_offsets_out_of_range() {
    let f = fixture();
    let (session, _) = initialize(&f.app, &f.a, V2025_06).await;
    for offset in [json!(9_223_372_036_854_775_807_u64), json!(18_446_744_073_709_551_615_u64)] {
        let args = json!({"user_id": "dana", "offset": offset});
        let e = tool_error(&tool(&f.app, &f.a, &session, "list_memories", args).await);
        assert!(e.contains("offset") && !e.contains("storage"), "{e}");
    }
    let args = json!({"user_id": "dana", "offset": 0, "limit": 5});
    assert_eq!(ok(&tool(&f.app, &f.a, &session, "list_memories", args).await)["limit"], 5);
}

/// A JSON-RPC batch larger than `limits.mcp_max_batch` is refused as a whole, saying why.
#[tokio::test]
async fn large_batches_are_refused() {
    let f = crate::common::configured(|c| c.limits.mcp_max_batch = 4);
    let (session, _) = initialize(&f.app, &f.a, "2025-03-26").await;
    let batch: Vec<Value> = (0..5).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
    let (status, _, body) = send(&f.app, post(Some(&f.a), Some(&session), &Value::Array(batch).to_string())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("limits.mcp_max_batch"), "{body}");
    let batch: Vec<Value> = (0..4).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
    let (_, _, body) = send(&f.app, post(Some(&f.a), Some(&session), &Value::Array(batch).to_string())).await;
    assert_eq!(body.as_array().map(Vec::len), Some(4), "{body}");
}

/// A batch carries no more text than one ingest call (`ingest.max_batch_chars`): thirty
/// `remember` calls of 9,000 characters each, each within its own limits, are refused as a
/// whole, saying why, and nothing is written; the same calls in smaller batches go through.
#[tokio::test]
async fn an_mcp_batch_is_bounded_by_the_text_of_one_ingest() {
    let f = fixture();
    let (session, _) = initialize(&f.app, &f.a, "2025-03-26").await;
    let line = "I walked along the river this morning and counted the herons on the bank. ".repeat(120);
    assert!(line.len() > 8_000 && line.len() < 10_000);
    let remember = |i: usize| {
        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "remember", "arguments": {"user_id": "dana", "chat_id": "c1", "content": line}}})
    };
    let batch: Vec<Value> = (0..30).map(remember).collect();
    let started = std::time::Instant::now();
    let (status, _, body) = send(&f.app, post(Some(&f.a), Some(&session), &Value::Array(batch).to_string())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("ingest.max_batch_chars") && message.contains("several"), "{message}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "refused before any work");
    let (_, listed) = crate::common::call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1", &f.a, None).await;
    assert_eq!(listed["items"], json!([]), "nothing was written");

    let batch: Vec<Value> = (0..5).map(remember).collect();
    let (_, _, body) = send(&f.app, post(Some(&f.a), Some(&session), &Value::Array(batch).to_string())).await;
    assert_eq!(body.as_array().map(Vec::len), Some(5), "five replies");
    assert!(body.as_array().unwrap().iter().all(|r| r["result"]["isError"] == false), "every call ran");
}
