//! Privacy routes: erasure through the API, scoped to the key's tenant.

use axum::http::StatusCode;

use crate::common::{assert_error, call, dana_messages, fixture};

#[tokio::test]
async fn erase_removes_the_user_in_the_keys_tenant_only() {
    let f = fixture();
    for key in [&f.a, &f.b] {
        let (status, _) = call(&f.app, "POST", "/v1/messages", key, Some(dana_messages("dana", "c1"))).await;
        assert_eq!(status, StatusCode::OK);
    }
    let eve = serde_json::json!({"user_id": "eve", "chat_id": "c9", "messages": [
        {"id": "e1", "role": "user", "content": "I live in Porto."}
    ]});
    let (status, _) = call(&f.app, "POST", "/v1/messages", &f.a, Some(eve)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, receipt) = call(&f.app, "POST", "/v1/users/dana/erase", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{receipt}");
    assert_eq!(receipt["counts"]["messages"], 3, "{receipt}");
    assert!(receipt["digest"].as_str().is_some_and(|d| d.len() == 64));
    assert!(!receipt.to_string().contains("Lisbon"), "a receipt carries no content");

    let list = |key: String, user: &'static str| {
        let app = f.app.clone();
        async move {
            call(&app, "GET", &format!("/v1/memories?user_id={user}"), &key, None).await.1["items"]
                .as_array()
                .unwrap()
                .len()
        }
    };
    assert_eq!(list(f.a.clone(), "dana").await, 0, "erased in tenant A");
    assert!(list(f.a.clone(), "eve").await > 0, "another user of tenant A is untouched");
    assert!(list(f.b.clone(), "dana").await > 0, "the same user id in tenant B is untouched");

    let bad = call(&f.app, "POST", "/v1/users/%20bad%20/erase", &f.a, None).await;
    assert_error(&bad, StatusCode::BAD_REQUEST, "invalid_request");
    let (status, _) = call(&f.app, "POST", "/v1/users/dana/erase", "not-a-key", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// The switches over HTTP: pause keeps memories but learns and recalls nothing, disable stores
/// nothing and refuses writes, resume/enable bring it back; a key acts on its own tenant only.
#[tokio::test]
async fn pause_and_disable_switch_the_user_in_the_keys_tenant_only() {
    let f = fixture();
    let (status, body) = call(&f.app, "GET", "/v1/users/dana", &f.a, None).await;
    assert_eq!((status, body.clone()), (StatusCode::OK, serde_json::json!({"user_id": "dana", "state": "active"})));
    for key in [&f.a, &f.b] {
        let (status, _) = call(&f.app, "POST", "/v1/messages", key, Some(dana_messages("dana", "c1"))).await;
        assert_eq!(status, StatusCode::OK);
    }

    // Tenant B pauses its dana: tenant A's dana is untouched.
    let (status, body) = call(&f.app, "POST", "/v1/users/dana/pause", &f.b, None).await;
    assert_eq!((status, &body["state"]), (StatusCode::OK, &serde_json::json!("paused")), "{body}");
    assert_eq!(call(&f.app, "GET", "/v1/users/dana", &f.b, None).await.1["state"], "paused");
    assert_eq!(call(&f.app, "GET", "/v1/users/dana", &f.a, None).await.1["state"], "active");
    let recall = serde_json::json!({"user_id": "dana", "query": "where do I live?"});
    let (_, a) = call(&f.app, "POST", "/v1/recall", &f.a, Some(recall.clone())).await;
    assert!(a.get("user_state").is_none(), "{a}");
    assert!(a.to_string().contains("Lisbon"), "tenant A still recalls: {a}");
    let (status, b) = call(&f.app, "POST", "/v1/recall", &f.b, Some(recall.clone())).await;
    assert_eq!((status, &b["user_state"]), (StatusCode::OK, &serde_json::json!("paused")), "{b}");
    assert!(!b.to_string().contains("Lisbon"), "paused: nothing about the user: {b}");

    let more = serde_json::json!({"user_id": "dana", "chat_id": "c2", "messages": [
        {"id": "p1", "role": "user", "content": "I have a dog named Biscuit."}
    ]});
    let (status, ingest) = call(&f.app, "POST", "/v1/messages", &f.b, Some(more.clone())).await;
    assert_eq!(status, StatusCode::OK, "{ingest}");
    assert_eq!((&ingest["user_state"], &ingest["appended"]), (&serde_json::json!("paused"), &serde_json::json!(1)));
    assert_eq!(ingest["ops"], serde_json::json!([]), "nothing extracted while paused");
    let ctx = serde_json::json!({"user_id": "dana", "chat_id": "c2", "message": "walk with the dog?"});
    let (_, block) = call(&f.app, "POST", "/v1/context", &f.b, Some(ctx)).await;
    assert_eq!(block["user_state"], "paused", "{block}");
    assert!(!block["text"].as_str().unwrap().contains("Lisbon"), "{block}");

    // Disable in tenant B: nothing stored, writes refused with the error shape.
    let (status, body) = call(&f.app, "POST", "/v1/users/dana/disable", &f.b, None).await;
    assert_eq!((status, &body["state"]), (StatusCode::OK, &serde_json::json!("disabled")));
    let later = serde_json::json!({"user_id": "dana", "chat_id": "c3", "messages": [
        {"id": "d1", "role": "user", "content": "I work as a nurse."}
    ]});
    let (_, ingest) = call(&f.app, "POST", "/v1/messages", &f.b, Some(later.clone())).await;
    assert_eq!(
        (&ingest["user_state"], &ingest["appended"], &ingest["discarded"]),
        (&serde_json::json!("disabled"), &serde_json::json!(0), &serde_json::json!(1))
    );
    let add = serde_json::json!({"user_id": "dana", "kind": "profile", "content": "User works as a nurse"});
    let refused = call(&f.app, "POST", "/v1/memories", &f.b, Some(add.clone())).await;
    assert_error(&refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert!(refused.1["message"].as_str().unwrap().contains("disabled"), "{}", refused.1);
    let (status, _) = call(&f.app, "POST", "/v1/memories", &f.a, Some(add)).await;
    assert_eq!(status, StatusCode::OK, "tenant A's dana is not disabled");

    // Enable: normal again, nothing of the disabled period exists.
    let (status, body) = call(&f.app, "POST", "/v1/users/dana/enable", &f.b, None).await;
    assert_eq!((status, &body["state"]), (StatusCode::OK, &serde_json::json!("active")));
    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.b, None).await;
    assert!(!list.to_string().contains("nurse") && !list.to_string().contains("Biscuit"), "{list}");
    let (_, ingest) = call(&f.app, "POST", "/v1/messages", &f.b, Some(later)).await;
    assert_eq!(ingest["appended"], 1, "{ingest}");
    assert!(ingest.get("user_state").is_none(), "{ingest}");
    let (status, body) = call(&f.app, "POST", "/v1/users/dana/resume", &f.b, None).await;
    assert_eq!((status, &body["state"]), (StatusCode::OK, &serde_json::json!("active")));

    // Bad input: a clear 4xx with the error shape, nothing switched.
    let bad = call(&f.app, "POST", "/v1/users/%20bad%20/pause", &f.a, None).await;
    assert_error(&bad, StatusCode::BAD_REQUEST, "invalid_request");
    let (status, _) = call(&f.app, "POST", "/v1/users/dana/pause", "not-a-key", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&f.app, "GET", "/v1/users/dana", &f.a, None).await.1["state"], "active");
    let (status, _) = call(&f.app, "GET", "/v1/users/dana/pause", &f.a, None).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

/// One MCP request over `/mcp` (a session id once initialized); returns the JSON-RPC reply and
/// the session the server issued.
async fn mcp(f: &crate::common::Fixture, session: Option<&str>, msg: serde_json::Value) -> (serde_json::Value, String) {
    use axum::body::Body;
    use axum::http::{Request, header};
    let mut b = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.a));
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    let res = tower::ServiceExt::oneshot(f.app.clone(), b.body(Body::from(msg.to_string())).unwrap()).await.unwrap();
    let issued = res.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let bytes = http_body_util::BodyExt::collect(res.into_body()).await.unwrap().to_bytes();
    (serde_json::from_slice(&bytes).unwrap_or_default(), issued)
}

/// MCP's `remember` goes through the same switch: a disabled user's message is discarded and the
/// result says so; a memory written directly is refused with the reason.
#[tokio::test]
async fn mcp_remember_reports_a_disabled_user() {
    let f = fixture();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let (_, session) = mcp(&f, None, init).await;
    assert!(!session.is_empty());
    mcp(&f, Some(&session), serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let (status, _) = call(&f.app, "POST", "/v1/users/dana/disable", &f.a, None).await;
    assert_eq!(status, StatusCode::OK);
    let remember = |arguments: serde_json::Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "remember", "arguments": arguments}})
    };
    let (reply, _) =
        mcp(&f, Some(&session), remember(serde_json::json!({"user_id": "dana", "content": "I live in Lisbon."}))).await;
    let out = &reply["result"]["structuredContent"];
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        (&out["user_state"], &out["appended"], &out["discarded"]),
        (&serde_json::json!("disabled"), &serde_json::json!(0), &serde_json::json!(1))
    );
    let direct = serde_json::json!({"user_id": "dana", "content": "User lives in Lisbon", "kind": "profile"});
    let (reply, _) = mcp(&f, Some(&session), remember(direct)).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("disabled") && text.contains("enable"), "{text}");
}
