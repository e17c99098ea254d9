//! The `mnemo` binary as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

fn mnemo(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env_remove("MNEMO_CONFIG")
        .output()
        .expect("run mnemo")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

const SCOPE: &[&str] = &["--tenant", "acme", "--user", "dana", "--chat", "c1"];

fn with_scope<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(SCOPE.iter().copied()).collect()
}

#[test]
fn a_malformed_jsonl_line_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat.jsonl");
    std::fs::write(
        &file,
        "{\"role\": \"user\", \"content\": \"My name is Dana.\"}\n\n{\"role\": \"user\", \"content\": \"I live in Lisbon.\"}\n{\"role\": \"usr\", \"content\": 1}\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let o = mnemo(&data, &with_scope(&["ingest", file.to_str().unwrap()]));
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("chat.jsonl:4"), "{err}");
    let o = mnemo(&data, &with_scope(&["list"]));
    assert!(text(&o).0.contains("0 memories"), "{:?}", text(&o));
}

#[test]
fn ingest_then_recall_context_list_and_show() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat.jsonl");
    std::fs::write(
        &file,
        "{\"id\": \"m1\", \"role\": \"user\", \"content\": \"I have a dog named Biscuit.\", \"at\": \"2026-03-02T09:00:00Z\"}\n\
         {\"id\": \"m2\", \"role\": \"assistant\", \"content\": \"Cute!\", \"at\": \"2026-03-02T09:00:10Z\"}\n\
         {\"id\": \"m3\", \"role\": \"user\", \"content\": \"ok\", \"at\": \"2026-03-02T09:01:00Z\"}\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let o = mnemo(&data, &with_scope(&["ingest", file.to_str().unwrap()]));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("appended 3") && out.contains("User has a dog named Biscuit"), "{out}");
    let again = text(&mnemo(&data, &with_scope(&["ingest", file.to_str().unwrap()]))).0;
    assert!(again.contains("appended 0 message(s), 3 already present"), "{again}");

    let (out, _) = text(&mnemo(&data, &with_scope(&["recall", "Biscuit the dog"])));
    assert!(out.contains("mode hybrid") && out.contains("Biscuit"), "{out}");

    let o = mnemo(&data, &with_scope(&["context", "walks for my dog Biscuit?", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["block"]["text"].as_str().unwrap().contains("Biscuit"));
    let item = &v["block"]["sections"][0]["items"][0];
    assert!(item["score"]["total"].as_f64().is_some() && item["provenance"]["sources"][0] == "m1", "{item}");

    let o = mnemo(&data, &with_scope(&["list", "--json"]));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = rows[0]["id"].as_str().unwrap().to_string();
    let (out, _) = text(&mnemo(&data, &with_scope(&["show", &id])));
    assert!(out.contains("history") && out.contains("created") && out.contains("I have a dog named Biscuit."), "{out}");
    // Why it was remembered: the heuristic rule that read the sentence.
    assert!(out.contains("rule       identity.have-pets-kids"), "{out}");

    // Another tenant sees nothing and cannot show the id.
    let o = mnemo(&data, &["show", &id, "--tenant", "evil", "--user", "dana"]);
    assert!(!o.status.success() && text(&o).1.contains("not found"));
}

#[test]
fn commands_that_need_a_user_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = mnemo(dir.path(), &["recall", "anything", "--tenant", "acme"]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("--user"), "{:?}", text(&o));
    let o = mnemo(dir.path(), &["list", "--tenant", ""]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("tenant"), "{:?}", text(&o));
}

#[test]
fn the_demo_shows_a_second_session_that_knows_what_the_first_taught() {
    // The real local model (the demo's default); CI fetches it before the tests.
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo")).arg("demo").env_remove("MNEMO_EMBEDDER").output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("embedder local:"), "{out}");
    let block = out.split("── The block session 2").nth(1).expect("block section");
    for expected in ["Pixel", "short, concise answers", "DO NOT SURFACE UNLESS THE USER DOES", "old job at the bank"] {
        assert!(block.contains(expected), "missing {expected:?} in\n{block}");
    }
    assert!(out.contains("superseding"), "the correction supersedes: {out}");
    let knows = out.split("What mnemo now knows").nth(1).unwrap();
    assert!(!knows.contains("4111"), "a card number must never come back from storage");
}

#[test]
fn bench_embed_counts_each_message_with_its_passages() {
    let data = tempfile::tempdir().unwrap();
    let out = data.path().join("embed.json");
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["bench", "embed", "--messages", "40", "--batch", "1", "--batch", "20", "--embedder", "hash", "--out"])
        .arg(&out)
        .env_remove("MNEMO_CONFIG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["batch"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 20]);
    for r in runs {
        assert_eq!(r["messages"], 40);
        assert!(r["texts"].as_u64().unwrap() >= 40, "{r}");
        assert!(r["messages_per_second"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(runs[0]["calls"], 40, "one model call per message at batch 1");
    assert_eq!(runs[1]["calls"], 2, "{}", runs[1]);
}

#[test]
fn config_shows_the_proxy_upstream_but_never_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["config", "--data-dir"])
        .arg(dir.path())
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_PROXY_UPSTREAM_URL", "http://127.0.0.1:8000/v1")
        .env("MNEMO_PROXY_UPSTREAM_KEY", "sk-upstream-secret")
        .env_remove("MNEMO_CONFIG")
        .output()
        .expect("run mnemo");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("[proxy]") && out.contains("http://127.0.0.1:8000/v1"), "{out}");
    assert!(!out.contains("sk-upstream-secret") && out.contains("upstream_key = \"<set>\""), "{out}");
}
