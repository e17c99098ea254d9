//! [`Memories`](mnemo_store::Memories): change sets, history, links, and reads by id and kind.

use chrono::Duration;
use mnemo_core::trace::TraceOp;
use mnemo_core::{HistoryEvent, Kind, MemoryId, MessageId, Status, StatusKind, Surface};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter, Store, StoreError};

use super::{axis, changes, correction, envelope, insert, insertion, memory, scope, t0};
use mnemo_core::Memory;

pub(crate) fn memories_round_trip(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let mut m = memory(&owner, Kind::OpenLoop, "Call mom this weekend");
    m.due_at = Some(t0() + Duration::days(5));
    m.key = Some("k".into());
    m.value = Some("v".into());
    m.provenance.chat = Some("c1".parse().unwrap());
    // The rule that read it is kept beside the extractor (why it was remembered).
    m.provenance.rule = Some("plan.intent".into());
    insert(store, &m, Some(axis(0, 1, 0.0)));
    let got = store.get(&owner.tenant, m.id).unwrap().unwrap();
    assert_eq!(got, m);
    assert!(store.get(&"other".parse().unwrap(), m.id).unwrap().is_none(), "ids never cross tenants");
    let hist = store.history(&owner.tenant, m.id).unwrap();
    assert_eq!(hist.len(), 1);
    assert_eq!(hist[0].event, HistoryEvent::Created);
}

pub(crate) fn status_changes_history_and_links(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let old = memory(&owner, Kind::Profile, "User is a backend engineer");
    let new = memory(&owner, Kind::Profile, "User works in product design");
    insert(store, &old, Some(axis(0, 1, 0.0)));
    let cs = ChangeSet {
        tenant: owner.tenant.clone(),
        at: t0() + Duration::days(1),
        changes: correction(&old, &new, axis(3, 1, 0.0), "m9"),
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
    let forget = Change::SetStatus {
        id: missing,
        status: Status::Archived,
        event: HistoryEvent::Forgotten,
        reason: "x".into(),
        sources: vec![],
    };
    let cs = changes(&owner, vec![insertion(&m, Some(("test:8", axis(0, 1, 0.0)))), forget]);
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
    let env = envelope(
        "turn-touch",
        &scope("acme", Some("dana"), Some("c3")),
        TraceOp::Context,
        t0() + Duration::days(1),
        vec![m.id],
    );
    store.record_turn(&env, &[m.id]).unwrap();
    let got = store.get(&owner.tenant, m.id).unwrap().unwrap();
    assert_eq!(got.reinforcements, 3);
    assert_eq!(got.distinct_sessions, 3, "c1, c2, c3");
    assert_eq!(got.access_count, 1);
    assert_eq!(got.provenance.sources.len(), 4);
    assert_eq!(got.last_surfaced, Some(t0() + Duration::days(1)));
    assert_eq!(got.updated_at, t0() + Duration::hours(3));
}

/// Recording turns moves the access statistics of every memory a turn touched, and only
/// theirs: each access counts, a session counts once per memory, only placed memories get a
/// last-surfaced time, and ids of another tenant or of no memory are passed over.
pub(crate) fn recorded_turns_move_the_statistics_of_what_they_touched(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let [a, b, c] =
        ["User likes tea", "User lives in Porto", "User plays chess"].map(|t| memory(&owner, Kind::Profile, t));
    let other = memory(&scope("globex", Some("dana"), None), Kind::Profile, "User likes tea");
    for m in [&a, &b, &c, &other] {
        insert(store, m, None);
    }
    let turn = |n: i64, chat: Option<&str>, accessed: &[MemoryId], surfaced: Vec<MemoryId>| {
        let at = t0() + Duration::hours(n);
        let env = envelope(&format!("turn-{n}"), &scope("acme", Some("dana"), chat), TraceOp::Context, at, surfaced);
        store.record_turn(&env, accessed).unwrap();
    };
    // A's last turn only returned it; B's last turn placed it; C was never touched.
    turn(1, Some("c1"), &[a.id, b.id, MemoryId::new(), other.id], vec![a.id]);
    turn(2, Some("c1"), &[a.id], vec![b.id]);
    turn(3, Some("c2"), &[a.id, b.id], vec![]);
    turn(4, None, &[a.id], vec![]);
    let got = |m: &Memory| store.get(&m.owner.tenant, m.id).unwrap().unwrap();
    let (a, b, c, other) = (got(&a), got(&b), got(&c), got(&other));
    assert_eq!((a.access_count, a.distinct_sessions), (4, 2), "c1 counts once, c2 once, no chat none");
    assert_eq!((b.access_count, b.distinct_sessions), (3, 2));
    assert_eq!((c.access_count, c.distinct_sessions), (0, 0));
    assert_eq!((other.access_count, other.distinct_sessions), (0, 0), "another tenant's memory is untouched");
    assert_eq!(a.last_accessed, Some(t0() + Duration::hours(4)));
    assert_eq!(a.last_surfaced, Some(t0() + Duration::hours(1)));
    assert_eq!(b.last_surfaced, Some(t0() + Duration::hours(2)));
    assert_eq!((c.last_accessed, c.last_surfaced), (None, None));
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

/// The safety half's lookup: a user's memories that state a constraint bearing on the request's
/// domains, newest first, never another user's, a superseded one or one that states none.
pub(crate) fn constraints_are_looked_up_by_the_domains_they_bear_on(store: &dyn Store) {
    use mnemo_core::safety::{Domains, constraint_domains, query_domains};
    let dana = scope("acme", Some("dana"), None);
    let at = |m: Memory, hours: i64| Memory { created_at: t0() + Duration::hours(hours), ..m };
    let peanuts = at(memory(&dana, Kind::Profile, "User is allergic to peanuts"), 1);
    let asthma = at(memory(&dana, Kind::Profile, "User has asthma and carries an inhaler"), 2);
    let hiking = at(memory(&dana, Kind::Preference, "User loves hiking in the Alps"), 3);
    let vegan = at(memory(&dana, Kind::Profile, "User is vegan"), 4);
    let in_chat = at(memory(&scope("acme", Some("dana"), Some("c1")), Kind::Profile, "User is pregnant"), 5);
    let eves = at(memory(&scope("acme", Some("eve"), None), Kind::Profile, "User is diabetic"), 6);
    for m in [&peanuts, &asthma, &hiking, &vegan, &in_chat, &eves] {
        insert(store, m, None);
    }
    let eats_fish = at(memory(&dana, Kind::Profile, "User eats fish again"), 7);
    store
        .apply(&ChangeSet {
            tenant: dana.tenant.clone(),
            at: t0(),
            changes: correction(&vegan, &eats_fish, axis(0, 1, 0.0), "m2"),
        })
        .unwrap();
    let found = |scope: &mnemo_core::Scope, request: &str, limit: usize| -> Vec<MemoryId> {
        store.constraints(scope, query_domains(request), limit).unwrap().into_iter().map(|m| m.id).collect()
    };
    assert_eq!(found(&dana, "a recipe for dinner", 10), vec![peanuts.id], "the superseded diet is gone");
    assert_eq!(found(&dana, "a workout plan", 10), vec![asthma.id]);
    assert_eq!(found(&dana, "which painkiller for a headache", 10), vec![asthma.id, peanuts.id], "newest first");
    assert_eq!(found(&dana, "which painkiller for a headache", 1), vec![asthma.id]);
    assert!(found(&dana, "fix my SQL query", 10).is_empty());
    // A chat sees the user's constraints and its own; another user's never.
    let c1 = scope("acme", Some("dana"), Some("c1"));
    assert_eq!(found(&c1, "a recipe for dinner", 10), vec![in_chat.id, peanuts.id]);
    assert_eq!(found(&scope("acme", Some("eve"), None), "a recipe for dinner", 10), vec![eves.id]);
    // The row read back states the domains its content bears on.
    let got = store.constraints(&dana, Domains::from_bits(0xFF), 10).unwrap();
    assert!(got.iter().all(|m| !constraint_domains(&m.content).is_empty()) && got.len() == 2, "{got:?}");
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

pub(crate) fn metadata_round_trips_and_is_replaced_and_owners_are_listed(store: &dyn Store) {
    let owner = scope("acme", Some("dana"), None);
    let mut m = memory(&owner, Kind::Fact, "Dana's flight lands at noon");
    m.metadata = serde_json::json!({"source": "email", "n": [1, 2]}).as_object().cloned();
    insert(store, &m, None);
    assert_eq!(store.get(&owner.tenant, m.id).unwrap().unwrap().metadata, m.metadata, "kept as given");
    let data = serde_json::json!({"source": "sms"}).as_object().cloned();
    store.apply(&changes(&owner, vec![Change::SetMetadata { id: m.id, metadata: data.clone() }])).unwrap();
    let got = store.get(&owner.tenant, m.id).unwrap().unwrap();
    assert_eq!((got.metadata, got.content.as_str()), (data, "Dana's flight lands at noon"), "replaced, nothing else");
    store.apply(&changes(&owner, vec![Change::SetMetadata { id: m.id, metadata: None }])).unwrap();
    assert_eq!(store.get(&owner.tenant, m.id).unwrap().unwrap().metadata, None, "removed");
    let missing = Change::SetMetadata { id: MemoryId::new(), metadata: None };
    assert!(store.apply(&changes(&owner, vec![missing])).is_err(), "an unknown id is refused");

    let bot = mnemo_core::Scope::parse("acme", Some("bot"), Some("erin"), Some("c1")).unwrap();
    insert(store, &memory(&bot, Kind::Fact, "Erin's chat-private note"), None);
    insert(store, &memory(&scope("globex", Some("dana"), None), Kind::Fact, "Another tenant's"), None);
    assert_eq!(store.owners(&owner.tenant).unwrap(), vec![owner.clone(), bot], "the tenant's owners, sorted");
}
