//! Two tenants, two users: nothing one writes is visible to the other through any route, and a
//! foreign id answers 404 exactly like an id that never existed.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{assert_error, call, dana_messages, fixture};

fn contents(v: &Value, field: &str) -> String {
    v[field].as_array().map(|a| a.iter().map(|i| i["content"].to_string()).collect()).unwrap_or_default()
}

#[tokio::test]
async fn tenant_b_sees_nothing_of_tenant_a() {
    let f = fixture();
    let (status, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(status, StatusCode::OK);
    let a_turn = report["turn_id"].as_str().unwrap().to_string();
    let (_, added) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact", "content": "Dana's server runs on Debian 12"})),
    )
    .await;
    let a_id = added["verdict"]["memory_id"].as_str().unwrap().to_string();
    call(&f.app, "POST", "/v1/policies", &f.a, Some(json!({"key": "tone", "text": "Be formal with acme users."})))
        .await;
    let (_, a_ctx) = call(
        &f.app,
        "POST",
        "/v1/context",
        &f.a,
        Some(json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})),
    )
    .await;
    let a_ctx_turn = a_ctx["turn_id"].as_str().unwrap().to_string();
    assert!(a_ctx["text"].as_str().unwrap().contains("Lisbon"), "tenant A sees its own: {a_ctx}");

    // Tenant B asks with the very same user and chat ids.
    let b = &f.b;
    let (status, list) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1", b, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["items"], json!([]), "{list}");
    let (_, list) = call(&f.app, "GET", "/v1/memories", b, None).await;
    assert_eq!(list["items"], json!([]), "{list}");

    let (_, recall) = call(
        &f.app,
        "POST",
        "/v1/recall",
        b,
        Some(json!({"user_id": "dana", "chat_id": "c1", "query": "Lisbon Debian name short answers"})),
    )
    .await;
    assert_eq!(recall["items"], json!([]), "{recall}");
    assert_eq!(recall["exact"], json!([]), "{recall}");
    assert_eq!(recall["policies"], json!([]), "{recall}");

    let (_, ctx) = call(
        &f.app,
        "POST",
        "/v1/context",
        b,
        Some(json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})),
    )
    .await;
    let text = ctx["text"].as_str().unwrap();
    for leak in ["Lisbon", "Dana", "Debian", "formal", "short answers"] {
        assert!(!text.contains(leak), "{leak} leaked into tenant B's block: {text}");
    }

    let (_, policies) = call(&f.app, "GET", "/v1/policies", b, None).await;
    assert_eq!(policies["items"], json!([]));

    for turn in [&a_turn, &a_ctx_turn] {
        let got = call(&f.app, "GET", &format!("/v1/traces/{turn}"), b, None).await;
        assert_error(&got, StatusCode::NOT_FOUND, "not_found");
    }

    // A's memory id through every id route with B's key: 404, the same as a made-up id.
    let never = mnemo::core::MemoryId::new().to_string();
    for id in [&a_id, &never] {
        for (method, path) in [
            ("GET", format!("/v1/memories/{id}?user_id=dana")),
            ("POST", format!("/v1/memories/{id}/pin?user_id=dana")),
            ("POST", format!("/v1/memories/{id}/unpin?user_id=dana")),
            ("DELETE", format!("/v1/memories/{id}?user_id=dana")),
        ] {
            let got = call(&f.app, method, &path, b, None).await;
            assert_error(&got, StatusCode::NOT_FOUND, "not_found");
            assert!(!got.1["message"].as_str().unwrap().contains("acme"), "{}", got.1);
        }
    }

    // And A's memory is untouched by B's attempts.
    let (_, detail) = call(&f.app, "GET", &format!("/v1/memories/{a_id}?user_id=dana"), &f.a, None).await;
    assert_eq!(detail["memory"]["status"], "active", "{detail}");
    assert_eq!(detail["memory"]["pinned"], false);

    // B writing the same ids creates B's own, separate data.
    let (_, b_report) = call(&f.app, "POST", "/v1/messages", b, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(b_report["appended"], 3, "message ids are per tenant: {b_report}");
}

#[tokio::test]
async fn users_of_one_tenant_do_not_see_each_other() {
    let f = fixture();
    call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    let (_, added) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact", "content": "Dana's server runs on Debian 12"})),
    )
    .await;
    let id = added["verdict"]["memory_id"].as_str().unwrap();

    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=eve&chat_id=c1", &f.a, None).await;
    assert_eq!(list["items"], json!([]), "{list}");
    let (_, recall) =
        call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "eve", "query": "Lisbon Debian"}))).await;
    assert!(!contents(&recall, "items").contains("Lisbon") && !contents(&recall, "exact").contains("Debian"));
    let got = call(&f.app, "GET", &format!("/v1/memories/{id}?user_id=eve"), &f.a, None).await;
    assert_error(&got, StatusCode::NOT_FOUND, "not_found");
}
