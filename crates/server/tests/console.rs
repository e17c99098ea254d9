//! What the console at `/ui` needs from the server: its embedded assets with a strict policy,
//! the tenant's users, a chat's messages, and the admin key acting for one tenant.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

use crate::common::{ADMIN, assert_error, call, dana_messages, fixture, send};

#[tokio::test]
async fn the_console_is_served_embedded_with_a_strict_policy() {
    let f = fixture();
    for (path, kind, needle) in [
        ("/ui", "text/html", "<title>mnemo console</title>"),
        ("/ui/app.js", "text/javascript", "sessionStorage"),
        ("/ui/app.css", "text/css", "@media (max-width"),
    ] {
        let res = f.app.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let headers = res.headers().clone();
        assert!(headers[header::CONTENT_TYPE].to_str().unwrap().starts_with(kind), "{path}: {headers:?}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe"), "nothing inline is allowed: {csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains(needle), "{path}");
        // Everything the page loads comes from this server: no CDN, no network at run time.
        assert!(!text.contains("https://") && !text.contains("http://"), "{path} names another origin");
    }
    let html = send(&f.app, Request::get("/ui").body(Body::empty()).unwrap()).await.1;
    let html = html.as_str().unwrap();
    assert!(!html.contains("<script>") && !html.contains(" style="), "no inline script or style");
    assert!(html.contains(r#"<script src="/ui/app.js" defer></script>"#));
    let res = f.app.clone().oneshot(Request::get("/ui/").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(res.headers()[header::LOCATION], "/ui");
    let (status, _) = call(&f.app, "GET", "/ui/nothing.js", &f.a, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn users_are_listed_per_tenant_and_searched() {
    let f = fixture();
    for (key, user) in [(&f.a, "dana"), (&f.a, "Danny"), (&f.a, "eve"), (&f.b, "zed")] {
        let (status, body) = call(&f.app, "POST", "/v1/messages", key, Some(dana_messages(user, "c1"))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let memo =
        json!({"user_id": "eve", "chat_id": "c7", "text": "Eve and the assistant share a running joke about tea."});
    let (status, body) = call(&f.app, "POST", "/v1/memos", &f.a, Some(memo)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, all) = call(&f.app, "GET", "/v1/users", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let ids: Vec<&str> = all["items"].as_array().unwrap().iter().map(|u| u["user_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["Danny", "dana", "eve"], "sorted, and only the key's tenant: {all}");
    let eve = &all["items"][2];
    assert_eq!(eve["chats"], json!(["c7"]), "the chat holding eve's memo: {eve}");

    let (_, found) = call(&f.app, "GET", "/v1/users?text=DAN", &f.a, None).await;
    let ids: Vec<&str> = found["items"].as_array().unwrap().iter().map(|u| u["user_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["Danny", "dana"], "searched ignoring case: {found}");
    let (_, none) = call(&f.app, "GET", "/v1/users?text=zed", &f.a, None).await;
    assert_eq!(none["items"], json!([]), "another tenant's user is never listed");

    // A user whose memories are all gone is no longer listed.
    let (status, _) = call(&f.app, "POST", "/v1/users/eve/erase", &f.a, None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, after) = call(&f.app, "GET", "/v1/users?text=eve", &f.a, None).await;
    assert_eq!(after["items"], json!([]));

    assert_error(&call(&f.app, "GET", "/v1/users", "wrong", None).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(
        &call(&f.app, "GET", "/v1/users?tenant=globex", &f.a, None).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
}

#[tokio::test]
async fn a_chats_messages_are_read_back_in_order_within_the_keys_tenant() {
    let f = fixture();
    let (status, _) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(status, StatusCode::OK);
    let more = json!({"user_id": "dana", "chat_id": "c1", "messages": [
        {"id": "m4", "role": "user", "content": "My card is 4111 1111 1111 1111."}
    ]});
    let (status, _) = call(&f.app, "POST", "/v1/messages", &f.a, Some(more)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, talk) = call(&f.app, "GET", "/v1/messages?user_id=dana&chat_id=c1", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{talk}");
    let ids: Vec<&str> = talk["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m1", "m2", "m3", "m4"], "oldest first: {talk}");
    assert_eq!(talk["items"][1]["role"], "assistant");
    let redacted = talk["items"][3]["content"].as_str().unwrap();
    assert!(!redacted.contains("4111") && redacted.contains("[redacted"), "stored redacted: {redacted}");

    let (_, latest) = call(&f.app, "GET", "/v1/messages?user_id=dana&chat_id=c1&limit=2", &f.a, None).await;
    let ids: Vec<&str> = latest["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m3", "m4"], "the latest two, oldest first: {latest}");

    let (_, other) = call(&f.app, "GET", "/v1/messages?user_id=dana&chat_id=c1", &f.b, None).await;
    assert_eq!(other["items"], json!([]), "another tenant's key reads nothing");
    let (_, other_chat) = call(&f.app, "GET", "/v1/messages?user_id=dana&chat_id=c2", &f.a, None).await;
    assert_eq!(other_chat["items"], json!([]));

    for bad in [
        "/v1/messages?user_id=dana&chat_id=c1&limit=0",
        "/v1/messages?user_id=dana&chat_id=c1&limit=501",
        "/v1/messages?user_id=%20&chat_id=c1",
    ] {
        assert_error(&call(&f.app, "GET", bad, &f.a, None).await, StatusCode::BAD_REQUEST, "invalid_request");
    }
    let (status, _) = call(&f.app, "GET", "/v1/messages?user_id=dana", &f.a, None).await;
    assert!(status.is_client_error(), "a conversation needs its chat: {status}");
}

/// A request with a bearer key and the act-as-tenant header.
fn acting(uri: &str, key: &str, tenant: &str) -> Request<Body> {
    Request::get(uri)
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .header("x-mnemo-tenant", tenant)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn the_admin_key_acts_for_the_tenant_it_names_and_tenant_keys_cannot() {
    let f = fixture();
    for key in [&f.a, &f.b] {
        let (status, _) = call(&f.app, "POST", "/v1/messages", key, Some(dana_messages("dana", "c1"))).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (_, mine) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    let (status, seen) = send(&f.app, acting("/v1/memories?user_id=dana", ADMIN, "acme")).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert_eq!(seen["items"], mine["items"], "the admin key sees what acme's key sees");
    let (status, users) = send(&f.app, acting("/v1/users", ADMIN, "globex")).await;
    assert_eq!(status, StatusCode::OK, "{users}");
    assert_eq!(users["items"][0]["user_id"], "dana");

    // Without the header the admin key names no tenant; a tenant key may not send it at all,
    // not even naming its own tenant; a bad tenant id is refused.
    assert_error(&call(&f.app, "GET", "/v1/users", ADMIN, None).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(&send(&f.app, acting("/v1/users", &f.a, "globex")).await, StatusCode::FORBIDDEN, "forbidden");
    assert_error(&send(&f.app, acting("/v1/users", &f.a, "acme")).await, StatusCode::FORBIDDEN, "forbidden");
    assert_error(&send(&f.app, acting("/v1/users", "wrong", "acme")).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(&send(&f.app, acting("/v1/users", ADMIN, " ")).await, StatusCode::BAD_REQUEST, "invalid_request");
}

#[tokio::test]
async fn a_users_past_calls_are_listed_newest_first_within_the_keys_tenant() {
    let f = fixture();
    let (status, _) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(status, StatusCode::OK);
    let mut turns = Vec::new();
    for (chat, message) in [("c1", "where do I live?"), ("c2", "any weekend ideas?")] {
        let body = json!({"user_id": "dana", "chat_id": chat, "message": message});
        let (status, ctx) = call(&f.app, "POST", "/v1/context", &f.a, Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{ctx}");
        turns.push(ctx["turn_id"].as_str().unwrap().to_string());
    }
    let (status, list) = call(&f.app, "GET", "/v1/traces?user_id=dana", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let items = list["items"].as_array().unwrap();
    let contexts: Vec<&str> =
        items.iter().filter(|t| t["op"] == "context").map(|t| t["turn_id"].as_str().unwrap()).collect();
    assert_eq!(contexts, [turns[1].as_str(), turns[0].as_str()], "newest first: {list}");
    assert_eq!(items[0]["query"], "any weekend ideas?");
    assert_eq!(items[0]["envelope"]["turn_id"], turns[1].as_str(), "the whole envelope rides along");

    let (_, one_chat) = call(&f.app, "GET", "/v1/traces?user_id=dana&chat_id=c2", &f.a, None).await;
    let ids: Vec<&str> = one_chat["items"].as_array().unwrap().iter().map(|t| t["turn_id"].as_str().unwrap()).collect();
    assert_eq!(ids, [turns[1].as_str()], "{one_chat}");
    let (_, latest) = call(&f.app, "GET", "/v1/traces?user_id=dana&limit=1", &f.a, None).await;
    assert_eq!(latest["items"].as_array().unwrap().len(), 1);
    let (_, theirs) = call(&f.app, "GET", "/v1/traces?user_id=dana", &f.b, None).await;
    assert_eq!(theirs["items"], json!([]), "another tenant's key lists nothing");
    for bad in ["/v1/traces?user_id=dana&limit=0", "/v1/traces?user_id=%20", "/v1/traces?user_id=dana&limit=501"] {
        assert_error(&call(&f.app, "GET", bad, &f.a, None).await, StatusCode::BAD_REQUEST, "invalid_request");
    }
}
