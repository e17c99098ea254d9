//! PII never reaches storage: generated values of every format the detector knows, planted in
//! varied sentences through every write path (ingest, re-extraction, memories added with PII in
//! content, key or value, edits, memos, policies, recall and context queries, LLM extraction,
//! memos and summaries whose replies and errors quote PII, a store copy), and then no file under
//! the data directory, and no PostgreSQL row, holds any of them. Ordinary text stays as written.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Duration;
use mnemo::core::pii::samples::{self, FORMATS, Planted, leaks, mark};
use mnemo::core::trace::TraceEnvelope;
use mnemo::core::{Draft, Kind, Memory as Row, Message, MessageId, NewMessage, Role};
use mnemo::models::HashEmbedder;
use mnemo::models::testing::{ScriptedServer, completion, error};
use mnemo::store::prelude::*;
use mnemo::store::{Change, ChangeSet, SqliteStore};
use mnemo::{ManualClock, Memory, Scope};
use serde_json::json;

use crate::common::{chat, sqlite_with_embedder, t0};

/// Values planted per test: every format six times (different values and sentences).
const PLANTED: usize = FORMATS * 6;

fn planted(seed: u64) -> Vec<Planted> {
    samples::planted(PLANTED, seed)
}

fn messages(lines: &[String], role: Role, at: chrono::DateTime<chrono::Utc>) -> Vec<NewMessage> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| NewMessage { id: None, role, content: l.clone(), at: Some(at + Duration::seconds(i as i64)) })
        .collect()
}

/// Plants every value through every path the engine offers without a chat model. Returns how
/// many calls each path made.
fn plant_everywhere(memory: &Memory, planted: &[Planted]) -> Vec<(&'static str, usize)> {
    let scope = chat("dana", "c1");
    let user = scope.without_chat();
    let lines: Vec<String> = planted.iter().enumerate().map(|(i, p)| format!("{} {}", mark(i), p.sentence)).collect();
    let mut calls = vec![("ingest (user)", 0), ("ingest (assistant)", 0), ("reextract", 0)];
    for (n, chunk) in lines.chunks(40).enumerate() {
        let at = t0() + Duration::hours(n as i64);
        memory.ingest(&scope, messages(chunk, Role::User, at)).unwrap();
        calls[0].1 += chunk.len();
        let echoed: Vec<String> = chunk.iter().map(|l| format!("Noted: {l}")).collect();
        memory.ingest(&scope, messages(&echoed, Role::Assistant, at + Duration::minutes(30))).unwrap();
        calls[1].1 += chunk.len();
        memory.reextract(&scope, messages(chunk, Role::User, at)).unwrap();
        calls[2].1 += chunk.len();
    }
    let clean = memory.add(&user, Draft::authored(Kind::Fact, "User keeps a notebook of travel plans")).unwrap();
    let clean = clean.memory().expect("a clean memory is written");
    let mut by_path = [("add: content", 0), ("add: key", 0), ("add: value", 0), ("edit", 0), ("memo", 0)];
    let mut queries = [("recall query", 0), ("context message", 0), ("policy", 0), ("document", 0), ("observation", 0)];
    for (i, p) in planted.iter().enumerate() {
        let content = format!("User said {}: {}", mark(i), p.sentence);
        let _ = memory.add(&user, Draft::authored(Kind::Fact, content.clone()));
        let keyed = |key: Option<String>, value: Option<String>| Draft {
            key,
            value,
            ..Draft::authored(Kind::Profile, format!("User's detail number {}", mark(i)))
        };
        let _ = memory.add(&user, keyed(Some(format!("detail {}", p.recognisable())), None));
        let _ = memory.add(&user, keyed(Some("detail".into()), Some(p.recognisable().to_string())));
        let _ = memory.edit(&user, clean, &content);
        let _ = memory.add_memo(&scope, &content, None);
        for c in &mut by_path {
            c.1 += 1;
        }
        memory.recall(&scope, &p.sentence, None).unwrap();
        memory.context(&scope, &format!("{} {}", mark(i), p.sentence), None).unwrap();
        queries[0].1 += 1;
        queries[1].1 += 1;
        if i % 4 == 0 {
            let value = json!({ "detail": p.recognisable(), format!("about {}", p.recognisable()): true });
            memory.put_policy(&user, &format!("note-{i}"), &p.sentence, value).unwrap();
            queries[2].1 += 1;
        }
        if i % 4 == 1 {
            // A document's source and text, then a search and a "researched before" for it.
            let text = format!("# Notes {}\n\n{}", mark(i), p.sentence);
            let owner = mnemo::DocumentOwner::User;
            memory.store_document(&user, owner, mnemo::core::DocumentKind::Note, p.recognisable(), &text).unwrap();
            memory.search_documents(&user, &p.sentence, None).unwrap();
            memory.similar_documents(&user, "", &p.sentence, None, None).unwrap();
            queries[3].1 += 1;
        }
        if i % 4 == 2 {
            // An observation's arguments and note, mined later by consolidation.
            let args = format!("{} {}", mark(i), p.recognisable());
            memory.observe(&scope, "send", &args, mnemo::core::Outcome::Failure, Some(&p.sentence)).unwrap();
            queries[4].1 += 1;
        }
    }
    calls.extend(by_path);
    calls.extend(queries);
    calls
}

#[test]
fn planted_values_reach_no_file_under_the_data_directory() {
    let f = sqlite_with_embedder(Some(Arc::new(HashEmbedder::new(384))));
    let planted = planted(0x15);
    let calls = plant_everywhere(&f.memory, &planted);
    let texts = samples::file_texts(&f.memory.config().data_dir).unwrap();
    samples::assert_stored_redacted(&texts, &planted, &calls);
    eprintln!("pii: {} values in {FORMATS} formats, {} files scanned, paths {calls:?}", planted.len(), texts.len());
}

/// The LLM path: the model proposes memories whose content, key and value hold the values,
/// writes memos and summaries quoting them, and fails with errors that quote them.
#[test]
fn planted_values_in_model_replies_and_errors_reach_no_file() {
    let planted = Arc::new(planted(0x16));
    // Calls per task: extraction, memos, summaries.
    let calls: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
    let (p, n) = (Arc::clone(&planted), Arc::clone(&calls));
    let server = ScriptedServer::respond(move |_, seen| {
        let task = match seen.schema_name() {
            Some("memory_ops") => 0,
            Some("memo_highlights") => 1,
            _ => 2,
        };
        let i = n[task].fetch_add(1, Ordering::SeqCst) + 7 * task;
        let v = &p[i % p.len()];
        match seen.schema_name() {
            Some("memory_ops") if i % 5 == 4 => error(500, &format!("upstream rejected {}", v.sentence)),
            Some("memory_ops") => {
                let op = |content: &str, key: Option<&str>, value: Option<&str>| {
                    json!({"op": "add", "target": null, "kind": "profile", "content": content, "key": key,
                           "value": value, "confidence": 0.9, "salience": 0.8, "surface": null, "due": null,
                           "happened_at": null, "sensitive": false, "sources": [1]})
                };
                let ops = [
                    op(&format!("User said {}", v.sentence), None, None),
                    op("User has a contact detail", Some(v.recognisable()), None),
                    op("User has another contact detail", Some("contact"), Some(v.recognisable())),
                ];
                completion(&json!({ "ops": ops }).to_string())
            }
            Some("memo_highlights") => completion(
                &json!({"highlights": [{"category": "milestone", "text": format!("The user shared {}", v.sentence)}]})
                    .to_string(),
            ),
            _ => completion(&json!({ "summary": format!("The user's day: {}", v.sentence) }).to_string()),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let config = crate::llm::config(dir.path(), server.base());
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(config.db_path()).unwrap());
    let clock = Arc::new(ManualClock::new(t0()));
    let memory = Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(384))), clock.clone());
    let scope = chat("dana", "c1");
    let lines: Vec<String> = planted.iter().enumerate().map(|(i, p)| format!("{} {}", mark(i), p.sentence)).collect();
    for (n, chunk) in lines.chunks(8).enumerate() {
        memory.ingest(&scope, messages(chunk, Role::User, t0() + Duration::hours(n as i64))).unwrap();
        memory.flush(&scope).unwrap();
    }
    clock.set(t0() + Duration::days(3));
    memory.synthesize().unwrap();
    let asked: Vec<usize> = calls.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    assert!(asked[0] >= PLANTED / 8 && asked[1] > 0 && asked[2] > 0, "extraction, memos, summaries: {asked:?}");
    let texts = samples::file_texts(dir.path()).unwrap();
    let leaks = leaks(&texts, &planted);
    assert!(leaks.is_empty(), "{} planted values reached storage:\n{}", leaks.len(), leaks.join("\n"));
    drop(server);
}

/// A copy of a store written before redaction caught these formats (rows written below the
/// engine) holds none of them: `mnemo copy` redacts every record on the way.
#[test]
fn a_copy_of_a_store_that_kept_pii_holds_none() {
    let planted = planted(0x17);
    let old = tempfile::tempdir().unwrap();
    let source = SqliteStore::open(old.path().join("mnemo.db")).unwrap();
    let scope = chat("dana", "c1");
    let user = scope.without_chat();
    let template = template_envelope(&scope);
    for (i, p) in planted.iter().enumerate() {
        let at = t0() + Duration::minutes(i as i64);
        let id = MessageId::new(format!("m{i}")).unwrap();
        let message = Message { id, scope: scope.clone(), role: Role::User, content: p.sentence.clone(), at };
        source.append_messages(&[message]).unwrap();
        let mut row = Row::new(user.clone(), Kind::Fact, format!("User said {}", p.sentence), at);
        row.key = Some(p.recognisable().to_string());
        row.value = Some(p.recognisable().to_string());
        let insert = Change::Insert { memory: row, embedding: None, reason: format!("written from {}", p.sentence) };
        source.apply(&ChangeSet { tenant: user.tenant.clone(), at, changes: vec![insert] }).unwrap();
        source.record_turn(&envelope(&template, i, p), &[]).unwrap();
        if i % 8 == 0 {
            let policy = mnemo::core::Policy {
                tenant: user.tenant.clone(),
                agent: None,
                key: format!("p{i}"),
                text: p.sentence.clone(),
                value: json!({ "v": p.recognisable() }),
                version: 0,
                effective_from: at,
                effective_until: None,
            };
            source.put_policy(&policy).unwrap();
        }
    }
    assert!(
        !leaks(&samples::file_texts(old.path()).unwrap(), &planted).is_empty(),
        "the source must hold the values first"
    );

    let new = tempfile::tempdir().unwrap();
    let target = SqliteStore::open(new.path().join("mnemo.db")).unwrap();
    {
        let mut importer = target.import().unwrap();
        source.export(&mut |record| importer.write(&[mnemo::redact_record(record)])).unwrap();
    }
    target.finish_bulk_load().unwrap();
    assert_eq!(target.counts().unwrap()["messages"], PLANTED as u64);
    let leaks = leaks(&samples::file_texts(new.path()).unwrap(), &planted);
    assert!(leaks.is_empty(), "{} planted values were copied:\n{}", leaks.len(), leaks.join("\n"));
}

/// A real envelope (a recall's, on a throwaway engine) with the query and degradation of one
/// planted value, as an older version would have stored it.
fn envelope(template: &TraceEnvelope, i: usize, p: &Planted) -> TraceEnvelope {
    TraceEnvelope {
        turn_id: format!("turn-{i}"),
        query: p.sentence.clone(),
        degraded: Some(format!("while searching {}", p.recognisable())),
        ..template.clone()
    }
}

fn template_envelope(scope: &Scope) -> TraceEnvelope {
    let f = sqlite_with_embedder(None);
    let turn = f.memory.recall(scope, "anything at all", None).unwrap().turn_id;
    f.memory.settle();
    f.memory.store().trace(&scope.tenant, &turn).unwrap().unwrap()
}

/// Dates, times, prices, versions, years, order numbers and short numbers are stored as
/// written: redaction that ate them would lose what memory is for.
#[test]
fn ordinary_numbers_are_stored_as_written() {
    let f = sqlite_with_embedder(Some(Arc::new(HashEmbedder::new(384))));
    let scope = chat("dana", "c1");
    let lines: Vec<String> = [
        "The dentist moved my appointment to 2026-03-14 at 10:30.",
        "We met on 12/05/2024 and again on 05.06.2024 at 14:00.",
        "The flat costs $1,299.00 a month, or €1.299,00 with parking.",
        "I upgraded to version 1.2.3 and then 10.15.7 last week.",
        "I was born in 1987 and moved to Lisbon in 2019.",
        "My order #12345 shipped; the invoice is 2024-0042.",
        "I need 3 eggs, 250 g of flour and 2 cups of milk for 4 people.",
        "I ran 10 km in 52:30, my best since 2021.",
        "Flight LH 1234 leaves at 06:45 from gate B12.",
        "The ISBN is 978-3-16-148410-0 and the book has 1234 pages.",
        "Mein Termin ist am 12.03.2025 um 14:30 Uhr in Raum 12.",
        "Le rendez-vous est le 12/03/2025 à 14h30, prix 45,00 €.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    f.memory.ingest(&scope, messages(&lines, Role::User, t0())).unwrap();
    let stored: Vec<String> =
        f.memory.store().recent_messages(&scope, 100).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(stored, lines);
    let ctx = f.memory.context(&scope, "When is the dentist on 2026-03-14 at 10:30?", None).unwrap();
    f.memory.settle();
    let env = f.memory.store().trace(&scope.tenant, &ctx.turn_id).unwrap().unwrap();
    assert_eq!(env.query, "When is the dentist on 2026-03-14 at 10:30?");
}

/// The same planting against PostgreSQL: no row of any table, read as text, holds a value.
/// Skipped unless `MNEMO_TEST_DATABASE_URL` names a server (and the `postgres` feature is on).
#[cfg(feature = "postgres")]
#[test]
fn planted_values_reach_no_postgres_row() {
    let Some(db) = mnemo::store::TempDatabase::from_env().unwrap() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = mnemo::Config { data_dir: dir.path().to_path_buf(), ..mnemo::Config::default() };
    let store: Arc<dyn Store> = Arc::new(mnemo::store::PostgresStore::connect(db.url()).unwrap());
    let memory =
        Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(384))), Arc::new(ManualClock::new(t0())));
    let planted = planted(0x18);
    plant_everywhere(&memory, &planted);
    let rows = db.rows_as_text().unwrap();
    assert!(rows.len() >= 10, "every table: {:?}", rows.iter().map(|(t, _)| t).collect::<Vec<_>>());
    samples::assert_stored_redacted(&rows, &planted, &"every path, into PostgreSQL");
}
