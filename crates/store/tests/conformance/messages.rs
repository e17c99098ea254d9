//! [`Messages`](mnemo_store::Messages): the trace, and archival recall over it.

use chrono::Duration;
use mnemo_core::common::{SAMPLE, TermSpread};
use mnemo_core::{Message, MessageId, Scope};
use mnemo_store::{Change, ChangeSet, Embedding, MessageVectors, Store, StoreError};

use super::{axis, msg, scope, t0};

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
    assert_eq!(store.messages(&c1, &[MessageId::new("b").unwrap()]).unwrap()[0].content, "second");
    assert!(store.messages(&other_tenant, &[MessageId::new("b").unwrap()]).unwrap().is_empty());
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
    store
        .embed_messages(&dana, &[(id("d1"), emb(axis(0, 1, 0.1)).into()), (id("d2"), emb(axis(2, 3, 0.1)).into())])
        .unwrap();
    store.embed_messages(&eve, &[(id("e1"), emb(axis(0, 1, 0.0)).into())]).unwrap();
    // Another tenant cannot attach a vector to this tenant's message.
    store.embed_messages(&other, &[(id("d2"), emb(axis(0, 1, 0.0)).into())]).unwrap();
    let near = store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 10, None).unwrap();
    assert_eq!(near.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d1", "d2"]);
    assert!(near[0].1 > 0.95 && near[1].1 < 0.2, "{near:?}");
    let in_c2 = store.nearest_messages(&c2, "test:8", &axis(0, 1, 0.0), 10, None).unwrap();
    assert_eq!(in_c2.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d2"]);
    assert_eq!(store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 1, None).unwrap().len(), 1);
    assert!(store.nearest_messages(&dana, "other-model", &axis(0, 1, 0.0), 10, None).unwrap().is_empty());
    assert!(matches!(
        store.nearest_messages(&dana, "test:8", &[1.0, 0.0], 10, None),
        Err(StoreError::Dimension { expected: 8, got: 2, .. })
    ));
    // Within a time range: only what was said inside it (end exclusive), however far it ranks.
    let minute = |m: i64| t0() + Duration::minutes(m);
    let said = |r: std::ops::Range<chrono::DateTime<chrono::Utc>>| {
        let hits = store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 10, Some(&r)).unwrap();
        hits.into_iter().map(|h| h.0.as_str().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(said(minute(1)..minute(2)), vec!["d2"]);
    assert_eq!(said(minute(0)..minute(1)), vec!["d1"]);
    assert_eq!(said(minute(0)..minute(2)), vec!["d1", "d2"]);
    assert!(said(minute(2)..minute(60)).is_empty());

    // A withheld message leaves both halves for good (even re-embedding it is ignored), stays in
    // the trace, and another tenant cannot withhold it.
    let withhold = |tenant: &Scope, ids: &[&str]| ChangeSet {
        tenant: tenant.tenant.clone(),
        at: t0(),
        changes: vec![Change::Withhold { owner: tenant.clone(), messages: ids.iter().map(|i| id(i)).collect() }],
    };
    store.apply(&withhold(&other, &["d1"])).unwrap();
    assert_eq!(store.search_messages(&dana, &["greyhound".into()], 10).unwrap().len(), 1);
    store.apply(&withhold(&c1, &["d1", "no-such-message"])).unwrap();
    assert!(store.search_messages(&dana, &["greyhound".into()], 10).unwrap().is_empty());
    store.embed_messages(&c1, &[(id("d1"), emb(axis(0, 1, 0.1)).into())]).unwrap();
    let near = store.nearest_messages(&dana, "test:8", &axis(0, 1, 0.0), 10, None).unwrap();
    assert_eq!(near.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["d2"]);
    assert_eq!(store.messages(&c1, &[id("d1")]).unwrap().len(), 1);
    assert_eq!(store.search_messages(&eve, &["greyhound".into()], 10).unwrap().len(), 1);
}

/// A message with passages is as close to a query as the closest of its vectors; embedding it
/// again replaces its passages, and withholding it takes them out of recall with it.
pub(crate) fn a_message_is_as_close_as_its_closest_passage(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let dana = scope("acme", Some("dana"), None);
    store
        .append_messages(&[
            msg(&c1, "p1", "Thanks! We adopted a puppy. The pottery class starts Tuesday.", t0()),
            msg(&c1, "p2", "Pottery, mostly bowls", t0() + Duration::minutes(1)),
        ])
        .unwrap();
    let id = |s: &str| MessageId::new(s).unwrap();
    let emb = |v: Vec<f32>| Embedding { model: "test:8".into(), vector: v };
    let p1 = MessageVectors { embedding: emb(axis(0, 1, 0.0)), passages: vec![axis(2, 3, 0.0), axis(4, 5, 0.0)] };
    store.embed_messages(&c1, &[(id("p1"), p1), (id("p2"), emb(axis(2, 3, 0.5)).into())]).unwrap();
    let near = |q: Vec<f32>| store.nearest_messages(&dana, "test:8", &q, 10, None).unwrap();
    // The second passage alone makes p1 close; the whole vector alone would not.
    let hits = near(axis(4, 5, 0.0));
    assert_eq!(hits[0].0, id("p1"));
    assert!(hits[0].1 > 0.99 && hits[1].1 < 0.1, "{hits:?}");
    // The first passage is closer than p2's own vector.
    let hits = near(axis(2, 3, 0.0));
    assert_eq!(hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), vec!["p1", "p2"]);
    assert!(hits[0].1 > 0.99 && hits[1].1 < 0.95, "{hits:?}");
    // The whole vector still counts.
    assert_eq!(near(axis(0, 1, 0.0))[0].0, id("p1"));
    // Embedding again replaces the passages.
    store.embed_messages(&c1, &[(id("p1"), emb(axis(0, 1, 0.0)).into())]).unwrap();
    assert!(near(axis(4, 5, 0.0)).iter().all(|h| h.1 < 0.1));
    let p1 = MessageVectors { embedding: emb(axis(0, 1, 0.0)), passages: vec![axis(4, 5, 0.0)] };
    store.embed_messages(&c1, &[(id("p1"), p1)]).unwrap();
    assert_eq!(near(axis(4, 5, 0.0))[0].0, id("p1"));
    // Withheld: neither its whole vector nor a passage finds it.
    store
        .apply(&ChangeSet {
            tenant: c1.tenant.clone(),
            at: t0(),
            changes: vec![Change::Withhold { owner: c1, messages: vec![id("p1")] }],
        })
        .unwrap();
    assert!(near(axis(4, 5, 0.0)).iter().all(|h| h.0 != id("p1")));
}

/// A hit's neighbours are the turns right around it in its own chat: never another chat's,
/// another tenant's or a withheld one.
/// A message is stemmed in its own language and a query in that language finds it: "wohnst"
/// finds "wohne", "hermanas" finds "hermana". English stays English.
pub(crate) fn each_language_is_searched_with_its_own_stems(store: &dyn Store) {
    let c = scope("acme", Some("lucia"), Some("c1"));
    store
        .append_messages(&[
            msg(&c, "de", "Ich wohne seit zwei Jahren in Hamburg und arbeite als Hebamme.", t0()),
            msg(&c, "es", "Vivo en Valencia con mi hermana y sus dos perros.", t0() + Duration::minutes(1)),
            msg(&c, "en", "The pottery classes start on Tuesday.", t0() + Duration::minutes(2)),
        ])
        .unwrap();
    let user = scope("acme", Some("lucia"), None);
    let found = |terms: &[&str]| -> Vec<String> {
        let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
        store.search_messages(&user, &terms, 10).unwrap().into_iter().map(|h| h.0.as_str().to_string()).collect()
    };
    assert_eq!(found(&["wo", "wohnst", "du"]), ["de"]);
    assert_eq!(found(&["con", "quién", "vive", "tu", "hermanas"]), ["es"]);
    assert_eq!(found(&["pottery", "class"]), ["en"]);
}

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
    let sides = |ids: &[&str], span: usize| -> Vec<(String, String, bool)> {
        let ids: Vec<MessageId> = ids.iter().map(|s| id(s)).collect();
        let mut v: Vec<(String, String, bool)> = store
            .adjacent_messages(&c1, &ids, span)
            .unwrap()
            .into_iter()
            .map(|a| (a.hit.as_str().to_string(), a.message.id.as_str().to_string(), a.after))
            .collect();
        v.sort();
        v
    };
    let got = |ids: &[&str], span: usize| -> Vec<(String, String)> {
        sides(ids, span).into_iter().map(|(h, m, _)| (h, m)).collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    // Each neighbour says on which side of its hit it was said: the turn after a question is
    // its answer.
    let side = |a: &str, b: &str, after: bool| (a.to_string(), b.to_string(), after);
    assert_eq!(sides(&["n2"], 1), vec![side("n2", "n1", false), side("n2", "n3", true)]);
    assert_eq!(got(&["n1"], 2), vec![pair("n1", "n2"), pair("n1", "n3")], "the first turn has no turn before it");
    assert!(sides(&["n1"], 2).iter().all(|(_, _, after)| *after));
    assert_eq!(got(&["n2", "n6"], 1), vec![pair("n2", "n1"), pair("n2", "n3"), pair("n6", "n5")]);
    assert!(got(&["nope"], 1).is_empty());
    assert!(got(&["n2"], 0).is_empty());
    // Another tenant sees nothing around this tenant's message.
    assert!(store.adjacent_messages(&scope("evil", Some("dana"), None), &[id("n2")], 1).unwrap().is_empty());
    // A withheld message is never a neighbour.
    let withhold = ChangeSet {
        tenant: c1.tenant.clone(),
        at: at(7),
        changes: vec![Change::Withhold { owner: c1.clone(), messages: vec![id("n5")] }],
    };
    store.apply(&withhold).unwrap();
    assert_eq!(got(&["n4"], 1), vec![pair("n4", "n3"), pair("n4", "n6")]);
    // A batch sent without times shares one: the order it was sent in tells the sides.
    let c3 = scope("acme", Some("dana"), Some("c3"));
    let batch: Vec<Message> = ["b1", "b2", "b3"].iter().map(|i| msg(&c3, i, "same moment", at(9))).collect();
    store.append_messages(&batch).unwrap();
    let mut around: Vec<(String, bool)> = store
        .adjacent_messages(&c3, &[id("b2")], 1)
        .unwrap()
        .into_iter()
        .map(|a| (a.message.id.as_str().to_string(), a.after))
        .collect();
    around.sort();
    assert_eq!(around, vec![("b1".to_string(), false), ("b3".to_string(), true)]);
}

/// A message id is the client's, unique within its tenant, user and chat only: two users of one
/// tenant (or one user in two chats) may send the same id, and each gets their own message,
/// their own vector, their own queue row and their own withholding. Replay stays a no-op.
pub(crate) fn message_ids_are_scoped_to_user_and_chat(store: &dyn Store) {
    let dana = scope("acme", Some("dana"), Some("c1"));
    let eve = scope("acme", Some("eve"), Some("c1"));
    let dana_c2 = scope("acme", Some("dana"), Some("c2"));
    let id = |s: &str| MessageId::new(s).unwrap();
    assert_eq!(store.append_messages(&[msg(&dana, "m1", "Dana's greyhound is called Biscuit", t0())]).unwrap(), [true]);
    assert_eq!(store.append_messages(&[msg(&eve, "m1", "Eve's greyhound is called Pepper", t0())]).unwrap(), [true]);
    assert_eq!(store.append_messages(&[msg(&dana_c2, "m1", "A greyhound in another chat", t0())]).unwrap(), [true]);
    assert_eq!(store.append_messages(&[msg(&eve, "m1", "Eve's greyhound is called Pepper", t0())]).unwrap(), [false]);
    assert_eq!(store.recent_messages(&eve, 10).unwrap().len(), 1, "replay within a chat is idempotent");

    // Lookups by id stay with the user (and the chat, when the scope names one).
    let text = |owner: &Scope| -> Vec<String> {
        store.messages(owner, &[id("m1")]).unwrap().into_iter().map(|m| m.content).collect()
    };
    assert_eq!(text(&eve), ["Eve's greyhound is called Pepper"]);
    assert_eq!(text(&dana), ["Dana's greyhound is called Biscuit"]);
    assert_eq!(text(&dana.without_chat()).len(), 2, "the user's own chats, never Eve's");

    // Vectors attach to the owner's message only.
    let emb = |v: Vec<f32>| Embedding { model: "test:8".into(), vector: v };
    store.embed_messages(&eve, &[(id("m1"), emb(axis(0, 1, 0.0)).into())]).unwrap();
    let user = |u: &str| scope("acme", Some(u), None);
    assert_eq!(store.nearest_messages(&user("eve"), "test:8", &axis(0, 1, 0.0), 10, None).unwrap().len(), 1);
    assert!(store.nearest_messages(&user("dana"), "test:8", &axis(0, 1, 0.0), 10, None).unwrap().is_empty());

    // Withholding one user's message (a paused user, a forgotten memory) leaves the other's.
    let withhold = ChangeSet {
        tenant: eve.tenant.clone(),
        at: t0(),
        changes: vec![Change::Withhold { owner: eve.clone(), messages: vec![id("m1")] }],
    };
    store.apply(&withhold).unwrap();
    assert!(store.search_messages(&user("eve"), &["greyhound".into()], 10).unwrap().is_empty());
    assert!(store.nearest_messages(&user("eve"), "test:8", &axis(0, 1, 0.0), 10, None).unwrap().is_empty());
    assert_eq!(store.search_messages(&user("dana"), &["greyhound".into()], 10).unwrap().len(), 2);
    assert_eq!(store.adjacent_messages(&eve, &[id("m1")], 1).unwrap().len(), 0);

    // The queue registers each user's message, and reads each back.
    assert_eq!(store.enqueue(&dana, &[id("m1")], true, t0()).unwrap(), 1);
    assert_eq!(store.enqueue(&eve, &[id("m1")], true, t0()).unwrap(), 1);
    assert_eq!(store.enqueue(&eve, &[id("m1")], true, t0()).unwrap(), 0, "registration is idempotent");
    let queued =
        |s: &Scope| -> Vec<String> { store.chat_messages(s, 0, 10).unwrap().into_iter().map(|m| m.content).collect() };
    assert_eq!(queued(&dana), ["Dana's greyhound is called Biscuit"]);
    assert_eq!(queued(&eve), ["Eve's greyhound is called Pepper"]);
}

/// A term's spread counts the user's unwithheld messages that contain it, matched (stemmed) as
/// the lexical half matches it, within the archive the scope reaches, over the latest
/// [`SAMPLE`] messages only.
pub(crate) fn terms_are_counted_over_the_users_latest_messages(store: &dyn Store) {
    let c1 = scope("acme", Some("dana"), Some("c1"));
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let dana = scope("acme", Some("dana"), None);
    let second = |i: i64| t0() + Duration::seconds(i);
    let mut batch: Vec<_> = (0..10)
        .map(|i| {
            let text = if i < 2 { "Ann: the pottery classes start soon" } else { "Ann: nothing much" };
            msg(&c1, &format!("a{i}"), text, second(i))
        })
        .collect();
    batch.extend((0..5).map(|i| {
        msg(&c2, &format!("b{i}"), if i == 0 { "Ben: did Ann call?" } else { "Ben: busy day" }, second(10 + i))
    }));
    store.append_messages(&batch).unwrap();
    store.append_messages(&[msg(&scope("acme", Some("eve"), Some("c1")), "e", "Ann: pottery", second(20))]).unwrap();
    store.append_messages(&[msg(&scope("evil", Some("dana"), Some("c1")), "x", "Ann: pottery", second(20))]).unwrap();
    let terms: Vec<String> = ["ann", "class", "absent"].map(String::from).to_vec();
    let spread = |s: &Scope| store.term_spread(s, &terms).unwrap();
    assert_eq!(spread(&dana), TermSpread { messages: 15, containing: vec![11, 2, 0] });
    // A scope naming a chat counts that chat only; a scope without a user has no archive.
    assert_eq!(spread(&c2), TermSpread { messages: 5, containing: vec![1, 0, 0] });
    assert_eq!(spread(&scope("acme", None, None)), TermSpread::default());
    // A withheld message counts no more.
    let withhold = ChangeSet {
        tenant: c1.tenant.clone(),
        at: t0(),
        changes: vec![Change::Withhold { owner: c1, messages: vec![MessageId::new("a0").unwrap()] }],
    };
    store.apply(&withhold).unwrap();
    assert_eq!(spread(&dana), TermSpread { messages: 14, containing: vec![10, 1, 0] });

    // Past the sample, only the latest messages are counted: the oldest say "zebra".
    let zoe = scope("acme", Some("zoe"), Some("c1"));
    let mut many: Vec<_> = (0..20).map(|i| msg(&zoe, &format!("z{i}"), "Zoe: a zebra", second(i))).collect();
    many.extend((0..SAMPLE).map(|i| msg(&zoe, &format!("n{i}"), "Zoe: news", second(100 + i as i64))));
    store.append_messages(&many).unwrap();
    let zoe_terms: Vec<String> = vec!["zebra".into(), "zoe".into()];
    let latest = store.term_spread(&scope("acme", Some("zoe"), None), &zoe_terms).unwrap();
    assert_eq!(latest, TermSpread { messages: SAMPLE, containing: vec![0, SAMPLE] });
}
