//! The chat client against a real HTTP/1.1 server on loopback that plays a scripted
//! OpenAI-compatible model: structured replies, a server that rejects `response_format`,
//! malformed, truncated, slow and failing replies, retries with backoff and `Retry-After`,
//! token accounting, auth — and the LLM extractor's prompt and reply parsing end to end.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use mnemo_core::config::GateTuning;
use mnemo_core::extract::llm::{LlmBatch, PromptOptions, SCHEMA_NAME, reply_schema};
use mnemo_core::{Action, Kind, Memory, Message, MessageId, Role, Scope, Target};
use mnemo_models::testing::{Answer, ScriptedServer, completion, completion_with, error, raw};
use mnemo_models::{
    ChatError, ChatMessage, ChatModel, ChatRequest, FormatUsed, LlmSettings, OpenAiChat, Repair, ResponseFormat, Usage,
    ask_json, estimate_tokens, open_chat_model,
};
use serde_json::{Value, json};

fn settings(base: &str) -> LlmSettings {
    LlmSettings {
        base_url: base.into(),
        model: "scripted-model".into(),
        timeout_secs: 5.0,
        max_retries: 2,
        backoff_secs: 0.01,
        max_backoff_secs: 0.05,
        ..LlmSettings::default()
    }
}

fn client(s: &LlmSettings) -> OpenAiChat {
    OpenAiChat::new(s).unwrap()
}

fn ops_schema() -> Value {
    json!({"type": "object", "properties": {"ops": {"type": "array"}}, "required": ["ops"], "additionalProperties": false})
}

fn json_request() -> ChatRequest {
    ChatRequest::new(vec![ChatMessage::system("You extract memories."), ChatMessage::user("I have a dog.")])
        .with_schema("ops", ops_schema())
}

#[test]
fn json_schema_is_requested_and_the_reply_parsed() {
    let server = ScriptedServer::start(vec![completion(r#"{"ops": ["dog"]}"#)]);
    let s = LlmSettings { api_key: Some("sk-test".into()), ..settings(server.base()) };
    let c = client(&s);
    assert_eq!(c.url(), format!("{}/chat/completions", server.base()));
    let reply = c.complete(&json_request().with_max_tokens(256)).unwrap();
    assert_eq!(reply.json, Some(json!({"ops": ["dog"]})));
    assert_eq!((reply.repairs.clone(), reply.format), (vec![], FormatUsed::JsonSchema));
    assert_eq!((reply.model.as_str(), reply.finish_reason.as_deref()), ("scripted-model", Some("stop")));
    assert!(!reply.truncated());
    let u = reply.usage;
    assert_eq!((u.calls, u.retries, u.prompt_tokens, u.completion_tokens, u.estimated_calls), (1, 0, 120, 30, 0));
    assert!(u.micros > 0);

    let seen = server.finish();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
    assert!(r.header("content-type").unwrap().starts_with("application/json"));
    assert_eq!(r.body["model"], "scripted-model");
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "system", "content": "You extract memories."},
            {"role": "user", "content": "I have a dog."},
        ])
    );
    assert_eq!(
        r.body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "ops", "schema": ops_schema(), "strict": true}})
    );
    assert_eq!((r.body["max_tokens"].as_u64(), r.body["temperature"].as_f64()), (Some(256), Some(0.0)));
    assert_eq!(r.body["stream"], false);
}

#[test]
fn a_server_that_rejects_response_format_gets_the_schema_in_the_prompt() {
    let server = ScriptedServer::start(vec![
        error(400, "response_format json_schema is not supported by this server"),
        completion("Sure! Here are the operations:\n```json\n{\"ops\": [\"dog\",],}\n```\nLet me know!"),
        completion("{\"ops\": []}"),
    ]);
    let c = client(&settings(server.base()));
    let first = c.complete(&json_request()).unwrap();
    assert_eq!(first.json, Some(json!({"ops": ["dog"]})));
    assert_eq!(first.repairs, vec![Repair::CodeFence, Repair::TrailingCommas]);
    assert_eq!(first.format, FormatUsed::Prompt);
    assert_eq!((first.usage.calls, first.usage.retries), (2, 0), "the fallback is a call, not a retry");
    assert!(c.response_format_rejected());
    // From now on the client does not try response_format again.
    let second = c.complete(&json_request()).unwrap();
    assert_eq!((second.json, second.format, second.usage.calls), (Some(json!({"ops": []})), FormatUsed::Prompt, 1));

    let seen = server.finish();
    assert_eq!(seen.len(), 3);
    assert!(seen[0].body.get("response_format").is_some());
    for r in &seen[1..] {
        assert!(r.body.get("response_format").is_none(), "{:?}", r.body);
        assert!(r.system().starts_with("You extract memories.\n\nReply with one JSON value only"), "{}", r.system());
        assert!(r.system().contains(&ops_schema().to_string()), "the schema travels in the prompt");
        assert_eq!(r.body["messages"].as_array().unwrap().len(), 2, "merged into the system message");
    }
}

#[test]
fn json_object_mode_and_422_fallback() {
    let server = ScriptedServer::start(vec![
        completion("{\"ops\": [1]}"),
        error(422, "json_object unsupported"),
        completion("[2]"),
    ]);
    let s = LlmSettings { response_format: ResponseFormat::JsonObject, ..settings(server.base()) };
    let c = client(&s);
    let r = c.complete(&json_request()).unwrap();
    assert_eq!((r.json, r.format), (Some(json!({"ops": [1]})), FormatUsed::JsonObject));
    let r = c.complete(&json_request()).unwrap();
    assert_eq!((r.json, r.format, r.usage.calls), (Some(json!([2])), FormatUsed::Prompt, 2));
    let seen = server.finish();
    assert_eq!(seen[0].body["response_format"], json!({"type": "json_object"}));
    assert!(seen[0].system().contains("Reply with one JSON value only"), "json_object needs the schema in the prompt");
    assert!(seen[2].body.get("response_format").is_none());
}

#[test]
fn a_plain_text_request_gets_no_schema_and_no_json() {
    let server = ScriptedServer::start(vec![completion("Hello! {\"not\": \"asked for\"}"), error(400, "bad request")]);
    let c = client(&settings(server.base()));
    let req = ChatRequest::new(vec![ChatMessage::user("Say hello")]);
    let r = c.complete(&req).unwrap();
    assert_eq!((r.json, r.format, r.text.as_str()), (None, FormatUsed::Text, "Hello! {\"not\": \"asked for\"}"));
    // A 400 without response_format has no fallback and is not retried.
    match c.complete(&req) {
        Err(ChatError::HttpStatus { status: 400, usage, .. }) => assert_eq!(usage.calls, 1),
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    let seen = server.finish();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].body.get("response_format").is_none());
    assert_eq!(seen[0].body["messages"], json!([{"role": "user", "content": "Say hello"}]), "no schema instruction");
}

#[test]
fn malformed_replies_are_errors_with_their_cost_and_never_retried_blindly() {
    let server = ScriptedServer::start(vec![
        completion("I think the user likes cats, but I'm not sure."),
        raw(200, "<html>proxy login</html>"),
        raw(200, r#"{"object": "chat.completion", "choices": []}"#),
        raw(200, r#"{"error": {"message": "model not loaded"}}"#),
        raw(200, r#"{"choices": [{"message": {"content": null, "refusal": "I can't help with that."}}]}"#),
    ]);
    let c = client(&settings(server.base()));
    match ask_json::<Value, _>(&c, &json_request()) {
        Err(ChatError::NoJson { excerpt, usage, finish_reason }) => {
            assert!(excerpt.contains("likes cats"), "{excerpt}");
            assert_eq!((usage.calls, usage.prompt_tokens), (1, 120), "the failed parse is still accounted for");
            assert_eq!(finish_reason.as_deref(), Some("stop"));
        }
        other => panic!("expected NoJson, got {other:?}"),
    }
    for want in ["proxy login", "no choices", "model not loaded", "refused: I can't help"] {
        match c.complete(&json_request()) {
            Err(e @ ChatError::BadResponse { .. }) => {
                assert!(e.to_string().contains(want), "{e} should mention {want:?}");
                assert_eq!(e.usage().calls, 1);
            }
            other => panic!("expected BadResponse mentioning {want:?}, got {other:?}"),
        }
    }
    assert_eq!(server.finish().len(), 5, "no retries for answers that arrived");
}

#[test]
fn truncated_replies_keep_their_complete_items() {
    let cut = r#"{"ops": [{"op": "add", "content": "User has a dog"}, {"op": "add", "content": "User li"#;
    let server = ScriptedServer::start(vec![completion_with(cut, "length", Some((500, 2048)))]);
    let r = client(&settings(server.base())).complete(&json_request()).unwrap();
    assert!(r.truncated());
    assert_eq!(r.json, Some(json!({"ops": [{"op": "add", "content": "User has a dog"}]})));
    assert_eq!(r.repairs, vec![Repair::Truncated]);
    assert_eq!(r.usage.completion_tokens, 2048);
    server.finish();
}

#[test]
fn a_slow_reply_times_out_and_the_retry_succeeds() {
    let server =
        ScriptedServer::start(vec![completion("{\"ops\": [\"late\"]}").slow(1500), completion("{\"ops\": []}")]);
    let s = LlmSettings { timeout_secs: 0.3, ..settings(server.base()) };
    let started = Instant::now();
    let r = client(&s).complete(&json_request()).unwrap();
    let took = started.elapsed();
    assert_eq!(r.json, Some(json!({"ops": []})));
    assert_eq!((r.usage.calls, r.usage.retries), (2, 1));
    assert!(took >= Duration::from_millis(300) && took < Duration::from_millis(1400), "{took:?}");
    assert!(r.usage.latency() >= Duration::from_millis(300), "latency includes the timed-out attempt");
    server.finish();
}

#[test]
fn a_server_that_never_answers_in_time_is_a_timeout_error() {
    let server = ScriptedServer::start(vec![completion("{}").slow(1200), completion("{}").slow(1200)]);
    let s = LlmSettings { timeout_secs: 0.25, max_retries: 1, ..settings(server.base()) };
    let started = Instant::now();
    let err = client(&s).complete(&json_request()).unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(1100), "{:?}", started.elapsed());
    match &err {
        ChatError::Timeout { url, timeout, usage } => {
            assert_eq!(url, &format!("{}/chat/completions", server.base()));
            assert_eq!(*timeout, Duration::from_millis(250));
            let sent = 2 * prompt_tokens(&json_request());
            assert_eq!((usage.calls, usage.retries, usage.prompt_tokens, usage.estimated_calls), (2, 1, sent, 2));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    assert!(err.is_transient());
    assert!(err.to_string().contains("MNEMO_LLM_TIMEOUT_SECS"), "{err}");
    server.finish();
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    let server = ScriptedServer::start(vec![
        error(429, "slow down").with_header("Retry-After-Ms", "200"),
        error(500, "oops"),
        error(503, "overloaded"),
        completion("{\"ops\": [\"finally\"]}"),
    ]);
    let s = LlmSettings { max_retries: 3, backoff_secs: 0.05, max_backoff_secs: 1.0, ..settings(server.base()) };
    let started = Instant::now();
    let r = client(&s).complete(&json_request()).unwrap();
    let took = started.elapsed();
    assert_eq!(r.json, Some(json!({"ops": ["finally"]})));
    assert_eq!((r.usage.calls, r.usage.retries), (4, 3));
    // Retry-After-Ms 200 ms, then backoff 0.05 s and 0.1 s (each at least 80% with jitter).
    assert!(took >= Duration::from_millis(200 + 40 + 80), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(server.finish().len(), 4);
}

#[test]
fn retry_after_in_seconds_is_honoured_up_to_the_cap() {
    let server = ScriptedServer::start(vec![
        error(503, "busy").with_header("Retry-After", "1"),
        completion("{\"a\": 1}"),
        error(429, "busy").with_header("Retry-After", "30"),
        completion("{\"b\": 2}"),
    ]);
    let s = LlmSettings { max_backoff_secs: 2.0, ..settings(server.base()) };
    let c = client(&s);
    let started = Instant::now();
    c.complete(&json_request()).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950), "waited {:?}", started.elapsed());
    let capped = LlmSettings { max_backoff_secs: 0.2, ..settings(server.base()) };
    let started = Instant::now();
    let r = client(&capped).complete(&json_request()).unwrap();
    assert_eq!(r.json, Some(json!({"b": 2})));
    assert!(started.elapsed() < Duration::from_secs(2), "Retry-After: 30 capped, waited {:?}", started.elapsed());
    server.finish();
}

#[test]
fn a_persistent_failure_is_an_error_naming_status_attempts_and_body() {
    let server =
        ScriptedServer::start(vec![error(500, "GPU on fire"), error(502, "bad gateway"), error(500, "GPU on fire")]);
    let err = client(&settings(server.base())).complete(&json_request()).unwrap_err();
    match &err {
        ChatError::HttpStatus { status, body_excerpt, usage, .. } => {
            assert_eq!(*status, 500);
            assert!(body_excerpt.contains("GPU on fire"));
            assert_eq!((usage.calls, usage.retries), (3, 2));
        }
        other => panic!("expected HttpStatus, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("HTTP 500") && msg.contains("3 attempt(s)") && msg.contains(server.base()), "{msg}");
    assert!(err.is_transient(), "a 500 may pass: worth retrying the batch later");
    assert_eq!(server.finish().len(), 3);
}

#[test]
fn client_errors_are_not_retried() {
    let server = ScriptedServer::start(vec![error(401, "invalid api key"), error(404, "model not found")]);
    let c = client(&settings(server.base()));
    for status in [401, 404] {
        let err = c.complete(&ChatRequest::new(vec![ChatMessage::user("hi")])).unwrap_err();
        assert!(matches!(&err, ChatError::HttpStatus { status: s, .. } if *s == status), "{err:?}");
        assert_eq!(err.usage().calls, 1);
        assert!(!err.is_transient());
    }
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn a_dropped_connection_is_retried() {
    let server = ScriptedServer::start(vec![Answer::Hangup, completion("{\"ok\": true}")]);
    let r = client(&settings(server.base())).complete(&json_request()).unwrap();
    assert_eq!((r.json, r.usage.retries), (Some(json!({"ok": true})), 1));
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn connection_refused_is_reported_after_the_retries() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let err = client(&settings(&base)).complete(&json_request()).unwrap_err();
    match &err {
        ChatError::Transport { url, usage, .. } => {
            assert_eq!(url, &format!("{base}/chat/completions"));
            assert_eq!((usage.calls, usage.retries), (3, 2));
        }
        other => panic!("expected Transport, got {other:?}"),
    }
    assert!(err.to_string().contains("MNEMO_LLM_BASE_URL"), "{err}");
}

#[test]
fn tokens_are_estimated_when_the_server_reports_no_usage() {
    let content = "{\"ops\": [\"a fairly long answer\"]}";
    let server = ScriptedServer::start(vec![completion_with(content, "stop", None)]);
    let req = ChatRequest::new(vec![ChatMessage::system("rules"), ChatMessage::user("I have a dog named Biscuit.")])
        .with_schema("ops", ops_schema());
    let r = client(&settings(server.base())).complete(&req).unwrap();
    let sent = estimate_tokens("rules") + 4 + estimate_tokens("I have a dog named Biscuit.") + 4;
    assert_eq!(
        (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.estimated_calls),
        (sent, estimate_tokens(content), 1)
    );
    server.finish();
}

#[test]
fn no_authorization_header_without_a_key_and_bare_hosts_get_v1() {
    let server = ScriptedServer::start(vec![completion("{}"), completion("{}")]);
    let host = server.base().trim_end_matches("/v1").to_owned();
    client(&settings(&host)).complete(&json_request()).unwrap();
    client(&settings(&format!("{}/chat/completions/", server.base()))).complete(&json_request()).unwrap();
    let seen = server.finish();
    for r in &seen {
        assert_eq!(r.request_line, "POST /v1/chat/completions HTTP/1.1");
        assert_eq!(r.header("authorization"), None, "no key, no header (OPENAI_API_KEY is only for api.openai.com)");
    }
}

#[test]
fn usage_adds_up_across_calls_and_failures() {
    let server = ScriptedServer::start(vec![completion("{}"), error(500, "x"), error(500, "x"), error(500, "x")]);
    let c = client(&settings(server.base()));
    let ok = c.complete(&json_request()).unwrap().usage;
    let failed = c.complete(&json_request()).unwrap_err().usage();
    let total: Usage = [ok, failed].into_iter().sum();
    let failed_sent = 3 * prompt_tokens(&json_request());
    assert_eq!(
        (total.calls, total.retries, total.prompt_tokens, total.completion_tokens),
        (4, 2, 120 + failed_sent, 30)
    );
    server.finish();
}

/// What the client estimates a request's messages to cost (no schema in the prompt).
fn prompt_tokens(req: &ChatRequest) -> u64 {
    req.messages.iter().map(|m| estimate_tokens(&m.content) + 4).sum()
}

#[test]
fn failed_calls_count_the_tokens_they_sent() {
    let server = ScriptedServer::start(vec![
        error(500, "GPU on fire"),
        error(500, "GPU on fire"),
        error(500, "GPU on fire"),
        completion("{}").slow(800),
    ]);
    let c = client(&settings(server.base()));
    let usage = c.complete(&json_request()).unwrap_err().usage();
    let each = prompt_tokens(&json_request());
    assert!(each > 0);
    assert_eq!((usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.estimated_calls), (3, 3 * each, 0, 3));
    let timed_out = client(&LlmSettings { timeout_secs: 0.2, max_retries: 0, ..settings(server.base()) })
        .complete(&json_request())
        .unwrap_err();
    assert!(matches!(timed_out, ChatError::Timeout { .. }), "{timed_out:?}");
    assert_eq!(timed_out.usage().prompt_tokens, each, "a request that timed out was still sent");
    server.finish();

    // Nothing reaches a port nobody listens on: nothing is counted as sent.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = client(&settings(&format!("http://127.0.0.1:{port}/v1"))).complete(&json_request()).unwrap_err();
    assert_eq!((refused.usage().calls, refused.usage().prompt_tokens), (3, 0));
}

#[test]
fn a_time_limit_bounds_the_whole_call_retries_included() {
    let slow = || completion("{}").slow(1500);
    let server = ScriptedServer::start(vec![slow(), slow(), slow()]);
    let s = LlmSettings { timeout_secs: 1.0, max_retries: 2, ..settings(server.base()) };
    let started = Instant::now();
    let err = client(&s).complete(&json_request().with_time_limit(Duration::from_millis(400))).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, ChatError::Timeout { .. }), "{err:?}");
    assert!(took >= Duration::from_millis(350) && took < Duration::from_millis(900), "{took:?}");
    assert_eq!(err.usage().calls, 1, "no retry starts once the limit is spent");
    drop(server);
}

#[test]
fn the_reply_schema_is_sent_in_the_order_a_model_should_write_it() {
    let server = ScriptedServer::start(vec![completion(r#"{"ops": []}"#), error(400, "no response_format")]);
    let req = ChatRequest::new(vec![ChatMessage::system("rules"), ChatMessage::user("I have a dog.")])
        .with_schema(SCHEMA_NAME, reply_schema());
    let s = settings(server.base());
    client(&s).complete(&req).unwrap();
    let seen = server.finish();
    let order = |text: &str| -> Vec<usize> {
        ["\"op\"", "\"kind\"", "\"content\"", "\"sources\"", "\"salience\"", "\"confidence\""]
            .iter()
            .map(|field| text.find(&format!("{field}:{{")).unwrap_or_else(|| panic!("{field} in {text}")))
            .collect()
    };
    let sent = order(&seen[0].raw);
    assert!(sent.windows(2).all(|w| w[0] < w[1]), "op, kind ... confidence last: {sent:?}\n{}", seen[0].raw);
    assert_eq!(seen[0].body["response_format"]["json_schema"]["schema"], reply_schema(), "nothing else changed");
}

#[test]
fn settings_load_from_a_toml_table_and_open_checks_them() {
    let s: LlmSettings = toml::from_str(
        r#"
        base_url = "http://127.0.0.1:11434"
        model = "qwen2.5:7b"
        timeout_secs = 30
        max_retries = 4
        response_format = "none"
        "#,
    )
    .unwrap();
    assert_eq!((s.model.as_str(), s.timeout_secs, s.max_retries), ("qwen2.5:7b", 30.0, 4));
    assert_eq!(s.response_format, ResponseFormat::None);
    assert_eq!(s.max_tokens, LlmSettings::default().max_tokens, "unset keys keep their defaults");
    let c = open_chat_model(&s).unwrap();
    assert_eq!(c.id(), "openai:qwen2.5:7b");

    let err = toml::from_str::<LlmSettings>("modle = \"x\"").unwrap_err().to_string();
    assert!(err.contains("modle"), "{err}");
    match open_chat_model(&LlmSettings::default()) {
        Err(ChatError::InvalidSettings { field: "model", reason }) => assert!(reason.contains("MNEMO_LLM_MODEL")),
        Err(other) => panic!("expected InvalidSettings for model, got {other:?}"),
        Ok(_) => panic!("a model name is required"),
    }
    let mut s = s;
    s.apply_env(|name| (name == "MNEMO_LLM_MODEL").then(|| "llama3.1:8b".to_owned())).unwrap();
    assert_eq!(s.model, "llama3.1:8b");
}

// --- The LLM extractor end to end: core's prompt, this client, core's parser. ---

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn scope() -> Scope {
    Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap()
}

fn messages() -> Vec<Message> {
    let m = |id: &str, role, text: &str, time: &str| Message {
        id: MessageId::new(id).unwrap(),
        scope: scope(),
        role,
        content: text.into(),
        at: at(time),
    };
    vec![
        m("msg-1", Role::User, "Actually I moved to Porto. I'm a nurse, still.", "2026-03-02T09:00:00Z"),
        m("msg-2", Role::Assistant, "Got it! Did you manage to call your mom?", "2026-03-02T09:00:10Z"),
        m(
            "msg-3",
            Role::User,
            "Yes, called her last night. Forget my gym plan. And longer answers are fine now. \
             I need to renew my passport by April 1.",
            "2026-03-02T09:01:00Z",
        ),
    ]
}

/// M1 home (Lisbon), M2 job, M3 preference, M4 gym plan (open loop), M5 call mom (open loop).
fn memories() -> Vec<Memory> {
    let mem = |kind, content: &str, created: &str| Memory::new(scope(), kind, content, at(created));
    let mut home = mem(Kind::Profile, "User lives in Lisbon", "2026-01-01T00:00:00Z");
    home.key = Some("home".into());
    home.value = Some("Lisbon".into());
    let job = mem(Kind::Profile, "User works as a nurse", "2026-01-02T00:00:00Z");
    let short = mem(Kind::Preference, "User prefers short answers", "2026-01-03T00:00:00Z");
    let gym = mem(Kind::OpenLoop, "User plans to join a gym", "2026-02-01T00:00:00Z");
    let mut mom = mem(Kind::OpenLoop, "User needs to call mom this weekend", "2026-02-27T00:00:00Z");
    mom.due_at = Some(at("2026-03-01T23:59:59Z"));
    vec![mom, gym, short, job, home]
}

/// The ops a good model would answer for [`messages`] against [`memories`]: every op type,
/// each with all the fields of the strict schema.
fn model_ops() -> Value {
    let op = |fields: Value| {
        let mut o = json!({"op": null, "target": null, "kind": null, "content": null, "key": null, "value": null,
                           "confidence": 0.9, "salience": 0.7, "surface": null, "due": null, "happened_at": null,
                           "sensitive": false, "sources": []});
        for (k, v) in fields.as_object().unwrap() {
            o[k] = v.clone();
        }
        o
    };
    json!({"ops": [
        op(json!({"op": "update", "target": "M1", "kind": "profile", "content": "User lives in Porto", "key": "home",
                  "value": "Porto", "sources": [1]})),
        op(json!({"op": "reinforce", "target": "M2", "sources": [1]})),
        op(json!({"op": "contradict", "target": "M3", "kind": "preference",
                  "content": "User is fine with longer answers", "sources": [3]})),
        op(json!({"op": "close_loop", "target": "M5", "sources": [2, 3]})),
        op(json!({"op": "forget", "target": "M4", "sources": [3]})),
        op(json!({"op": "add", "kind": "open_loop", "content": "User needs to renew their passport",
                  "due": "2026-04-01", "sources": [3]})),
    ]})
}

#[test]
fn extraction_round_trip_covers_every_op_type() {
    let (msgs, mems) = (messages(), memories());
    let batch = LlmBatch::new(&msgs, &mems, &GateTuning::default(), PromptOptions::default());
    let listed: Vec<&str> = batch.listed().iter().map(|m| m.content.as_str()).collect();
    assert_eq!(listed[0], "User lives in Lisbon");
    assert_eq!(listed[4], "User needs to call mom this weekend");
    let id = |n: usize| batch.listed()[n - 1].id;

    let server = ScriptedServer::start(vec![completion(&model_ops().to_string())]);
    let prompt = batch.prompt();
    let req = ChatRequest::new(vec![ChatMessage::system(prompt.system), ChatMessage::user(prompt.user)])
        .with_schema(SCHEMA_NAME, reply_schema());
    let model = open_chat_model(&settings(server.base())).unwrap();
    let reply = model.complete(&req).unwrap();
    let parsed = batch.parse_value(reply.json.as_ref().expect("json")).unwrap();
    assert_eq!(parsed.errors, vec![], "a good reply parses whole");

    let actions: Vec<Action> = parsed.ops.iter().map(|o| o.action.clone()).collect();
    assert_eq!(
        actions,
        vec![
            Action::Update(Target::Id(id(1))),
            Action::Reinforce(Target::Id(id(2))),
            Action::Contradict(Target::Id(id(3))),
            Action::CloseLoop(Target::Id(id(5))),
            Action::Forget(Target::Id(id(4))),
            Action::Add,
        ]
    );
    let ops = &parsed.ops;
    assert_eq!((ops[0].draft.content.as_str(), ops[0].draft.value.as_deref()), ("User lives in Porto", Some("Porto")));
    assert_eq!(ops[0].sources, vec![MessageId::new("msg-1").unwrap()]);
    assert_eq!(ops[2].draft.kind, Kind::Preference);
    assert_eq!(ops[3].sources, vec![MessageId::new("msg-2").unwrap(), MessageId::new("msg-3").unwrap()]);
    assert_eq!((ops[5].draft.kind, ops[5].draft.due_at), (Kind::OpenLoop, Some(at("2026-04-01T23:59:59Z"))));

    let seen = server.finish();
    let body = &seen[0].body;
    assert_eq!(body["response_format"]["json_schema"]["name"], SCHEMA_NAME);
    assert_eq!(body["response_format"]["json_schema"]["schema"], reply_schema());
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("M5 open_loop OPEN LOOP due 2026-03-01: User needs to call mom this weekend"), "{user}");
    assert!(user.contains("[3] 2026-03-02 09:01 UTC (Mon) user: Yes, called her last night."), "{user}");
}

#[test]
fn extraction_survives_a_server_without_structured_outputs_and_a_cut_off_reply() {
    let (msgs, mems) = (messages(), memories());
    let batch = LlmBatch::new(&msgs, &mems, &GateTuning::default(), PromptOptions::default());
    let full = serde_json::to_string_pretty(&model_ops()).unwrap();
    // Cut inside the fourth op: the first three are complete.
    let fourth = full.match_indices("\"op\":").nth(3).unwrap().0;
    let text = format!("Here are the operations:\n```json\n{}", &full[..fourth + 12]);
    let server = ScriptedServer::start(vec![
        error(503, "warming up"),
        error(400, "unsupported response_format"),
        completion_with(&text, "length", Some((3000, 512))),
    ]);
    let prompt = batch.prompt();
    let req = ChatRequest::new(vec![ChatMessage::system(prompt.system), ChatMessage::user(prompt.user)])
        .with_schema(SCHEMA_NAME, reply_schema());
    let reply = client(&settings(server.base())).complete(&req).unwrap();
    assert!(reply.truncated());
    assert_eq!(reply.repairs, vec![Repair::CodeFence, Repair::Truncated]);
    assert_eq!((reply.usage.calls, reply.usage.retries, reply.format), (3, 1, FormatUsed::Prompt));
    let parsed = batch.parse_value(reply.json.as_ref().unwrap()).unwrap();
    let names: Vec<&str> = parsed.ops.iter().map(|o| o.action.name()).collect();
    assert_eq!(names, vec!["update", "reinforce", "contradict"]);
    let seen = server.finish();
    assert_eq!(seen.len(), 3);
    assert!(seen[2].system().contains("Reply with one JSON value only"));
    assert!(seen[2].system().starts_with("You maintain the long-term memory"));
}
