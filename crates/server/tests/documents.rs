//! `/v1/documents` and the two research tools over HTTP: levels, search, "researched before",
//! isolation by tenant, agent and user, and bad input refused with nothing written.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{assert_error, call, configured, fixture};

const WAL: &str = "# Write-ahead logging in SQLite\n\nIn WAL mode SQLite readers do not block writers and a writer \
                   does not block readers. Checkpoints copy WAL pages back into the database file.";

const RUST: &str = "use std::fmt;\n\npub struct Point { x: i32 }\n\npub fn distance(a: &Point, b: &Point) -> f64 {\n    \
                    0.0\n}\n";

async fn store(app: &axum::Router, key: &str, body: Value) -> Value {
    let (status, out) = call(app, "POST", "/v1/documents", key, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{out}");
    out
}

async fn count(app: &axum::Router, key: &str, query: &str) -> usize {
    let (status, out) = call(app, "GET", &format!("/v1/documents?{query}"), key, None).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    out["items"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_document_is_stored_at_three_levels_and_read_back_at_each() {
    let f = fixture();
    let out = store(
        &f.app,
        &f.a,
        json!({"agent_id": "coder", "user_id": "dana", "kind": "research", "source": "https://sqlite.org/wal.html", "text": WAL}),
    )
    .await;
    let doc = &out["document"];
    assert_eq!(doc["level"], "l1");
    assert_eq!(doc["gist"], "Write-ahead logging in SQLite");
    assert_eq!(doc["agent_id"], "coder");
    assert!(doc.get("user_id").is_none(), "agent-wide by default: {doc}");
    let id = doc["id"].as_str().unwrap();
    for (level, expect) in [("L0", "Write-ahead logging in SQLite"), ("l2", WAL)] {
        let (s, d) = call(&f.app, "GET", &format!("/v1/documents/{id}?agent_id=coder&level={level}"), &f.a, None).await;
        assert_eq!(s, StatusCode::OK, "{d}");
        assert_eq!(d["text"], expect);
    }
    let (_, full) = call(&f.app, "GET", &format!("/v1/documents/{id}?agent_id=coder&user_id=sam"), &f.a, None).await;
    assert_eq!((full["level"].as_str(), full["text"].as_str()), (Some("l2"), Some(WAL)));
    assert!(full["tokens"].as_u64().unwrap() > 20);

    // Code gets a structural outline as its overview.
    let code =
        store(&f.app, &f.a, json!({"agent_id": "coder", "kind": "file", "source": "src/geo.rs", "text": RUST})).await;
    let outline = code["document"]["text"].as_str().unwrap();
    assert!(outline.contains("pub fn distance(a: &Point, b: &Point) -> f64") && !outline.contains("0.0"), "{outline}");
    assert_eq!(count(&f.app, &f.a, "agent_id=coder").await, 2);
}

#[tokio::test]
async fn research_done_before_is_found_and_unrelated_research_is_not() {
    let f = fixture();
    store(&f.app, &f.a, json!({"agent_id": "coder", "kind": "research", "source": "sqlite wal", "text": WAL})).await;
    let ask = |text: &str| json!({"agent_id": "coder", "user_id": "sam", "text": text, "threshold": 0.3});
    let (s, found) =
        call(&f.app, "POST", "/v1/documents/similar", &f.a, Some(ask("SQLite WAL readers and writers"))).await;
    assert_eq!(s, StatusCode::OK, "{found}");
    assert_eq!(found["items"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found["items"][0]["document"]["gist"], "Write-ahead logging in SQLite");
    assert_eq!(found["threshold"], 0.3);
    let (_, none) =
        call(&f.app, "POST", "/v1/documents/similar", &f.a, Some(ask("Kubernetes pod memory limits and OOM kills")))
            .await;
    assert!(none["items"].as_array().unwrap().is_empty(), "{none}");
    // Search ranks whatever the score, at the level asked.
    let body = json!({"agent_id": "coder", "query": "Kubernetes pods", "level": "L0", "top_k": 5});
    let (s, hits) = call(&f.app, "POST", "/v1/documents/search", &f.a, Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{hits}");
    assert_eq!(hits["items"][0]["document"]["level"], "l0");
    assert!(hits.get("threshold").is_none());
}

#[tokio::test]
async fn documents_are_isolated_by_tenant_agent_and_user() {
    let f = fixture();
    let shared = store(&f.app, &f.a, json!({"agent_id": "coder", "kind": "research", "text": WAL})).await;
    let mine = store(
        &f.app,
        &f.a,
        json!({"agent_id": "coder", "user_id": "dana", "owner": "user", "kind": "note", "text": "Dana's WAL notes"}),
    )
    .await;
    let (shared, mine) = (shared["document"]["id"].as_str().unwrap(), mine["document"]["id"].as_str().unwrap());
    // Another tenant: nothing listed, read, found or deleted, and the same 404 as an unknown id.
    assert_eq!(count(&f.app, &f.b, "agent_id=coder&user_id=dana").await, 0);
    for id in [shared, mine] {
        let uri = format!("/v1/documents/{id}?agent_id=coder&user_id=dana");
        assert_error(&call(&f.app, "GET", &uri, &f.b, None).await, StatusCode::NOT_FOUND, "not_found");
        assert_error(&call(&f.app, "DELETE", &uri, &f.b, None).await, StatusCode::NOT_FOUND, "not_found");
    }
    for route in ["search", "similar"] {
        let body = json!({"agent_id": "coder", "user_id": "dana", "query": WAL, "text": WAL, "threshold": -1.0});
        let body = if route == "search" {
            json!({"agent_id": "coder", "user_id": "dana", "query": "SQLite WAL"})
        } else {
            body.as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| *k != "query")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let (s, out) = call(&f.app, "POST", &format!("/v1/documents/{route}"), &f.b, Some(body)).await;
        assert_eq!(s, StatusCode::OK, "{out}");
        assert!(out["items"].as_array().unwrap().is_empty(), "{route}: {out}");
    }
    // Another user of the agent sees the shared one only; another agent sees neither.
    assert_eq!(count(&f.app, &f.a, "agent_id=coder&user_id=sam").await, 1);
    assert_eq!(count(&f.app, &f.a, "agent_id=coder&user_id=dana").await, 2);
    assert_eq!(count(&f.app, &f.a, "agent_id=writer&user_id=dana").await, 0);
    let uri = format!("/v1/documents/{mine}?agent_id=coder&user_id=sam");
    assert_error(&call(&f.app, "GET", &uri, &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
    // The owner deletes it, once.
    let uri = format!("/v1/documents/{mine}?agent_id=coder&user_id=dana");
    assert_eq!(call(&f.app, "DELETE", &uri, &f.a, None).await.0, StatusCode::NO_CONTENT);
    assert_error(&call(&f.app, "DELETE", &uri, &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn bad_input_is_a_4xx_that_writes_nothing() {
    let f = configured(|c| c.documents.max_chars = 1_000);
    let base = json!({"agent_id": "coder", "user_id": "dana", "kind": "research"});
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    let cases = [
        (with(json!({"text": ""})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"text": "  \n "})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"text": "x".repeat(1_001)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"text": "ok", "source": "s".repeat(3_000)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"text": "ok", "kind": "gossip"})), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        (with(json!({"text": "ok", "tenant": "globex"})), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        (with(json!({"text": "ok", "agent_id": ""})), StatusCode::BAD_REQUEST, "invalid_request"),
        (
            json!({"agent_id": "coder", "kind": "note", "owner": "user", "text": "ok"}),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
    ];
    for (body, status, code) in cases {
        let got = call(&f.app, "POST", "/v1/documents", &f.a, Some(body.clone())).await;
        assert_error(&got, status, code);
    }
    // Larger than the server's body limit: refused before it is read.
    let huge = with(json!({"text": "x".repeat(mnemo_server::DEFAULT_BODY_LIMIT + 1)}));
    assert_error(
        &call(&f.app, "POST", "/v1/documents", &f.a, Some(huge)).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );
    assert_eq!(count(&f.app, &f.a, "agent_id=coder&user_id=dana").await, 0);
    assert!(
        f.memory
            .documents(&mnemo::Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap(), 500, 0)
            .unwrap()
            .is_empty()
    );

    // Unknown, malformed ids and levels; bad thresholds and pages.
    let unknown = mnemo::core::DocumentId::new();
    let uri = format!("/v1/documents/{unknown}?agent_id=coder");
    assert_error(&call(&f.app, "GET", &uri, &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
    assert_error(&call(&f.app, "DELETE", &uri, &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
    let bad = [
        ("GET", "/v1/documents/not-an-id".to_string(), None),
        ("GET", format!("/v1/documents/{unknown}?level=L3"), None),
        ("GET", "/v1/documents?limit=0".to_string(), None),
        ("POST", "/v1/documents/similar".to_string(), Some(json!({"text": "x", "threshold": 2.0}))),
        ("POST", "/v1/documents/similar".to_string(), Some(json!({"text": ""}))),
        ("POST", "/v1/documents/search".to_string(), Some(json!({"query": "x", "top_k": 0}))),
        ("POST", "/v1/documents/search".to_string(), Some(json!({"query": "x", "level": "full"}))),
    ];
    for (method, uri, body) in bad {
        assert_error(&call(&f.app, method, &uri, &f.a, body).await, StatusCode::BAD_REQUEST, "invalid_request");
    }
}
