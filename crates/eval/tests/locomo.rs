//! The LoCoMo harness end to end on a tiny hand-written file in the LoCoMo format: parsing with
//! misspelt evidence, the real engine (hashing embedder) and the baselines, the report's
//! numbers and JSON shape.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mnemo::Config;
use mnemo::models::{Embedder, EmbedderKind, open_embedder};
use mnemo_eval::locomo::{
    Bm25, Dataset, LocomoError, LocomoOptions, LocomoReport, LocomoRun, QuestionOutcome, Speakers, System, TextMetric,
    TurnRendering, run_locomo,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/locomo-tiny.json")
}

fn config() -> Config {
    let mut c = Config::default();
    c.embedder.kind = EmbedderKind::Hash;
    c
}

fn embedder() -> Arc<dyn Embedder> {
    open_embedder(&config().embedder).unwrap()
}

fn options() -> LocomoOptions {
    LocomoOptions { budgets: vec![120, 1000], ks: vec![1, 5], ..LocomoOptions::default() }
}

fn run(options: &LocomoOptions) -> LocomoRun {
    let data = Dataset::load(&fixture()).unwrap();
    let mut lines = Vec::new();
    let run = run_locomo(&data, &config(), &embedder(), options, &mut |l| lines.push(l.to_string())).unwrap();
    assert!(lines.iter().any(|l| l.starts_with("tiny-1: 2 sessions, 7 turns ingested")), "{lines:?}");
    run
}

fn question<'a>(run: &'a LocomoRun, conversation: &str, index: usize) -> &'a QuestionOutcome {
    run.questions.iter().find(|q| q.conversation == conversation && q.index == index).unwrap()
}

#[test]
fn the_fixture_parses_in_session_order_with_evidence_repaired_or_counted() {
    let data = Dataset::load(&fixture()).unwrap();
    assert_eq!(data.conversations.len(), 2);
    let c = &data.conversations[0];
    assert_eq!(c.sample_id, "tiny-1");
    assert_eq!(c.speakers, vec!["Ann", "Ben"]);
    let numbers: Vec<u32> = c.sessions.iter().map(|s| s.number).collect();
    assert_eq!(numbers, vec![1, 2], "sorted by number; a date-time without turns is no session");
    assert_eq!(c.sessions[0].at.to_rfc3339(), "2024-03-03T09:15:00+00:00");
    assert_eq!(c.sessions[0].turns[3].render(TurnRendering::default()), {
        "Ben: Look at what I bought! [shares a photo: a photo of a red road bike leaning on a fence]"
    });
    let q = &c.questions;
    assert_eq!(q[1].evidence, vec!["D2:2"], "leading zero repaired");
    assert_eq!(q[1].normalised, vec!["D2:02"]);
    assert_eq!(q[2].evidence, vec!["D1:1", "D2:1"], "stray colon repaired");
    assert_eq!(q[4].evidence, vec!["D2:3"], "the resolvable half of a packed entry is kept");
    assert_eq!(q[4].unresolved, vec!["D2:3; D9:9"]);
    assert_eq!(q[4].answer, "2019");
    assert!(q[5].evidence.is_empty());
    assert_eq!((q[6].category, q[6].answer.as_str()), (5, "Pebbles"));
}

#[test]
fn bm25_ranks_the_exact_match_turn_first() {
    let data = Dataset::load(&fixture()).unwrap();
    let turns: Vec<_> = data.conversations[0].turns().map(|(_, t)| t).collect();
    let texts: Vec<String> = turns.iter().map(|t| t.render(TurnRendering::default())).collect();
    let index = Bm25::new(&texts);
    let best = |q: &str| turns[index.rank(q)[0].0].dia_id.as_str();
    assert_eq!(best("What is the name of Ann's tortoise?"), "D1:1");
    assert_eq!(best("Where is Ben's sister Clara moving?"), "D2:2");
    assert_eq!(best("What colour is the bike Ben bought?"), "D1:4", "the caption is indexed too");
}

#[test]
fn the_harness_runs_the_real_engine_and_finds_what_is_plainly_there() {
    let run = run(&options());
    assert_eq!(run.conversations.len(), 2);
    assert_eq!(run.conversations[0].turns, 7);
    assert!(run.conversations[0].tokens > 50);
    assert_eq!(run.questions.len(), 7, "the question without evidence is skipped, the rest asked");
    assert_eq!(run.questions_without_evidence, vec![("tiny-1".to_string(), 5, 3)]);
    assert_eq!(run.unresolved_evidence, vec![("tiny-1".to_string(), "D2:3; D9:9".to_string())]);

    // The tortoise's name is said once, in so many words: both systems must bring that turn.
    let tortoise = question(&run, "tiny-1", 0);
    assert_eq!(tortoise.evidence, vec!["D1:1"]);
    assert_eq!(
        tortoise.evidence_texts,
        vec!["Hi Ben! I finally adopted a tortoise last weekend, his name is Pebbles."]
    );
    assert!(tortoise.budgets[1].mnemo.referenced.all(), "mnemo at 1000 tokens misses D1:1: {tortoise:?}");
    assert_eq!(tortoise.budgets[1].mnemo.score.answer_in_block, Some(true), "{tortoise:?}");
    assert!(tortoise.bm25_referenced_at_k[0].all(), "BM25's first turn is the exact match");
    for system in System::ALL.into_iter().skip(1) {
        let b = tortoise.budgets[1].system(system);
        assert!(b.referenced.all(), "{system:?}: {tortoise:?}");
        assert_eq!((b.score.answer_in_block, b.score.evidence_whole), (Some(true), Some(1.0)), "{system:?}");
    }
    let cello = question(&run, "tiny-2", 0);
    assert!(cello.budgets[1].mnemo.referenced.all(), "{cello:?}");
    assert!(cello.mnemo_referenced_at_k[1].all(), "recall's top 5 names the turn about the cello teacher: {cello:?}");
    let when = question(&run, "tiny-1", 4);
    assert_eq!(when.budgets[1].bm25.score.answer_in_block, Some(true), "2019 is said in D2:3: {when:?}");

    for q in &run.questions {
        for (i, budget) in run.options.budgets.iter().enumerate() {
            for system in System::ALL {
                let b = q.budgets[i].system(system);
                assert!(b.tokens <= *budget, "{system:?} over budget: {q:?}");
                assert!(b.referenced.referenced <= b.referenced.of);
                assert_eq!(b.text, None, "blocks are kept only on request");
            }
        }
        assert!(q.bm25_referenced_at_k[0].referenced <= q.bm25_referenced_at_k[1].referenced, "grows with k: {q:?}");
        assert!(q.mnemo_referenced_at_k[0].referenced <= q.mnemo_referenced_at_k[1].referenced, "grows with k: {q:?}");
    }
    assert_eq!(run.context_ms[0].len(), 7);
    assert_eq!(run.recall_ms.len(), 7);
}

#[test]
fn the_report_has_the_required_shape_and_keeps_adversarial_apart() {
    let report = LocomoReport::new(run(&options()));
    let v = report.to_json();
    for budget in ["120", "1000"] {
        for name in ["mnemo", "bm25", "dense", "rrf"] {
            let system = &v["systems"][name]["budgets"][budget];
            let overall = &system["overall"];
            for key in ["answer_in_block", "answer_word_recall", "evidence_text_coverage", "evidence_whole"] {
                assert!(overall[key].is_f64(), "{key}: {system}");
            }
            assert!(overall["evidence_referenced"].is_f64() && overall["all_evidence_referenced"].is_f64());
            assert_eq!(overall["questions"], 6, "categories 1-4 only: {system}");
            assert_eq!(overall["answer_in_block_questions"], 5, "\"A strawberry\" is said as \"a whole strawberry\"");
            assert_eq!(system["5"]["questions"], 1);
            assert_eq!(system["4"]["questions"], 4);
            assert!(v["systems"][name]["tokens"][budget]["mean"].is_f64());
        }
        for metric in ["answer_in_block", "answer_word_recall", "evidence_text_coverage", "evidence_whole"] {
            let h = &v["headline"][budget][metric];
            assert!(h["mnemo"].is_f64() && h["baseline"].is_f64() && h["mnemo_minus_best"].is_f64(), "{h}");
            assert!(["bm25", "dense", "rrf"].contains(&h["best_baseline"].as_str().unwrap()), "{h}");
        }
        assert!(v["tokens"]["context"][budget]["mean"].is_f64());
        assert!(v["tokens"]["context"][budget]["p95"].is_f64());
        assert!(v["latency_ms"]["context"][budget]["p50"].is_f64());
        assert!(v["latency_ms"]["context"][budget]["p95"].is_f64());
    }
    for key in ["baselines", "ingest", "dataset", "setup"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["systems"]["mnemo"]["evidence_referenced_at_k"]["5"]["overall"]["questions"], 6);
    assert_eq!(v["systems"]["bm25"]["evidence_referenced_at_k"]["5"]["overall"]["questions"], 6);
    assert!(v["systems"]["dense"].get("evidence_referenced_at_k").is_none());
    assert!(v["tokens"]["conversation"]["mean"].as_f64().unwrap() > 50.0);
    assert_eq!(v["ingest"]["messages"], 9);
    assert!(v["ingest"]["messages_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(v["dataset"]["unresolved_evidence"][0]["evidence"], "D2:3; D9:9");
    assert!(v.get("questions").is_none(), "per-question outcomes only on request");

    // BM25 at 1000 tokens by hand: the packed turns are the whole of each small conversation,
    // so every category-1-4 answer and every evidence word is in its block.
    let bm25 = report.overall(System::Bm25, 1000).unwrap();
    assert_eq!((bm25.answer_in_block, bm25.evidence_text_coverage, bm25.evidence_whole), (1.0, 1.0, 1.0));
    assert_eq!(bm25.evidence_referenced, 1.0);
    assert_eq!(report.head_to_head(1000, TextMetric::AnswerInBlock).unwrap().baseline, 1.0);
    assert!(report.overall(System::Mnemo, 250).is_none());

    let text = report.to_text();
    assert!(text.contains("mnemo") && text.contains("BM25 over turns"), "{text}");
    assert!(text.contains("answer_in_block") && text.contains("evidence_referenced"), "{text}");
    assert!(!text.contains("coverage of evidence") && !text.contains("covered"), "{text}");
    assert!(text.contains("overall (1-4)") && text.contains("5 adversarial"), "{text}");
    assert!(text.contains("Ingest: 9 messages"), "{text}");
}

#[test]
fn per_question_outcomes_are_kept_on_request() {
    let options = LocomoOptions { per_question: true, questions: Some(2), conversations: Some(1), ..options() };
    let v = LocomoReport::new(run(&options)).to_json();
    let qs = v["questions"].as_array().unwrap();
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0]["question"], "What is the name of Ann's tortoise?");
    assert_eq!(qs[0]["evidence"][0], "D1:1");
    let mnemo = &qs[0]["budgets"][1]["mnemo"];
    assert_eq!(mnemo["answer_in_block"], true, "{mnemo}");
    assert!(mnemo["evidence_text_coverage"].is_f64() && mnemo["referenced"]["of"] == 1, "{mnemo}");
}

#[test]
fn blocks_are_dumped_one_line_per_question_and_budget() {
    let options = LocomoOptions { keep_blocks: true, conversations: Some(1), ..options() };
    let report = LocomoReport::new(run(&options));
    let mut out = Vec::new();
    let lines = report.write_blocks(&mut out).unwrap();
    assert_eq!(lines, report.run.questions.len() * 2);
    let first: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&out).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["question"], "What is the name of Ann's tortoise?");
    assert_eq!(first["answer"], "Pebbles");
    assert_eq!(first["evidence"][0]["dia_id"], "D1:1");
    assert_eq!(first["budget"], 120);
    let best = first["best_baseline"].as_str().unwrap();
    assert!(first["mnemo_block"].as_str().unwrap().starts_with("=== USER MEMORY ==="), "{first}");
    let block = first["baseline_block"].as_str().unwrap();
    assert!(block.starts_with("=== USER MEMORY ===\n\nRELEVANT MESSAGES:\n- "), "{first}");
    assert!(first["metrics"][best]["tokens"].as_u64().unwrap() <= 120);
    assert!(first["metrics"]["mnemo"]["answer_word_recall"].is_f64());
}

#[test]
fn speakers_split_into_user_and_assistant_are_ingested_unnamed_and_indexed_alike() {
    let split = TurnRendering { speakers: Speakers::AIsUser, ..TurnRendering::default() };
    let o = LocomoOptions { rendering: split, keep_blocks: true, ..options() };
    let run = run(&o);
    let tortoise = question(&run, "tiny-1", 0);
    let block = tortoise.budgets[1].bm25.text.as_deref().unwrap();
    assert!(block.contains("- Hi Ben! I finally adopted a tortoise") && !block.contains("Ann:"), "{block}");
    assert_eq!(tortoise.evidence_texts[0], "Hi Ben! I finally adopted a tortoise last weekend, his name is Pebbles.");
    assert_eq!(tortoise.budgets[1].bm25.score.answer_in_block, Some(true));
}

#[test]
fn options_that_measure_nothing_are_refused() {
    let data = Dataset::load(&fixture()).unwrap();
    let bad = |o: LocomoOptions| run_locomo(&data, &config(), &embedder(), &o, &mut |_| {}).unwrap_err();
    let e = bad(LocomoOptions { budgets: vec![], ..options() });
    assert!(matches!(e, LocomoError::Options(_)) && e.to_string().contains("token budget"), "{e}");
    let e = bad(LocomoOptions { ks: vec![0], ..options() });
    assert!(e.to_string().contains("recall@k"), "{e}");
    let e = bad(LocomoOptions { questions: Some(0), ..options() });
    assert!(e.to_string().contains("--questions"), "{e}");
    let e = bad(LocomoOptions { skip: 2, ..options() });
    assert!(e.to_string().contains("--skip 2 leaves nothing") && e.to_string().contains("2 conversations"), "{e}");
}

#[test]
fn skip_runs_the_held_out_conversations_only() {
    let data = Dataset::load(&fixture()).unwrap();
    let o = LocomoOptions { skip: 1, per_question: true, ..options() };
    let run = run_locomo(&data, &config(), &embedder(), &o, &mut |_| {}).unwrap();
    assert!(!run.questions.is_empty());
    assert!(run.questions.iter().all(|q| q.conversation == "tiny-2"), "{:?}", run.questions);
}

#[test]
fn a_missing_or_malformed_file_says_what_and_where() {
    let e = Dataset::load(Path::new("/nonexistent/locomo10.json")).unwrap_err();
    assert!(matches!(e, LocomoError::Io { .. }) && e.to_string().contains("/nonexistent/locomo10.json"), "{e}");
    let text = r#"[{"sample_id": "c9", "conversation": {"session_1_date_time": "9:15 am on 3 March, 2024",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
        "qa": [{"question": "?", "evidence": ["D1:1"]}]}]"#;
    let e = Dataset::parse(Path::new("x.json"), text).unwrap_err().to_string();
    assert_eq!(e, "x.json: c9: question 1: \"category\" must be a small integer");
}

#[test]
fn kept_stores_are_reused_with_the_same_outcomes_and_not_under_other_settings() {
    let data = Dataset::load(&fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = LocomoOptions { per_question: true, stores: Some(dir.path().to_path_buf()), ..options() };
    let go = |config: &Config| {
        let mut lines = Vec::new();
        let run = run_locomo(&data, config, &embedder(), &o, &mut |l| lines.push(l.to_string())).unwrap();
        (run, lines)
    };
    let (first, lines) = go(&config());
    assert!(lines.iter().any(|l| l.starts_with("tiny-1: 2 sessions, 7 turns ingested")), "{lines:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "one kept store per conversation");
    let (again, lines) = go(&config());
    assert!(lines.iter().filter(|l| l.contains("reused the store")).count() == 2, "{lines:?}");
    assert_eq!(first.questions, again.questions, "a kept store answers as the one just ingested");
    let stats = |r: &LocomoRun| r.conversations.iter().map(|c| (c.turns, c.active_memories)).collect::<Vec<_>>();
    assert_eq!(stats(&first), stats(&again));
    // A ranking knob leaves the kept stores usable; one ingestion reads does not.
    let mut reranked = config();
    reranked.ranking.session_cohesion = 0.0;
    assert!(go(&reranked).1.iter().any(|l| l.contains("reused the store")));
    let mut other = config();
    other.ranking.max_passages = 0;
    assert!(!go(&other).1.iter().any(|l| l.contains("reused the store")));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    // Splitting the speakers' roles is ingestion too.
    let split = LocomoOptions {
        rendering: TurnRendering { speakers: Speakers::AIsAssistant, ..TurnRendering::default() },
        conversations: Some(1),
        ..o.clone()
    };
    let mut lines = Vec::new();
    run_locomo(&data, &config(), &embedder(), &split, &mut |l| lines.push(l.to_string())).unwrap();
    assert!(!lines.iter().any(|l| l.contains("reused the store")), "{lines:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 5);
}

/// `--embed-each-call` changes how latency is counted, never what is found: the same outcomes,
/// and every call timed (context at each budget, recall once per question).
#[test]
fn embedding_each_call_finds_the_same_and_times_every_call() {
    let once = run(&LocomoOptions { per_question: true, ..options() });
    let each = run(&LocomoOptions { per_question: true, embed_each_call: true, ..options() });
    assert_eq!(once.questions, each.questions);
    let asked = each.questions.len();
    assert!(asked > 0);
    for per_budget in &each.context_ms {
        assert_eq!(per_budget.len(), asked);
        assert!(per_budget.iter().all(|ms| ms.is_finite() && *ms >= 0.0));
    }
    assert_eq!(each.recall_ms.len(), asked);
    assert_eq!(each.query_embedding_ms.len(), asked);
}
