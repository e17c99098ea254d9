//! `/v1/observations` and the skills mined from them over HTTP: recorded and listed, mined into
//! one candidate, approved at `/v1/candidates`, placed at the start of the next session; every
//! route isolated by tenant; bad input a 4xx that writes nothing.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{assert_error, call, configured, fixture};

fn observation(chat: &str, user: &str) -> Value {
    json!({"agent_id": "coder", "user_id": user, "chat_id": chat, "tool": "edit_file",
           "args_summary": "SwiftUI view ProfileView.swift", "outcome": "failure",
           "text": "Check accessibility modifiers on every SwiftUI view"})
}

async fn listed(app: &axum::Router, key: &str, query: &str) -> usize {
    let (status, out) = call(app, "GET", &format!("/v1/observations?{query}"), key, None).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    out["items"].as_array().unwrap().len()
}

#[tokio::test]
async fn observations_become_a_skill_of_their_tenant_only() {
    let f = fixture();
    for (chat, user) in [("s1", "dana"), ("s2", "dana"), ("s3", "sam")] {
        let (status, out) = call(&f.app, "POST", "/v1/observations", &f.a, Some(observation(chat, user))).await;
        assert_eq!(status, StatusCode::CREATED, "{out}");
        assert_eq!(out["observation"]["tool"], "edit_file");
        assert_eq!(out["observation"]["agent_id"], "coder");
    }
    assert_eq!(listed(&f.app, &f.a, "agent_id=coder&user_id=dana").await, 2);
    assert_eq!(listed(&f.app, &f.a, "agent_id=coder&user_id=dana&chat_id=s2").await, 1);
    // Tenant B, with the same ids, lists nothing.
    assert_eq!(listed(&f.app, &f.b, "agent_id=coder&user_id=dana").await, 0);

    let report = f.memory.maintain().unwrap();
    assert_eq!(report.consolidation.skills.len(), 1, "{:?}", report.consolidation.skills);
    let (_, candidates) = call(&f.app, "GET", "/v1/candidates?agent_id=coder", &f.a, None).await;
    let items = candidates["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{candidates}");
    assert_eq!(items[0]["kind"], "skill");
    let id = items[0]["id"].as_str().unwrap().to_string();
    // Tenant B sees no candidate and cannot decide on A's: 404, as for an id that never existed.
    let (_, theirs) = call(&f.app, "GET", "/v1/candidates?agent_id=coder", &f.b, None).await;
    assert_eq!(theirs["items"], json!([]), "{theirs}");
    for verb in ["approve", "reject"] {
        let uri = format!("/v1/candidates/{id}/{verb}?agent_id=coder");
        assert_error(&call(&f.app, "POST", &uri, &f.b, None).await, StatusCode::NOT_FOUND, "not_found");
    }
    let (status, approved) =
        call(&f.app, "POST", &format!("/v1/candidates/{id}/approve?agent_id=coder"), &f.a, None).await;
    assert_eq!((status, approved["status"].as_str()), (StatusCode::OK, Some("active")), "{approved}");

    let ctx = json!({"agent_id": "coder", "user_id": "eve", "chat_id": "new", "message": "Build the settings screen"});
    let (_, a_ctx) = call(&f.app, "POST", "/v1/context", &f.a, Some(ctx.clone())).await;
    assert!(a_ctx["text"].as_str().unwrap().contains("SKILLS"), "{a_ctx}");
    assert!(a_ctx["text"].as_str().unwrap().contains("Check accessibility modifiers"), "{a_ctx}");
    let (_, b_ctx) = call(&f.app, "POST", "/v1/context", &f.b, Some(ctx)).await;
    assert!(!b_ctx["text"].as_str().unwrap().contains("accessibility"), "{b_ctx}");
    // A user export never carries the agent's skills.
    let got = call(&f.app, "GET", "/v1/users/dana/export?agent_id=coder&format=skills", &f.a, None).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
}

#[tokio::test]
async fn bad_observations_are_a_4xx_that_writes_nothing() {
    let f = configured(|c| c.limits.max_observation_chars = 100);
    let with = |extra: Value| {
        let mut b = observation("s1", "dana");
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    let without = |key: &str| {
        let mut b = observation("s1", "dana");
        b.as_object_mut().unwrap().remove(key);
        b
    };
    let cases = [
        (with(json!({"args_summary": "x".repeat(101)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"text": "y".repeat(101)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"args_summary": "  "})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"tool": ""})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"tool": "t".repeat(129)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"chat_id": ""})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"agent_id": "a".repeat(200)})), StatusCode::BAD_REQUEST, "invalid_request"),
        (with(json!({"outcome": "meh"})), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        (with(json!({"tenant": "globex"})), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        (without("chat_id"), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        (without("outcome"), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
    ];
    for (body, status, code) in cases {
        let got = call(&f.app, "POST", "/v1/observations", &f.a, Some(body.clone())).await;
        assert_error(&got, status, code);
    }
    let huge = with(json!({"args_summary": "x".repeat(mnemo_server::DEFAULT_BODY_LIMIT + 1)}));
    let got = call(&f.app, "POST", "/v1/observations", &f.a, Some(huge)).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // A paused user's actions are refused, and nothing of any of these was written.
    call(&f.app, "POST", "/v1/users/dana/pause", &f.a, None).await;
    let got = call(&f.app, "POST", "/v1/observations", &f.a, Some(observation("s1", "dana"))).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert_eq!(listed(&f.app, &f.a, "agent_id=coder&user_id=dana").await, 0);
    // Bad listings; unknown and malformed candidate ids.
    for query in ["limit=0", "limit=501", "agent_id=", "offset=-1"] {
        let got = call(&f.app, "GET", &format!("/v1/observations?{query}"), &f.a, None).await;
        assert!(got.0.is_client_error(), "{query}: {got:?}");
    }
    let unknown = mnemo::core::MemoryId::new();
    let uri = format!("/v1/candidates/{unknown}/approve?agent_id=coder");
    assert_error(&call(&f.app, "POST", &uri, &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
    let uri = "/v1/candidates/not-an-id/approve?agent_id=coder";
    assert_error(&call(&f.app, "POST", uri, &f.a, None).await, StatusCode::BAD_REQUEST, "invalid_request");
}
