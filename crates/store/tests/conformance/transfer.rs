//! [`Transfer`](mnemo_store::Transfer): whole-store copies between backends, checked row by row.

use chrono::Duration;
use mnemo_core::trace::TraceOp;
use mnemo_core::{Kind, MemoryId, MessageId, Policy, Scope};
use mnemo_store::{Change, ChangeSet, Embedding, ListFilter, MessageVectors, Store};

use super::{axis, correction, envelope, insert, memory, msg, scope, t0};

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
    // m1 has passages of its own, which a copy carries in order.
    let m1 = MessageVectors { embedding: emb(axis(0, 1, 0.1)), passages: vec![axis(4, 5, 0.1), axis(6, 7, 0.0)] };
    store.embed_messages(&c1.without_chat(), &[(id("m1"), m1), (id("m4"), emb(axis(2, 3, 0.2)).into())]).unwrap();
    store.embed_messages(&evil, &[(id("m1"), emb(axis(0, 1, 0.0)).into())]).unwrap();
    store
        .apply(&ChangeSet {
            tenant: c1.tenant.clone(),
            at: t0(),
            changes: vec![Change::Withhold { owner: c1.clone(), messages: vec![id("m3")] }],
        })
        .unwrap();

    let dana = scope("acme", Some("dana"), None);
    let mut bees = memory(&dana, Kind::Profile, "User keeps bees in the garden");
    bees.provenance.rule = Some("episodic.capture".into());
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
            changes: [
                correction(&old_job, &new_job, axis(5, 2, 0.1), "m2"),
                vec![
                    Change::Reinforce {
                        id: bees.id,
                        sources: vec![id("m2")],
                        session: Some("c1".into()),
                        reason: "again".into(),
                    },
                    Change::Reinforce {
                        id: bees.id,
                        sources: vec![],
                        session: Some("c2".into()),
                        reason: "again".into(),
                    },
                ],
            ]
            .concat(),
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
    let env = envelope("turn-copy", &c1, TraceOp::Context, t0() + Duration::days(2), vec![bees.id]);
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
    // Documents: agent-wide with a vector, one user's without, another tenant's.
    let tuning = mnemo_core::document::DocumentsTuning::default();
    let doc = |owner: Scope, source: &str, text: &str| {
        mnemo_core::Document::new(owner, mnemo_core::DocumentKind::Research, source, text, t0(), &tuning).unwrap()
    };
    let coder = Scope::parse("acme", Some("coder"), None, None).unwrap();
    store
        .put_document(
            &doc(coder, "https://sqlite.org/wal.html", "# WAL\n\nReaders never block."),
            Some(&emb(axis(6, 7, 0.1))),
        )
        .unwrap();
    store.put_document(&doc(scope("acme", Some("dana"), None), "", "Dana's notes."), None).unwrap();
    store
        .put_document(&doc(scope("evil", Some("dana"), None), "a.rs", "fn main() {}"), Some(&emb(axis(6, 7, 0.2))))
        .unwrap();
    // Observations: one with a vector and a note, one without either, another tenant's.
    let observed = |tenant: &str, chat: &str, text: Option<&str>| {
        let owner = Scope::parse(tenant, Some("coder"), Some("dana"), Some(chat)).unwrap();
        mnemo_core::Observation::new(owner, "edit_file", "view.swift", mnemo_core::Outcome::Corrected, text, t0())
            .unwrap()
    };
    store.put_observation(&observed("acme", "s1", Some("check labels")), Some(&emb(axis(2, 5, 0.1)))).unwrap();
    store.put_observation(&observed("acme", "s2", None), None).unwrap();
    store.put_observation(&observed("evil", "s1", None), Some(&emb(axis(2, 5, 0.2)))).unwrap();
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
            ids_of(target.nearest_messages(&scope, "test:8", &axis(0, 1, 0.0), 20, None).unwrap()),
            ids_of(source.nearest_messages(&scope, "test:8", &axis(0, 1, 0.0), 20, None).unwrap())
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
