//! What one request may ask: every integer from a client is range-checked (400 naming the
//! field, never an overflow or a storage error), queries and messages are bounded in characters
//! and tokens before any work, ingests are bounded per request, and `/metrics` keeps a bounded
//! set of series whatever methods clients send.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{assert_error, call, configured, example, fields, fixture, request, send, types, with_value};

#[track_caller]
fn names(got: &(StatusCode, Value), field: &str) {
    assert_error(got, StatusCode::BAD_REQUEST, "invalid_request");
    let message = got.1["message"].as_str().unwrap();
    assert!(message.contains(field), "the message names {field}: {message}");
}

#[tokio::test]
async fn list_offsets_and_limits_out_of_range_answer_400_naming_the_field() {
    let f = fixture();
    for offset in ["9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616"] {
        let got = call(&f.app, "GET", &format!("/v1/memories?user_id=dana&offset={offset}"), &f.a, None).await;
        names(&got, "offset");
    }
    names(&call(&f.app, "GET", "/v1/memories?user_id=dana&limit=18446744073709551615", &f.a, None).await, "limit");
    let (status, body) = call(&f.app, "GET", "/v1/memories?user_id=dana&offset=1000000", &f.a, None).await;
    assert_eq!((status, &body["items"]), (StatusCode::OK, &json!([])), "{body}");
}

#[tokio::test]
async fn top_k_and_budget_out_of_range_answer_400_naming_the_field() {
    let f = fixture();
    for k in [json!(0), json!(1_000_000_000_u64), json!(u64::MAX)] {
        let body = json!({"user_id": "dana", "query": "where do I live", "top_k": k});
        names(&call(&f.app, "POST", "/v1/recall", &f.a, Some(body)).await, "top_k");
    }
    for b in [json!(0), json!(u64::MAX)] {
        let body = json!({"user_id": "dana", "chat_id": "c1", "message": "hi", "budget_tokens": b});
        names(&call(&f.app, "POST", "/v1/context", &f.a, Some(body)).await, "budget_tokens");
    }
}

/// A 40,000-word query cost 21 s of CPU and a 32,000-character CJK message 4-5 s; each is now
/// refused before any work, at once.
#[tokio::test]
async fn long_queries_and_messages_are_refused_at_once() {
    let f = fixture();
    let words = "where did we go hiking last summer with the dog ".repeat(4_000);
    let cjk = "我们去年夏天和狗一起去哪里远足了🐕".repeat(1_800);
    let started = Instant::now();
    names(&call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "dana", "query": words}))).await, "query");
    let context = json!({"user_id": "dana", "chat_id": "c1", "message": cjk});
    names(&call(&f.app, "POST", "/v1/context", &f.a, Some(context)).await, "message");
    let cjk_only: String = cjk.chars().take(30_000).collect();
    let ingest = json!({"user_id": "dana", "chat_id": "c1", "messages": [{"role": "user", "content": cjk_only}]});
    let got = call(&f.app, "POST", "/v1/messages", &f.a, Some(ingest)).await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    assert!(got.1["message"].as_str().unwrap().contains("max_message_tokens"), "{}", got.1);
    assert!(started.elapsed() < Duration::from_secs(5), "refusals do no work: {:?}", started.elapsed());
}

#[tokio::test]
async fn an_ingest_over_the_per_request_size_is_refused_whole() {
    let f = fixture();
    let line = "I went for a long walk along the river this morning and saw herons. ".repeat(14);
    let messages: Vec<Value> = (0..120).map(|_| json!({"role": "user", "content": line})).collect();
    let got = call(
        &f.app,
        "POST",
        "/v1/messages",
        &f.a,
        Some(json!({"user_id": "dana", "chat_id": "c1", "messages": messages})),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "invalid_request");
    assert!(got.1["message"].as_str().unwrap().contains("max_batch_chars"), "{}", got.1);
    let (status, recent) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    assert_eq!((status, &recent["items"]), (StatusCode::OK, &json!([])), "nothing was written");
}

#[tokio::test]
async fn metrics_keep_one_series_for_every_unknown_method() {
    let f = fixture();
    for i in 0..50 {
        send(&f.app, request(&format!("BREW{i}"), "/v1/recall", Some(&f.a), None)).await;
    }
    let (_, metrics) = send(&f.app, request("GET", "/metrics", None, None)).await;
    let text = metrics.as_str().unwrap();
    assert!(!text.contains("BREW"), "{text}");
    assert!(text.contains(r#"method="other""#), "{text}");
}

/// A scan of 2,000 made-up paths, at the root and under every prefix the server routes (the
/// API, mem0's, the proxy's, the console's), leaves `/metrics` with one `unmatched` route
/// series, never one per path: a probe's path is not a label value.
#[tokio::test]
async fn metrics_keep_one_series_for_every_unknown_path() {
    let f = fixture();
    let prefixes =
        ["/", "/v1/", "/v1/memories/x/y/", "/mem0/", "/mem0/v9/", "/openai/", "/ui/", "/mcp/", "/memories/x/y/"];
    for i in 0..2_000 {
        let path = format!("{}probe{}", prefixes[i % prefixes.len()], mnemo::core::MemoryId::new());
        let method = ["GET", "POST", "DELETE"][i % 3];
        let (status, _) = send(&f.app, request(method, &path, Some(&f.a), None)).await;
        assert!(status.is_client_error() || status == StatusCode::NOT_IMPLEMENTED, "{method} {path}: {status}");
    }
    let (_, metrics) = send(&f.app, request("GET", "/metrics", None, None)).await;
    let text = metrics.as_str().unwrap();
    assert!(!text.contains("probe"), "{text}");
    let routes: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.starts_with("mnemo_http_requests_total{"))
        .filter_map(|l| l.split("route=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(routes, ["unmatched"].into(), "one series, not one per path");
    let counted: u64 = text
        .lines()
        .filter(|l| l.starts_with("mnemo_http_requests_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(counted, 2_000, "every request was counted: {text}");
}

/// A tenant past `limits.requests_per_second` is answered 429 with `Retry-After`, on the native
/// routes and the compatibility surfaces alike, and another tenant is not held back by it.
#[tokio::test]
async fn a_tenant_past_its_request_rate_is_told_when_to_come_back_and_no_other_is_slowed() {
    let f = crate::common::configured(|c| {
        c.limits.requests_per_second = 0.5;
        c.limits.request_burst = 3;
    });
    let list = "/v1/memories?user_id=dana";
    for _ in 0..3 {
        assert_eq!(call(&f.app, "GET", list, &f.a, None).await.0, StatusCode::OK);
    }
    let res = tower::ServiceExt::oneshot(f.app.clone(), request("GET", list, Some(&f.a), None)).await.unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "one request back in 2 s at most: {retry}");
    let got = send(&f.app, request("GET", list, Some(&f.a), None)).await;
    assert_error(&got, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    // mem0's routes share the tenant's bucket, in mem0's error shape, with the same header.
    let mem0 = axum::http::Request::builder()
        .uri("/mem0/v1/ping/")
        .header("authorization", format!("Token {}", f.a))
        .body(axum::body::Body::empty())
        .unwrap();
    let res = tower::ServiceExt::oneshot(f.app.clone(), mem0).await.unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    // Another tenant has its own bucket.
    for _ in 0..3 {
        assert_eq!(call(&f.app, "GET", list, &f.b, None).await.0, StatusCode::OK);
    }
    // A bad key is still a 401, never counted against anyone.
    assert_eq!(call(&f.app, "GET", list, "mnemo_not-a-key", None).await.0, StatusCode::UNAUTHORIZED);
}

/// With no setting, a tenant's burst of 200 requests passes whole, and a flood past it (faster
/// than 50 a second) is refused 429 with `Retry-After`; another tenant is not.
#[tokio::test]
async fn a_rate_limit_is_on_by_default() {
    let f = fixture();
    let list = "/v1/memories?user_id=dana";
    let started = std::time::Instant::now();
    let mut passed = 0usize;
    let refused = loop {
        let res = tower::ServiceExt::oneshot(f.app.clone(), request("GET", list, Some(&f.a), None)).await.unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            break res;
        }
        assert_eq!(res.status(), StatusCode::OK);
        passed += 1;
        assert!(passed <= 2_000, "no limit after {passed} requests in {:?}", started.elapsed());
    };
    let allowed = 200.0 + 50.0 * started.elapsed().as_secs_f64();
    assert!(passed >= 200 && passed as f64 <= allowed + 1.0, "{passed} passed, {allowed} allowed");
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(call(&f.app, "GET", list, &f.b, None).await.0, StatusCode::OK);
}

/// Integers out of every type's range: negative, 2^63, 2^64 and far past it (a float to JSON).
const OUT_OF_RANGE: [&str; 4] =
    ["-1", "9223372036854775808", "18446744073709551616", "9999999999999999999999999999999999999999"];

/// Every integer a client can send on the HTTP API, from the served OpenAPI document (each
/// integer query parameter and body field, nested ones included) and mem0's routes, answers
/// 400 naming the field when it is negative, 2^63, 2^64 or larger still: never a server error,
/// never a body-shape 422 for what is a number out of range.
#[tokio::test]
async fn every_integer_out_of_range_answers_400_naming_the_field() {
    let f = fixture();
    let (_, doc) = send(&f.app, request("GET", "/openapi.json", None, None)).await;
    let memory = json!({"user_id": "dana", "kind": "fact", "content": "Dana keeps bees on the roof"});
    let (_, added) = call(&f.app, "POST", "/v1/memories", &f.a, Some(memory)).await;
    let held = added["verdict"]["memory_id"].as_str().unwrap().to_string();
    let (mut tried, mut wrong) = (Vec::new(), Vec::new());
    for (template, item) in doc["paths"].as_object().unwrap() {
        let path = template
            .replace("{id}", &mnemo::core::MemoryId::new().to_string())
            .replace("{chat_id}", "c1")
            .replace("{user_id}", "dana")
            .replace("{turn_id}", "t1")
            .replace("{prefix}", "mnemo_acme_x");
        for (method, op) in item.as_object().unwrap() {
            let method = method.to_ascii_uppercase();
            let key = if template.contains("/admin/") { crate::common::ADMIN } else { f.a.as_str() };
            let body_schema = op.pointer("/requestBody/content/application~1json/schema");
            let body = body_schema.map(|s| example(&doc, s, "", "dana", "c1").to_string());
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            for p in params.iter().filter(|p| p["in"] == "query" && p["schema"]["type"] == "integer") {
                let name = p["name"].as_str().unwrap();
                for bad in OUT_OF_RANGE {
                    let uri = format!("{path}?user_id=dana&chat_id=c1&{name}={bad}");
                    let got = send_raw(&f, &method, &uri, key, body.clone()).await;
                    tried.push(format!("{method} {template}?{name}"));
                    wrong.extend(not_naming(&got, "/message", name).map(|w| format!("{method} {uri}: {w}")));
                }
            }
            let Some(schema) = body_schema else { continue };
            for field in fields(&doc, schema, &|_, s| types(s).contains(&"integer")) {
                let name = field.last().unwrap().clone();
                let mut placeholder = with_value(&doc, schema, &field, json!("__INT__"), "dana", "c1");
                // A held item names a memory the user holds, so the check reaches its tokens.
                if let Some(item) = placeholder.pointer_mut("/items/0") {
                    item["id"] = json!(held);
                }
                let placeholder = placeholder.to_string();
                for bad in OUT_OF_RANGE {
                    let body = placeholder.replace("\"__INT__\"", bad);
                    let got = send_raw(&f, &method, &path, key, Some(body.clone())).await;
                    tried.push(format!("{method} {template} {}", field.join(".")));
                    wrong.extend(not_naming(&got, "/message", &name).map(|w| format!("{method} {path} {body}: {w}")));
                }
            }
        }
    }
    // mem0's routes (not in the document), in mem0's error shape.
    let search = r#"{"query": "bees", "filters": {"user_id": "dana"}, "top_k": __INT__}"#;
    let mem0 = [
        ("POST", "/mem0/v3/memories/?page=__INT__", Some(r#"{"filters": {"user_id": "dana"}}"#), "page"),
        ("POST", "/mem0/v3/memories/?page_size=__INT__", Some(r#"{"filters": {"user_id": "dana"}}"#), "page_size"),
        ("POST", "/mem0/v3/memories/search/", Some(search), "top_k"),
        ("POST", "/search", Some(r#"{"query": "bees", "user_id": "dana", "top_k": __INT__}"#), "top_k"),
        ("GET", "/memories?user_id=dana&top_k=__INT__", None, "top_k"),
    ];
    for (method, uri, body, name) in mem0 {
        for bad in OUT_OF_RANGE {
            let (uri, body) = (uri.replace("__INT__", bad), body.map(|b| b.replace("__INT__", bad)));
            let got = send_raw(&f, method, &uri, &f.a, body.clone()).await;
            tried.push(format!("{method} {uri}"));
            wrong.extend(not_naming(&got, "/detail", name).map(|w| format!("{method} {uri} {body:?}: {w}")));
        }
    }
    let requests = tried.len();
    tried.dedup();
    assert!(tried.len() >= 20, "the walk found the integers: {tried:?}");
    assert!(
        wrong.is_empty(),
        "{} of {requests} requests were not a 400 naming the field:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A request whose JSON body is sent as written (numbers past what `serde_json::Value` holds).
async fn send_raw(
    f: &crate::common::Fixture,
    method: &str,
    uri: &str,
    key: &str,
    body: Option<String>,
) -> (StatusCode, Value) {
    let b = axum::http::Request::builder().method(method).uri(uri).header("authorization", format!("Bearer {key}"));
    let req = match body {
        Some(text) => b.header("content-type", "application/json").body(axum::body::Body::from(text)).unwrap(),
        None => b.body(axum::body::Body::empty()).unwrap(),
    };
    send(&f.app, req).await
}

/// What is wrong with an answer that must be a 400 naming `field` in `text_at` (`/message`
/// natively, `/detail` on mem0's routes); `None` when it is one.
fn not_naming(got: &(StatusCode, Value), text_at: &str, field: &str) -> Option<String> {
    let text = got.1.pointer(text_at).and_then(Value::as_str).unwrap_or_default();
    (got.0 != StatusCode::BAD_REQUEST || !text.contains(field)).then(|| format!("{} {}", got.0, got.1))
}

/// mem0's `add` is bounded like a native ingest: more messages than `ingest.max_batch` (1,000)
/// are refused with 413 in mem0's `{"detail"}` shape, naming the limit, before any is written
/// (6,000 messages with `infer=false` once took 77 s of CPU in one request), on both route sets
/// and whether mnemo extracts or not.
#[tokio::test]
async fn a_mem0_add_of_more_messages_than_an_ingest_takes_is_413_naming_the_limit() {
    let f = fixture();
    let limit = f.memory.config().tuning().ingest.max_batch;
    let messages: Vec<Value> = (0..=limit).map(|i| json!({"role": "user", "content": format!("note {i}")})).collect();
    let started = Instant::now();
    for (uri, infer) in [("/mem0/v1/memories/", false), ("/memories", false), ("/mem0/v3/memories/add/", true)] {
        let body = json!({"messages": messages, "user_id": "dana", "infer": infer});
        let (status, got) = call(&f.app, "POST", uri, &f.a, Some(body)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{uri}: {got}");
        let detail = got["detail"].as_str().unwrap_or_else(|| panic!("{uri}: mem0's shape: {got}"));
        assert!(detail.contains(&limit.to_string()) && detail.contains("ingest.max_batch"), "{uri}: {detail}");
    }
    assert!(started.elapsed() < Duration::from_secs(5), "refusals do no work: {:?}", started.elapsed());
    let (status, listed) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    assert_eq!((status, &listed["items"]), (StatusCode::OK, &json!([])), "nothing was written");
    // At the limit, it is taken.
    let at_limit: Vec<Value> = messages[..3].to_vec();
    let (status, got) =
        call(&f.app, "POST", "/memories", &f.a, Some(json!({"messages": at_limit, "user_id": "dana", "infer": false})))
            .await;
    assert_eq!(status, StatusCode::OK, "{got}");
}

/// A message too long to be one memory, added with `infer=false` (which stores each message as
/// it is), is refused with a 4xx naming the limit, in mem0's shape, and nothing of the add is
/// written; it used to answer 200 with no results and no reason.
#[tokio::test]
async fn a_mem0_add_without_inference_of_a_message_too_long_for_a_memory_says_why() {
    let f = fixture();
    let max = f.memory.config().tuning().gate.max_content_chars;
    for long in ["x ".repeat(16_001), "y".repeat(max + 1)] {
        let messages = json!([{"role": "user", "content": "Dana likes tea."}, {"role": "user", "content": long}]);
        for uri in ["/mem0/v1/memories/", "/memories"] {
            let body = json!({"messages": messages, "user_id": "dana", "infer": false});
            let (status, got) = call(&f.app, "POST", uri, &f.a, Some(body)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {got}");
            let detail = got["detail"].as_str().unwrap_or_else(|| panic!("{uri}: mem0's shape: {got}"));
            assert!(detail.contains("messages[1]") && detail.contains(&max.to_string()), "{uri}: {detail}");
            assert!(detail.contains("gate.max_content_chars"), "{uri}: {detail}");
        }
    }
    let (status, listed) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    assert_eq!((status, &listed["items"]), (StatusCode::OK, &json!([])), "nothing of the add was written");
}

/// Client key-value data past `limits.max_metadata_bytes` is refused with 400 naming the limit,
/// on add (with and without inference, nothing written) and on update; listings carried 900 KB
/// of it per memory before.
#[tokio::test]
async fn metadata_past_its_limit_is_refused_and_nothing_is_written() {
    let f = fixture();
    let max = f.memory.config().tuning().limits.max_metadata_bytes;
    let big = json!({"blob": "x".repeat(max)});
    for (uri, infer) in [("/mem0/v1/memories/", false), ("/memories", true)] {
        let body = json!({"messages": [{"role": "user", "content": "I live in Lisbon."}], "user_id": "dana",
                          "infer": infer, "metadata": big});
        let (status, got) = call(&f.app, "POST", uri, &f.a, Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {got}");
        let detail = got["detail"].as_str().unwrap_or_else(|| panic!("{uri}: mem0's shape: {got}"));
        assert!(detail.contains("metadata") && detail.contains("limits.max_metadata_bytes"), "{uri}: {detail}");
    }
    let (status, listed) = call(&f.app, "GET", "/v1/memories?user_id=dana", &f.a, None).await;
    assert_eq!((status, &listed["items"]), (StatusCode::OK, &json!([])), "nothing of the adds was written");
    // Within the limit it is kept.
    let small = json!({"messages": [{"role": "user", "content": "Dana likes tea."}], "user_id": "dana",
                       "infer": false, "metadata": {"src": "chat"}});
    let (status, got) = call(&f.app, "POST", "/mem0/v1/memories/", &f.a, Some(small)).await;
    assert_eq!(status, StatusCode::OK, "{got}");
}

/// A listing stops at about 1 MiB of items however large the page asked for, and says where
/// the rest starts: 500 memories of nearly 2,000 characters, asked for as one page of 500, come
/// in pages that together hold every one exactly once (one page of about 1.2 MB before).
#[tokio::test]
async fn a_listing_is_paged_by_size_as_well_as_by_count() {
    let f = configured(crate::common::without_rate_limit);
    for i in 0..500 {
        // Words of its own, so no two notes are near duplicates.
        let words: Vec<String> = (0..230).map(|j| format!("n{i}w{j}")).collect();
        let body = json!({"messages": [{"role": "user", "content": words.join(" ")}],
                          "user_id": "dana", "infer": false});
        let (status, got) = call(&f.app, "POST", "/mem0/v1/memories/", &f.a, Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{got}");
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let uri = format!("/v1/memories?user_id=dana&limit=500&offset={offset}");
        let (status, page) = call(&f.app, "GET", &uri, &f.a, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let items = page["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{page}");
        assert!(serde_json::to_vec(items).unwrap().len() <= (1 << 20) + 4 * 1024, "a page past its size");
        for m in items {
            assert!(seen.insert(m["id"].as_str().unwrap().to_string()), "listed twice: {}", m["id"]);
        }
        pages += 1;
        match page["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => break,
        }
    }
    assert_eq!(seen.len(), 500);
    assert!(pages >= 2, "{pages} page(s)");
}

/// A body over the server's limit sent to the OpenAI proxy is refused with 413 in OpenAI's
/// error shape, `{"error": {"message", "type", "param", "code"}}`, which OpenAI's SDKs read
/// (it was axum's plain text), and nothing is forwarded.
#[tokio::test]
async fn an_oversized_body_to_the_openai_proxy_is_413_in_openais_error_shape() {
    let f = configured(|c| c.proxy.upstream_url = "http://127.0.0.1:9/v1".into());
    let big = "x".repeat(mnemo_server::DEFAULT_BODY_LIMIT + 1);
    let body = json!({"model": "m", "user": "dana", "messages": [{"role": "user", "content": big}]});
    let (status, got) = call(&f.app, "POST", "/openai/v1/chat/completions", &f.a, Some(body)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{got}");
    let error = got["error"].as_object().unwrap_or_else(|| panic!("OpenAI's shape: {got}"));
    let keys: Vec<&str> = error.keys().map(String::as_str).collect();
    assert_eq!(keys, ["code", "message", "param", "type"], "{got}");
    assert!(error["message"].as_str().unwrap().contains("1048576"), "names the limit: {got}");
    assert_eq!(error["type"], "invalid_request_error", "{got}");
    assert_eq!(error["code"], "payload_too_large", "{got}");
    assert!(error["param"].is_null(), "{got}");
}
