//! The acceptance of LLM extraction as a user runs it: `MNEMO_EXTRACTOR=llm` with
//! `MNEMO_LLM_BASE_URL` at an OpenAI-compatible server (a real HTTP server on loopback playing a
//! scripted model), `mnemo ingest` then `mnemo list` shows the model's memories; with a server
//! that answers garbage or nothing the conversation is intact and the heuristic's memories are
//! there.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mnemo_models::testing::{ScriptedServer, completion, error};
use serde_json::json;

fn mnemo(data: &Path, base: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(args)
        .args(["--tenant", "acme", "--user", "dana", "--chat", "c1", "--data-dir"])
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_EXTRACTOR", "llm")
        .env("MNEMO_LLM_BASE_URL", base)
        .env("MNEMO_LLM_TIMEOUT_SECS", "2")
        .env("MNEMO_LLM_MAX_RETRIES", "0")
        .env_remove("MNEMO_CONFIG")
        .env_remove("MNEMO_LLM_MODEL")
        .env_remove("MNEMO_LLM_API_KEY")
        .output()
        .expect("run mnemo")
}

fn out(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn chat_file(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("chat.jsonl");
    std::fs::write(
        &file,
        "{\"role\": \"user\", \"content\": \"I have a dog named Biscuit and I live in Lisbon.\"}\n\
         {\"role\": \"assistant\", \"content\": \"Biscuit is a lovely name!\"}\n",
    )
    .unwrap();
    file
}

#[test]
fn ingest_with_the_llm_extractor_applies_the_models_ops() {
    let reply = json!({"ops": [{"op": "add", "target": null, "kind": "profile",
        "content": "User's dog Biscuit is a rescued greyhound", "key": null, "value": null, "confidence": 0.9,
        "salience": 0.8, "surface": null, "due": null, "happened_at": null, "sensitive": false, "sources": [1]}]});
    let server = ScriptedServer::respond(move |_, seen| match seen.schema_name() {
        Some("memory_ops") => completion(&reply.to_string()),
        _ => completion(r#"{"highlights": []}"#),
    });
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = mnemo(&data, server.base(), &["ingest", chat_file(dir.path()).to_str().unwrap()]);
    assert!(o.status.success(), "{}", out(&o));
    let text = out(&o);
    assert!(text.contains("extracted by the model"), "{text}");
    assert!(text.contains("1 call(s)") && text.contains("120 tokens in, 30 out"), "the batch's cost: {text}");
    let o = mnemo(&data, server.base(), &["list"]);
    let list = out(&o);
    assert!(list.contains("User's dog Biscuit is a rescued greyhound"), "{list}");
    assert!(!list.contains("named Biscuit"), "the heuristic did not run: {list}");
    // `mnemo show` says what the batch that wrote it cost.
    let id = list.lines().find(|l| l.contains("greyhound")).and_then(|l| l.split_whitespace().next()).unwrap();
    let shown = out(&mnemo(&data, server.base(), &["show", id]));
    assert!(shown.contains("extracted  openai:gpt-4o-mini · 1 call(s)"), "{shown}");
    assert!(shown.contains("120 tokens in, 30 out"), "{shown}");
    let seen = server.finish();
    assert_eq!(seen[0].body["model"], "gpt-4o-mini", "the default model when MNEMO_LLM_MODEL is unset");
}

#[test]
fn a_garbage_or_dead_server_leaves_the_conversation_intact_with_heuristic_memories() {
    let garbage = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memory_ops") => completion("Sure! The user seems to like dogs."),
        _ => error(500, "down"),
    });
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/v1", l.local_addr().unwrap().port())
    };
    for base in [garbage.base().to_string(), dead] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let o = mnemo(&data, &base, &["ingest", chat_file(dir.path()).to_str().unwrap()]);
        let text = out(&o);
        assert!(o.status.success(), "a model failure is not an error: {text}");
        assert!(text.contains("appended 2 message(s)") && text.contains("heuristic fallback"), "{text}");
        let list = out(&mnemo(&data, &base, &["list"]));
        assert!(list.contains("Biscuit") && list.contains("Lisbon"), "{list}");
        let ctx = mnemo(&data, &base, &["context", "what is my dog called?"]);
        assert!(ctx.status.success() && out(&ctx).contains("Biscuit"), "{}", out(&ctx));
    }
}

#[test]
fn reads_need_no_model_but_ingest_does() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mnemo"))
            .args(args)
            .args(["--tenant", "acme", "--user", "dana", "--chat", "c1", "--data-dir"])
            .arg(dir.path())
            .env("MNEMO_EMBEDDER", "hash")
            .env("MNEMO_EXTRACTOR", "llm")
            .env("MNEMO_LLM_TIMEOUT_SECS", "not a number")
            .env_remove("MNEMO_LLM_BASE_URL")
            .env_remove("MNEMO_CONFIG")
            .output()
            .unwrap()
    };
    for read in [&["list"][..], &["recall", "dog"], &["context", "hello"], &["export"]] {
        let o = run(read);
        assert!(o.status.success(), "{read:?} reads without a model: {}", out(&o));
    }
    let o = run(&["ingest", chat_file(dir.path()).to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(out(&o).contains("MNEMO_LLM"), "{}", out(&o));
}

#[test]
fn ingest_shows_what_a_retry_archived() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = ScriptedServer::respond(move |_, seen| match seen.schema_name() {
        Some("memory_ops") if calls.fetch_add(1, Ordering::SeqCst) == 0 => error(503, "overloaded"),
        Some("memory_ops") => completion(
            &json!({"ops": [{"op": "add", "kind": "profile", "target": null,
                "content": "The user's dog is a beagle called Biscuit", "key": null, "value": null, "due": null,
                "happened_at": null, "surface": null, "sensitive": false, "sources": [1], "salience": 0.8,
                "confidence": 0.9}]})
            .to_string(),
        ),
        _ => completion(r#"{"highlights": []}"#),
    });
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["ingest", chat_file(dir.path()).to_str().unwrap()])
        .args(["--tenant", "acme", "--user", "dana", "--chat", "c1", "--data-dir"])
        .arg(&data)
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_EXTRACTOR", "llm")
        .env("MNEMO_LLM_BASE_URL", server.base())
        .env("MNEMO_LLM_MAX_RETRIES", "0")
        .env("MNEMO_BACKGROUND__RETRY_SECS", "0")
        .env_remove("MNEMO_CONFIG")
        .output()
        .unwrap();
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("heuristic fallback") && text.contains("retried with the model"), "{text}");
    let archived = text.lines().find(|l| l.trim_start().starts_with("archived ")).unwrap_or_else(|| panic!("{text}"));
    let id = archived.split_whitespace().nth(1).unwrap().trim_end_matches(':');
    let shown = out(&mnemo(&data, server.base(), &["show", id]));
    assert!(shown.contains("named Biscuit") && shown.contains("archived"), "{shown}");
}

#[test]
fn one_ingest_waits_for_a_slow_model_no_longer_than_its_wait() {
    let server = ScriptedServer::respond(|_, _| completion(r#"{"ops": []}"#).slow(8_000));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    let lines: String =
        (0..40).map(|i| format!("{{\"role\": \"user\", \"content\": \"I have a dog number {i}.\"}}\n")).collect();
    std::fs::write(&file, lines).unwrap();
    let started = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["ingest", file.to_str().unwrap()])
        .args(["--tenant", "acme", "--user", "dana", "--chat", "c1", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_EXTRACTOR", "llm")
        .env("MNEMO_LLM_BASE_URL", server.base())
        .env("MNEMO_LLM_TIMEOUT_SECS", "30")
        .env("MNEMO_BACKGROUND__INGEST_WAIT_SECS", "1")
        .env_remove("MNEMO_CONFIG")
        .output()
        .unwrap();
    let took = started.elapsed();
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(took < Duration::from_secs(6), "a 30 s timeout with retries, yet one ingest took {took:?}: {text}");
    assert!(text.contains("appended 40 message(s)") && text.contains("heuristic fallback"), "{text}");
    assert!(text.contains("stopped waiting for the model") && text.contains("40 message(s) stay queued"), "{text}");
    drop(server);
}
