//! The happy path through every tenant route, and the shapes they answer with.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{call, dana_messages, fixture, request, send};

fn written_ids(report: &Value) -> Vec<String> {
    report["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["verdict"]["verdict"] == "written")
        .map(|op| op["verdict"]["memory_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn messages_recall_context_list_get_pin_delete() {
    let f = fixture();
    let (status, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["appended"], 3);
    assert_eq!(report["duplicates"], 0);
    assert!(report["turn_id"].as_str().is_some(), "{report}");
    let ids = written_ids(&report);
    assert!(!ids.is_empty(), "the heuristic extractor wrote something: {report}");

    // Re-sending is a no-op.
    let (_, again) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(again["appended"], 0);
    assert_eq!(again["duplicates"], 3);

    let (status, recall) =
        call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "dana", "query": "where does Dana live?"})))
            .await;
    assert_eq!(status, StatusCode::OK, "{recall}");
    assert!(recall["mode"].is_string());
    let all: Vec<&Value> =
        recall["exact"].as_array().unwrap().iter().chain(recall["items"].as_array().unwrap()).collect();
    assert!(all.iter().any(|i| i["content"].as_str().unwrap().contains("Lisbon")), "{recall}");
    // Why it was remembered: the heuristic rule that read it.
    let lisbon = all.iter().find(|i| i["content"].as_str().unwrap().contains("Lisbon")).unwrap();
    assert!(lisbon["provenance"]["rule"].as_str().is_some_and(|r| r.contains('.')), "{lisbon}");
    for item in recall["items"].as_array().unwrap() {
        for field in ["id", "kind", "content", "score", "score_parts", "tier", "surface", "provenance"] {
            assert!(item.get(field).is_some(), "ranked item lacks {field}: {item}");
        }
    }

    let (status, ctx) = call(
        &f.app,
        "POST",
        "/v1/context",
        &f.a,
        Some(json!({"user_id": "dana", "chat_id": "c1", "message": "Any weekend ideas?", "budget_tokens": 400})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ctx}");
    assert!(ctx["text"].as_str().unwrap().contains("Lisbon"), "{ctx}");
    assert_eq!(ctx["budget"], 400);
    assert!(ctx["tokens"].as_u64().unwrap() <= 400);
    assert!(!ctx["sections"].as_array().unwrap().is_empty());

    // The context call left a trace, readable by turn id.
    let turn = ctx["turn_id"].as_str().unwrap();
    let (status, trace) = call(&f.app, "GET", &format!("/v1/traces/{turn}"), &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{trace}");
    assert_eq!(trace["turn_id"], turn);
    assert_eq!(trace["op"], "context");
    assert!(trace["envelope"]["scope"].get("tenant").is_none(), "the wire stays tenant-free: {trace}");

    let (status, list) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let listed: Vec<&str> = list["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    for id in &ids {
        assert!(listed.contains(&id.as_str()), "{id} listed: {list}");
    }
    let (_, filtered) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1&text=lisbon", &f.a, None).await;
    assert!(filtered["items"].as_array().unwrap().iter().all(|m| m["content"].as_str().unwrap().contains("Lisbon")));
    let (_, paged) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1&limit=1", &f.a, None).await;
    assert_eq!(paged["items"].as_array().unwrap().len(), 1);
    if listed.len() > 1 {
        assert_eq!(paged["next_offset"], 1);
    }

    let id = &ids[0];
    let (status, detail) = call(&f.app, "GET", &format!("/v1/memories/{id}?user_id=dana&chat_id=c1"), &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["memory"]["id"], id.as_str());
    assert_eq!(detail["history"][0]["event"], "created");
    assert!(!detail["sources"].as_array().unwrap().is_empty(), "provenance resolves to messages: {detail}");

    let (status, pinned) =
        call(&f.app, "POST", &format!("/v1/memories/{id}/pin?user_id=dana&chat_id=c1"), &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{pinned}");
    assert_eq!(pinned["pinned"], true);
    let (_, unpinned) =
        call(&f.app, "POST", &format!("/v1/memories/{id}/unpin?user_id=dana&chat_id=c1"), &f.a, None).await;
    assert_eq!(unpinned["pinned"], false);

    let (status, _) = call(&f.app, "DELETE", &format!("/v1/memories/{id}?user_id=dana&chat_id=c1"), &f.a, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, after) = call(&f.app, "GET", &format!("/v1/memories/{id}?user_id=dana&chat_id=c1"), &f.a, None).await;
    assert_eq!(after["memory"]["status"], "archived");
    let (_, active) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1&status=active", &f.a, None).await;
    assert!(active["items"].as_array().unwrap().iter().all(|m| m["id"] != id.as_str()));
}

#[tokio::test]
async fn add_goes_through_the_gate_and_can_pin() {
    let f = fixture();
    let body = json!({"user_id": "dana", "kind": "preference", "content": "Prefers metric units",
                      "key": "units", "value": "metric", "pinned": true});
    let (status, added) = call(&f.app, "POST", "/v1/memories", &f.a, Some(body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(added["verdict"]["verdict"], "written", "{added}");
    assert_eq!(added["memory"]["pinned"], true);
    assert_eq!(added["memory"]["provenance"]["extractor"], "api");

    // The same again is a duplicate, not a second row.
    let (_, again) = call(&f.app, "POST", "/v1/memories", &f.a, Some(body)).await;
    assert_eq!(again["verdict"]["verdict"], "deduplicated", "{again}");

    // Secrets never pass the gate.
    let (_, secret) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact", "content": "Her card number is 4111 1111 1111 1111"})),
    )
    .await;
    assert_eq!(secret["verdict"]["verdict"], "rejected", "{secret}");
    assert!(secret.get("memory").is_none());

    let (status, bad_kind) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "gossip", "content": "Something long enough"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad_kind}");
    assert_eq!(bad_kind["code"], "invalid_request");
}

#[tokio::test]
async fn a_tenant_or_agent_wide_memory_is_added_without_a_user_and_approved_to_reach_users() {
    let f = fixture();
    let cases = [
        (json!({"kind": "fact", "content": "The office is closed on public holidays"}), None),
        (
            json!({"agent_id": "support-bot", "kind": "fact", "content": "Refunds take five working days"}),
            Some("support-bot"),
        ),
    ];
    for (body, agent) in cases {
        let (status, added) = call(&f.app, "POST", "/v1/memories", &f.a, Some(body.clone())).await;
        assert_eq!(status, StatusCode::OK, "{added}");
        assert_eq!(added["verdict"]["verdict"], "written", "{added}");
        let memory = &added["memory"];
        assert!(memory["owner"].get("user_id").is_none_or(Value::is_null), "owned by no user: {memory}");
        assert_eq!(memory["owner"]["agent_id"].as_str(), agent, "{memory}");
        assert_eq!(memory["status"], "provisional", "shared knowledge waits for a person's approval: {memory}");
        let id = memory["id"].as_str().unwrap();

        // A person approves it, and then a user of the tenant (and of the agent) recalls it.
        let scope = agent.map_or(String::new(), |a| format!("?agent_id={a}"));
        let (status, approved) = call(&f.app, "POST", &format!("/v1/candidates/{id}/approve{scope}"), &f.a, None).await;
        assert_eq!(status, StatusCode::OK, "{approved}");
        let user = agent.map_or("user_id=dana".to_string(), |a| format!("user_id=dana&agent_id={a}"));
        let (_, listed) = call(&f.app, "GET", &format!("/v1/memories?{user}&status=active"), &f.a, None).await;
        assert!(listed["items"].as_array().unwrap().iter().any(|m| m["id"] == id), "{listed}");
        // Another tenant never sees it.
        let (_, other) = call(&f.app, "GET", &format!("/v1/memories?{user}"), &f.b, None).await;
        assert!(other["items"].as_array().unwrap().iter().all(|m| m["id"] != id), "{other}");
    }
    // Every kind, pinned or not, with or without a key: an answer, never a server error.
    for kind in mnemo::core::Kind::ALL {
        let body = json!({"agent_id": "support-bot", "kind": kind.as_str(), "content": format!("Shared {kind} note for everyone"),
                          "key": "k", "value": "v", "pinned": true, "due_at": "2026-05-01T00:00:00Z"});
        let (status, reply) = call(&f.app, "POST", "/v1/memories", &f.a, Some(body)).await;
        assert!(status.is_success() || status.is_client_error(), "{kind}: {status} {reply}");
    }
    // A chat needs a user: that is still a clear 400.
    let (status, no_user) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"chat_id": "c1", "kind": "fact", "content": "Something long enough"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{no_user}");
}

#[tokio::test]
async fn policies_are_versioned() {
    let f = fixture();
    let p = |text: &str| json!({"key": "refunds", "text": text, "value": {"days": 30}});
    let (status, v1) = call(&f.app, "POST", "/v1/policies", &f.a, Some(p("Refunds within 30 days."))).await;
    assert_eq!(status, StatusCode::CREATED, "{v1}");
    assert_eq!(v1["version"], 1);
    let (_, v2) = call(&f.app, "POST", "/v1/policies", &f.a, Some(p("Refunds within 14 days."))).await;
    assert_eq!(v2["version"], 2);
    let (status, list) = call(&f.app, "GET", "/v1/policies", &f.a, None).await;
    assert_eq!(status, StatusCode::OK);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{list}");
    assert!(items.iter().any(|p| p["version"] == 1 && p["effective_until"].is_string()), "{list}");

    // Policies reach recall's path A.
    let (_, recall) =
        call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "dana", "query": "refund"}))).await;
    assert_eq!(recall["policies"][0]["text"], "Refunds within 14 days.", "{recall}");
}

#[tokio::test]
async fn health_metrics_and_openapi_need_no_key() {
    let f = fixture();
    let (status, health) = send(&f.app, request("GET", "/healthz", None, None)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");

    call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "dana", "query": "x"}))).await;
    let (status, metrics) = send(&f.app, request("GET", "/metrics", None, None)).await;
    assert_eq!(status, StatusCode::OK);
    let text = metrics.as_str().unwrap();
    assert!(text.contains(r#"mnemo_http_requests_total{route="/v1/recall",method="POST",status="200"} 1"#), "{text}");
    // The caches recall filled are counted, so an operator can tell them from other growth.
    let gauge = |cache: &str| -> f64 {
        let series = format!("mnemo_cache_bytes{{cache=\"{cache}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(&series)).and_then(|v| v.parse().ok()).expect(&series)
    };
    assert!(gauge("memory_vectors") > 0.0, "{text}");
    assert!(gauge("message_vectors") >= 0.0, "{text}");
    assert!(text.contains(r#"mnemo_http_request_duration_seconds_count{route="/v1/recall"} 1"#), "{text}");
    assert!(!text.contains("dana"), "label values are route templates, never request data");

    let (status, doc) = send(&f.app, request("GET", "/openapi.json", None, None)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
}

#[tokio::test]
async fn users_export_as_json_and_memory_md_within_the_keys_tenant() {
    let f = fixture();
    call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    let (status, doc) = call(&f.app, "GET", "/v1/users/dana/export", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(doc["version"], 1);
    let memories = doc["memories"].as_array().unwrap();
    assert!(memories.iter().any(|m| m["memory"]["content"].as_str().unwrap().contains("Lisbon")), "{doc}");
    assert!(memories.iter().all(|m| m["history"].as_array().is_some_and(|h| !h.is_empty())), "{doc}");

    let res = send(&f.app, request("GET", "/v1/users/dana/export?format=memory-md", Some(&f.a), None)).await;
    assert_eq!(res.0, StatusCode::OK);
    let md = res.1.as_str().unwrap();
    assert!(md.starts_with("# Memory: user dana") && md.contains("Lisbon"), "{md}");

    // The other tenant's key sees an empty export of a user by the same name.
    let (_, other) = call(&f.app, "GET", "/v1/users/dana/export", &f.b, None).await;
    assert_eq!(other["memories"].as_array().unwrap().len(), 0, "{other}");
    let bad = call(&f.app, "GET", "/v1/users/dana/export?format=yaml", &f.a, None).await;
    crate::common::assert_error(&bad, StatusCode::BAD_REQUEST, "invalid_request");
    let unknown = call(&f.app, "GET", "/v1/users/dana/export?fromat=json", &f.a, None).await;
    assert_eq!(unknown.0, StatusCode::BAD_REQUEST, "{}", unknown.1);
}

#[tokio::test]
async fn edit_clear_and_memos_over_http() {
    let f = fixture();
    let (_, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    let home = list["items"].as_array().unwrap().iter().find(|m| m["content"].as_str().unwrap().contains("Lisbon"));
    let home = home.unwrap_or_else(|| panic!("{report} {list}"))["id"].as_str().unwrap().to_string();

    let body = json!({"user_id": "dana", "content": "User lives in Lisbon, in Alfama"});
    let (status, edited) = call(&f.app, "PATCH", &format!("/v1/memories/{home}"), &f.a, Some(body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    assert!(edited["memory"]["content"].as_str().unwrap().contains("Alfama"), "{edited}");
    // The other tenant cannot edit it, and an edit of the now-superseded row is refused.
    let (status, _) = call(&f.app, "PATCH", &format!("/v1/memories/{home}"), &f.b, Some(body.clone())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let again = call(&f.app, "PATCH", &format!("/v1/memories/{home}"), &f.a, Some(body)).await;
    crate::common::assert_error(&again, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");

    let memo = json!({"user_id": "dana", "chat_id": "c1", "text": "Dana and the assistant planned her move to Alfama"});
    let (status, written) = call(&f.app, "POST", "/v1/memos", &f.a, Some(memo)).await;
    assert_eq!(status, StatusCode::OK, "{written}");
    let memo_id = written["id"].as_str().unwrap().to_string();
    let fix = json!({"user_id": "dana", "chat_id": "c1", "text": "Dana planned her move to Alfama, in Lisbon"});
    let (status, fixed) = call(&f.app, "PATCH", &format!("/v1/memos/{memo_id}"), &f.a, Some(fix)).await;
    assert_eq!(status, StatusCode::OK, "{fixed}");
    let (_, memos) = call(&f.app, "GET", "/v1/memos?user_id=dana&chat_id=c1", &f.a, None).await;
    let items = memos["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{memos}");
    assert!(items[0]["content"].as_str().unwrap().contains("in Lisbon"), "{memos}");
    let (_, theirs) = call(&f.app, "GET", "/v1/memos?user_id=dana&chat_id=c1", &f.b, None).await;
    assert!(theirs["items"].as_array().unwrap().is_empty(), "{theirs}");

    let (status, cleared) = call(&f.app, "POST", "/v1/users/dana/clear", &f.a, None).await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    assert!(cleared["archived"].as_u64().unwrap() >= 2, "{cleared}");
    let (_, left) = call(&f.app, "GET", "/v1/memories?user_id=dana&status=active", &f.a, None).await;
    assert!(left["items"].as_array().unwrap().is_empty(), "{left}");
}

/// People say "ok" twice: two identical messages without ids in one batch are two messages,
/// and sending that batch again (at the same times) appends nothing. Without `at` each turn is
/// stamped on arrival, so a batch sent again later is another pair of turns (see `MessageIn`).
#[tokio::test]
async fn identical_messages_without_ids_are_two_and_the_same_batch_again_appends_nothing() {
    let f = fixture();
    let ok = json!({"role": "user", "content": "ok", "at": "2026-03-02T09:00:00Z"});
    let batch = json!({"user_id": "dana", "chat_id": "c1", "messages": [ok, ok]});
    for (appended, duplicates) in [(2, 0), (0, 2), (0, 2)] {
        let (status, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(batch.clone())).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        assert_eq!((&report["appended"], &report["duplicates"]), (&json!(appended), &json!(duplicates)), "{report}");
    }
    let (_, stored) = call(&f.app, "GET", "/v1/messages?user_id=dana&chat_id=c1", &f.a, None).await;
    let contents: Vec<&Value> = stored["items"].as_array().unwrap().iter().map(|m| &m["content"]).collect();
    assert_eq!(contents, [&json!("ok"), &json!("ok")], "{stored}");

    let unstamped = json!({"user_id": "dana", "chat_id": "c2", "messages": [
        {"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}]});
    let (status, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(unstamped)).await;
    assert_eq!((status, &report["appended"]), (StatusCode::OK, &json!(2)), "{report}");
}
