//! The OpenAI-compatible proxy (docs/openai-proxy.md) in front of a scripted upstream on
//! loopback: the block goes in after the app's system message, the upstream's answers and
//! errors come back unchanged, and what mnemo cannot do never breaks the chat. OpenAI's real
//! SDK runs through it against `mnemo serve` in crates/cli/tests/compat.rs.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use http_body_util::BodyExt;
use mnemo_models::testing::{ScriptedServer, completion, error};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::common::{Hanging, call, configured, fixture, request};

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

/// A chat request of `key`'s tenant through the proxy, answered in full: status, the
/// `Retry-After` header if any, and the body.
async fn chat(app: &axum::Router, key: &str, body: &Value) -> (StatusCode, Option<String>, Value) {
    let res = app.clone().oneshot(request("POST", "/openai/v1/chat/completions", Some(key), Some(body))).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let retry = headers.get("retry-after").map(|v| v.to_str().unwrap().to_string());
    (status, retry, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// Asserts OpenAI's error shape with mnemo's code and a message naming `setting`.
#[track_caller]
fn refused_in_openais_shape(body: &Value, code: &str, setting: &str) {
    let error = &body["error"];
    assert_eq!(error["code"], code, "{body}");
    assert!(error["type"].is_string() && error["param"].is_null(), "{body}");
    assert!(error["message"].as_str().unwrap().contains(setting), "the message names the setting: {body}");
}

/// A tenant with its cap of calls in flight is refused the next at once, 429 with `Retry-After`
/// in OpenAI's shape, while another tenant's calls go through; past the proxy's total, any
/// tenant's call is refused 503 the same way. The calls held answer when the upstream lets go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_over_its_proxy_cap_is_refused_at_once_with_retry_after() {
    let upstream = Hanging::start();
    let base = upstream.base();
    let f = configured(|c| {
        c.proxy.upstream_url = base;
        c.proxy.max_concurrent_per_tenant = 2;
        c.proxy.max_concurrent = 3;
    });
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "Hello"}]});
    let hold = |key: &str| {
        tokio::spawn({
            let (app, key, body) = (f.app.clone(), key.to_string(), body.clone());
            async move { chat(&app, &key, &body).await }
        })
    };
    let held = vec![hold(&f.a), hold(&f.a)];
    upstream.wait_for(2).await;

    let started = Instant::now();
    let (status, retry, err) = chat(&f.app, &f.a, &body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "refused at once, not queued: {:?}", started.elapsed());
    assert_eq!(retry.as_deref(), Some("1"));
    refused_in_openais_shape(&err, "rate_limited", "proxy.max_concurrent_per_tenant");
    assert_eq!(err["error"]["type"], "invalid_request_error");

    // Another tenant has its own cap: its call goes upstream...
    let mut held = held;
    held.push(hold(&f.b));
    upstream.wait_for(3).await;
    // ...until the proxy's total is in flight, which refuses everyone.
    let (status, retry, err) = chat(&f.app, &f.b, &body).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{err}");
    assert_eq!(retry.as_deref(), Some("1"));
    refused_in_openais_shape(&err, "unavailable", "proxy.max_concurrent");
    assert_eq!(upstream.connections(), 3, "no refused call reached the upstream");

    drop(upstream);
    for call in held {
        let (status, _, err) = call.await.unwrap();
        assert_eq!(status, StatusCode::BAD_GATEWAY, "a held call ends when the upstream lets go: {err}");
    }
}

/// A streamed answer that does not start within `proxy.idle_timeout_secs` is given up (502)
/// long before `proxy.timeout_secs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_stream_is_given_up_after_the_idle_timeout() {
    let upstream = Hanging::start();
    let base = upstream.base();
    let f = configured(|c| {
        c.proxy.upstream_url = base;
        c.proxy.idle_timeout_secs = 1;
    });
    let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hello"}]});
    let started = Instant::now();
    let (status, _, err) = chat(&f.app, &f.a, &body).await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{err}");
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(10), "{took:?}");
    assert_eq!(upstream.connections(), 1);
}
