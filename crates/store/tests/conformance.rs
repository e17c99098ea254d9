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

pub(crate) fn msg(scope: &Scope, id: &str, text: &str, at: DateTime<Utc>) -> Message {
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

/// A hit's neighbours are the turns right around it in its own chat: never another chat's,
/// another tenant's or a withheld one.
pub(crate) fn adjacent_messages_stay_in_their_chat(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let at = |m: i64| t0() + Duration::minutes(m);
    store
        .append_messages(&[
            msg(&c1, "n1", "What did you paint?", at(1)),
            msg(&c1, "n2", "A sunset over the lake", at(2)),
            msg(&c1, "n3", "Lovely", at(3)),
            msg(&c1, "n4", "Thanks", at(4)),
            msg(&c1, "n5", "Secret", at(5)),
            msg(&c1, "n6", "Bye", at(6)),
            msg(&c2, "x1", "Another chat, a minute later", at(3)),
        ])
        .unwrap();
    let id = |s: &str| MessageId::new(s).unwrap();
    let got = |ids: &[&str], span: usize| -> Vec<(String, String)> {
        let ids: Vec<MessageId> = ids.iter().map(|s| id(s)).collect();
        let mut v: Vec<(String, String)> = store
            .adjacent_messages(&c1.tenant, &ids, span)
            .unwrap()
            .into_iter()
            .map(|(a, m)| (a.as_str().to_string(), m.id.as_str().to_string()))
            .collect();
        v.sort();
        v
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(got(&["n2"], 1), vec![pair("n2", "n1"), pair("n2", "n3")]);
    assert_eq!(got(&["n1"], 2), vec![pair("n1", "n2"), pair("n1", "n3")], "the first turn has no turn before it");
    assert_eq!(got(&["n2", "n6"], 1), vec![pair("n2", "n1"), pair("n2", "n3"), pair("n6", "n5")]);
    assert!(got(&["nope"], 1).is_empty());
    assert!(got(&["n2"], 0).is_empty());
    // Another tenant sees nothing around this tenant's message.
    assert!(store.adjacent_messages(&scope("evil", Some("dana"), None).tenant, &[id("n2")], 1).unwrap().is_empty());
    // A withheld message is never a neighbour.
    let withhold = ChangeSet {
        tenant: c1.tenant.clone(),
        at: at(7),
        changes: vec![Change::Withhold { messages: vec![id("n5")] }],
    };
    store.apply(&withhold).unwrap();
    assert_eq!(got(&["n4"], 1), vec![pair("n4", "n3"), pair("n4", "n6")]);
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
    let dana = scope("acme", Some("dana"), None);
    let hits = store.search_messages(&dana, &["greyhound".into()], 10).unwrap();
    assert_eq!(hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d1"], "{hits:?}");
    assert!(hits[0].1 > 0.0);
    // A scope naming a chat searches that chat only.
    assert_eq!(store.search_messages(&c1, &["greyhound".into()], 10).unwrap().len(), 1);
    assert!(store.search_messages(&c2, &["greyhound".into()], 10).unwrap().is_empty());
    // Stemming: "classes" finds "class".
    assert_eq!(store.search_messages(&dana, &["classes".into()], 10).unwrap()[0].0, id("d2"));
    assert!(store.search_messages(&scope("acme", None, None), &["greyhound".into()], 10).unwrap().is_empty());

    let emb = |v: Vec<f32>| Embedding { model: "test:8".into(), vector: v };
    store.embed_messages(&c1.tenant, &[(id("d1"), emb(axis(0, 1, 0.1))), (id("d2"), emb(axis(2, 3, 0.1)))]).unwrap();
    store.embed_messages(&eve.tenant, &[(id("e1"), emb(axis(0, 1, 0.0)))]).unwrap();
    // Another tenant cannot attach a vector to this tenant's message.
    store.embed_messages(&other.tenant, &[(id("d2"), emb(axis(0, 1, 0.0)))]).unwrap();
    let near = store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 10).unwrap();
    assert_eq!(near.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d1", "d2"]);
    assert!(near[0].1 > 0.95 && near[1].1 < 0.2, "{near:?}");
    let in_c2 = store.nearest_messages(&c2, "test:8", &axis(0, 1, 0.0), 10).unwrap();
    assert_eq!(in_c2.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d2"]);
    assert_eq!(store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 1).unwrap().len(), 1);
    assert!(store.nearest_messages(&dana, "other-model", &axis(0, 1, 0.0), 10).unwrap().is_empty());
    assert!(matches!(
        store.nearest_messages(&dana, "test:8", &[1.0, 0.0], 10),
        Err(StoreError::Dimension { expected: 8, got: 2, .. })
    ));

    // A withheld message leaves both halves for good (even re-embedding it is ignored), stays in
    // the trace, and another tenant cannot withhold it.
    let withhold = |tenant: &Scope, ids: &[&str]| ChangeSet {
        tenant: tenant.tenant.clone(),
        at: t0(),
        changes: vec![Change::Withhold { messages: ids.iter().map(|i| id(i)).collect() }],
    };
    store.apply(&withhold(&other, &["d1"])).unwrap();
    assert_eq!(store.search_messages(&dana, &["greyhound".into()], 10).unwrap().len(), 1);
    store.apply(&withhold(&c1, &["d1", "no-such-message"])).unwrap();
    assert!(store.search_messages(&dana, &["greyhound".into()], 10).unwrap().is_empty());
    store.embed_messages(&c1.tenant, &[(id("d1"), emb(axis(0, 1, 0.1)))]).unwrap();
    let near = store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 10).unwrap();
    assert_eq!(near.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d2"]);
    assert_eq!(store.messages(&c1.tenant, &[id("d1")]).unwrap().len(), 1);
    assert_eq!(store.search_messages(&eve, &["greyhound".into()], 10).unwrap().len(), 1);
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
        shed: vec![],
        degraded: None,
        tokens: None,
        budget: None,
        micros: 1,
        embed_micros: 0,
        verdicts: vec![],
        llm: vec![],
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
            shed: vec![],
            degraded: None,
            tokens: Some(10),
            budget: Some(100),
            micros: 5,
            embed_micros: 2,
            verdicts: vec![],
            llm: vec![],
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
    assert_eq!(store.search_messages(&eve, &["bees".into()], 10).unwrap().len(), 1);
    assert_eq!(store.nearest_messages(&eve, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 1);
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

/// The background-work queue: registering is idempotent per message, batches come out in
/// registration order by state, settlements move messages and counts together, claims and
/// cursors are compare-and-set, everything is scoped to its chat and tenant, and erasure takes
/// the user's rows with it.
pub(crate) fn background_queue_is_durable_idempotent_and_scoped(store: &dyn Store) {
    use mnemo_store::{ChatCursor, QueueState, Settlement};
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let evil = scope("evil", Some("dana"), Some("c1"));
    let ids: Vec<MessageId> = (0..5).map(|i| MessageId::new(format!("q{i}")).unwrap()).collect();
    let batch: Vec<Message> =
        ids.iter().enumerate().map(|(i, id)| msg(&c1, id.as_str(), &format!("message {i}"), t0())).collect();
    store.append_messages(&batch).unwrap();
    store.append_messages(&[msg(&c2, "other", "other chat", t0())]).unwrap();
    // Ids of another chat or unknown are skipped; re-registering changes nothing.
    let unknown = MessageId::new("nope").unwrap();
    let with_strays = [ids.clone(), vec![unknown, MessageId::new("other").unwrap()]].concat();
    assert_eq!(store.enqueue(&c1, &with_strays, true, t0()).unwrap(), 5);
    assert_eq!(store.enqueue(&c1, &ids, true, t0() + Duration::hours(1)).unwrap(), 0);
    let p = store.chat_progress(&c1).unwrap().unwrap();
    assert_eq!((p.messages, p.pending, p.retrying, p.memo_covered), (5, 5, 0, 0));
    assert_eq!(p.last_message_at, t0(), "re-sending is no activity");
    assert!(store.chat_progress(&c2).unwrap().is_none());
    assert!(store.chat_progress(&evil).unwrap().is_none());

    let next = store.queued(&c1, QueueState::Pending, t0(), 3).unwrap();
    let order: Vec<&str> = next.iter().map(|q| q.message.id.as_str()).collect();
    assert_eq!(order, ["q0", "q1", "q2"], "registration order");
    assert!(store.queued(&evil, QueueState::Pending, t0(), 10).unwrap().is_empty());

    let fallback_memory = MemoryId::new();
    let first: Vec<MessageId> = ids[..3].to_vec();
    let retry_at = t0() + Duration::minutes(1);
    let fell =
        Settlement::Fallback { attempts: 1, retry_at, error: "model down".into(), memories: vec![fallback_memory] };
    store.settle(&c1, &first, &fell).unwrap();
    let p = store.chat_progress(&c1).unwrap().unwrap();
    assert_eq!(
        (p.pending, p.retrying, p.retry_at, p.last_error.as_deref()),
        (2, 3, Some(retry_at), Some("model down"))
    );
    assert!(store.queued(&c1, QueueState::Fallback, t0(), 10).unwrap().is_empty(), "not due yet");
    let due = store.queued(&c1, QueueState::Fallback, retry_at, 10).unwrap();
    assert_eq!(due.len(), 3);
    assert_eq!((due[0].attempts, due[0].fallback_memories.clone()), (1, vec![fallback_memory]));
    store.settle(&c1, &first, &Settlement::Done).unwrap();
    store.settle(&c1, &ids[3..], &Settlement::GaveUp { attempts: 4, error: "gave up".into() }).unwrap();
    let p = store.chat_progress(&c1).unwrap().unwrap();
    assert_eq!((p.pending, p.retrying, p.retry_at), (0, 0, None));

    // The worker's walk finds chats with work, across tenants.
    store.append_messages(&[msg(&evil, "e0", "evil message", t0())]).unwrap();
    store.enqueue(&evil, &[MessageId::new("e0").unwrap()], true, t0()).unwrap();
    let far = t0() + Duration::days(30);
    let busy: Vec<String> =
        store.chats_with_work(t0(), 8, far, 10).unwrap().iter().map(|p| p.scope.to_string()).collect();
    assert_eq!(busy, vec![evil.to_string()], "only the chat with pending work");
    let memo_due = store.chats_with_work(t0(), 5, far, 10).unwrap();
    assert_eq!(memo_due.len(), 2, "five uncovered messages make c1 due for a memo too");

    // Claims and cursors are compare-and-set.
    assert!(store.claim_chat(&c1, t0(), t0() + Duration::minutes(5)).unwrap());
    assert!(!store.claim_chat(&c1, t0() + Duration::minutes(1), t0() + Duration::minutes(6)).unwrap());
    assert!(store.claim_chat(&c1, t0() + Duration::minutes(5), t0() + Duration::minutes(10)).unwrap(), "expired");
    store.release_chat(&c1).unwrap();
    assert!(store.claim_chat(&c1, t0(), t0() + Duration::minutes(5)).unwrap());
    let range = store.chat_messages(&c1, 1, 2).unwrap();
    assert_eq!(range.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["q1", "q2"]);
    assert!(store.advance_cursor(&c1, ChatCursor::Memo, 0, 4, None).unwrap());
    assert!(!store.advance_cursor(&c1, ChatCursor::Memo, 0, 4, None).unwrap(), "moved already");
    assert!(!store.advance_cursor(&c1, ChatCursor::Memo, 4, 8, None).unwrap(), "beyond the messages");
    assert!(store.advance_cursor(&c1, ChatCursor::Memo, 4, 5, Some("memo model down")).unwrap());
    assert!(store.advance_cursor(&c1, ChatCursor::Episode, 0, 5, None).unwrap());
    let p = store.chat_progress(&c1).unwrap().unwrap();
    assert_eq!((p.memo_covered, p.memo_gaps, p.episode_checked), (5, 1, 5));

    let user = scope("acme", Some("dana"), None);
    let day = store.user_messages(&user, t0(), t0() + Duration::days(1), 10).unwrap();
    assert_eq!(day.len(), 6, "every chat of the user, no other tenant");

    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let counts = store.erase_user(&c1.tenant, c1.user.as_ref().unwrap(), &event).unwrap();
    assert_eq!((counts["extraction_queue"], counts["chat_progress"]), (5, 1));
    assert!(store.chat_progress(&c1).unwrap().is_none());
    assert!(store.chat_progress(&evil).unwrap().is_some(), "other tenants keep theirs");
}

/// A user's privacy switch reads back as set, defaults to active, is per tenant and per user,
/// switching back to active leaves no row, and an erasure deletes (and counts) it.
pub(crate) fn user_states_round_trip_and_are_isolated(store: &dyn Store) {
    use mnemo_core::{TenantId, UserId, UserState};
    let (acme, evil): (TenantId, TenantId) = ("acme".parse().unwrap(), "evil".parse().unwrap());
    let (dana, eve) = (UserId::new("dana").unwrap(), UserId::new("eve").unwrap());
    assert_eq!(store.user_state(&acme, &dana).unwrap(), UserState::Active, "no row: active");
    store.set_user_state(&acme, &dana, UserState::Paused, t0()).unwrap();
    assert_eq!(store.user_state(&acme, &dana).unwrap(), UserState::Paused);
    assert_eq!(store.user_state(&evil, &dana).unwrap(), UserState::Active, "another tenant's dana");
    assert_eq!(store.user_state(&acme, &eve).unwrap(), UserState::Active, "another user");
    store.set_user_state(&evil, &dana, UserState::Disabled, t0()).unwrap();
    store.set_user_state(&acme, &dana, UserState::Disabled, t0() + Duration::minutes(1)).unwrap();
    assert_eq!(store.user_state(&acme, &dana).unwrap(), UserState::Disabled);
    assert_eq!(store.counts().unwrap()["user_states"], 2);
    store.set_user_state(&acme, &dana, UserState::Active, t0() + Duration::minutes(2)).unwrap();
    assert_eq!(store.user_state(&acme, &dana).unwrap(), UserState::Active);
    assert_eq!(store.counts().unwrap()["user_states"], 1, "active is the absence of a row");
    assert_eq!(store.user_state(&evil, &dana).unwrap(), UserState::Disabled, "untouched by acme's switch");
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let counts = store.erase_user(&evil, &dana, &event).unwrap();
    assert_eq!(counts["user_states"], 1);
    assert_eq!(store.user_state(&evil, &dana).unwrap(), UserState::Active, "erasure resets the switch");
}

/// A retention sweep deletes only envelopes of the named class older than the cutoff, for every
/// tenant by its own rows' age, in batches of at most `limit`; memories are never touched.
pub(crate) fn retention_sweeps_only_old_envelopes_of_one_class(store: &dyn Store) {
    let acme = scope("acme", Some("dana"), Some("c1"));
    let evil = scope("evil", Some("dana"), Some("c1"));
    let kept = memory(&acme.without_chat(), Kind::Fact, "I work at Acme");
    insert(store, &kept, None);
    let envelope = |s: &Scope, turn: &str, op: TraceOp, days: i64| TraceEnvelope {
        turn_id: turn.into(),
        scope: s.clone(),
        op,
        at: t0() + Duration::days(days),
        query: "q".into(),
        mode: None,
        retrieved: vec![],
        surfaced: vec![],
        below_floor: vec![],
        held_back: vec![],
        shed: vec![],
        degraded: None,
        tokens: None,
        budget: None,
        micros: 1,
        embed_micros: 0,
        verdicts: vec![],
        llm: vec![],
    };
    let all = [
        envelope(&acme, "a-old-1", TraceOp::Recall, 0),
        envelope(&acme, "a-old-2", TraceOp::Recall, 1),
        envelope(&acme, "a-new", TraceOp::Recall, 20),
        envelope(&acme, "a-old-context", TraceOp::Context, 0),
        envelope(&evil, "e-old", TraceOp::Recall, 2),
        envelope(&evil, "e-new", TraceOp::Recall, 30),
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
                    adjacent_messages_stay_in_their_chat,
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
                    job_locks_are_exclusive_per_name,
                    export_import_round_trip,
                    import_into_a_non_empty_store_is_refused,
                    background_queue_is_durable_idempotent_and_scoped,
                    user_states_round_trip_and_are_isolated,
                    retention_sweeps_only_old_envelopes_of_one_class,
                );
            }
        )+
    };
    (@checks $open:expr; $($check:ident),+ $(,)?) => {
        $(
            #[test]
            fn $check() {
                // `None`: the backend's server is not configured here (outside CI); skip.
                let Some((_guard, store)) = $open else { return };
                super::$check(&*store);
            }
        )+
    };
}

backends! {
    sqlite => Some(crate::sqlite::open_temp());
}

// Only built with `--features postgres`, and then needs MNEMO_TEST_DATABASE_URL (scripts/pg.sh).
#[cfg(feature = "postgres")]
backends! {
    postgres => crate::postgres::open_temp();
}

// ---- job locks and whole-store copies ------------------------------------------------------

/// A job lock is held once per name: a second taker (a separate lock, as another server's would
/// be) is refused while the first lives, names are independent, dropping releases.
pub(crate) fn job_locks_are_exclusive_per_name(store: &dyn Store) {
    let held = store.try_job_lock("maintain").unwrap().expect("a free lock");
    assert_eq!(held.name(), "maintain");
    assert!(store.try_job_lock("maintain").unwrap().is_none(), "a second holder of the same job");
    let other = store.try_job_lock("reembed").unwrap();
    assert!(other.is_some(), "locks of different jobs are independent");
    let odd = store.try_job_lock("../a b").unwrap();
    assert!(odd.is_some(), "any name is a lock of its own");
    assert!(store.try_job_lock("../a b").unwrap().is_none());
    drop(held);
    assert!(store.try_job_lock("maintain").unwrap().is_some(), "released on drop");
}

/// Every table of `TABLES` filled, with the cases a copy can get wrong: two tenants with the same
/// message id, messages sharing a timestamp (their order is insertion order), a withheld message,
/// message vectors, memories superseded with a link, reinforced in two sessions, accessed by a
/// recorded turn, without a vector, chat-scoped, keyed, pinned; two policy versions; an erasure;
/// queue rows in every state, registered out of message order, with chat cursors and a claim.
pub(crate) fn fill_every_table(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let evil = scope("evil", Some("dana"), Some("c1"));
    let id = |s: &str| MessageId::new(s).unwrap();
    store
        .append_messages(&[
            msg(&c1, "m1", "We adopted a greyhound called Biscuit", t0()),
            msg(&c1, "m2", "I keep bees in the garden", t0()),
            msg(&c1, "m3", "My old password was in this message", t0()),
            msg(&c2, "m4", "The pottery class starts on Tuesday", t0() + Duration::minutes(1)),
            msg(&evil, "m1", "Another tenant's greyhound", t0()),
        ])
        .unwrap();
    let emb = |v: Vec<f32>| Embedding { model: "test:8".into(), vector: v };
    store.embed_messages(&c1.tenant, &[(id("m1"), emb(axis(0, 1, 0.1))), (id("m4"), emb(axis(2, 3, 0.2)))]).unwrap();
    store.embed_messages(&evil.tenant, &[(id("m1"), emb(axis(0, 1, 0.0)))]).unwrap();
    store
        .apply(&ChangeSet {
            tenant: c1.tenant.clone(),
            at: t0(),
            changes: vec![Change::Withhold { messages: vec![id("m3")] }],
        })
        .unwrap();

    let dana = scope("acme", Some("dana"), None);
    let bees = memory(&dana, Kind::Profile, "User keeps bees in the garden");
    let old_job = memory(&dana, Kind::Profile, "User is a backend engineer");
    let new_job = memory(&dana, Kind::Profile, "User works in product design");
    let mut call = memory(&dana, Kind::OpenLoop, "Call mom this weekend");
    call.due_at = Some(t0() + Duration::days(2));
    call.key = Some("call_mom".into());
    call.value = Some("weekend".into());
    call.pinned = true;
    let plain = memory(&dana, Kind::Preference, "User likes tea");
    let chatty = memory(&c2, Kind::Ephemeral, "User is tired today");
    let theirs = memory(&scope("evil", Some("dana"), None), Kind::Profile, "User keeps goats");
    insert(store, &bees, Some(axis(0, 2, 0.1)));
    insert(store, &old_job, Some(axis(1, 2, 0.1)));
    insert(store, &call, Some(axis(3, 2, 0.1)));
    insert(store, &plain, None);
    insert(store, &chatty, Some(axis(4, 2, 0.1)));
    insert(store, &theirs, Some(axis(0, 2, 0.1)));
    store
        .apply(&ChangeSet {
            tenant: dana.tenant.clone(),
            at: t0() + Duration::days(1),
            changes: vec![
                Change::Insert {
                    memory: new_job.clone(),
                    embedding: Some(Embedding { model: "test:8".into(), vector: axis(5, 2, 0.1) }),
                    reason: "correction".into(),
                },
                Change::SetStatus {
                    id: old_job.id,
                    status: Status::Superseded { by: new_job.id },
                    event: HistoryEvent::Superseded,
                    reason: "corrected by the user".into(),
                    sources: vec![id("m2")],
                },
                Change::Link(Link { from: new_job.id, to: old_job.id, kind: LinkKind::Supersedes, at: t0() }),
                Change::Reinforce {
                    id: bees.id,
                    sources: vec![id("m2")],
                    session: Some("c1".into()),
                    reason: "again".into(),
                },
                Change::Reinforce { id: bees.id, sources: vec![], session: Some("c2".into()), reason: "again".into() },
            ],
        })
        .unwrap();
    // The background queue: registered out of message order (memo ranges follow registration),
    // a batch on fallback with its memory, one given up, one pending, a chat registered without
    // extraction, another tenant's chat; cursors moved (one memo gap) and a claim held.
    use mnemo_store::{ChatCursor, Settlement};
    assert_eq!(store.enqueue(&c1, &[id("m3"), id("m1"), id("m2")], true, t0()).unwrap(), 3);
    assert_eq!(store.enqueue(&c2, &[id("m4")], false, t0() + Duration::minutes(1)).unwrap(), 1);
    assert_eq!(store.enqueue(&evil, &[id("m1")], true, t0()).unwrap(), 1);
    let fell = Settlement::Fallback {
        attempts: 2,
        retry_at: t0() + Duration::hours(1),
        error: "model down".into(),
        memories: vec![plain.id, bees.id],
    };
    store.settle(&c1, &[id("m3")], &fell).unwrap();
    store.settle(&c1, &[id("m1")], &Settlement::GaveUp { attempts: 4, error: "gave up".into() }).unwrap();
    assert!(store.advance_cursor(&c1, ChatCursor::Memo, 0, 2, Some("memo model down")).unwrap());
    assert!(store.advance_cursor(&c1, ChatCursor::Episode, 0, 1, None).unwrap());
    assert!(store.claim_chat(&c1, t0(), t0() + Duration::minutes(5)).unwrap());
    let env = TraceEnvelope {
        turn_id: "turn-copy".into(),
        scope: c1,
        op: TraceOp::Context,
        at: t0() + Duration::days(2),
        query: "bees?".into(),
        mode: Some(RecallMode::Hybrid),
        retrieved: vec![],
        surfaced: vec![bees.id],
        below_floor: vec![],
        held_back: vec![],
        shed: vec![],
        degraded: None,
        tokens: Some(12),
        budget: Some(100),
        micros: 5,
        embed_micros: 2,
        verdicts: vec![],
        llm: vec![],
    };
    store.record_turn(&env, &[bees.id, call.id]).unwrap();
    let policy = Policy {
        tenant: dana.tenant,
        agent: None,
        key: "refunds".into(),
        text: "Refunds within 30 days".into(),
        value: serde_json::json!({"days": 30, "except": ["sale"]}),
        version: 0,
        effective_from: t0(),
        effective_until: None,
    };
    store.put_policy(&policy).unwrap();
    store
        .put_policy(&Policy {
            text: "Refunds within 14 days".into(),
            effective_from: t0() + Duration::days(3),
            ..policy
        })
        .unwrap();
    let zed = scope("acme", Some("zed"), Some("c9"));
    store.append_messages(&[msg(&zed, "z1", "Please forget me", t0())]).unwrap();
    insert(store, &memory(&scope("acme", Some("zed"), None), Kind::Profile, "User is Zed"), None);
    let event = mnemo_store::DeletionEvent {
        subject: "sha256-of-zed".into(),
        at: t0() + Duration::days(4),
        digest: "d1".into(),
    };
    store.erase_user(&zed.tenant, zed.user.as_ref().unwrap(), &event).unwrap();
    // Privacy switches: two users switched (one in another tenant), one switched back (no row).
    let user = |u: &str| mnemo_core::UserId::new(u).unwrap();
    let acme: mnemo_core::TenantId = "acme".parse().unwrap();
    store.set_user_state(&acme, &user("dana"), mnemo_core::UserState::Paused, t0()).unwrap();
    store.set_user_state(&acme, &user("eve"), mnemo_core::UserState::Disabled, t0()).unwrap();
    store.set_user_state(&acme, &user("eve"), mnemo_core::UserState::Active, t0()).unwrap();
    store.set_user_state(&acme, &user("zed"), mnemo_core::UserState::Disabled, t0()).unwrap();
    store.set_user_state(&"evil".parse().unwrap(), &user("dana"), mnemo_core::UserState::Disabled, t0()).unwrap();
}

/// Copies `from` into `to` in batches of `batch` records.
pub(crate) fn copy_all(from: &dyn Store, to: &dyn Store, batch: usize) {
    let mut importer = to.import().unwrap();
    let mut buf = Vec::new();
    from.export(&mut |record| {
        buf.push(record);
        if buf.len() == batch {
            importer.write(&buf)?;
            buf.clear();
        }
        Ok(())
    })
    .unwrap();
    importer.write(&buf).unwrap();
}

fn exported(store: &dyn Store) -> Vec<mnemo_store::Record> {
    let mut out = Vec::new();
    store
        .export(&mut |r| {
            out.push(r);
            Ok(())
        })
        .unwrap();
    out
}

fn ids_of<T: Clone + Ord>(mut v: Vec<(T, f32)>) -> Vec<T> {
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v.into_iter().map(|x| x.0).collect()
}

/// The copy holds what the source holds, row for row, and every read path of the target (its
/// rebuilt lexical indexes and vector search included) answers as the source's does.
pub(crate) fn assert_copied(source: &dyn Store, target: &dyn Store) {
    assert_eq!(target.counts().unwrap(), source.counts().unwrap());
    let (a, b) = (exported(source), exported(target));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    for scope in [
        scope("acme", Some("dana"), Some("c1")),
        scope("acme", Some("dana"), Some("c2")),
        scope("acme", Some("dana"), None),
        scope("evil", Some("dana"), Some("c1")),
    ] {
        let list = |s: &dyn Store| s.list(&scope, &ListFilter::default()).unwrap();
        assert_eq!(list(target), list(source), "list for {scope}");
        for m in list(source) {
            assert_eq!(target.history(&scope.tenant, m.id).unwrap(), source.history(&scope.tenant, m.id).unwrap());
            assert_eq!(target.links(&scope.tenant, m.id).unwrap(), source.links(&scope.tenant, m.id).unwrap());
            assert_eq!(target.embedding(&scope.tenant, m.id).unwrap(), source.embedding(&scope.tenant, m.id).unwrap());
        }
        let terms: Vec<String> = ["bees", "greyhound", "password", "design", "pottery"].map(String::from).to_vec();
        assert_eq!(
            ids_of(target.lexical(&scope, &terms, 20).unwrap()),
            ids_of(source.lexical(&scope, &terms, 20).unwrap())
        );
        let q = axis(0, 2, 0.1);
        assert_eq!(
            ids_of(target.vector(&scope, "test:8", &q, 20).unwrap()),
            ids_of(source.vector(&scope, "test:8", &q, 20).unwrap())
        );
        let due = t0() + Duration::days(3);
        let exact = |s: &dyn Store| {
            let mut v: Vec<MemoryId> = s.exact_candidates(&scope, due).unwrap().into_iter().map(|m| m.id).collect();
            v.sort();
            v
        };
        assert_eq!(exact(target), exact(source));
        assert_eq!(
            ids_of(target.search_messages(&scope, &terms, 20).unwrap()),
            ids_of(source.search_messages(&scope, &terms, 20).unwrap()),
            "message search for {scope}"
        );
        assert_eq!(
            ids_of(target.nearest_messages(&scope, "test:8", &axis(0, 1, 0.0), 20).unwrap()),
            ids_of(source.nearest_messages(&scope, "test:8", &axis(0, 1, 0.0), 20).unwrap())
        );
        assert_eq!(target.recent_messages(&scope, 10).unwrap(), source.recent_messages(&scope, 10).unwrap());
        assert_eq!(target.policies(&scope).unwrap(), source.policies(&scope).unwrap());
        assert_eq!(target.recently_surfaced(&scope, 5).unwrap(), source.recently_surfaced(&scope, 5).unwrap());
        assert_eq!(target.chat_progress(&scope).unwrap(), source.chat_progress(&scope).unwrap(), "progress of {scope}");
        assert_eq!(
            target.chat_messages(&scope, 0, 10).unwrap(),
            source.chat_messages(&scope, 0, 10).unwrap(),
            "registration order of {scope}"
        );
        for state in [mnemo_store::QueueState::Pending, mnemo_store::QueueState::Fallback] {
            let due = t0() + Duration::days(1);
            assert_eq!(target.queued(&scope, state, due, 10).unwrap(), source.queued(&scope, state, due, 10).unwrap());
        }
    }
    let far = t0() + Duration::days(30);
    assert_eq!(target.chats_with_work(far, 1, t0(), 10).unwrap(), source.chats_with_work(far, 1, t0(), 10).unwrap());
    // The claim the fill holds on c1 holds on the copy too (refused, so nothing changes).
    let c1 = scope("acme", Some("dana"), Some("c1"));
    assert!(!target.claim_chat(&c1, t0(), t0() + Duration::minutes(1)).unwrap(), "the copied claim");
    let acme: mnemo_core::TenantId = "acme".parse().unwrap();
    assert_eq!(target.trace(&acme, "turn-copy").unwrap(), source.trace(&acme, "turn-copy").unwrap());
}

/// A whole store copied into a fresh SQLite store (several batches) loses nothing, adds no
/// history, and the copy keeps working: it takes new writes like any store.
pub(crate) fn export_import_round_trip(store: &dyn Store) {
    fill_every_table(store);
    let counts = store.counts().unwrap();
    for (table, n) in &counts {
        assert!(*n > 0, "the fill leaves {table} empty: the round trip would not test it");
    }
    assert_eq!(counts.keys().map(String::as_str).collect::<Vec<_>>(), {
        let mut t = mnemo_store::transfer::TABLES.to_vec();
        t.sort();
        t
    });
    let (_dir, target) = crate::sqlite::open_temp();
    copy_all(store, &*target, 4);
    assert_copied(store, &*target);
    // The copy is a live store: new rows go after the copied ones.
    let c1 = scope("acme", Some("dana"), Some("c1"));
    assert_eq!(
        target.append_messages(&[msg(&c1, "m9", "A new message", t0() + Duration::days(9))]).unwrap(),
        vec![true]
    );
    assert_eq!(target.recent_messages(&c1, 1).unwrap()[0].content, "A new message");
    let fresh = memory(&scope("acme", Some("dana"), None), Kind::Profile, "User speaks Portuguese");
    insert(&*target, &fresh, Some(axis(6, 2, 0.1)));
    assert_eq!(
        target.vector(&scope("acme", Some("dana"), None), "test:8", &axis(6, 2, 0.1), 1).unwrap()[0].0,
        fresh.id
    );
}

/// An import into a store holding rows is refused before anything is written, and a batch that
/// fails part-way writes none of its rows.
pub(crate) fn import_into_a_non_empty_store_is_refused(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User keeps bees");
    {
        let mut importer = store.import().expect("an empty store takes an import");
        let bad = vec![
            mnemo_store::Record::Memory { memory: m.clone(), embedding: None },
            mnemo_store::Record::Session {
                tenant: owner.tenant.clone(),
                memory: MemoryId::new(),
                session: "c1".into(),
            },
        ];
        let err = importer.write(&bad).unwrap_err().to_string();
        assert!(err.contains("export order"), "{err}");
        assert!(store.get(&owner.tenant, m.id).unwrap().is_none(), "the failed batch left its memory behind");
        assert!(store.counts().unwrap().values().all(|n| *n == 0));
    }
    store.append_messages(&[msg(&scope("acme", Some("dana"), Some("c1")), "m1", "hello", t0())]).unwrap();
    let before = store.counts().unwrap();
    let err = store.import().err().expect("a non-empty store refuses an import").to_string();
    assert!(err.contains("not empty") && err.contains("1 messages"), "{err}");
    assert_eq!(store.counts().unwrap(), before);
}
