//! Per-user privacy switches: a paused user's memories are kept but nothing is learned or
//! recalled; a disabled user's messages are not stored at all; resume and enable bring normal
//! behaviour back, and an erasure resets the switch.

use std::sync::Arc;

use chrono::Duration;
use mnemo::core::{Draft, Kind, NewMessage, SectionName, UserState};
use mnemo::models::HashEmbedder;
use mnemo::{Config, ExtractorKind, ManualClock, Memory, Scope};

use crate::common::{Fixture, backend, chat, hashed, t0};

/// A policy, so the tests can see that tenant rules still reach a paused user's block.
fn with_policy(f: &Fixture) {
    let tenant = Scope::parse("acme", None, None, None).unwrap();
    f.memory.put_policy(&tenant, "tone", "Always answer in a friendly tone.", serde_json::json!(true)).unwrap();
}

fn excerpt_texts(block: &mnemo::core::ContextBlock) -> Vec<String> {
    block.section(SectionName::Excerpt).map(|s| s.items.iter().map(|i| i.text.clone()).collect()).unwrap_or_default()
}

#[test]
fn a_paused_user_keeps_memories_but_nothing_is_learned_or_recalled() {
    let f = hashed();
    with_policy(&f);
    let c1 = chat("dana", "c1");
    f.say(&c1, &["My name is Dana.", "I have a dog named Biscuit."]);
    let before = f.active_contents(&c1);
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(f.memory.user_state(&c1).unwrap(), UserState::Active);

    assert_eq!(f.memory.pause(&c1).unwrap(), UserState::Paused);
    assert_eq!(f.memory.user_state(&chat("dana", "another-chat")).unwrap(), UserState::Paused, "per user, any chat");
    let c2 = chat("dana", "c2");
    let report = f.say(&c2, &["I live in Lisbon.", "I work as a pottery teacher."]);
    assert_eq!(report.user_state, Some(UserState::Paused));
    assert_eq!((report.appended, report.duplicates, report.discarded), (2, 0, 0));
    assert!(report.ops.is_empty() && report.turn_id.is_none() && report.queued == 0, "{report:?}");
    assert_eq!(f.active_contents(&c1), before, "memories kept, nothing new learned");

    // Recall: policies only, nothing about the user; the call is still traced.
    let recall = f.memory.recall(&c2, "what is my dog called", None).unwrap();
    assert_eq!(recall.user_state, Some(UserState::Paused));
    assert!(recall.items.is_empty() && recall.exact.is_empty() && recall.excerpts.is_empty(), "{recall:#?}");
    assert_eq!(recall.policies.len(), 1);
    let trace = f.memory.trace(&c2, &recall.turn_id).unwrap().expect("a paused user's recall is traced");
    assert!(trace.degraded.unwrap().contains("paused"));
    assert!(trace.retrieved.is_empty());
    assert_eq!(trace.query, "", "a paused user's query is not kept in the trace");

    // Context: the policy and the chat's recent window, no memory, excerpt or memo.
    let ctx = f.memory.context(&c2, "any plans with Biscuit this weekend?", None).unwrap();
    assert_eq!(ctx.user_state, Some(UserState::Paused));
    let text = &ctx.block.text;
    assert!(text.contains("friendly tone"), "{text}");
    assert!(text.contains("I live in Lisbon."), "the recent window still applies: {text}");
    assert!(!text.contains("Biscuit") && !text.contains("Dana"), "no memory or excerpt: {text}");
    assert!(ctx.block.memory_ids().is_empty(), "{text}");
    assert!(excerpt_texts(&ctx.block).is_empty());

    // Resumed: learning and recall come back; what was said while paused stays out for good.
    assert_eq!(f.memory.resume(&c2).unwrap(), UserState::Active);
    f.clock.set(f.memory.now() + Duration::days(1));
    let c3 = chat("dana", "c3");
    let report = f.say(&c3, &["I have a cat named Miso."]);
    assert_eq!(report.user_state, None);
    assert!(!report.ops.is_empty());
    let now = f.active_contents(&c1);
    assert!(now.iter().any(|m| m.contains("Miso")), "{now:?}");
    assert!(!now.iter().any(|m| m.contains("Lisbon") || m.contains("pottery")), "{now:?}");
    let recall = f.memory.recall(&c3, "Lisbon pottery teacher", None).unwrap();
    assert_eq!(recall.user_state, None);
    assert!(recall.excerpts.iter().all(|e| !e.message.content.contains("Lisbon")), "{:#?}", recall.excerpts);
    let recall = f.memory.recall(&c3, "dog named Biscuit", None).unwrap();
    assert!(recall.items.iter().chain(&recall.exact).any(|i| i.memory.content.contains("Biscuit")), "{recall:#?}");
}

#[test]
fn a_paused_user_is_not_queued_for_llm_extraction() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { data_dir: dir.path().to_path_buf(), extractor: ExtractorKind::Llm, ..Config::default() };
    let (store, _db) = backend(&config);
    let memory =
        Memory::from_parts(config, store, Some(Arc::new(HashEmbedder::new(64))), Arc::new(ManualClock::new(t0())));
    let (dana, eve) = (chat("dana", "c1"), chat("eve", "c1"));
    memory.pause(&dana).unwrap();
    let said = |s: &Scope, text: &str| memory.ingest(s, vec![NewMessage::user(text, t0())]).unwrap();
    let paused = said(&dana, "I have a dog named Biscuit.");
    assert_eq!((paused.appended, paused.queued, paused.user_state), (1, 0, Some(UserState::Paused)));
    assert!(memory.chat_work(&dana).unwrap().is_none(), "nothing registered for background work");
    let active = said(&eve, "I have a cat named Miso.");
    assert_eq!((active.queued, active.user_state), (1, None));
    assert_eq!(memory.chat_work(&eve).unwrap().expect("queued").pending, 1);
}

#[test]
fn a_disabled_user_has_nothing_stored_and_writes_are_refused() {
    let f = hashed();
    let c1 = chat("dana", "c1");
    f.say(&c1, &["My name is Dana."]);
    let known = f.active_contents(&c1);
    assert_eq!(f.memory.disable(&c1).unwrap(), UserState::Disabled);
    let counts = || f.memory.store().counts().unwrap();
    let before = counts();

    let report = f.say(&c1, &["I live in Lisbon.", "I have a dog named Biscuit."]);
    assert_eq!(report.user_state, Some(UserState::Disabled));
    assert_eq!((report.appended, report.discarded, report.queued), (0, 2, 0));
    assert!(report.ops.is_empty() && report.turn_id.is_none());
    let recall = f.memory.recall(&c1, "Lisbon", None).unwrap();
    assert_eq!((recall.user_state, recall.turn_id.as_str()), (Some(UserState::Disabled), ""));
    assert!(recall.items.is_empty() && recall.exact.is_empty() && recall.excerpts.is_empty());
    let ctx = f.memory.context(&c1, "where do I live?", None).unwrap();
    assert_eq!(ctx.user_state, Some(UserState::Disabled));
    assert!(ctx.turn_id.is_empty() && ctx.block.memory_ids().is_empty(), "{}", ctx.block.text);
    assert!(!ctx.block.text.contains("Lisbon"), "{}", ctx.block.text);

    // What a person writes for the user is refused too, with what to do about it.
    let err = f.memory.add(&c1, Draft::new(Kind::Profile, "User lives in Lisbon", 1.0, 0.8)).unwrap_err().to_string();
    assert!(err.contains("disabled") && err.contains("enable"), "{err}");
    let err = f.memory.add_memo(&c1, "We talked about Lisbon and the dog.", None).unwrap_err().to_string();
    assert!(err.contains("disabled"), "{err}");
    assert_eq!(counts(), before, "not one row written while disabled (messages, traces, queue, vectors)");
    assert_eq!(f.active_contents(&c1), known, "what was known before is kept");

    // Enabled: normal again, and nothing of the disabled period exists.
    assert_eq!(f.memory.enable(&c1).unwrap(), UserState::Active);
    let report = f.say(&c1, &["I work as a nurse."]);
    assert_eq!((report.user_state, report.appended), (None, 1));
    let now = f.active_contents(&c1);
    assert!(now.iter().any(|m| m.contains("nurse")), "{now:?}");
    assert!(!now.iter().any(|m| m.contains("Lisbon") || m.contains("Biscuit")), "{now:?}");
    let recent = f.memory.store().recent_messages(&c1, 10).unwrap();
    assert!(recent.iter().all(|m| !m.content.contains("Lisbon")), "{recent:?}");
    assert!(f.memory.add(&c1, Draft::new(Kind::Profile, "User likes long walks", 1.0, 0.8)).is_ok());
}

#[test]
fn switches_are_per_tenant_and_user_and_erasure_resets_them() {
    let f = hashed();
    let dana = chat("dana", "c1");
    let other_tenant_dana = Scope::parse("globex", None, Some("dana"), Some("c1")).unwrap();
    let eve = chat("eve", "c1");
    f.memory.pause(&dana).unwrap();
    assert_eq!(f.memory.user_state(&other_tenant_dana).unwrap(), UserState::Active);
    assert_eq!(f.memory.user_state(&eve).unwrap(), UserState::Active);
    let with_agent = Scope::parse("acme", Some("helper"), Some("dana"), Some("c9")).unwrap();
    assert_eq!(f.memory.user_state(&with_agent).unwrap(), UserState::Paused, "the person's switch, every agent");
    let report = f.say(&other_tenant_dana, &["I live in Porto."]);
    assert_eq!(report.user_state, None);
    assert!(!report.ops.is_empty());

    f.memory.disable(&dana).unwrap();
    let receipt = f.memory.erase_user(&dana).unwrap();
    assert_eq!(receipt.counts["user_states"], 1, "{:?}", receipt.counts);
    assert_eq!(f.memory.user_state(&dana).unwrap(), UserState::Active, "erasure resets the switch");
    assert_eq!(f.say(&dana, &["My name is Dana."]).user_state, None);
    // A switch without a user is an error naming what is missing, and changes nothing.
    let tenant_only = Scope::parse("acme", None, None, None).unwrap();
    let err = f.memory.pause(&tenant_only).unwrap_err().to_string();
    assert!(err.contains("user"), "{err}");
}
