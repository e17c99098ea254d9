//! The OpenAI-compatible proxy (docs/openai-proxy.md) in front of a scripted upstream on
//! loopback: the block goes in after the app's system message, the upstream's answers and
//! errors come back unchanged, and what mnemo cannot do never breaks the chat. OpenAI's real
//! SDK runs through it against `mnemo serve` in crates/cli/tests/compat.rs.

use axum::http::StatusCode;
use mnemo_models::testing::{ScriptedServer, completion, error};
use serde_json::json;

use crate::common::{call, configured, fixture};

#[tokio::test]
async fn the_block_goes_in_after_the_apps_system_message_and_the_answer_comes_back() {
    let upstream = ScriptedServer::start(vec![completion("Noted.")]);
    let base = upstream.base().to_string();
    let f = configured(|c| c.proxy.upstream_url = base);
    call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact",
        "content": "Dana is allergic to peanuts."})),
    )
    .await;
    let body = json!({"model": "m", "user": "dana", "temperature": 0.2, "tools": [{"type": "function",
        "function": {"name": "f"}}], "messages": [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What snack can I have?"}]});
    let (status, answer) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "Noted.");
    let seen = upstream.finish();
    let sent = &seen[0].body;
    assert_eq!(sent["messages"][0]["content"], "Be brief.");
    assert_eq!(sent["messages"][1]["role"], "system");
    assert!(sent["messages"][1]["content"].as_str().unwrap().contains("peanuts"), "{sent}");
    assert_eq!(sent["messages"][2]["content"], "What snack can I have?");
    assert_eq!((&sent["temperature"], &sent["tools"][0]["function"]["name"]), (&json!(0.2), &json!("f")));
    assert_eq!(seen[0].header("authorization"), None, "no upstream key configured, none sent");
}

#[tokio::test]
async fn upstream_errors_pass_through_and_mnemos_own_failures_do_not_break_the_chat() {
    let upstream = ScriptedServer::start(vec![error(429, "slow down"), completion("Hi.")]);
    let base = upstream.base().to_string();
    let f = configured(|c| {
        c.proxy.upstream_url = base;
        c.proxy.upstream_key = "sk-up".into();
    });
    let chat = |user: &str| json!({"model": "m", "user": user, "messages": [{"role": "user", "content": "Hello"}]});
    let (status, body) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(chat("dana"))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(body.to_string().contains("slow down"), "the upstream's body: {body}");
    // A user id mnemo refuses: the chat is forwarded without memory.
    let (status, body) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(chat(&"u".repeat(300)))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let seen = upstream.finish();
    assert_eq!(seen[1].body["messages"].as_array().unwrap().len(), 1, "nothing inserted");
    assert_eq!(seen[1].header("authorization"), Some("Bearer sk-up"));
}

#[tokio::test]
async fn without_a_key_or_an_upstream_the_proxy_answers_in_openais_error_shape() {
    let f = fixture();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "Hi"}]});
    let (status, err) =
        call(&f.app, "POST", "/openai/v1/chat/completions", "mnemo_acme_nope", Some(body.clone())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(err["error"]["message"].is_string(), "{err}");
    let (status, err) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(body.clone())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(err["error"]["message"].as_str().unwrap().contains("MNEMO_PROXY_UPSTREAM_URL"), "{err}");

    let f = configured(|c| c.proxy.upstream_url = "http://127.0.0.1:9/v1".into());
    let (status, err) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(body)).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "an unreachable upstream: {err}");
}
