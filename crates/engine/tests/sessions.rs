//! Context-window management of agent sessions, on either backend: usage advice over what an
//! agent holds (pinned items and boundaries never shed, documents first, bad reports refused
//! with nothing written) and segment rotation (extraction drained first, every fact of the
//! segment reachable afterwards, the bundle within its budget, the session id unchanged).

use std::sync::Arc;

use chrono::Duration;
use mnemo::core::detail::Detail;
use mnemo::core::trace::TraceOp;
use mnemo::core::window::{PartName, Protection, ShedAction, Stage};
use mnemo::core::{DocumentKind, MessageId, NewMessage, Scope, SectionName, StatusKind};
use mnemo::models::HashEmbedder;
use mnemo::models::testing::{ScriptedServer, completion};
use mnemo::store::ListFilter;
use mnemo::{DocumentOwner, HeldItem, HeldRef, ManualClock, Memory};
use serde_json::json;

use crate::common::{Fixture, backend, configured, hashed, t0};

fn session(tenant: &str) -> Scope {
    Scope::parse(tenant, Some("coder"), Some("dana"), Some("s1")).unwrap()
}

fn id_of(f: &Fixture, scope: &Scope, needle: &str) -> mnemo::core::MemoryId {
    let filter = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    let rows = f.memory.list(&scope.without_chat(), &filter).unwrap();
    rows.iter().find(|m| m.content.contains(needle)).unwrap_or_else(|| panic!("no memory with {needle:?}")).id
}

fn whole(item: HeldRef) -> HeldItem {
    HeldItem { item, level: Detail::Full, tokens: None }
}

const NOTE: &str = "# Flaky retry test\n\nThe retry test fails about one run in twenty on CI. It sleeps for a fixed \
                    50 ms and then checks that the second attempt happened, which is racy on a loaded runner.\n\n\
                    ## Fix\n\nReplace the fixed sleep with the manual clock the rest of the suite uses. Advance it \
                    by the backoff and assert on the attempt counter afterwards.";

/// A session with a pinned allergy, a boundary, a plain fact, a stored note and its messages.
/// Overviews are kept to 40 tokens, so the short note has an L1 shorter than its text.
fn populated() -> (Fixture, Scope, Vec<HeldItem>) {
    let f = configured(Some(Arc::new(HashEmbedder::new(384))), |c| c.documents.overview_tokens = 40);
    let s = session("acme");
    f.say(
        &s,
        &[
            "I'm allergic to peanuts.",
            "Don't bring up the old monolith rewrite, it's a sore spot.",
            "Our production database is Postgres 16 running in us-east-1.",
        ],
    );
    let peanut = id_of(&f, &s, "peanut");
    f.memory.pin(&s.without_chat(), peanut, true).unwrap();
    let note = f.memory.store_document(&s, DocumentOwner::Agent, DocumentKind::Note, "", NOTE).unwrap().document;
    let messages: Vec<MessageId> = f.memory.store().recent_messages(&s, 3).unwrap().into_iter().map(|m| m.id).collect();
    let items = vec![
        whole(HeldRef::Memory(peanut)),
        whole(HeldRef::Memory(id_of(&f, &s, "monolith"))),
        whole(HeldRef::Memory(id_of(&f, &s, "Postgres 16"))),
        whole(HeldRef::Document(note.id)),
        whole(HeldRef::Messages(messages)),
    ];
    (f, s, items)
}

#[test]
fn shedding_advice_never_drops_a_pinned_item_or_a_boundary_and_sheds_documents_first() {
    let (f, s, items) = populated();
    let before = f.memory.render_state(&s).unwrap();

    let calm = f.memory.session_usage(&s, 300, 1_000, &items).unwrap();
    assert_eq!((calm.stage, calm.rotate), (Stage::Ok, false));
    assert!(calm.items.iter().all(|i| i.action == ShedAction::Keep));

    let mild = f.memory.session_usage(&s, 620, 1_000, &items).unwrap();
    assert_eq!(mild.stage, Stage::StepDown);
    assert_eq!(mild.items[0].index, 3, "the document is the first to go: {mild:?}");
    assert_eq!((mild.items[0].action, mild.items[0].to), (ShedAction::StepDown, Some(Detail::Focus)));
    assert!(mild.items[0].text.as_deref().is_some_and(|t| t.contains("Flaky retry test") && t.len() < NOTE.len()));

    let full = f.memory.session_usage(&s, 1_000, 1_000, &items).unwrap();
    assert_eq!((full.stage, full.rotate), (Stage::Rotate, true));
    let by_index = |i: usize| full.items.iter().find(|a| a.index == i).unwrap();
    assert_eq!((by_index(0).action, by_index(0).protected), (ShedAction::Keep, Some(Protection::Pinned)));
    assert_eq!((by_index(1).action, by_index(1).protected), (ShedAction::Keep, Some(Protection::Boundary)));
    for i in [2, 3, 4] {
        assert_eq!(by_index(i).action, ShedAction::Release, "{:?}", by_index(i));
    }
    let order: Vec<usize> = full.items.iter().map(|a| a.index).collect();
    assert_eq!(&order[..3], [3, 4, 2], "documents, then messages, then memories; protected last");
    assert_eq!(full.projected_tokens, 1_000 - full.items.iter().map(|a| a.saves).sum::<usize>());

    assert_eq!(f.memory.render_state(&s).unwrap(), before, "advice writes nothing");
}

#[test]
fn bad_usage_reports_and_rotations_are_refused_and_write_nothing() {
    let (f, s, items) = populated();
    // Messages of another chat of the same user are not this session's.
    let other = Scope { chat: Some("s2".parse().unwrap()), ..s.clone() };
    f.say(&other, &["Just checking in."]);
    let there = f.memory.store().recent_messages(&other, 1).unwrap()[0].id.clone();
    let before = f.memory.render_state(&s).unwrap();
    let refused =
        |used, capacity, items: &[HeldItem]| f.memory.session_usage(&s, used, capacity, items).unwrap_err().to_string();
    assert!(refused(0, 0, &items).contains("capacity_tokens"));
    assert!(refused(1_001, 1_000, &items).contains("used_tokens"));
    assert!(refused(1, 1_000_000_000, &items).contains("max_capacity_tokens"));
    let unknown = [whole(HeldRef::Memory(mnemo::core::MemoryId::new()))];
    assert!(refused(10, 100, &unknown).contains("cannot see"));
    let unknown = [whole(HeldRef::Document(mnemo::core::DocumentId::new()))];
    assert!(refused(10, 100, &unknown).contains("cannot see"));
    let not_said = [whole(HeldRef::Messages(vec!["never-said".parse().unwrap()]))];
    assert!(refused(10, 100, &not_said).contains("cannot see"));
    assert!(refused(10, 100, &[whole(HeldRef::Messages(Vec::new()))]).contains("names none"));
    let twice = [items[2].clone(), items[2].clone()];
    assert!(refused(10, 100, &twice).contains("repeats"));
    let costly = [HeldItem { tokens: Some(101), ..items[2].clone() }];
    assert!(refused(10, 100, &costly).contains("tokens"));
    assert!(refused(10, 100, &[whole(HeldRef::Messages(vec![there]))]).contains("cannot see"));
    let state = f.memory.render_state(&s).unwrap();
    assert_eq!(state, before, "nothing written by a refused report");

    let e = f.memory.rotate_session(&s, Some(0)).unwrap_err().to_string();
    assert!(e.contains("budget_tokens"), "{e}");
    assert!(f.memory.rotate_session(&s.without_chat(), None).unwrap_err().to_string().contains("chat"));
    assert_eq!(f.memory.render_state(&s).unwrap(), before);
}

#[test]
fn a_rotated_segment_keeps_every_fact_reachable_and_its_bundle_within_budget() {
    let f = hashed();
    let s = session("acme");
    f.say(
        &s,
        &[
            "I'm allergic to peanuts.",
            "Our production database is Postgres 16 running in us-east-1.",
            "I promised to ship the billing migration to Priya by March 15.",
            "The flaky test was in the retry module; it failed twice on Tuesday night.",
            "Please write the migration for the invoices table next.",
        ],
    );
    let peanut = id_of(&f, &s, "peanut");
    f.memory.pin(&s.without_chat(), peanut, true).unwrap();
    let held: Vec<MessageId> = f.memory.store().recent_messages(&s, 10).unwrap().into_iter().map(|m| m.id).collect();
    let advice = f.memory.session_usage(&s, 9_100, 10_000, &[whole(HeldRef::Messages(held))]).unwrap();
    assert!(advice.rotate && advice.stage == Stage::Rotate, "{advice:?}");

    for budget in [2_000, 400, 60] {
        let r = f.memory.rotate_session(&s, Some(budget)).unwrap();
        assert_eq!(r.scope, s, "the session keeps its id");
        assert!(r.bundle.tokens <= budget, "{} > {budget}", r.bundle.tokens);
        assert_eq!(r.bundle.tokens, mnemo::core::tokens::count(&r.bundle.text));
        if budget >= 400 {
            let part = |n: PartName| r.bundle.parts.iter().find(|p| p.name == n).map(|p| p.text.clone());
            assert!(part(PartName::Pinned).is_some_and(|t| t.contains("peanuts")), "{}", r.bundle.text);
            let continuity = part(PartName::Continuity).unwrap();
            assert!(continuity.contains("billing migration"), "the open loop: {continuity}");
            assert!(continuity.contains("Last request: Please write the migration"), "{continuity}");
            assert!(part(PartName::Recent).is_some_and(|t| t.contains("invoices table")), "{}", r.bundle.text);
            assert!(r.bundle.text.contains("Postgres 16"), "{}", r.bundle.text);
        }
        let env = f.memory.trace(&s, &r.turn_id).unwrap().expect("the rotation is in the trace");
        assert_eq!((env.op, env.tokens, env.budget), (TraceOp::Rotate, Some(r.bundle.tokens), Some(budget)));
    }

    // After the rotation, the same session and a new one still reach every fact it held.
    f.clock.set(t0() + Duration::hours(2));
    let block = f.memory.context(&s, "Which database do we run in production?", Some(800)).unwrap().block;
    assert!(block.text.contains("Postgres 16"), "{}", block.text);
    let later = Scope { chat: Some("s2".parse().unwrap()), ..s };
    let block = f.memory.context(&later, "Where was that flaky test again?", Some(800)).unwrap().block;
    let excerpts = block.section(SectionName::Excerpt).map(|x| format!("{:?}", x.items)).unwrap_or_default();
    assert!(excerpts.contains("retry module"), "said only, found in the archive: {}", block.text);
    let recall = f.memory.recall(&later, "billing migration deadline", Some(5)).unwrap();
    assert!(recall.exact.iter().chain(&recall.items).any(|i| i.memory.content.contains("billing migration")));
}

#[test]
fn rotation_extracts_everything_the_model_still_owes_first() {
    let server = ScriptedServer::respond(|_, seen| match seen.schema_name() {
        Some("memory_ops") => completion(
            &json!({"ops": [
                {"op": "add", "target": null, "kind": "profile", "content": "User has a dog named Biscuit", "key": null,
                 "value": null, "confidence": 0.9, "salience": 0.7, "surface": null, "due": null, "happened_at": null,
                 "sensitive": false, "sources": [1]},
                {"op": "add", "target": null, "kind": "fact", "content": "User's service runs on Postgres 16",
                 "key": null, "value": null, "confidence": 0.9, "salience": 0.7, "surface": null, "due": null,
                 "happened_at": null, "sensitive": false, "sources": [2]}
            ]})
            .to_string(),
        ),
        _ => completion(r#"{"highlights": []}"#),
    });
    let dir = tempfile::tempdir().unwrap();
    let config = crate::llm::config(dir.path(), server.base());
    let (store, _database) = backend(&config);
    let memory =
        Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(384))), Arc::new(ManualClock::new(t0())));
    let s = session("acme");
    let said = ["I have a dog named Biscuit.", "Our service runs on Postgres 16."];
    let msgs = said.iter().enumerate().map(|(i, l)| NewMessage::user(*l, t0() + Duration::minutes(i as i64))).collect();
    assert_eq!(memory.ingest(&s, msgs).unwrap().queued, 2, "the LLM extractor queues");
    let active = |m: &Memory| {
        let f = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
        m.list(&s.without_chat(), &f).unwrap().into_iter().filter(|m| !m.kind.is_synthesised()).count()
    };
    assert_eq!(active(&memory), 0, "nothing extracted yet");

    let r = memory.rotate_session(&s, None).unwrap();
    assert_eq!((r.extracted, r.batches), (2, 1), "extract before you shed");
    assert_eq!(memory.chat_work(&s).unwrap().unwrap().pending, 0);
    assert_eq!(active(&memory), 2);
    assert!(r.bundle.text.contains("Biscuit") && r.bundle.text.contains("Postgres 16"), "{}", r.bundle.text);
    assert!(r.bundle.tokens <= memory.config().sessions.bundle_tokens);
    let env = memory.trace(&s, &r.turn_id).unwrap().unwrap();
    assert_eq!(env.llm.len(), 1, "the drained batch's model call is in the rotation's trace");
    // Rotating again finds nothing left to extract.
    assert_eq!(memory.rotate_session(&s, None).unwrap().extracted, 0);
    drop(server);
}

#[test]
fn usage_and_rotation_are_isolated_by_tenant() {
    let (f, s, items) = populated();
    let evil = session("evil");
    for item in &items {
        let e = f.memory.session_usage(&evil, 10, 100, std::slice::from_ref(item)).unwrap_err().to_string();
        assert!(e.contains("cannot see"), "{item:?}: {e}");
    }
    let r = f.memory.rotate_session(&evil, None).unwrap();
    for word in ["peanut", "monolith", "Postgres", "Flaky"] {
        assert!(!r.bundle.text.contains(word), "{word} leaked: {}", r.bundle.text);
    }
    assert!(r.bundle.parts.is_empty() || r.bundle.parts.iter().all(|p| p.name == PartName::Continuity));
    // Another user of the same tenant and agent: agent-wide documents are theirs too, memories not.
    let sam = Scope { user: Some("sam".parse().unwrap()), ..s };
    assert!(f.memory.session_usage(&sam, 10, 100, &items[2..3]).unwrap_err().to_string().contains("cannot see"));
    f.memory.session_usage(&sam, 10, 100, &items[3..4]).unwrap();
}
