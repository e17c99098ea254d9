//! Every failure answers `{message, code}` with a 4xx, and a refused request writes nothing.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::json;

use crate::common::{Fixture, assert_error, call, dana_messages, fixture, request, send};

fn raw(key: &str, uri: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::builder().method("POST").uri(uri).header(header::AUTHORIZATION, format!("Bearer {key}"));
    if let Some(ct) = content_type {
        b = b.header(header::CONTENT_TYPE, ct);
    }
    b.body(body.into()).unwrap()
}

/// Nothing of dana's was stored: no memories, no messages.
async fn assert_nothing_written(f: &Fixture) {
    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1", &f.a, None).await;
    assert_eq!(list["items"], json!([]), "{list}");
    let scope = mnemo::Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
    assert!(f.memory.store().recent_messages(&scope, 100).unwrap().is_empty());
}

#[tokio::test]
async fn missing_and_bad_keys_are_401() {
    let f = fixture();
    let body = dana_messages("dana", "c1");
    let got = send(&f.app, request("POST", "/v1/messages", None, Some(&body))).await;
    assert_error(&got, StatusCode::UNAUTHORIZED, "unauthorized");
    let got = send(&f.app, request("POST", "/v1/messages", Some("mnemo_acme_notARealKey"), Some(&body))).await;
    assert_error(&got, StatusCode::UNAUTHORIZED, "unauthorized");
    let basic = Request::builder()
        .method("GET")
        .uri("/v1/memories")
        .header(header::AUTHORIZATION, format!("Basic {}", f.a))
        .body(Body::empty())
        .unwrap();
    assert_error(&send(&f.app, basic).await, StatusCode::UNAUTHORIZED, "unauthorized");
    // The admin key is not a tenant key.
    let got = call(&f.app, "GET", "/v1/memories", crate::common::ADMIN, None).await;
    assert_error(&got, StatusCode::UNAUTHORIZED, "unauthorized");
    // A bad key is refused before the body is looked at.
    let got = send(&f.app, raw("nope", "/v1/messages", Some("application/json"), "{not json")).await;
    assert_error(&got, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_nothing_written(&f).await;
}

#[tokio::test]
async fn malformed_json_is_400() {
    let f = fixture();
    let got = send(&f.app, raw(&f.a, "/v1/messages", Some("application/json"), "{\"user_id\": \"dana\",")).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "malformed_json");
    assert_nothing_written(&f).await;
}

#[tokio::test]
async fn unknown_fields_are_422_even_a_tenant() {
    let f = fixture();
    let mut body = dana_messages("dana", "c1");
    body["tenant"] = json!("globex");
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(body)).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert!(got.1["message"].as_str().unwrap().contains("tenant"), "{}", got.1);

    let mut nested = dana_messages("dana", "c1");
    nested["messages"][0]["mood"] = json!("happy");
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(nested)).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");

    let got = call(&f.app, "GET", "/v1/memories?user_id=dana&tenant=globex", &f.a, None).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    assert_nothing_written(&f).await;
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let f = fixture();
    let mut body = dana_messages("dana", "c1");
    body["messages"][0]["content"] = json!("x".repeat(mnemo_server::DEFAULT_BODY_LIMIT + 1));
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(body)).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_nothing_written(&f).await;
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let f = fixture();
    let body = dana_messages("dana", "c1").to_string();
    let got = send(&f.app, raw(&f.a, "/v1/messages", Some("text/plain"), body.clone())).await;
    assert_error(&got, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let got = send(&f.app, raw(&f.a, "/v1/messages", None, body)).await;
    assert_error(&got, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    assert_nothing_written(&f).await;
}

#[tokio::test]
async fn engine_validation_is_400_and_atomic() {
    let f = fixture();
    // The second message is empty: the whole batch is refused.
    let mut body = dana_messages("dana", "c1");
    body["messages"][1]["content"] = json!("   ");
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(body)).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    let mut bad_role = dana_messages("dana", "c1");
    bad_role["messages"][0]["role"] = json!("narrator");
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(bad_role)).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("", "c1"))).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    assert_nothing_written(&f).await;

    let got = call(&f.app, "GET", "/v1/memories/not-an-id?user_id=dana", &f.a, None).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    let got = call(&f.app, "GET", "/v1/memories?user_id=dana&kind=gossip", &f.a, None).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    let got = call(&f.app, "GET", "/v1/memories?user_id=dana&limit=0", &f.a, None).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
}

#[tokio::test]
async fn unknown_routes_and_methods_use_the_shape() {
    let f = fixture();
    assert_error(&call(&f.app, "GET", "/v1/nope", &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
    assert_error(
        &call(&f.app, "PUT", "/v1/recall", &f.a, None).await,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
    let missing = mnemo::core::MemoryId::new();
    assert_error(
        &call(&f.app, "GET", &format!("/v1/memories/{missing}?user_id=dana"), &f.a, None).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(&call(&f.app, "GET", "/v1/traces/turn-nope", &f.a, None).await, StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn internal_errors_are_generic_and_carry_only_a_reference() {
    use axum::response::IntoResponse;
    use http_body_util::BodyExt;
    let res =
        mnemo_server::ApiError::internal("storage error at /var/lib/mnemo/mnemo.db for tenant acme").into_response();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let body: serde_json::Value = serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["code"], "internal");
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with("internal error; reference "), "{message}");
    assert!(!message.contains("/var") && !message.contains("acme"), "{message}");
}
