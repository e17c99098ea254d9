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
