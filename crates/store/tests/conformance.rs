//! The store contract, written against `&dyn Store` so every backend runs the same checks.
//! A backend adds one line to `backends!` below.

use chrono::{DateTime, Duration, Utc};
use mnemo_core::text::content_hash;
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{
    HistoryEvent, Kind, Link, LinkKind, Memory, MemoryId, Message, MessageId, Policy, Provenance, RecallMode, Role,
    Scope, Sensitivity, Status, StatusKind, Surface,
};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter, Store, StoreError};

pub(crate) fn t0() -> DateTime<Utc> {
    "2026-03-02T09:00:00Z".parse().unwrap()
}

pub(crate) fn scope(tenant: &str, user: Option<&str>, chat: Option<&str>) -> Scope {
    Scope::parse(tenant, None, user, chat).unwrap()
}

pub(crate) fn memory(owner: &Scope, kind: Kind, content: &str) -> Memory {
    Memory {
        id: MemoryId::new(),
        owner: owner.clone(),
        kind,
        content: content.into(),
        key: None,
        value: None,
        confidence: 0.9,
        salience: 0.6,
        pinned: false,
        surface: kind.default_surface(),
        status: Status::Active,
        due_at: None,
        valid_from: None,
        valid_until: None,
        provenance: Provenance {
            sources: vec![MessageId::new("m1").unwrap()],
            chat: None,
            extractor: "test".into(),
            extractor_version: "1".into(),
        },
        content_hash: content_hash(content),
        created_at: t0(),
        updated_at: t0(),
        last_accessed: None,
        last_surfaced: None,
        access_count: 0,
        distinct_sessions: 0,
        reinforcements: 0,
        expires_at: None,
        sensitivity: Sensitivity::Normal,
    }
}

/// A unit vector along one axis, with a little of a second, so cosines are predictable.
pub(crate) fn axis(i: usize, j: usize, mix: f32) -> Vec<f32> {
    let mut v = [0.0; 8];
    v[i] = 1.0;
    v[j] += mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

pub(crate) fn insert(store: &dyn Store, m: &Memory, vector: Option<Vec<f32>>) {
    let cs = ChangeSet {
        tenant: m.owner.tenant.clone(),
        at: t0(),
        changes: vec![Change::Insert {
            memory: m.clone(),
            embedding: vector.map(|v| Embedding { model: "test:8".into(), vector: v }),
            reason: "written".into(),
        }],
    };
    store.apply(&cs).unwrap();
}

fn msg(scope: &Scope, id: &str, text: &str, at: DateTime<Utc>) -> Message {
    Message { id: MessageId::new(id).unwrap(), scope: scope.clone(), role: Role::User, content: text.into(), at }
}

pub(crate) fn messages_are_idempotent_and_chat_scoped(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let batch = vec![msg(&c1, "a", "first", t0()), msg(&c1, "b", "second", t0() + Duration::minutes(1))];
    assert_eq!(store.append_messages(&batch).unwrap(), vec![true, true]);
    assert_eq!(store.append_messages(&batch).unwrap(), vec![false, false]);
    store.append_messages(&[msg(&c2, "c", "other chat", t0())]).unwrap();
    let recent = store.recent_messages(&c1, 10).unwrap();
    assert_eq!(recent.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), vec!["first", "second"]);
    assert_eq!(store.recent_messages(&c1, 1).unwrap()[0].content, "second");
    let other_tenant = scope("evil", Some("dana"), Some("c1"));
    assert!(store.recent_messages(&other_tenant, 10).unwrap().is_empty());
    assert_eq!(store.messages(&c1.tenant, &[MessageId::new("b").unwrap()]).unwrap()[0].content, "second");
    assert!(store.messages(&other_tenant.tenant, &[MessageId::new("b").unwrap()]).unwrap().is_empty());
}

/// Archival recall reaches the user's own messages in every chat, lexically and by vector, and
/// nothing of another user, agent or tenant.
pub(crate) fn messages_are_searchable_within_their_user(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let eve = scope("acme", Some("eve"), Some("c1"));
    let other = scope("evil", Some("dana"), Some("c1"));
    let agent = Scope::parse("acme", Some("helper"), Some("dana"), Some("c1")).unwrap();
    store
        .append_messages(&[
            msg(&c1, "d1", "We adopted a greyhound called Biscuit", t0()),
            msg(&c2, "d2", "The pottery class starts on Tuesday", t0() + Duration::minutes(1)),
            msg(&eve, "e1", "My greyhound hates the rain", t0()),
            msg(&other, "o1", "Another tenant's greyhound", t0()),
            msg(&agent, "a1", "A greyhound, said to the other agent", t0()),
        ])
        .unwrap();
    let id = |s: &str| MessageId::new(s).unwrap();
    let hits = store.search_messages(&c2, &["greyhound".into()], 10).unwrap();
    assert_eq!(hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d1"], "{hits:?}");
    assert!(hits[0].1 > 0.0);
    // Stemming: "classes" finds "class".
    assert_eq!(store.search_messages(&c1, &["classes".into()], 10).unwrap()[0].0, id("d2"));
    assert!(store.search_messages(&scope("acme", None, None), &["greyhound".into()], 10).unwrap().is_empty());

    let emb = |v: Vec<f32>| Embedding { model: "test:8".into(), vector: v };
    store.embed_messages(&c1.tenant, &[(id("d1"), emb(axis(0, 1, 0.1))), (id("d2"), emb(axis(2, 3, 0.1)))]).unwrap();
    store.embed_messages(&eve.tenant, &[(id("e1"), emb(axis(0, 1, 0.0)))]).unwrap();
    // Another tenant cannot attach a vector to this tenant's message.
    store.embed_messages(&other.tenant, &[(id("d2"), emb(axis(0, 1, 0.0)))]).unwrap();
    let near = store.nearest_messages(&c2, "test:8", &axis(0, 1, 0.0), 10).unwrap();
    assert_eq!(near.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d1", "d2"]);
    assert!(near[0].1 > 0.95 && near[1].1 < 0.2, "{near:?}");
    assert_eq!(store.nearest_messages(&c2, "test:8", &axis(0, 1, 0.0), 1).unwrap().len(), 1);
    assert!(store.nearest_messages(&c2, "other-model", &axis(0, 1, 0.0), 10).unwrap().is_empty());
    assert!(matches!(
        store.nearest_messages(&c2, "test:8", &[1.0, 0.0], 10),
        Err(StoreError::Dimension { expected: 8, got: 2, .. })
    ));
}

pub(crate) fn memories_round_trip(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let mut m = memory(&owner, Kind::OpenLoop, "Call mom this weekend");
    m.due_at = Some(t0() + Duration::days(5));
    m.key = Some("k".into());
    m.value = Some("v".into());
    m.provenance.chat = Some("c1".parse().unwrap());
    insert(store, &m, Some(axis(0, 1, 0.0)));
    let got = store.get(&owner.tenant, m.id).unwrap().unwrap();
    assert_eq!(got, m);
    assert!(store.get(&"other".parse().unwrap(), m.id).unwrap().is_none(), "ids never cross tenants");
    let hist = store.history(&owner.tenant, m.id).unwrap();
    assert_eq!(hist.len(), 1);
    assert_eq!(hist[0].event, HistoryEvent::Created);
}

pub(crate) fn every_read_is_scoped(store: &dyn Store) {
    let dana = scope("acme", Some("dana"), None);
    let dana_c1 = scope("acme", Some("dana"), Some("c1"));
    let eve = scope("acme", Some("eve"), None);
    let evil = scope("evil", Some("dana"), None);
    let tenant_wide = scope("acme", None, None);
    let mine = memory(&dana, Kind::Profile, "Dana keeps bees in the garden");
    let chatty = memory(&dana_c1, Kind::Profile, "Dana mentioned bees in chat one");
    let theirs = memory(&eve, Kind::Profile, "Eve keeps bees on the roof");
    let foreign = memory(&evil, Kind::Profile, "Other tenant keeps bees too");
    let shared = memory(&tenant_wide, Kind::Fact, "The office has bees on the roof");
    for (m, v) in [(&mine, 0), (&chatty, 0), (&theirs, 0), (&foreign, 0), (&shared, 1)] {
        insert(store, m, Some(axis(v, 2, 0.1)));
    }
    let terms = vec!["bees".to_string()];
    let q = axis(0, 2, 0.1);
    let ids = |v: Vec<(MemoryId, f32)>| v.into_iter().map(|x| x.0).collect::<Vec<_>>();
    for (req, expect) in [
        (&dana, vec![mine.id, shared.id]),
        (&dana_c1, vec![mine.id, chatty.id, shared.id]),
        (&eve, vec![theirs.id, shared.id]),
        (&evil, vec![foreign.id]),
    ] {
        let mut lex = ids(store.lexical(req, &terms, 50).unwrap());
        let mut vec = ids(store.vector(req, "test:8", &q, 50).unwrap());
        let mut sub = store.substring(req, &terms, 50).unwrap();
        let mut listed: Vec<_> = store.list(req, &ListFilter::default()).unwrap().into_iter().map(|m| m.id).collect();
        let mut expect = expect.clone();
        for v in [&mut lex, &mut vec, &mut sub, &mut listed, &mut expect] {
            v.sort();
        }
        assert_eq!(lex, expect, "lexical for {req}");
        assert_eq!(vec, expect, "vector for {req}");
        assert_eq!(sub, expect, "substring for {req}");
        assert_eq!(listed, expect, "list for {req}");
    }
    assert!(store.by_hash(&eve, &mine.content_hash).unwrap().is_empty());
    assert_eq!(
        store.by_hash(&dana, &mine.content_hash).unwrap().iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![mine.id]
    );
    assert!(store.get_many(&eve, &[mine.id, theirs.id]).unwrap().iter().all(|m| m.id == theirs.id));
    // The vector ranking is by cosine, best first.
    let ranked = store.vector(&dana, "test:8", &axis(1, 2, 0.1), 2).unwrap();
    assert_eq!(ranked[0].0, shared.id);
    assert!(ranked[0].1 > ranked[1].1);
}

pub(crate) fn status_changes_history_and_links(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let old = memory(&owner, Kind::Profile, "User is a backend engineer");
    let new = memory(&owner, Kind::Profile, "User works in product design");
    insert(store, &old, Some(axis(0, 1, 0.0)));
    let cs = ChangeSet {
        tenant: owner.tenant.clone(),
        at: t0() + Duration::days(1),
        changes: vec![
            Change::Insert {
                memory: new.clone(),
                embedding: Some(Embedding { model: "test:8".into(), vector: axis(3, 1, 0.0) }),
                reason: "correction".into(),
            },
            Change::SetStatus {
                id: old.id,
                status: Status::Superseded { by: new.id },
                event: HistoryEvent::Superseded,
                reason: "corrected by the user".into(),
                sources: vec![MessageId::new("m9").unwrap()],
            },
            Change::Link(Link { from: new.id, to: old.id, kind: LinkKind::Supersedes, at: t0() }),
        ],
    };
    store.apply(&cs).unwrap();
    let got = store.get(&owner.tenant, old.id).unwrap().unwrap();
    assert_eq!(got.status, Status::Superseded { by: new.id });
    let h = store.history(&owner.tenant, old.id).unwrap();
    assert_eq!(h.iter().map(|e| e.event).collect::<Vec<_>>(), vec![HistoryEvent::Created, HistoryEvent::Superseded]);
    assert_eq!(h[1].from_status, Some(Status::Active));
    assert_eq!(store.links(&owner.tenant, old.id).unwrap().len(), 1);
    // Superseded rows leave every recall path at once.
    let v = store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap();
    assert!(v.iter().all(|(id, _)| *id != old.id));
    assert!(store.lexical(&owner, &["backend".into()], 10).unwrap().is_empty());
    let active = store.list(&owner, &ListFilter { statuses: vec![StatusKind::Active], ..Default::default() }).unwrap();
    assert_eq!(active.iter().map(|m| m.id).collect::<Vec<_>>(), vec![new.id]);
}

pub(crate) fn a_failed_change_set_writes_nothing(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User's name is Dana");
    let missing = MemoryId::new();
    let cs = ChangeSet {
        tenant: owner.tenant.clone(),
        at: t0(),
        changes: vec![
            Change::Insert {
                memory: m.clone(),
                embedding: Some(Embedding { model: "test:8".into(), vector: axis(0, 1, 0.0) }),
                reason: "w".into(),
            },
            Change::SetStatus {
                id: missing,
                status: Status::Archived,
                event: HistoryEvent::Forgotten,
                reason: "x".into(),
                sources: vec![],
            },
        ],
    };
    assert!(matches!(store.apply(&cs), Err(StoreError::MemoryNotFound { .. })));
    assert!(store.get(&owner.tenant, m.id).unwrap().is_none());
    assert!(store.history(&owner.tenant, m.id).unwrap().is_empty());
    assert!(store.lexical(&owner, &["dana".into()], 10).unwrap().is_empty());
    assert!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap().is_empty());
}

pub(crate) fn reinforcement_counts_sessions_distinctly(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User's name is Dana");
    insert(store, &m, None);
    for (i, session) in ["c1", "c1", "c2"].iter().enumerate() {
        let cs = ChangeSet {
            tenant: owner.tenant.clone(),
            at: t0() + Duration::hours(i as i64 + 1),
            changes: vec![Change::Reinforce {
                id: m.id,
                sources: vec![MessageId::new(format!("r{i}")).unwrap()],
                session: Some(session.to_string()),
                reason: "same statement".into(),
            }],
        };
        store.apply(&cs).unwrap();
    }
    let env = TraceEnvelope {
        turn_id: "turn-touch".into(),
        scope: scope("acme", Some("dana"), Some("c3")),
        op: TraceOp::Context,
        at: t0() + Duration::days(1),
        query: "q".into(),
        mode: Some(RecallMode::Hybrid),
        retrieved: vec![],
        surfaced: vec![m.id],
        below_floor: vec![],
        held_back: vec![],
        degraded: None,
        tokens: None,
        budget: None,
        micros: 1,
        embed_micros: 0,
        verdicts: vec![],
    };
    store.record_turn(&env, &[m.id]).unwrap();
    let got = store.get(&owner.tenant, m.id).unwrap().unwrap();
    assert_eq!(got.reinforcements, 3);
    assert_eq!(got.distinct_sessions, 3, "c1, c2, c3");
    assert_eq!(got.access_count, 1);
    assert_eq!(got.provenance.sources.len(), 4);
    assert_eq!(got.last_surfaced, Some(t0() + Duration::days(1)));
    assert_eq!(got.updated_at, t0() + Duration::hours(3));
}

pub(crate) fn exact_candidates_are_pinned_exact_kinds_and_due_loops(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let mut pref = memory(&owner, Kind::Preference, "User prefers short answers");
    pref.key = Some("answer_length".into());
    let unkeyed = memory(&owner, Kind::Preference, "User likes tea");
    let mut boundary = memory(&owner, Kind::Protocol, "Do not bring up the divorce");
    boundary.surface = Surface::Avoid;
    let mut soon = memory(&owner, Kind::OpenLoop, "Call mom");
    soon.due_at = Some(t0() + Duration::days(1));
    let mut later = memory(&owner, Kind::OpenLoop, "Renew passport");
    later.due_at = Some(t0() + Duration::days(40));
    let plain = memory(&owner, Kind::Profile, "User lives in Lisbon");
    let mut pinned = memory(&owner, Kind::Profile, "User is allergic to peanuts");
    pinned.pinned = true;
    for m in [&pref, &unkeyed, &boundary, &soon, &later, &plain, &pinned] {
        insert(store, m, None);
    }
    let mut got: Vec<_> =
        store.exact_candidates(&owner, t0() + Duration::days(3)).unwrap().into_iter().map(|m| m.id).collect();
    let mut want = vec![pref.id, boundary.id, soon.id, pinned.id];
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

pub(crate) fn policies_are_versioned(store: &dyn Store) {
    let s = Scope::parse("acme", Some("support"), Some("dana"), None).unwrap();
    let p = Policy {
        tenant: s.tenant.clone(),
        agent: None,
        key: "refunds".into(),
        text: "Refunds within 30 days".into(),
        value: serde_json::json!({"days": 30}),
        version: 0,
        effective_from: t0(),
        effective_until: None,
    };
    assert_eq!(store.put_policy(&p).unwrap().version, 1);
    let p2 = Policy { text: "Refunds within 14 days".into(), effective_from: t0() + Duration::days(10), ..p };
    assert_eq!(store.put_policy(&p2).unwrap().version, 2);
    let all = store.policies(&s).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].effective_until, Some(t0() + Duration::days(10)));
    assert!(all[0].in_force(t0() + Duration::days(1)) && !all[0].in_force(t0() + Duration::days(11)));
    assert!(all[1].in_force(t0() + Duration::days(11)));
    assert!(store.policies(&scope("other", Some("dana"), None)).unwrap().is_empty());
}

pub(crate) fn traces_round_trip_and_feed_the_over_reference_guard(store: &dyn Store) {
    let s = scope("acme", Some("dana"), Some("c1"));
    let ids: Vec<MemoryId> = (0..3).map(|_| MemoryId::new()).collect();
    for (i, id) in ids.iter().enumerate() {
        let env = TraceEnvelope {
            turn_id: format!("turn-{i}"),
            scope: s.clone(),
            op: TraceOp::Context,
            at: t0() + Duration::minutes(i as i64),
            query: "q".into(),
            mode: Some(RecallMode::Hybrid),
            retrieved: vec![],
            surfaced: vec![*id],
            below_floor: vec![],
            held_back: vec![],
            degraded: None,
            tokens: Some(10),
            budget: Some(100),
            micros: 5,
            embed_micros: 2,
            verdicts: vec![],
        };
        store.record_turn(&env, &[]).unwrap();
        assert_eq!(store.trace(&s.tenant, &env.turn_id).unwrap().unwrap(), env);
    }
    let recent = store.recently_surfaced(&s, 2).unwrap();
    assert_eq!(recent, vec![ids[2], ids[1]]);
    assert!(store.trace(&"evil".parse().unwrap(), "turn-0").unwrap().is_none());
    assert!(store.recently_surfaced(&scope("acme", Some("dana"), Some("c2")), 2).unwrap().is_empty());
}

pub(crate) fn erasure_removes_one_user_and_nothing_else(store: &dyn Store) {
    let dana_c1 = scope("acme", Some("dana"), Some("c1"));
    let dana = scope("acme", Some("dana"), None);
    let eve = scope("acme", Some("eve"), None);
    let other_dana = scope("evil", Some("dana"), None);
    let a = memory(&dana, Kind::Profile, "Dana keeps bees");
    let b = memory(&dana, Kind::Profile, "Dana lives in Lisbon");
    let e = memory(&eve, Kind::Profile, "Eve keeps bees");
    let o = memory(&other_dana, Kind::Profile, "Other tenant's Dana keeps bees");
    for m in [&a, &b, &e, &o] {
        insert(store, m, Some(axis(0, 1, 0.0)));
    }
    let link = Change::Link(Link { from: b.id, to: a.id, kind: LinkKind::Elaborates, at: t0() });
    store.apply(&ChangeSet { tenant: dana.tenant.clone(), at: t0(), changes: vec![link] }).unwrap();
    store.append_messages(&[msg(&dana_c1, "m1", "I keep bees", t0())]).unwrap();
    store.append_messages(&[msg(&scope("acme", Some("eve"), Some("c1")), "m2", "I keep bees too", t0())]).unwrap();
    let bees = Embedding { model: "test:8".into(), vector: axis(0, 1, 0.0) };
    store.embed_messages(&dana.tenant, &[(MessageId::new("m1").unwrap(), bees.clone())]).unwrap();
    store.embed_messages(&dana.tenant, &[(MessageId::new("m2").unwrap(), bees)]).unwrap();
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let counts = store.erase_user(&dana.tenant, dana.user.as_ref().unwrap(), &event).unwrap();
    assert_eq!(counts["memories"], 2);
    assert_eq!(counts["messages"], 1);
    assert_eq!(counts["links"], 1);
    assert!(store.list(&dana, &ListFilter::default()).unwrap().is_empty());
    assert!(store.history(&dana.tenant, a.id).unwrap().is_empty());
    assert!(store.recent_messages(&dana_c1, 10).unwrap().is_empty());
    assert!(store.lexical(&dana, &["bees".into()], 10).unwrap().is_empty());
    assert!(store.vector(&dana, "test:8", &axis(0, 1, 0.0), 10).unwrap().is_empty());
    assert!(store.search_messages(&dana_c1, &["bees".into()], 10).unwrap().is_empty());
    assert!(store.nearest_messages(&dana_c1, "test:8", &axis(0, 1, 0.0), 10).unwrap().is_empty());
    // Everyone else is untouched.
    let eve_c1 = scope("acme", Some("eve"), Some("c1"));
    assert_eq!(store.search_messages(&eve_c1, &["bees".into()], 10).unwrap().len(), 1);
    assert_eq!(store.nearest_messages(&eve_c1, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 1);
    assert_eq!(store.list(&eve, &ListFilter::default()).unwrap().len(), 1);
    assert_eq!(store.list(&other_dana, &ListFilter::default()).unwrap().len(), 1);
    assert_eq!(store.vector(&eve, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 1);
}

/// A fail point between write and commit (and one after the first change) leaves nothing of the
/// change set behind: no row, no history, no lexical or vector entry.
pub(crate) fn fail_points_before_commit_leave_nothing_half_written(store: &dyn Store) {
    let scenario = fail::FailScenario::setup();
    let owner = scope("acme", Some("dana"), None);
    let a = memory(&owner, Kind::Profile, "User's name is Dana");
    let b = memory(&owner, Kind::Profile, "User lives in Lisbon");
    let cs = ChangeSet {
        tenant: owner.tenant.clone(),
        at: t0(),
        changes: [&a, &b]
            .iter()
            .map(|m| Change::Insert {
                memory: (*m).clone(),
                embedding: Some(Embedding { model: "test:8".into(), vector: axis(0, 1, 0.0) }),
                reason: "w".into(),
            })
            .collect(),
    };
    for point in ["store::apply::after_first_change", "store::apply::before_commit"] {
        fail::cfg(point, "return").unwrap();
        let err = store.apply(&cs).unwrap_err().to_string();
        assert!(err.contains(point), "{err}");
        fail::remove(point);
        for m in [&a, &b] {
            assert!(store.get(&owner.tenant, m.id).unwrap().is_none(), "{point}: memory half-written");
            assert!(store.history(&owner.tenant, m.id).unwrap().is_empty(), "{point}: history half-written");
        }
        assert!(store.lexical(&owner, &["dana".into(), "lisbon".into()], 10).unwrap().is_empty());
        assert!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap().is_empty());
    }
    // With the fail points gone the same change set applies whole.
    store.apply(&cs).unwrap();
    assert_eq!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 2);
    scenario.teardown();
}

/// Generates one `#[test]` per (backend, check).
macro_rules! backends {
    ($($backend:ident => $open:expr;)+) => {
        $(
            mod $backend {
                #[allow(unused_imports)]
                use super::*;
                backends!(@checks $open;
                    messages_are_idempotent_and_chat_scoped,
                    messages_are_searchable_within_their_user,
                    memories_round_trip,
                    every_read_is_scoped,
                    status_changes_history_and_links,
                    a_failed_change_set_writes_nothing,
                    reinforcement_counts_sessions_distinctly,
                    exact_candidates_are_pinned_exact_kinds_and_due_loops,
                    policies_are_versioned,
                    traces_round_trip_and_feed_the_over_reference_guard,
                    erasure_removes_one_user_and_nothing_else,
                    fail_points_before_commit_leave_nothing_half_written,
                );
            }
        )+
    };
    (@checks $open:expr; $($check:ident),+ $(,)?) => {
        $(
            #[test]
            fn $check() {
                let (_guard, store) = $open;
                super::$check(&*store);
            }
        )+
    };
}

backends! {
    sqlite => crate::sqlite::open_temp();
}

// Only built with `--features postgres`, and then needs MNEMO_TEST_DATABASE_URL (scripts/pg.sh).
#[cfg(feature = "postgres")]
backends! {
    postgres => crate::postgres::open_temp();
}
