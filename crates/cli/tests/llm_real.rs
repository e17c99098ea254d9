//! LLM extraction against a real OpenAI-compatible server: llama.cpp's `llama-server` serving
//! SmolLM2-135M-Instruct with one thread, started by `scripts/llm-server.sh`, driven through the
//! real `mnemo` binary. The scripted-server tests (tests/llm.rs, the engine's tests/llm.rs) pin
//! each reply down; this one proves the same guarantees hold for whatever a real, tiny model
//! answers: llama.cpp accepts the json_schema response format, nothing correct is lost, a
//! stopped server falls back to the heuristic extractor, and a restarted one is retried without
//! duplicating memories or messages.
//!
//! The server and the model live in a cache that `scripts/llm-server.sh build` and `model`
//! fill (the first build takes 14 to 25 minutes on two cores; `scripts/test` and CI run both).
//! Without them the test skips with a message, except under CI (`CI` set), where it fails.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llm-server.sh")
}

/// Whether a server can start without a build or a download; `false` after saying why.
fn llama_ready() -> bool {
    let o = Command::new("bash").arg(script()).arg("ready").output().expect("run scripts/llm-server.sh");
    if o.status.success() {
        return true;
    }
    let why = String::from_utf8_lossy(&o.stderr).trim().to_string();
    if std::env::var_os("CI").is_some() {
        panic!("the real llama.cpp server is required under CI: {why}");
    }
    eprintln!("skipping the real llama.cpp test: {why}");
    false
}

/// A `llama-server` the script started with a run directory of its own (pid, port, log), so
/// tests run side by side; stopped when dropped, however the test ends.
struct Llama {
    run: tempfile::TempDir,
    /// More llama-server arguments (MNEMO_LLM_SERVER_ARGS).
    args: String,
    /// The OpenAI base URL; the same across restarts (the port is kept in the run directory).
    url: String,
}

impl Llama {
    fn start(args: &str) -> Llama {
        let mut llama = Llama { run: tempfile::tempdir().unwrap(), args: args.to_string(), url: String::new() };
        llama.url = llama.up();
        llama
    }

    fn script(&self, command: &str) -> Output {
        Command::new("bash")
            .arg(script())
            .arg(command)
            .env("MNEMO_LLM_RUN_DIR", self.run.path())
            .env("MNEMO_LLM_SERVER_ARGS", &self.args)
            .env_remove("MNEMO_LLM_PORT")
            .output()
            .expect("run scripts/llm-server.sh")
    }

    /// Starts the server and waits for its /health; returns its URL.
    fn up(&self) -> String {
        let o = self.script("start");
        let (out, err) = text(&o);
        assert!(o.status.success(), "llama-server did not start: {err}\n{}", self.log());
        out.lines().last().unwrap_or_default().trim().to_string()
    }

    fn stop(&self) {
        let o = self.script("stop");
        assert!(o.status.success(), "{}", text(&o).1);
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.run.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.script("stop");
    }
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Seconds before a batch the heuristic stood in for is due again (doubled per attempt): not
/// zero, or one pass would spend every attempt at once, but short enough to wait out.
const RETRY_SECS: u64 = 1;

/// `mnemo` with the LLM extractor at `base`: one call per request (a refused response format
/// shows as a second), patient enough for a 135M model on one busy core, quick retries, and
/// only extraction asked of the model (no memos, summaries, reflections or episodes).
fn mnemo(data: &Path, base: &str, args: &[&str]) -> (Output, String, String) {
    // `maintain` runs over every chat; the other commands name the test's.
    let scope: &[&str] =
        if args[0] == "maintain" { &[] } else { &["--tenant", "acme", "--user", "dana", "--chat", "c1"] };
    let o = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(args)
        .args(scope)
        .arg("--data-dir")
        .arg(data)
        .env("MNEMO_EMBEDDER", "hash")
        .env("MNEMO_EXTRACTOR", "llm")
        .env("MNEMO_LLM_BASE_URL", base)
        .env("MNEMO_LLM_MODEL", "smollm2-135m-instruct")
        .env("MNEMO_LLM_MAX_RETRIES", "0")
        .env("MNEMO_LLM_TIMEOUT_SECS", "600")
        .env("MNEMO_LLM_MAX_TOKENS", "256")
        .env("MNEMO_LLM_RESPONSE_FORMAT", "json_schema")
        .env("MNEMO_BACKGROUND__RETRY_SECS", RETRY_SECS.to_string())
        .env("MNEMO_BACKGROUND__INGEST_WAIT_SECS", "900")
        .env("MNEMO_BACKGROUND__MEMO_EVERY", "0")
        .env("MNEMO_BACKGROUND__SUMMARIES", "false")
        .env("MNEMO_BACKGROUND__REFLECT_AFTER", "0")
        .env("MNEMO_BACKGROUND__EPISODE_IDLE_SECS", "0")
        // The client says at debug level when a server refuses `response_format`.
        .env("MNEMO_LOG", "warn,mnemo_models=debug")
        .env_remove("MNEMO_CONFIG")
        .env_remove("MNEMO_LLM_API_KEY")
        .output()
        .expect("run mnemo");
    let (out, err) = text(&o);
    assert!(o.status.success(), "mnemo {args:?} failed: {out}{err}");
    assert!(!err.contains("refused the response format"), "llama-server refused json_schema: {err}");
    (o, out, err)
}

/// `mnemo ingest FILE --json`: the ingest report with its `background` (the batches run).
fn ingest(data: &Path, base: &str, file: &Path) -> Value {
    let (_, out, _) = mnemo(data, base, &["ingest", file.to_str().unwrap(), "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Every memory of the user, any status.
fn memories(data: &Path, base: &str) -> Vec<Value> {
    let (_, out, _) = mnemo(data, base, &["list", "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn active(all: &[Value]) -> Vec<&Value> {
    all.iter().filter(|m| m["status"] == "active").collect()
}

fn sources(m: &Value) -> Vec<&str> {
    m["provenance"]["sources"].as_array().map(|s| s.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// Waits until every batch that failed before `since` for at most its `attempt`th time is due
/// again.
fn wait_for_retries(since: std::time::Instant, attempt: u32) {
    let due = std::time::Duration::from_secs(RETRY_SECS << (attempt - 1)) + std::time::Duration::from_millis(500);
    std::thread::sleep(due.saturating_sub(since.elapsed()));
}

/// The `batch of N message(s): ...` line of a retry in a pass's text report: a retry that was
/// applied, or one that failed with a reason.
fn retry_line(report: &str) -> Option<&str> {
    report.lines().find(|l| {
        l.starts_with("batch of ") && (l.contains(": retried with the model (attempt") || l.contains(": retry "))
    })
}

/// The batches of a pass that were first attempts (not retries of an earlier fallback).
fn first_attempts(report: &Value) -> Vec<&Value> {
    report["background"]["batches"]
        .as_array()
        .map(|b| b.iter().filter(|b| b["retry"] == false).collect())
        .unwrap_or_default()
}

/// How a reply that is well-formed under the reply schema can still fail its batch.
const WELL_FORMED: [&str; 3] =
    ["cut off by the token limit", "no usable op in the reply", "the reply proposed nothing"];

/// What the model's batch says the real server did: one request, answered (llama-server
/// reports its token counts), with the json_schema format (a refused one costs a second call
/// with the schema in the prompt) enforced: the grammar llama.cpp compiles from the schema
/// leaves a reply only the failures of a well-formed one (cut off, every op rejected, none
/// proposed), never the HTTP exchange's, text that is not JSON, or JSON of another shape.
/// Prints what the model answered, so a run's log shows the real path ran.
fn assert_answered_with_json_schema(batch: &Value) {
    let llm = &batch["llm"];
    eprintln!(
        "the model's batch: extractor {}, outcome {}, error {}, {} tokens in, {} out, {:.1} s; ops applied {}; item errors {}",
        batch["extractor"],
        llm["outcome"],
        batch["error"],
        llm["prompt_tokens"],
        llm["completion_tokens"],
        llm["micros"].as_f64().unwrap_or(0.0) / 1e6,
        batch["ops"],
        llm["item_errors"],
    );
    assert_eq!(llm["calls"], 1, "one request, no format fallback: {batch}");
    assert!(llm.get("estimated_calls").is_none(), "llama-server reported its usage: {batch}");
    assert!(llm["completion_tokens"].as_u64().unwrap_or(0) > 0, "the model generated: {batch}");
    if let Some(error) = batch["error"].as_str() {
        assert!(WELL_FORMED.iter().any(|w| error.contains(w)), "not a well-formed reply's failure: {error}");
    }
}

fn write_chat(dir: &Path, name: &str, lines: &[(&str, &str, &str)]) -> PathBuf {
    let file = dir.join(name);
    let body: String = lines
        .iter()
        .map(|(id, role, content)| format!("{}\n", serde_json::json!({"id": id, "role": role, "content": content})))
        .collect();
    std::fs::write(&file, body).unwrap();
    file
}

/// The second half of the conversation: a boundary, a correction of where the user lives and
/// a task, each of which the heuristic extractor keeps.
fn second_half(dir: &Path) -> PathBuf {
    write_chat(
        dir,
        "b.jsonl",
        &[
            ("m3", "user", "Please never bring up my divorce."),
            ("m4", "assistant", "Understood, I won't mention it."),
            ("m5", "user", "Actually I don't live in Lisbon anymore, I moved to Porto last month."),
            ("m6", "user", "I need to renew my passport before March."),
        ],
    )
}

/// The stand-in's boundary: an active memory to avoid, read from the boundary's message.
fn boundary(all: &[Value]) -> Option<&Value> {
    active(all).into_iter().find(|m| m["surface"] == "avoid" && sources(m).contains(&"m3"))
}

/// Nothing correct lost since `before`: each memory active then is active now, or archived in
/// favour of an active memory the model proposed from the same messages with the same kind
/// and surface (what a valid replacement of a stand-in is); a boundary stays; no memory twice.
fn assert_nothing_lost(before: &[Value], now: &[Value]) {
    let by_id = |id: &Value| now.iter().find(|m| m["id"] == *id).unwrap_or_else(|| panic!("{id} vanished"));
    for m in active(before) {
        let after = by_id(&m["id"]);
        if after["status"] == "active" {
            continue;
        }
        assert_eq!(after["status"], "archived", "{} is {}, not archived as a stand-in", m["content"], after["status"]);
        let replaced = active(now).into_iter().any(|r| {
            r["provenance"]["extractor"] == "llm"
                && r["kind"] == m["kind"]
                && r["surface"] == m["surface"]
                && sources(r).iter().any(|s| sources(m).contains(s))
        });
        assert!(replaced, "{} was archived with no valid replacement: {now:#?}", m["content"]);
    }
    assert!(boundary(now).is_some(), "the boundary is active: {now:#?}");
    let mut seen = HashSet::new();
    for m in active(now) {
        let content = m["content"].as_str().unwrap().to_lowercase();
        assert!(seen.insert(content.clone()), "{content:?} is active twice: {now:#?}");
    }
}

#[test]
fn a_real_llama_server_loses_nothing_falls_back_when_stopped_and_is_retried_without_duplicates() {
    if !llama_ready() {
        return;
    }
    let started = std::time::Instant::now();
    let llama = Llama::start("");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = write_chat(
        dir.path(),
        "a.jsonl",
        &[
            ("m1", "user", "I have a dog named Biscuit and I live in Lisbon."),
            ("m2", "assistant", "Biscuit is a lovely name!"),
        ],
    );
    let second = second_half(dir.path());

    // The server is up: the batch goes to the real model under mnemo's json_schema.
    let report = ingest(&data, &llama.url, &first);
    assert_eq!(report["appended"], 2, "{report}");
    let batches = first_attempts(&report);
    assert_eq!(batches.len(), 1, "{report}");
    assert_answered_with_json_schema(batches[0]);
    let all = memories(&data, &llama.url);
    match batches[0]["extractor"].as_str() {
        // The model's reading stands: what the gate accepted is there, nothing of the heuristic's.
        Some("llm") => assert!(
            active(&all).iter().all(|m| m["provenance"]["extractor"] == "llm"),
            "the model's ops, no stand-in: {all:#?}"
        ),
        // Unusable, cut off or empty: the heuristic stood in, and its memories are active.
        Some("heuristic") => {
            assert_eq!(batches[0]["llm"]["fallback"], true, "{report}");
            let contents: Vec<&str> = active(&all).iter().filter_map(|m| m["content"].as_str()).collect();
            assert!(contents.iter().any(|c| c.contains("Biscuit")), "{contents:?}");
            assert!(contents.iter().any(|c| c.contains("Lisbon")), "{contents:?}");
        }
        other => panic!("extractor {other:?}: {report}"),
    }

    // The server is stopped: the heuristic stands in and the queue records the failure.
    llama.stop();
    let report = ingest(&data, &llama.url, &second);
    let failed_at = std::time::Instant::now();
    assert_eq!(report["appended"], 4, "{report}");
    let batches = first_attempts(&report);
    assert_eq!(batches.len(), 1, "{report}");
    let batch = batches[0];
    assert_eq!((&batch["extractor"], &batch["llm"]["fallback"]), (&Value::from("heuristic"), &Value::from(true)));
    assert!(batch["error"].as_str().unwrap_or_default().contains("request to"), "a refused connection: {batch}");
    let turn = batch["turn_id"].as_str().unwrap();
    let (_, trace, _) = mnemo(&data, &llama.url, &["trace", turn, "--json"]);
    let trace: Value = serde_json::from_str(&trace).unwrap();
    assert_eq!(trace["llm"][0]["fallback"], true, "{trace}");
    assert!(trace["llm"][0]["error"].is_string(), "{trace}");
    let stood_in = memories(&data, &llama.url);
    assert!(boundary(&stood_in).is_some(), "the heuristic kept the boundary: {stood_in:#?}");
    let moved = active(&stood_in).into_iter().find(|m| m["key"] == "home").expect("the correction's home");
    assert_eq!(moved["value"], "Porto", "{moved}");
    assert!(
        active(&stood_in).iter().any(|m| m["kind"] == "open_loop" && sources(m).contains(&"m6")),
        "the passport task: {stood_in:#?}"
    );

    // The server is back (same port): once due, `mnemo maintain` retries the queued batch with
    // it (the second half, and the first half too where the model's first reply was unusable).
    assert_eq!(llama.up(), llama.url);
    wait_for_retries(failed_at, 2);
    let (_, maintained, _) = mnemo(&data, &llama.url, &["maintain"]);
    eprintln!("mnemo maintain:\n{maintained}");
    let retry = retry_line(&maintained).unwrap_or_else(|| panic!("the stood-in batch was retried: {maintained}"));
    assert!(
        retry.contains(": retried with the model") || WELL_FORMED.iter().any(|w| retry.contains(w)),
        "the retry got a well-formed reply from llama-server: {retry}"
    );
    let retried = memories(&data, &llama.url);
    assert_nothing_lost(&stood_in, &retried);

    // The conversation is intact, each message once: with the server stopped again (a batch
    // the retry could not settle fails fast), sending it again appends and queues nothing and
    // loses no memory.
    llama.stop();
    for (file, count) in [(&first, 2), (&second, 4)] {
        let again = ingest(&data, &llama.url, file);
        assert_eq!((&again["appended"], &again["duplicates"]), (&Value::from(0), &Value::from(count)), "{again}");
        assert!(again.get("queued").is_none(), "{again}");
    }
    assert_nothing_lost(&stood_in, &memories(&data, &llama.url));
    eprintln!("the real llama.cpp test took {:.1} s", started.elapsed().as_secs_f64());
}

/// The model's own chat template, replaced by a fixed few-shot prompt in its ChatML format
/// where every answer is an empty list: the real model, constrained by mnemo's json_schema,
/// then answers valid JSON that proposes nothing, whatever the conversation holds.
const PROPOSES_NOTHING: &str = "<|im_start|>system\nYou are a JSON API. To every request you answer exactly \
    {\"ops\": []} and nothing else.<|im_end|>\n<|im_start|>user\nI have a dog named Biscuit.<|im_end|>\n\
    <|im_start|>assistant\n{\"ops\": []}<|im_end|>\n<|im_start|>user\nI live in Lisbon.<|im_end|>\n\
    <|im_start|>assistant\n{\"ops\": []}<|im_end|>\n<|im_start|>user\nPlease never mention my ex.<|im_end|>\n\
    <|im_start|>assistant\n{\"ops\": []}<|im_end|>\n<|im_start|>user\nRemember what matters.<|im_end|>\n\
    <|im_start|>assistant\n";

#[test]
fn a_real_model_answering_valid_json_that_proposes_nothing_leaves_every_fallback_memory_active() {
    if !llama_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("proposes-nothing.jinja");
    std::fs::write(&template, PROPOSES_NOTHING).unwrap();
    let llama = Llama::start(&format!("--chat-template-file {}", template.display()));
    let data = dir.path().join("data");

    // The first answer proposes nothing where the heuristic finds memories: a failure, so the
    // heuristic stands in.
    let report = ingest(&data, &llama.url, &second_half(dir.path()));
    let failed_at = std::time::Instant::now();
    let batches = first_attempts(&report);
    assert_eq!(batches.len(), 1, "{report}");
    assert_answered_with_json_schema(batches[0]);
    assert!(batches[0]["error"].as_str().unwrap_or_default().contains("proposed nothing"), "{report}");
    assert_eq!(batches[0]["extractor"], "heuristic", "{report}");
    let fallback = memories(&data, &llama.url);
    let ids = |all: &[Value]| -> Vec<String> {
        let mut ids: Vec<String> = active(all).iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
        ids.sort();
        ids
    };
    assert!(ids(&fallback).len() >= 3 && boundary(&fallback).is_some(), "{fallback:#?}");

    // The retry gets the same empty answer: nothing is replaced, every fallback memory stays.
    wait_for_retries(failed_at, 1);
    let (_, maintained, _) = mnemo(&data, &llama.url, &["maintain"]);
    eprintln!("mnemo maintain:\n{maintained}");
    let retry = retry_line(&maintained).unwrap_or_else(|| panic!("the fallback was retried: {maintained}"));
    assert!(retry.contains(": retry 2 failed (the reply proposed nothing"), "{retry}");
    assert!(!maintained.contains("archived"), "{maintained}");
    let now = memories(&data, &llama.url);
    assert_eq!(ids(&now), ids(&fallback), "every fallback memory is still active");
    assert_nothing_lost(&fallback, &now);
}
