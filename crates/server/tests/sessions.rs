//! `/v1/sessions/{chat_id}/usage` and `/rotate` over HTTP: advice over what an agent holds,
//! rotation with its bundle, isolation by tenant, and bad input refused with nothing written.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{assert_error, call, configured, fixture};

const NOTE: &str = "# Flaky retry test\n\nThe retry test fails about one run in twenty on CI. It sleeps for a fixed \
                    50 ms and then checks that the second attempt happened, which is racy on a loaded runner.\n\n\
                    ## Fix\n\nReplace the fixed sleep with the manual clock the rest of the suite uses.";

/// Dana's session `s1` with the coder agent: a pinned allergy, a boundary, a fact and a note.
async fn session(f: &crate::common::Fixture) -> (String, String, String, String) {
    let said = json!({"user_id": "dana", "agent_id": "coder", "chat_id": "s1", "messages": [
        {"id": "m1", "role": "user", "content": "I'm allergic to peanuts."},
        {"id": "m2", "role": "user", "content": "Don't bring up the old monolith rewrite, it's a sore spot."},
        {"id": "m3", "role": "user", "content": "Our production database is Postgres 16 running in us-east-1."}
    ]});
    let (s, out) = call(&f.app, "POST", "/v1/messages", &f.a, Some(said)).await;
    assert_eq!(s, StatusCode::OK, "{out}");
    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=dana&agent_id=coder", &f.a, None).await;
    let id = |needle: &str| {
        list["items"].as_array().unwrap().iter().find(|m| m["content"].as_str().unwrap().contains(needle)).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (peanut, monolith, postgres) = (id("peanut"), id("monolith"), id("Postgres"));
    let (s, out) =
        call(&f.app, "POST", &format!("/v1/memories/{peanut}/pin?user_id=dana&agent_id=coder"), &f.a, None).await;
    assert_eq!(s, StatusCode::OK, "{out}");
    let doc = json!({"user_id": "dana", "agent_id": "coder", "kind": "note", "text": NOTE});
    let (s, out) = call(&f.app, "POST", "/v1/documents", &f.a, Some(doc)).await;
    assert_eq!(s, StatusCode::CREATED, "{out}");
    (peanut, monolith, postgres, out["document"]["id"].as_str().unwrap().to_string())
}

fn report(used: u64, capacity: u64, items: &Value) -> Value {
    json!({"user_id": "dana", "agent_id": "coder", "used_tokens": used, "capacity_tokens": capacity, "items": items})
}

#[tokio::test]
async fn usage_advises_by_threshold_and_never_sheds_pinned_items_or_boundaries() {
    // Overviews of 40 tokens, so the short note's L1 is shorter than its text.
    let f = configured(|c| c.documents.overview_tokens = 40);
    let (peanut, monolith, postgres, doc) = session(&f).await;
    let items = json!([
        {"kind": "memory", "id": peanut}, {"kind": "memory", "id": monolith, "level": "L2"},
        {"kind": "memory", "id": postgres}, {"kind": "document", "id": doc, "level": "l2"},
        {"kind": "messages", "ids": ["m1", "m2", "m3"]}
    ]);
    let (s, calm) = call(&f.app, "POST", "/v1/sessions/s1/usage", &f.a, Some(report(100, 1_000, &items))).await;
    assert_eq!(s, StatusCode::OK, "{calm}");
    assert_eq!((calm["stage"].as_str(), calm["rotate"].as_bool()), (Some("ok"), Some(false)), "{calm}");
    assert_eq!(calm["thresholds"], json!({"step_down_at": 0.6, "shed_at": 0.75, "rotate_at": 0.9}));

    let (_, mild) = call(&f.app, "POST", "/v1/sessions/s1/usage", &f.a, Some(report(610, 1_000, &items))).await;
    assert_eq!(mild["stage"], "step_down", "{mild}");
    assert_eq!(
        (mild["items"][0]["kind"].as_str(), mild["items"][0]["action"].as_str()),
        (Some("document"), Some("step_down"))
    );
    assert_eq!((mild["items"][0]["from"].as_str(), mild["items"][0]["to"].as_str()), (Some("l2"), Some("l1")));
    assert!(mild["items"][0]["text"].as_str().unwrap().contains("Flaky retry test"), "{mild}");

    let (_, full) = call(&f.app, "POST", "/v1/sessions/s1/usage", &f.a, Some(report(1_000, 1_000, &items))).await;
    assert_eq!((full["stage"].as_str(), full["rotate"].as_bool()), (Some("rotate"), Some(true)), "{full}");
    for advice in full["items"].as_array().unwrap() {
        match advice["protected"].as_str() {
            Some(_) => assert_eq!(advice["action"], "keep", "{advice}"),
            None => assert_eq!(advice["action"], "release", "{advice}"),
        }
    }
    let protected: Vec<&str> =
        full["items"].as_array().unwrap().iter().filter_map(|a| a["protected"].as_str()).collect();
    assert_eq!(protected, ["pinned", "boundary"]);
}

#[tokio::test]
async fn rotation_returns_a_bundle_within_budget_under_the_same_session() {
    let f = fixture();
    session(&f).await;
    let body = json!({"user_id": "dana", "agent_id": "coder", "budget_tokens": 300});
    let (s, out) = call(&f.app, "POST", "/v1/sessions/s1/rotate", &f.a, Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{out}");
    assert_eq!(out["chat_id"], "s1");
    let bundle = &out["bundle"];
    assert!(bundle["tokens"].as_u64().unwrap() <= 300, "{out}");
    assert_eq!(bundle["budget"], 300);
    let text = bundle["text"].as_str().unwrap();
    assert!(text.contains("peanuts") && text.contains("monolith") && text.contains("Postgres 16"), "{text}");
    let names: Vec<&str> = bundle["parts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pinned", "continuity", "recent"], "{out}");
    let turn = out["turn_id"].as_str().unwrap();
    let (s, trace) = call(&f.app, "GET", &format!("/v1/traces/{turn}"), &f.a, None).await;
    assert_eq!((s, trace["op"].as_str()), (StatusCode::OK, Some("rotate")), "{trace}");
    // The default budget when none is given.
    let (_, out) =
        call(&f.app, "POST", "/v1/sessions/s1/rotate", &f.a, Some(json!({"user_id": "dana", "agent_id": "coder"})))
            .await;
    assert_eq!(out["bundle"]["budget"], 2_000, "{out}");
}

#[tokio::test]
async fn sessions_are_isolated_by_tenant() {
    let f = fixture();
    let (peanut, _, _, doc) = session(&f).await;
    for item in [
        json!({"kind": "memory", "id": peanut}),
        json!({"kind": "document", "id": doc}),
        json!({"kind": "messages", "ids": ["m1"]}),
    ] {
        let got = call(&f.app, "POST", "/v1/sessions/s1/usage", &f.b, Some(report(10, 100, &json!([item])))).await;
        assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
        assert!(got.1["message"].as_str().unwrap().contains("cannot see"), "{}", got.1);
    }
    let (s, out) =
        call(&f.app, "POST", "/v1/sessions/s1/rotate", &f.b, Some(json!({"user_id": "dana", "agent_id": "coder"})))
            .await;
    assert_eq!(s, StatusCode::OK, "{out}");
    let text = out["bundle"]["text"].as_str().unwrap();
    assert!(!text.contains("peanut") && !text.contains("Postgres") && !text.contains("monolith"), "{text}");
}

#[tokio::test]
async fn bad_reports_and_rotations_are_4xx_and_write_nothing() {
    let f = fixture();
    let (peanut, ..) = session(&f).await;
    let (_, before) = call(&f.app, "GET", "/v1/memories?user_id=dana&agent_id=coder", &f.a, None).await;
    let usage = |body: Value| call(&f.app, "POST", "/v1/sessions/s1/usage", &f.a, Some(body));
    let bad_request = [
        report(0, 0, &json!([])),
        report(101, 100, &json!([])),
        report(1, 100_000_000, &json!([])),
        report(10, 100, &json!([{"kind": "memory", "id": "01jzzzzzzzzzzzzzzzzzzzzzzz"}])),
        report(10, 100, &json!([{"kind": "memory", "id": "not-an-id"}])),
        report(10, 100, &json!([{"kind": "memory", "id": peanut, "level": "L7"}])),
        report(10, 100, &json!([{"kind": "memory", "ids": [peanut]}])),
        report(10, 100, &json!([{"kind": "messages", "id": "m1"}])),
        report(10, 100, &json!([{"kind": "messages", "ids": ["m9"]}])),
        report(10, 100, &json!([{"kind": "memory", "id": peanut}, {"kind": "memory", "id": peanut}])),
        json!({"user_id": "dana", "used_tokens": -1, "capacity_tokens": 10}),
    ];
    for body in bad_request {
        let got = usage(body.clone()).await;
        assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    }
    for body in [
        json!({"user_id": "dana", "used_tokens": 1, "capacity_tokens": 10, "items": [{"kind": "skill", "id": "x"}]}),
        json!({"user_id": "dana", "used_tokens": 1, "capacity_tokens": 10, "tenant": "globex"}),
    ] {
        assert_error(&usage(body).await, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    }
    let rotate = |body: Value| call(&f.app, "POST", "/v1/sessions/s1/rotate", &f.a, Some(body));
    assert_error(
        &rotate(json!({"user_id": "dana", "budget_tokens": 0})).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    assert_error(
        &rotate(json!({"user_id": "dana", "budget_tokens": 1_000_000})).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    assert_error(&rotate(json!({"user_id": ""})).await, StatusCode::BAD_REQUEST, "invalid_request");
    let (_, after) = call(&f.app, "GET", "/v1/memories?user_id=dana&agent_id=coder", &f.a, None).await;
    assert_eq!(before, after, "nothing written");
}
