//! [`Users`](mnemo_store::Users): privacy switches and erasure.

use chrono::Duration;
use mnemo_core::{Kind, Link, LinkKind, MessageId};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter, Store};

use super::{axis, insert, memory, msg, scope, t0};

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
    store.embed_messages(&dana, &[(MessageId::new("m1").unwrap(), bees.clone().into())]).unwrap();
    store.embed_messages(&scope("acme", Some("eve"), None), &[(MessageId::new("m2").unwrap(), bees.into())]).unwrap();
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
    assert!(store.nearest_messages(&dana_c1, "test:8", &axis(0, 1, 0.0), 10, None).unwrap().is_empty());
    // Everyone else is untouched.
    assert_eq!(store.search_messages(&eve, &["bees".into()], 10).unwrap().len(), 1);
    assert_eq!(store.nearest_messages(&eve, "test:8", &axis(0, 1, 0.0), 10, None).unwrap().len(), 1);
    assert_eq!(store.list(&eve, &ListFilter::default()).unwrap().len(), 1);
    assert_eq!(store.list(&other_dana, &ListFilter::default()).unwrap().len(), 1);
    assert_eq!(store.vector(&eve, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 1);
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

/// The installation's subject key: 32 bytes that are not a constant, the same on every read and
/// for every tenant (it keys receipts of the installation, not of a tenant), surviving erasures.
pub(crate) fn the_subject_key_is_made_once_for_the_installation(store: &dyn Store) {
    let acme = scope("acme", Some("dana"), None);
    let key = store.subject_key(&acme.tenant).unwrap();
    assert_eq!(key.len(), 32);
    assert!(key.iter().any(|b| *b != key[0]), "random, not a constant fill: {key:?}");
    assert_eq!(store.subject_key(&acme.tenant).unwrap(), key, "made once");
    assert_eq!(store.subject_key(&scope("globex", None, None).tenant).unwrap(), key, "one per installation");
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    store.erase_user(&acme.tenant, acme.user.as_ref().unwrap(), &event).unwrap();
    assert_eq!(store.subject_key(&acme.tenant).unwrap(), key, "an erasure keeps it");
}

/// A tenant's reset: 50 users (more than one transaction's worth) erased in one call, each as
/// its own erasure (its counts, its deletion event), while a user of the same tenant who is not
/// named and the same-named users of another tenant keep everything.
pub(crate) fn erasing_many_users_at_once_erases_each_and_nothing_else(store: &dyn Store) {
    use mnemo_core::UserId;
    use mnemo_store::{DeletionEvent, ERASURES_PER_TRANSACTION};
    const USERS: usize = 50;
    const { assert!(USERS > ERASURES_PER_TRANSACTION, "the test must span transactions") };
    let name = |i: usize| format!("user{i:02}");
    let fill = |tenant: &str, user: &str| {
        let chat = scope(tenant, Some(user), Some("c1"));
        let texts = ["I keep bees", "My dog is named Wobblewort"];
        let batch: Vec<_> = texts.iter().enumerate().map(|(i, t)| msg(&chat, &format!("m{i}"), t, t0())).collect();
        store.append_messages(&batch).unwrap();
        let owner = chat.without_chat();
        store
            .embed_messages(
                &owner,
                &[(
                    MessageId::new("m0").unwrap(),
                    Embedding { model: "test:8".into(), vector: axis(0, 1, 0.0) }.into(),
                )],
            )
            .unwrap();
        insert(store, &memory(&owner, Kind::Profile, "User keeps bees"), Some(axis(0, 1, 0.0)));
    };
    for i in 0..USERS {
        fill("acme", &name(i));
    }
    fill("acme", "keeper");
    fill("evil", &name(0));
    fill("evil", &name(USERS - 1));
    let before = store.counts().unwrap();

    let tenant = scope("acme", None, None).tenant;
    let erasures: Vec<(UserId, DeletionEvent)> = (0..USERS)
        .map(|i| {
            let event = DeletionEvent { subject: format!("s{i}"), at: t0(), digest: format!("d{i}") };
            (UserId::new(name(i)).unwrap(), event)
        })
        .collect();
    let counts = store.erase_users(&tenant, &erasures).unwrap();
    assert_eq!(counts.len(), USERS, "one set of counts per user, in order");
    for c in &counts {
        assert_eq!((c["memories"], c["messages"]), (1, 2), "{c:?}");
    }
    for i in 0..USERS {
        let (chat, owner) = (scope("acme", Some(&name(i)), Some("c1")), scope("acme", Some(&name(i)), None));
        assert!(store.list(&owner, &ListFilter::default()).unwrap().is_empty(), "{}", name(i));
        assert!(store.recent_messages(&chat, 10).unwrap().is_empty());
        assert!(store.lexical(&owner, &["bees".into()], 10).unwrap().is_empty());
        assert!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap().is_empty());
        assert!(store.search_messages(&chat, &["wobblewort".into()], 10).unwrap().is_empty());
        assert!(store.nearest_messages(&chat, "test:8", &axis(0, 1, 0.0), 10, None).unwrap().is_empty());
    }
    let after = store.counts().unwrap();
    assert_eq!(after["deletions"], before["deletions"] + USERS as u64, "one deletion event per user");
    assert_eq!(after["memories"], before["memories"] - USERS as u64);
    assert_eq!(after["messages"], before["messages"] - 2 * USERS as u64);
    // Everyone else is untouched.
    for (tenant, user) in [("acme", "keeper".to_string()), ("evil", name(0)), ("evil", name(USERS - 1))] {
        let (chat, owner) = (scope(tenant, Some(&user), Some("c1")), scope(tenant, Some(&user), None));
        assert_eq!(store.list(&owner, &ListFilter::default()).unwrap().len(), 1, "{tenant}/{user}");
        assert_eq!(store.recent_messages(&chat, 10).unwrap().len(), 2, "{tenant}/{user}");
        assert_eq!(store.lexical(&owner, &["bees".into()], 10).unwrap().len(), 1, "{tenant}/{user}");
        assert_eq!(store.vector(&owner, "test:8", &axis(0, 1, 0.0), 10).unwrap().len(), 1, "{tenant}/{user}");
        assert_eq!(store.search_messages(&chat, &["wobblewort".into()], 10).unwrap().len(), 1, "{tenant}/{user}");
        assert_eq!(store.nearest_messages(&chat, "test:8", &axis(0, 1, 0.0), 10, None).unwrap().len(), 1);
    }
    assert!(store.erase_users(&tenant, &[]).unwrap().is_empty(), "nobody to erase: nothing done");
}

/// A tenant's users are everyone the store holds anything of: a user with only messages, or only
/// a switch, is listed beside one with memories, and another tenant's users never are.
pub(crate) fn known_users_include_those_without_memories(store: &dyn Store) {
    use mnemo_core::{UserId, UserState};
    let talker = scope("acme", Some("talker"), Some("c1"));
    store.append_messages(&[msg(&talker, "m0", "ok thanks", t0())]).unwrap();
    let keeper = scope("acme", Some("keeper"), None);
    insert(store, &memory(&keeper, Kind::Profile, "User keeps bees"), None);
    let tenant = keeper.tenant;
    store.set_user_state(&tenant, &UserId::new("paused").unwrap(), UserState::Paused, t0()).unwrap();
    let other = scope("evil", Some("stranger"), Some("c1"));
    store.append_messages(&[msg(&other, "m0", "hello", t0())]).unwrap();
    let names: Vec<String> = store.known_users(&tenant).unwrap().iter().map(|u| u.to_string()).collect();
    assert_eq!(names, ["keeper", "paused", "talker"]);
}
