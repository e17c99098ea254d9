//! [`Traces`](mnemo_store::Traces): envelopes, access statistics, retention.

use chrono::Duration;
use mnemo_core::trace::TraceOp;
use mnemo_core::{Kind, MemoryId, Scope, Status};
use mnemo_store::Store;

use super::{envelope, insert, memory, scope, t0};

pub(crate) fn traces_round_trip_and_feed_the_over_reference_guard(store: &dyn Store) {
    let s = scope("acme", Some("dana"), Some("c1"));
    let ids: Vec<MemoryId> = (0..3).map(|_| MemoryId::new()).collect();
    for (i, id) in ids.iter().enumerate() {
        let env = envelope(&format!("turn-{i}"), &s, TraceOp::Context, t0() + Duration::minutes(i as i64), vec![*id]);
        store.record_turn(&env, &[]).unwrap();
        assert_eq!(store.trace(&s.tenant, &env.turn_id).unwrap().unwrap(), env);
    }
    let recent = store.recently_surfaced(&s, 2).unwrap();
    assert_eq!(recent, vec![ids[2], ids[1]]);
    assert!(store.trace(&"evil".parse().unwrap(), "turn-0").unwrap().is_none());
    assert!(store.recently_surfaced(&scope("acme", Some("dana"), Some("c2")), 2).unwrap().is_empty());
}

/// A user's latest envelopes, newest first: of one chat when the scope names it, of every chat
/// otherwise; never another tenant's, agent's or user's.
pub(crate) fn a_users_latest_traces_are_listed_newest_first(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let at = |s: &Scope, turn: &str, minutes: i64| {
        envelope(turn, s, TraceOp::Context, t0() + Duration::minutes(minutes), vec![])
    };
    let mut coder = c1.clone();
    coder.agent = Some("coder".parse().unwrap());
    for env in [
        at(&c1, "t1", 0),
        at(&c2, "t2", 1),
        at(&c1, "t3", 2),
        at(&scope("acme", Some("sam"), Some("c1")), "other-user", 3),
        at(&scope("evil", Some("dana"), Some("c1")), "other-tenant", 4),
        at(&coder, "other-agent", 5),
    ] {
        store.record_turn(&env, &[]).unwrap();
    }
    let turns = |s: &Scope, limit: usize| -> Vec<String> {
        store.recent_traces(s, limit).unwrap().into_iter().map(|e| e.turn_id).collect()
    };
    assert_eq!(turns(&c1.without_chat(), 10), ["t3", "t2", "t1"], "every chat of the user, newest first");
    assert_eq!(turns(&c1, 10), ["t3", "t1"], "one chat");
    assert_eq!(turns(&c1.without_chat(), 2), ["t3", "t2"], "the latest `limit`");
    assert!(turns(&c1, 0).is_empty());
    let full = store.recent_traces(&c1, 1).unwrap();
    assert_eq!(full[0], at(&c1, "t3", 2), "whole envelopes");
}

/// A retention sweep deletes only envelopes of the named class older than the cutoff, for every
/// tenant by its own rows' age, in batches of at most `limit`; memories are never touched.
pub(crate) fn retention_sweeps_only_old_envelopes_of_one_class(store: &dyn Store) {
    let acme = scope("acme", Some("dana"), Some("c1"));
    let evil = scope("evil", Some("dana"), Some("c1"));
    let kept = memory(&acme.without_chat(), Kind::Fact, "I work at Acme");
    insert(store, &kept, None);
    let at = |s: &Scope, turn: &str, op: TraceOp, days: i64| envelope(turn, s, op, t0() + Duration::days(days), vec![]);
    let all = [
        at(&acme, "a-old-1", TraceOp::Recall, 0),
        at(&acme, "a-old-2", TraceOp::Recall, 1),
        at(&acme, "a-new", TraceOp::Recall, 20),
        at(&acme, "a-old-context", TraceOp::Context, 0),
        at(&evil, "e-old", TraceOp::Recall, 2),
        at(&evil, "e-new", TraceOp::Recall, 30),
    ];
    for env in &all {
        store.record_turn(env, &[]).unwrap();
    }
    let cutoff = t0() + Duration::days(10);
    assert_eq!(store.sweep_traces(TraceOp::Recall, cutoff, 2).unwrap(), 2, "at most the limit per call");
    assert_eq!(store.sweep_traces(TraceOp::Recall, cutoff, 100).unwrap(), 1);
    assert_eq!(store.sweep_traces(TraceOp::Recall, cutoff, 100).unwrap(), 0, "nothing left: idempotent");
    let present = |s: &Scope, turn: &str| store.trace(&s.tenant, turn).unwrap().is_some();
    assert!(!present(&acme, "a-old-1") && !present(&acme, "a-old-2") && !present(&evil, "e-old"));
    assert!(present(&acme, "a-new") && present(&evil, "e-new"), "younger envelopes stay");
    assert!(present(&acme, "a-old-context"), "another class keeps its own retention");
    assert_eq!(store.sweep_traces(TraceOp::Context, cutoff, 100).unwrap(), 1);
    assert_eq!(store.get(&acme.tenant, kept.id).unwrap().unwrap().status, Status::Active, "memories untouched");
}
