//! The acceptance of LLM extraction as a user runs it: `MNEMO_EXTRACTOR=llm` with
//! `MNEMO_LLM_BASE_URL` at an OpenAI-compatible server (a real HTTP server on loopback playing a
//! scripted model), `mnemo ingest` then `mnemo list` shows the model's memories; with a server
//! that answers garbage or nothing the conversation is intact and the heuristic's memories are
//! there.

use std::path::Path;
use std::process::{Command, Output};

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
fn the_llm_extractor_without_a_server_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["list", "--tenant", "acme", "--user", "dana", "--data-dir"])
        .arg(dir.path())
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_EXTRACTOR", "llm")
        .env_remove("MNEMO_LLM_BASE_URL")
        .env_remove("MNEMO_CONFIG")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(out(&o).contains("MNEMO_LLM_BASE_URL"), "{}", out(&o));
}
