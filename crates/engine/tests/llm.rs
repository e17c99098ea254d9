//! LLM extraction, memos and summaries against a real HTTP server on loopback that plays an
//! OpenAI-compatible model: every op type through the gate, the heuristic fallback on garbage,
//! truncated, slow and failing replies, retries without duplicates, the queue surviving a
//! crash, memos in the block, a failed memo as a gap, summaries with derived_from links, and
//! the cost of each batch in the trace.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Duration;
use mnemo::core::trace::TraceOp;
use mnemo::core::{Kind, LinkKind, NewMessage, SectionName, StatusKind, Verdict};
use mnemo::models::testing::{Answer, ScriptedServer, Seen, completion, completion_with, error};
use mnemo::models::{HashEmbedder, LlmSettings};
use mnemo::store::ListFilter;
use mnemo::{Config, ExtractorKind, ManualClock, Memory, Scope};
use serde_json::{Value, json};

use crate::common::{Database, backend, chat, t0};

struct Llm {
    memory: Memory,
    clock: Arc<ManualClock>,
    config: Config,
    _dir: tempfile::TempDir,
    _database: Database,
}

/// The LLM extractor against the scripted server at `base`, quick to time out and retry.
pub(crate) fn config(dir: &std::path::Path, base: &str) -> Config {
    Config {
        data_dir: dir.to_path_buf(),
        extractor: ExtractorKind::Llm,
        llm: LlmSettings {
            base_url: base.into(),
            model: "scripted-model".into(),
            timeout_secs: 1.0,
            max_retries: 0,
            backoff_secs: 0.01,
            max_backoff_secs: 0.02,
            ..LlmSettings::default()
        },
        ..Config::default()
    }
}

fn engine(server: &ScriptedServer) -> Llm {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), server.base());
    let (store, database) = backend(&config);
    let clock = Arc::new(ManualClock::new(t0()));
    let memory = Memory::from_parts(config.clone(), store, Some(Arc::new(HashEmbedder::new(384))), clock.clone());
    Llm { memory, clock, config, _dir: dir, _database: database }
}

/// One op with every field of the strict schema.
fn op(fields: &Value) -> Value {
    let mut o = json!({"op": null, "target": null, "kind": null, "content": null, "key": null, "value": null,
                       "confidence": 0.9, "salience": 0.7, "surface": null, "due": null, "happened_at": null,
                       "sensitive": false, "sources": [1]});
    for (k, v) in fields.as_object().unwrap() {
        o[k] = v.clone();
    }
    o
}

fn ops(list: &[Value]) -> Answer {
    completion(&json!({ "ops": list }).to_string())
}

/// The `M` reference the prompt gave the memory whose line contains `needle`.
fn m_ref(seen: &Seen, needle: &str) -> String {
    seen.user()
        .lines()
        .find(|l| l.starts_with('M') && l.contains(needle))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no memory line with {needle:?} in:\n{}", seen.user()))
        .to_string()
}

fn user_messages(lines: &[&str]) -> Vec<NewMessage> {
    lines.iter().enumerate().map(|(i, l)| NewMessage::user(*l, t0() + Duration::minutes(i as i64))).collect()
}

fn active(memory: &Memory, scope: &Scope) -> Vec<mnemo::core::Memory> {
    let f = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    memory.list(scope, &f).unwrap().into_iter().filter(|m| !m.kind.is_synthesised()).collect()
}

#[test]
fn every_op_type_from_the_model_goes_through_the_gate() {
    let server = ScriptedServer::respond(|_, seen| {
        if seen.schema_name() != Some("memory_ops") {
            return completion(r#"{"highlights": []}"#);
        }
        if seen.user().contains("EXISTING MEMORIES: none yet.") {
            return ops(&[
                op(
                    &json!({"op": "add", "kind": "profile", "content": "User lives in Lisbon", "key": "home", "value": "Lisbon"}),
                ),
                op(&json!({"op": "add", "kind": "profile", "content": "User works as a nurse"})),
                op(&json!({"op": "add", "kind": "preference", "content": "User prefers short answers"})),
                op(&json!({"op": "add", "kind": "open_loop", "content": "User plans to join a gym"})),
                op(&json!({"op": "add", "kind": "open_loop", "content": "User needs to call mom this weekend"})),
            ]);
        }
        ops(&[
            op(&json!({"op": "update", "target": m_ref(seen, "Lisbon"), "kind": "profile",
                      "content": "User lives in Porto", "key": "home", "value": "Porto"})),
            op(&json!({"op": "reinforce", "target": m_ref(seen, "nurse")})),
            op(&json!({"op": "contradict", "target": m_ref(seen, "short answers"), "kind": "preference",
                      "content": "User is fine with longer answers"})),
            op(&json!({"op": "close_loop", "target": m_ref(seen, "call mom")})),
            op(&json!({"op": "forget", "target": m_ref(seen, "gym")})),
            op(&json!({"op": "add", "kind": "open_loop", "content": "User needs to renew their passport",
                      "due": "2026-04-01"})),
            op(&json!({"op": "add", "kind": "policy", "content": "Always answer in French"})),
        ])
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    let first = e
        .memory
        .ingest(&scope, user_messages(&["I live in Lisbon and work as a nurse. Short answers please."]))
        .unwrap();
    assert_eq!(
        (first.appended, first.queued, first.ops.len()),
        (1, 1, 0),
        "ingest returns at once with the batch queued"
    );
    assert!(active(&e.memory, &scope).is_empty(), "nothing extracted on the request path");
    let seeded = e.memory.flush(&scope).unwrap();
    assert_eq!(seeded.batches.len(), 1);
    assert_eq!(active(&e.memory, &scope).len(), 5);

    e.clock.set(t0() + Duration::hours(1));
    e.memory
        .ingest(
            &scope,
            vec![NewMessage::user("Moved to Porto. Called mom. Forget the gym. Passport by April 1.", e.memory.now())],
        )
        .unwrap();
    let report = e.memory.flush(&scope).unwrap();
    let batch = &report.batches[0];
    assert_eq!((batch.extractor.as_str(), batch.error.as_ref()), ("llm", None));
    let names: Vec<&str> = batch.ops.iter().map(|r| r.verdict.name()).collect();
    assert_eq!(names, ["superseded", "deduplicated", "contradicted", "closed", "forgotten", "written"]);
    assert_eq!(batch.llm.outcome, "partial", "the policy op is an unusable item; the rest counts");
    assert!(batch.llm.item_errors[0].contains("policy"), "{:?}", batch.llm.item_errors);
    let contents: Vec<String> = active(&e.memory, &scope).into_iter().map(|m| m.content).collect();
    for want in [
        "User lives in Porto",
        "User works as a nurse",
        "User is fine with longer answers",
        "User needs to renew their passport",
    ] {
        assert!(contents.contains(&want.to_string()), "{want} missing from {contents:?}");
    }
    for gone in ["User lives in Lisbon", "User prefers short answers", "User plans to join a gym", "call mom"] {
        assert!(!contents.iter().any(|c| c.contains(gone)), "{gone} still active: {contents:?}");
    }
    let porto = active(&e.memory, &scope).into_iter().find(|m| m.content == "User lives in Porto").unwrap();
    assert_eq!((porto.provenance.extractor.as_str(), porto.key.as_deref()), ("llm", Some("home")));

    // The batch's cost is in its trace envelope.
    let env = e.memory.trace(&scope, &batch.turn_id).unwrap().unwrap();
    assert_eq!(env.op, TraceOp::Extract);
    assert_eq!(env.verdicts.len(), 6);
    let cost = &env.llm[0];
    assert_eq!((cost.task.as_str(), cost.calls, cost.prompt_tokens, cost.completion_tokens), ("extract", 1, 120, 30));
    assert_eq!(cost.model, "openai:scripted-model");
    assert!(e.memory.chat_work(&scope).unwrap().unwrap().pending == 0);
    drop(server);
}

#[test]
fn garbage_truncated_slow_and_failing_replies_fall_back_to_the_heuristic() {
    let cases: Vec<(&str, Answer)> = vec![
        ("garbage", completion("I think the user has a dog, but I'm not sure.")),
        ("not ops", completion(r#"{"memories_found": 3}"#)),
        (
            "truncated",
            completion_with(
                r#"{"ops": [{"op": "add", "kind": "profile", "content": "User has a d"#,
                "length",
                Some((900, 2048)),
            ),
        ),
        ("slow", completion(r#"{"ops": []}"#).slow(1500)),
        ("failing", error(500, "GPU on fire")),
    ];
    for (name, answer) in cases {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let server = ScriptedServer::respond(move |_, seen| {
            if seen.schema_name() == Some("memory_ops") {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            answer.clone()
        });
        let e = engine(&server);
        let scope = chat("dana", "c1");
        let r = e.memory.ingest(&scope, user_messages(&["I have a dog named Biscuit.", "I live in Lisbon."])).unwrap();
        assert_eq!(r.queued, 2, "{name}");
        let report =
            e.memory.flush(&scope).unwrap_or_else(|err| panic!("{name}: a model failure broke the flush: {err}"));
        let batch = &report.batches[0];
        assert_eq!(batch.extractor, "heuristic", "{name}");
        assert!(batch.error.is_some(), "{name}: the failure is recorded");
        assert!(batch.llm.fallback && batch.llm.outcome == "failed", "{name}: {:?}", batch.llm);
        let contents: Vec<String> = active(&e.memory, &scope).into_iter().map(|m| m.content).collect();
        assert!(contents.iter().any(|c| c.contains("Biscuit")), "{name}: heuristic memories are there: {contents:?}");
        assert!(contents.iter().any(|c| c.contains("Lisbon")), "{name}: {contents:?}");
        let work = e.memory.chat_work(&scope).unwrap().unwrap();
        assert_eq!((work.pending, work.retrying), (0, 2), "{name}: the batch waits for a retry");
        assert!(work.last_error.is_some(), "{name}");
        let env = e.memory.trace(&scope, &batch.turn_id).unwrap().unwrap();
        assert!(env.llm[0].fallback && env.llm[0].error.is_some(), "{name}");
        // The conversation is intact and the block is served.
        let ctx = e.memory.context(&scope, "what is my dog called?", None).unwrap();
        assert!(ctx.block.text.contains("Biscuit"), "{name}: {}", ctx.block.text);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{name}: one call, no retry storm (max_retries 0)");
        drop(server);
    }
}

#[test]
fn a_retry_after_a_fallback_replaces_the_fallback_without_duplicates() {
    let phase = Arc::new(AtomicUsize::new(0));
    let current = Arc::clone(&phase);
    let server = ScriptedServer::respond(move |_, seen| {
        if seen.schema_name() != Some("memory_ops") {
            return completion(r#"{"highlights": []}"#);
        }
        match current.load(Ordering::SeqCst) {
            0 => error(503, "overloaded"),
            _ => ops(&[
                // A paraphrase of what the heuristic wrote, and one it did not see.
                op(&json!({"op": "add", "kind": "profile", "content": "The user's dog is a beagle called Biscuit",
                          "sources": [1]})),
                op(&json!({"op": "add", "kind": "profile", "content": "User lives in Lisbon", "key": "home",
                          "value": "Lisbon", "sources": [2]})),
            ]),
        }
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    e.memory.ingest(&scope, user_messages(&["I have a dog named Biscuit.", "I live in Lisbon."])).unwrap();
    let first = e.memory.flush(&scope).unwrap();
    assert_eq!(first.batches[0].extractor, "heuristic");
    let fallback = active(&e.memory, &scope);
    assert!(fallback.iter().all(|m| m.provenance.extractor == "heuristic"), "{fallback:?}");

    // Not due yet: nothing happens.
    phase.store(1, Ordering::SeqCst);
    assert!(e.memory.run_pending(10).unwrap().batches.is_empty(), "the retry waits for its backoff");
    e.clock.set(t0() + Duration::seconds(e.config.background.retry_secs as i64 + 5));
    let retry = e.memory.run_pending(10).unwrap();
    let batch = &retry.batches[0];
    assert!(batch.retry && batch.extractor == "llm" && batch.error.is_none(), "{batch:?}");

    let now = active(&e.memory, &scope);
    let dogs: Vec<&str> = now.iter().filter(|m| m.content.contains("Biscuit")).map(|m| m.content.as_str()).collect();
    assert_eq!(dogs.len(), 1, "one memory of the dog, not two: {dogs:?}");
    let homes: Vec<_> = now.iter().filter(|m| m.content.contains("Lisbon")).collect();
    assert_eq!(homes.len(), 1, "{homes:?}");
    assert_eq!(homes[0].reinforcements, 0, "the same words from the same message are a replay, not evidence");
    assert!(!batch.retired.is_empty(), "the stand-in's paraphrased memory was retired");
    let work = e.memory.chat_work(&scope).unwrap().unwrap();
    assert_eq!((work.pending, work.retrying), (0, 0));
    // Nothing left: a further pass does nothing.
    e.clock.set(t0() + Duration::hours(5));
    assert!(e.memory.run_pending(10).unwrap().batches.is_empty());
    drop(server);
}

#[test]
fn queued_batches_survive_a_crash_and_are_applied_once() {
    let server = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memory_ops") => ops(&[
            op(&json!({"op": "add", "kind": "profile", "content": "User has a dog named Biscuit", "sources": [1]})),
            op(
                &json!({"op": "add", "kind": "open_loop", "content": "User needs to renew their passport", "sources": [2]}),
            ),
        ]),
        _ => completion(r#"{"highlights": []}"#),
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), server.base());
    let databases = std::cell::RefCell::new(Vec::<Database>::new());
    let open = |at| {
        let (store, database) = backend(&cfg);
        databases.borrow_mut().push(database);
        Memory::from_parts(cfg.clone(), store, Some(Arc::new(HashEmbedder::new(384))), Arc::new(ManualClock::new(at)))
    };
    let scope = chat("dana", "c1");
    let lines = user_messages(&["I have a dog named Biscuit.", "I need to renew my passport."]);
    // Acknowledged, then the process dies before any batch ran.
    open(t0()).ingest(&scope, lines.clone()).unwrap();
    if std::env::var("MNEMO_TEST_BACKEND").unwrap_or_default() == "postgres" {
        return; // each open gets a new throwaway database: the crash half is SQLite's
    }

    // A batch that crashes between its ops and its settlement runs again, harmlessly.
    let later = t0() + Duration::hours(1);
    let memory = open(later);
    fail::cfg("engine::extract::before_settle", "return").unwrap();
    let crashed = memory.run_pending(10);
    fail::remove("engine::extract::before_settle");
    assert!(crashed.is_err(), "the injected crash surfaces");
    assert_eq!(active(&memory, &scope).len(), 2, "its ops were applied");
    drop(memory);

    let memory = open(later);
    assert_eq!(memory.chat_work(&scope).unwrap().unwrap().pending, 2, "still queued after the crash");
    let rerun = memory.run_pending(10).unwrap();
    let verdicts: Vec<&Verdict> = rerun.batches[0].ops.iter().map(|r| &r.verdict).collect();
    assert!(verdicts.iter().all(|v| v.name() == "deduplicated"), "a re-run changes nothing: {verdicts:?}");
    let now = active(&memory, &scope);
    assert_eq!(now.len(), 2, "nothing twice: {now:?}");
    assert!(now.iter().all(|m| m.reinforcements == 0));
    // Re-sending the same messages queues nothing again.
    assert_eq!(memory.ingest(&scope, lines).unwrap().queued, 0);
    assert!(memory.run_pending(10).unwrap().batches.is_empty());
    drop(server);
}

#[test]
fn batches_wait_for_n_messages_or_an_idle_chat() {
    let server = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memory_ops") => ops(&[]),
        _ => completion(r#"{"highlights": []}"#),
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    e.memory.ingest(&scope, user_messages(&["one", "two", "three"])).unwrap();
    assert!(e.memory.run_pending(10).unwrap().batches.is_empty(), "3 of 8 messages, chat not idle");
    let lines: Vec<String> = (0..5).map(|i| format!("message {i}")).collect();
    e.memory.ingest(&scope, user_messages(&lines.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
    assert_eq!(e.memory.run_pending(10).unwrap().batches[0].messages, 8, "eight waiting: due");
    e.memory.ingest(&scope, vec![NewMessage::user("later", e.memory.now())]).unwrap();
    assert!(e.memory.run_pending(10).unwrap().batches.is_empty());
    e.clock.set(e.memory.now() + Duration::seconds(e.config.background.idle_secs as i64 + 1));
    assert_eq!(e.memory.run_pending(10).unwrap().batches[0].messages, 1, "idle: due");
    drop(server);
}

#[test]
fn memos_every_eight_messages_reach_the_block_and_a_failed_memo_is_a_gap() {
    let memo_calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&memo_calls);
    let server = ScriptedServer::respond(move |_, seen| match seen.schema_name() {
        Some("memory_ops") => ops(&[]),
        Some("memo_highlights") => match counter.fetch_add(1, Ordering::SeqCst) {
            0 => completion(
                &json!({"highlights": [
                    {"category": "milestone", "text": "The user named the stray cat Mochi."},
                    {"category": "keepsake", "text": "The user kept the red scarf from the market."}
                ]})
                .to_string(),
            ),
            1 => error(500, "memo model down"),
            _ => completion(
                &json!({"highlights": [{"category": "turning_point", "text": "The user decided to move to Porto."}]})
                    .to_string(),
            ),
        },
        _ => completion(r#"{"summary": ""}"#),
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    let lines: Vec<String> =
        (0..20).map(|i| format!("Story message number {i} about the cat and the market")).collect();
    e.memory.ingest(&scope, user_messages(&lines.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
    let report = e.memory.flush(&scope).unwrap();
    assert_eq!(report.memos.len(), 2, "20 messages: two complete ranges of 8");
    assert!(report.memos[0].memo.is_some() && report.memos[0].gap.is_none());
    assert!(report.memos[1].memo.is_none() && report.memos[1].gap.as_deref().unwrap().contains("500"));
    let work = e.memory.chat_work(&scope).unwrap().unwrap();
    assert_eq!((work.memo_covered, work.memo_gaps), (16, 1), "the failed range is skipped, not retried forever");

    let memos = e.memory.memos(&scope).unwrap();
    assert_eq!(memos.len(), 1);
    assert_eq!(memos[0].content, "The user named the stray cat Mochi. The user kept the red scarf from the market.");
    assert_eq!(memos[0].provenance.sources.len(), 8, "attached to its message range");
    assert_eq!(memos[0].kind, Kind::Memo);

    // Users write and edit their own.
    let mine = e
        .memory
        .add_memo(&scope, "We once drove to the coast together and sang all the way.", Some(t0() - Duration::days(3)))
        .unwrap();
    let edited = e
        .memory
        .edit_memo(&scope, memos[0].id, "The user named the stray cat Mochi, their first shared act of care.")
        .unwrap();
    assert!(e.memory.add_memo(&scope, "ok", None).is_err(), "too short: refused, nothing written");
    let book: Vec<String> = e.memory.memos(&scope).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(book, vec![mine.content, edited.content], "oldest first; the edit replaced the original");

    let ctx = e.memory.context(&scope, "how is the cat?", None).unwrap();
    let section = ctx.block.section(SectionName::Memo).expect("memo section");
    let texts: Vec<&str> = section.items.iter().map(|i| i.text.as_str()).collect();
    assert!(texts[0].contains("drove to the coast") && texts[1].contains("first shared act of care"), "{texts:?}");
    assert!(ctx.block.text.contains("EARLIER IN THIS CHAT"));

    // Four more messages complete the third range; the model is back.
    let more: Vec<String> = (20..24).map(|i| format!("Story message number {i}")).collect();
    e.memory.ingest(&scope, user_messages(&more.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
    let report = e.memory.flush(&scope).unwrap();
    assert_eq!(report.memos.len(), 1);
    assert_eq!(e.memory.memos(&scope).unwrap().len(), 3);
    assert_eq!(memo_calls.load(Ordering::SeqCst), 3);
    drop(server);
}

#[test]
fn summaries_are_written_per_day_with_derived_from_links() {
    let server = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memory_ops") => ops(&[op(&json!({"op": "add", "kind": "profile",
                                                 "content": "User has a dog named Biscuit", "sources": [1]}))]),
        Some("period_summary") if seen.user().contains("2026-03-02") => {
            completion(r#"{"summary": "The user talked about their dog Biscuit and a trip to Porto."}"#)
        }
        Some("period_summary") => completion(r#"{"summary": "The user talked about Biscuit all week."}"#),
        Some("reflections") => error(500, "no reflections today"),
        _ => completion(r#"{"highlights": []}"#),
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    e.memory.ingest(&scope, user_messages(&["I have a dog named Biscuit.", "We might visit Porto."])).unwrap();
    e.memory.flush(&scope).unwrap();
    e.clock.set(t0() + Duration::days(2));
    let report = e.memory.synthesize().unwrap();
    assert_eq!(report.users, 1);
    let keys: Vec<&str> = report.summaries.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains(&"summary:day:2026-03-02"), "{keys:?}");
    let user = scope.without_chat();
    let daily = e.memory.list(&user, &ListFilter { kinds: vec![Kind::Summary], ..ListFilter::default() }).unwrap();
    let day = daily.iter().find(|m| m.key.as_deref() == Some("summary:day:2026-03-02")).unwrap();
    assert!(day.content.contains("Biscuit"));
    assert_eq!(day.provenance.sources.len(), 2, "the day's messages");
    let detail = e.memory.show(&user, day.id).unwrap();
    let dog = active(&e.memory, &scope).into_iter().find(|m| m.content.contains("Biscuit")).unwrap();
    assert!(
        detail.links.iter().any(|l| l.kind == LinkKind::DerivedFrom && l.from == day.id && l.to == dog.id),
        "{:?}",
        detail.links
    );
    // A second run writes nothing twice.
    let again = e.memory.synthesize().unwrap();
    assert!(again.summaries.iter().all(|(k, _)| !k.starts_with("summary:day:")), "{:?}", again.summaries);
    drop(server);
}

/// A chat whose first extraction fails (503), so the heuristic stands in, then answered by
/// `retry` for every later extraction call: the engine, the scope and the stand-in's memories.
fn stood_in(lines: &[&str], retry: impl Fn(&Seen) -> Answer + Send + Sync + 'static) -> (Llm, ScriptedServer, Scope) {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = ScriptedServer::respond(move |_, seen| {
        if seen.schema_name() != Some("memory_ops") {
            return completion(r#"{"highlights": []}"#);
        }
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 => error(503, "overloaded"),
            _ => retry(seen),
        }
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    e.memory.ingest(&scope, user_messages(lines)).unwrap();
    let first = e.memory.flush(&scope).unwrap();
    assert_eq!(first.batches[0].extractor, "heuristic");
    (e, server, scope)
}

/// Runs the chat's due retry.
fn retry_now(e: &Llm, attempt: u32) -> mnemo::BatchReport {
    let wait = e.config.background.retry_secs * 2f64.powi(attempt as i32);
    e.clock.set(e.memory.now() + Duration::seconds(wait as i64 + 5));
    let mut report = e.memory.run_pending(10).unwrap();
    assert_eq!(report.batches.len(), 1, "the retry is due");
    report.batches.remove(0)
}

fn ids(memories: &[mnemo::core::Memory]) -> Vec<mnemo::core::MemoryId> {
    let mut ids: Vec<_> = memories.iter().map(|m| m.id).collect();
    ids.sort();
    ids
}

const STAND_IN_LINES: [&str; 3] =
    ["I have a dog named Biscuit.", "I live in Lisbon.", "Please never mention my ex-husband."];

#[test]
fn a_valid_reply_proposing_nothing_leaves_every_fallback_memory_active() {
    let (e, server, scope) = stood_in(&STAND_IN_LINES, |_| ops(&[]));
    let fallback = active(&e.memory, &scope);
    assert_eq!(fallback.len(), 3, "dog, home and boundary: {fallback:?}");
    let batch = retry_now(&e, 0);
    assert!(batch.retired.is_empty(), "nothing proposed, nothing replaced: {:?}", batch.retired);
    assert!(batch.error.as_deref().unwrap().contains("proposed nothing"), "{batch:?}");
    assert_eq!(ids(&active(&e.memory, &scope)), ids(&fallback), "every stand-in memory is still active");
    let work = e.memory.chat_work(&scope).unwrap().unwrap();
    assert_eq!(work.retrying, 3, "an empty reply is no answer: the batch is asked again later");
    drop(server);
}

#[test]
fn an_all_invalid_reply_is_a_failure_that_is_retried_and_loses_nothing() {
    let invalid = || {
        ops(&[
            op(&json!({"op": "add", "kind": "policy", "content": "Never discuss pricing"})),
            op(&json!({"op": "add", "kind": "profile", "content": "User lives in Lisbon", "sources": []})),
            op(&json!({"op": "reinforce", "target": "M7"})),
        ])
    };
    let server = ScriptedServer::respond(move |_, seen| match seen.schema_name() {
        Some("memory_ops") => invalid(),
        _ => completion(r#"{"highlights": []}"#),
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    e.memory.ingest(&scope, user_messages(&STAND_IN_LINES)).unwrap();
    let first = e.memory.flush(&scope).unwrap();
    let batch = &first.batches[0];
    assert_eq!(batch.extractor, "heuristic", "an all-invalid first reply is a failure: the heuristic stands in");
    assert!(batch.error.as_deref().unwrap().contains("no usable op"), "{batch:?}");
    assert_eq!((batch.llm.outcome.as_str(), batch.llm.fallback), ("failed", true));
    assert_eq!(batch.llm.item_errors.len(), 3, "the rejected items are recorded");
    let fallback = active(&e.memory, &scope);
    assert_eq!(fallback.len(), 3, "{fallback:?}");
    assert_eq!(e.memory.chat_work(&scope).unwrap().unwrap().retrying, 3, "retried later");

    // Every retry answers the same way: nothing is lost, and in the end the fallback stays.
    let attempts = e.config.background.max_attempts;
    for attempt in 1..attempts {
        let retry = retry_now(&e, attempt - 1);
        assert!(retry.error.is_some() && retry.retired.is_empty(), "attempt {}: {retry:?}", attempt + 1);
        assert_eq!(ids(&active(&e.memory, &scope)), ids(&fallback), "attempt {}", attempt + 1);
        assert_eq!(retry.gave_up, attempt + 1 == attempts);
    }
    assert_eq!(e.memory.chat_work(&scope).unwrap().unwrap().retrying, 0, "given up: the fallback is kept for good");
    drop(server);
}

#[test]
fn a_reply_that_validly_replaces_one_stand_in_memory_retires_only_that_one() {
    let (e, server, scope) = stood_in(&STAND_IN_LINES, |_| {
        ops(&[op(&json!({"op": "add", "kind": "profile",
                         "content": "The user's dog is a beagle called Biscuit", "sources": [1]}))])
    });
    let fallback = active(&e.memory, &scope);
    let dog = fallback.iter().find(|m| m.content.contains("Biscuit")).expect("the stand-in's dog").id;
    let batch = retry_now(&e, 0);
    assert!(batch.error.is_none() && batch.extractor == "llm", "{batch:?}");
    assert_eq!(batch.retired, vec![dog], "only the dog the model restated");
    let now = active(&e.memory, &scope);
    let contents: Vec<&str> = now.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(now.len(), 3, "{contents:?}");
    assert!(contents.contains(&"The user's dog is a beagle called Biscuit"), "{contents:?}");
    for kept in fallback.iter().filter(|m| m.id != dog) {
        assert!(now.iter().any(|m| m.id == kept.id), "{} was not replaced and stays", kept.content);
    }
    let shown = e.memory.show(&scope, dog).unwrap();
    assert_eq!(shown.memory.status.kind(), StatusKind::Archived);
    assert_eq!(e.memory.chat_work(&scope).unwrap().unwrap().retrying, 0, "settled");
    drop(server);
}

#[test]
fn a_boundary_the_model_did_not_address_survives() {
    // The model reads the boundary's message as a fact about the user, not as a boundary.
    let (e, server, scope) = stood_in(&STAND_IN_LINES, |_| {
        ops(&[
            op(&json!({"op": "add", "kind": "profile", "content": "User has a dog named Biscuit",
                       "key": "pet:dog:biscuit", "value": "Biscuit", "sources": [1]})),
            op(&json!({"op": "add", "kind": "profile", "content": "User lives in Lisbon", "key": "home",
                       "value": "Lisbon", "sources": [2]})),
            op(&json!({"op": "add", "kind": "fact", "content": "User has an ex-husband", "sources": [3]})),
        ])
    });
    let boundary = active(&e.memory, &scope)
        .into_iter()
        .find(|m| m.surface == mnemo::core::Surface::Avoid)
        .expect("the heuristic kept the boundary");
    let batch = retry_now(&e, 0);
    assert!(batch.error.is_none(), "{batch:?}");
    assert!(!batch.retired.contains(&boundary.id), "{:?}", batch.retired);
    let now = active(&e.memory, &scope);
    assert!(now.iter().any(|m| m.id == boundary.id), "the boundary is active: {now:?}");
    assert!(now.iter().any(|m| m.content == "User has an ex-husband"));
    drop(server);
}

#[test]
fn a_flush_within_a_wait_leaves_what_it_did_not_reach_queued_and_no_memo_gap() {
    let slow = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let slowing = Arc::clone(&slow);
    let server = ScriptedServer::respond(move |_, seen| {
        let answer = match seen.schema_name() {
            Some("memory_ops") => ops(&[]),
            Some("memo_highlights") => completion(
                &json!({"highlights": [{"category": "milestone", "text": "The user adopted a cat named Mochi."}]})
                    .to_string(),
            ),
            _ => completion(r#"{"summary": ""}"#),
        };
        if slowing.load(Ordering::SeqCst) { answer.slow(3_000) } else { answer }
    });
    let e = engine(&server);
    let scope = chat("dana", "c1");
    let lines: Vec<String> = (0..8).map(|i| format!("Story message number {i} about the cat")).collect();
    e.memory.ingest(&scope, user_messages(&lines.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
    let started = std::time::Instant::now();
    let report = e.memory.flush_within(&scope, std::time::Duration::from_millis(300)).unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_millis(2_500),
        "not the model's 3 s: {:?}",
        started.elapsed()
    );
    assert!(report.deferred, "the memo was not reached: {report:?}");
    assert!(report.memos.is_empty());
    let work = e.memory.chat_work(&scope).unwrap().unwrap();
    assert_eq!((work.memo_covered, work.memo_gaps), (0, 0), "a range the wait did not reach is no gap");

    // Later, with time to wait, the memo is written.
    slow.store(false, Ordering::SeqCst);
    let later = e.memory.flush(&scope).unwrap();
    assert!(!later.deferred);
    assert_eq!(later.memos.len(), 1);
    assert!(later.memos[0].memo.is_some(), "{:?}", later.memos[0]);
    drop(server);
}
