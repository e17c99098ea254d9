//! The mem0-compatible routes (docs/mem0.md): the platform's under `/mem0` and the self-hosted
//! server's at the root. Shapes, statuses and the `{"detail"}` error body the SDKs read, the ways
//! a key is presented, and tenant isolation. mem0's real SDKs run against `mnemo serve` in
//! crates/cli/tests/compat.rs.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};

use crate::common::{Fixture, call, fixture, send};

/// A request with the key as mem0's platform SDKs send it, `Authorization: Token <key>`.
async fn token(f: &Fixture, method: &str, uri: &str, key: &str, body: Option<Value>) -> (StatusCode, Value) {
    let b = Request::builder().method(method).uri(uri).header(header::AUTHORIZATION, format!("Token {key}"));
    let req = match body {
        Some(v) => b.header(header::CONTENT_TYPE, "application/json").body(Body::from(v.to_string())).unwrap(),
        None => b.body(Body::empty()).unwrap(),
    };
    send(&f.app, req).await
}

#[track_caller]
fn assert_detail(got: &(StatusCode, Value), status: StatusCode, needle: &str) {
    let (s, body) = got;
    assert_eq!(*s, status, "{body}");
    let obj = body.as_object().unwrap_or_else(|| panic!("not an object: {body}"));
    assert_eq!(obj.len(), 1, "exactly {{detail}}: {body}");
    assert!(obj["detail"].as_str().unwrap().contains(needle), "{body}");
}

async fn add_text(f: &Fixture, key: &str, user: &str, text: &str) -> String {
    let (s, body) = token(
        f,
        "POST",
        "/mem0/v3/memories/add/",
        key,
        Some(json!({"messages": [{"role": "user", "content": text}], "user_id": user, "infer": false})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body["results"][0]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn ping_names_the_keys_tenant_for_every_way_of_sending_the_key() {
    let f = fixture();
    let (s, body) = token(&f, "GET", "/mem0/v1/ping/", &f.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(body, json!({"status": "ok", "org_id": "acme", "project_id": "acme", "user_email": null}));
    assert_eq!(call(&f.app, "GET", "/mem0/v1/ping/", &f.b, None).await.1["org_id"], "globex", "Bearer too");
    let req = Request::builder().uri("/mem0/v1/ping/").header("x-api-key", &f.a).body(Body::empty()).unwrap();
    assert_eq!(send(&f.app, req).await.1["project_id"], "acme", "X-API-Key too");

    assert_detail(&token(&f, "GET", "/mem0/v1/ping/", "mnemo_acme_wrong", None).await, StatusCode::UNAUTHORIZED, "key");
    let bare = Request::builder().uri("/mem0/v1/ping/").body(Body::empty()).unwrap();
    assert_detail(&send(&f.app, bare).await, StatusCode::UNAUTHORIZED, "key");
    // The native routes keep to Bearer.
    assert_eq!(token(&f, "GET", "/v1/memories", &f.a, None).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn memories_round_trip_in_the_platforms_shapes() {
    let f = fixture();
    let id = add_text(&f, &f.a, "dana", "Dana keeps bees.").await;
    let (s, got) = token(&f, "GET", &format!("/mem0/v1/memories/{id}/"), &f.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(got["memory"], "Dana keeps bees.");
    assert_eq!(got["user_id"], "dana");
    assert_eq!(got["categories"], json!(["fact"]));
    for field in ["agent_id", "app_id", "run_id", "metadata", "created_at", "updated_at", "hash"] {
        assert!(got.get(field).is_some(), "{field} in {got}");
    }

    let (s, all) = token(
        &f,
        "POST",
        "/mem0/v3/memories/?page=1&page_size=10",
        &f.a,
        Some(json!({"filters": {"user_id": "dana"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(all["count"], 1);
    assert_eq!(all["next"], Value::Null);
    assert_eq!(all["results"][0]["id"], id.as_str());

    let (s, updated) =
        token(&f, "PUT", &format!("/mem0/v1/memories/{id}/"), &f.a, Some(json!({"text": "Dana keeps two hives."})))
            .await;
    assert_eq!(s, StatusCode::OK, "{updated}");
    assert_eq!(updated["memory"], "Dana keeps two hives.");
    let (_, history) = token(&f, "GET", &format!("/mem0/v1/memories/{id}/history/"), &f.a, None).await;
    let events: Vec<&str> = history.as_array().unwrap().iter().map(|h| h["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["ADD", "UPDATE"], "{history}");
    assert_eq!(history[1]["old_memory"], "Dana keeps bees.");
    assert_eq!(history[1]["new_memory"], "Dana keeps two hives.");

    let (s, found) = token(
        &f,
        "POST",
        "/mem0/v3/memories/search/",
        &f.a,
        Some(json!({"query": "hives", "filters": {"user_id": "dana"}, "top_k": 5})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(found["results"][0]["memory"], "Dana keeps two hives.", "{found}");
    let score = found["results"][0]["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score), "{score}");

    let (s, _) = token(&f, "DELETE", &format!("/mem0/v1/memories/{id}/"), &f.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_detail(
        &token(&f, "GET", &format!("/mem0/v1/memories/{id}/"), &f.a, None).await,
        StatusCode::NOT_FOUND,
        "not found",
    );
}

#[tokio::test]
async fn metadata_is_kept_returned_filtered_on_and_updated() {
    let f = fixture();
    let body = json!({"messages": "Dana's flight lands at noon.", "user_id": "dana", "infer": false,
                      "metadata": {"source": "email", "priority": 2}});
    let (_, added) = token(&f, "POST", "/mem0/v3/memories/add/", &f.a, Some(body)).await;
    let id = added["results"][0]["id"].as_str().unwrap().to_string();
    let (_, got) = token(&f, "GET", &format!("/mem0/v1/memories/{id}/"), &f.a, None).await;
    assert_eq!(got["metadata"], json!({"source": "email", "priority": 2}));
    add_text(&f, &f.a, "dana", "Dana likes window seats.").await;
    let (_, hits) =
        token(&f, "POST", "/mem0/v3/memories/", &f.a, Some(json!({"filters": {"metadata": {"source": "email"}}})))
            .await;
    assert_eq!((hits["count"].as_u64(), &hits["results"][0]["id"]), (Some(1), &json!(id)), "{hits}");
    // New text keeps the metadata; new metadata replaces it.
    let put = json!({"text": "Dana's flight lands at one.", "metadata": {"source": "sms"}});
    let (_, updated) = token(&f, "PUT", &format!("/mem0/v1/memories/{id}/"), &f.a, Some(put)).await;
    assert_eq!(
        (&updated["memory"], &updated["metadata"]),
        (&json!("Dana's flight lands at one."), &json!({"source": "sms"}))
    );
    let (_, kept) = call(&f.app, "GET", &format!("/memories/{id}"), &f.a, None).await;
    assert_eq!(kept["metadata"], json!({"source": "sms"}), "the self-hosted routes return it too");

    // Metadata is stored text like any other: PII in it never reaches storage.
    let (_, pii) = token(
        &f,
        "PUT",
        &format!("/mem0/v1/memories/{id}/"),
        &f.a,
        Some(json!({"metadata": {"contact": {"mail": "dana.silva@example.com"}}})),
    )
    .await;
    assert!(!pii.to_string().contains("dana.silva@example.com"), "{pii}");
    assert!(pii["metadata"]["contact"]["mail"].as_str().unwrap().contains("redacted"), "{pii}");
}

#[tokio::test]
async fn bad_requests_are_refused_with_a_detail_and_write_nothing() {
    let f = fixture();
    let bad_filter = token(
        &f,
        "POST",
        "/mem0/v3/memories/",
        &f.a,
        Some(json!({"filters": {"AND": [{"user_id": "dana"}, {"keywords": {"contains": "v"}}]}})),
    )
    .await;
    assert_detail(&bad_filter, StatusCode::BAD_REQUEST, "filters.AND[1].keywords");
    let no_ids =
        token(&f, "POST", "/mem0/v3/memories/add/", &f.a, Some(json!({"messages": "hello", "infer": false}))).await;
    assert_detail(&no_ids, StatusCode::BAD_REQUEST, "user_id");
    let batch = token(
        &f,
        "PUT",
        "/mem0/v1/batch/",
        &f.a,
        Some(json!({"memories": [{"memory_id": "01m80000000000000000000000", "text": "x"}]})),
    )
    .await;
    assert_detail(&batch, StatusCode::NOT_FOUND, "not found");
    assert_detail(&token(&f, "GET", "/mem0/v1/memories/not-an-id/", &f.a, None).await, StatusCode::BAD_REQUEST, "");
    assert_detail(&token(&f, "DELETE", "/mem0/v1/memories/", &f.a, None).await, StatusCode::BAD_REQUEST, "user_id");
    assert_detail(
        &token(&f, "POST", "/mem0/v1/exports/", &f.a, Some(json!({"schema": "{}"}))).await,
        StatusCode::NOT_IMPLEMENTED,
        "platform feature",
    );
    assert_eq!(f.memory.owners(&mnemo::core::TenantId::new("acme").unwrap()).unwrap(), vec![], "nothing written");
}

#[tokio::test]
async fn another_tenant_can_neither_see_nor_touch_a_memory() {
    let f = fixture();
    let id = add_text(&f, &f.a, "dana", "Dana's locker code is 4471.").await;
    for (method, path) in [
        ("GET", format!("/mem0/v1/memories/{id}/")),
        ("GET", format!("/mem0/v1/memories/{id}/history/")),
        ("DELETE", format!("/mem0/v1/memories/{id}/")),
    ] {
        assert_detail(&token(&f, method, &path, &f.b, None).await, StatusCode::NOT_FOUND, "not found");
    }
    let put = token(&f, "PUT", &format!("/mem0/v1/memories/{id}/"), &f.b, Some(json!({"text": "x"}))).await;
    assert_detail(&put, StatusCode::NOT_FOUND, "not found");
    let (_, all) = token(&f, "POST", "/mem0/v3/memories/", &f.b, Some(json!({"filters": {"user_id": "dana"}}))).await;
    assert_eq!(all["count"], 0);
    let (_, users) = token(&f, "GET", "/mem0/v1/entities/", &f.b, None).await;
    assert_eq!(users["results"], json!([]));
    token(&f, "DELETE", "/mem0/v2/entities/user/dana/", &f.b, None).await;
    call(&f.app, "POST", "/reset", &f.b, None).await;
    assert_eq!(call(&f.app, "GET", &format!("/memories/{id}"), &f.b, None).await.1, Value::Null);

    // Tenant A still has it, through both route sets.
    let (_, users) = token(&f, "GET", "/mem0/v1/entities/", &f.a, None).await;
    assert_eq!(users["results"][0]["name"], "dana");
    assert_eq!(
        call(&f.app, "GET", &format!("/memories/{id}"), &f.a, None).await.1["memory"],
        "Dana's locker code is 4471."
    );
}

#[tokio::test]
async fn the_privacy_switches_hold_on_the_mem0_routes() {
    let f = fixture();
    let add = |text: &str, infer: bool| json!({"messages": text, "user_id": "pat", "infer": infer});
    call(&f.app, "POST", "/v1/users/pat/pause", &f.a, None).await;
    let (s, paused) = token(&f, "POST", "/mem0/v3/memories/add/", &f.a, Some(add("I love chess.", true))).await;
    assert_eq!((s, &paused["results"]), (StatusCode::OK, &json!([])), "paused: nothing extracted");
    call(&f.app, "POST", "/v1/users/pat/resume", &f.a, None).await;
    let id = add_text(&f, &f.a, "pat", "Pat loves chess.").await;
    call(&f.app, "POST", "/v1/users/pat/pause", &f.a, None).await;
    let (_, found) = token(
        &f,
        "POST",
        "/mem0/v3/memories/search/",
        &f.a,
        Some(json!({"query": "chess", "filters": {"user_id": "pat"}})),
    )
    .await;
    assert_eq!(found["results"], json!([]), "paused: nothing recalled");
    call(&f.app, "POST", "/v1/users/pat/disable", &f.a, None).await;
    let (s, _) = token(&f, "POST", "/mem0/v3/memories/add/", &f.a, Some(add("Pat plays go.", false))).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "disabled: a direct write is refused");
    call(&f.app, "POST", "/v1/users/pat/erase", &f.a, None).await;
    assert_detail(&token(&f, "GET", &format!("/mem0/v1/memories/{id}/"), &f.a, None).await, StatusCode::NOT_FOUND, "");
}

#[tokio::test]
async fn the_self_hosted_routes_answer_in_that_servers_shapes() {
    let f = fixture();
    let body =
        json!({"messages": [{"role": "user", "content": "Max rides a blue bike."}], "user_id": "max", "infer": false});
    let (s, added) = call(&f.app, "POST", "/memories", &f.a, Some(body)).await;
    assert_eq!(s, StatusCode::OK);
    let id = added["results"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(added["results"][0], json!({"id": id, "memory": "Max rides a blue bike.", "event": "ADD"}));
    let (_, one) = call(&f.app, "GET", &format!("/memories/{id}"), &f.a, None).await;
    assert_eq!(one["score"], Value::Null);
    assert!(one.get("agent_id").is_none(), "unset ids are left out: {one}");
    let (_, put) =
        call(&f.app, "PUT", &format!("/memories/{id}"), &f.a, Some(json!({"text": "Max rides a red bike."}))).await;
    assert_eq!(put, json!({"message": "Memory updated successfully!"}));
    let (_, hist) = call(&f.app, "GET", &format!("/memories/{id}/history"), &f.a, None).await;
    assert_eq!(hist[1]["is_deleted"], false);
    let (s, err) = call(&f.app, "POST", "/search", &f.a, Some(json!({"query": "bike"}))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["detail"].as_str().unwrap().contains("user_id"));
    let (_, listed) = call(&f.app, "GET", "/memories?user_id=max&top_k=5", &f.a, None).await;
    assert_eq!(listed["results"][0]["memory"], "Max rides a red bike.");
    assert_eq!(call(&f.app, "DELETE", "/memories", &f.a, None).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(call(&f.app, "POST", "/reset", &f.a, None).await.1, json!({"message": "All memories reset"}));
    assert_eq!(call(&f.app, "GET", "/memories", &f.a, None).await.1, json!([]));
}

/// `/reset` of a tenant with many users erases them all as their own erasures would — no byte
/// of what they said left in any file of the data directory, the lexical indexes' shadow tables
/// included — and leaves another tenant's users as they were.
#[tokio::test]
async fn reset_erases_every_user_of_the_tenant_and_no_other() {
    let f = crate::common::configured(crate::common::without_rate_limit);
    // A word per user the stemmer leaves whole (it ends in consonants), all sharing one stem to
    // scan for.
    const LETTERS: &[u8] = b"bcdfghjklmnpqrtvwxz";
    let word =
        |i: usize| format!("Quixotrel{}{}", LETTERS[i / LETTERS.len()] as char, LETTERS[i % LETTERS.len()] as char);
    let say = |user: String, text: String| json!({"user_id": user, "chat_id": "c1", "messages": [{"id": "m1", "role": "user", "content": text}]});
    for i in 0..50 {
        let body = say(format!("user{i:02}"), format!("I live in {}.", word(i)));
        let (s, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(body)).await;
        assert_eq!(s, StatusCode::OK, "{report}");
    }
    // A user who said nothing worth remembering has messages and no memory: still theirs to erase.
    let (s, report) =
        call(&f.app, "POST", "/v1/messages", &f.a, Some(say("quiet".into(), "ok quixotrelss".into()))).await;
    assert_eq!(s, StatusCode::OK, "{report}");
    let (s, _) =
        call(&f.app, "POST", "/v1/messages", &f.b, Some(say("user00".into(), "I live in Portolanvx.".into()))).await;
    assert_eq!(s, StatusCode::OK);
    let dir = f.memory.config().data_dir.clone();
    let holding = |needle: &str| -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap().to_ascii_lowercase();
                if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    out.push(path.display().to_string());
                }
            }
        }
        out
    };
    assert!(!holding("quixotrel").is_empty(), "the scan must see the words first");
    let (_, users) = call(&f.app, "GET", "/v1/users", &f.a, None).await;
    assert_eq!(users["items"].as_array().unwrap().len(), 50, "the quiet user has no memory to list: {users}");

    assert_eq!(call(&f.app, "POST", "/reset", &f.a, None).await.1, json!({"message": "All memories reset"}));

    assert_eq!(holding("quixotrel"), Vec::<String>::new(), "an erased user's words are still on disk");
    let (_, users) = call(&f.app, "GET", "/v1/users", &f.a, None).await;
    assert_eq!(users["items"], json!([]));
    let (_, recall) =
        call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "user07", "query": "live"}))).await;
    assert_eq!(recall["items"], json!([]), "{recall}");
    // The other tenant's same-named user keeps everything.
    let (_, recall) =
        call(&f.app, "POST", "/v1/recall", &f.b, Some(json!({"user_id": "user00", "query": "Portolanvx"}))).await;
    assert!(recall.to_string().contains("Portolanvx"), "{recall}");
    assert!(!holding("portolanvx").is_empty());
}
