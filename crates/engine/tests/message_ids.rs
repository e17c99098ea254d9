//! Message ids: the client's, unique within one user's chat. Another user of the tenant may send
//! the same id and it is their own message; identical turns without ids are two messages; a
//! replay is still a no-op.

use chrono::Duration;
use mnemo::core::NewMessage;

use crate::common::{chat, hashed, t0};

#[test]
fn another_user_may_send_an_id_someone_already_used() {
    let f = hashed();
    let (dana, eve) = (chat("dana", "c1"), chat("eve", "c1"));
    let at = t0();
    let r = f.memory.ingest(&dana, vec![NewMessage::user("I have a dog named Biscuit.", at).with_id("m1")]).unwrap();
    assert_eq!((r.appended, r.duplicates), (1, 0));
    let r = f.memory.ingest(&eve, vec![NewMessage::user("I live in Lisbon.", at).with_id("m1")]).unwrap();
    assert_eq!((r.appended, r.duplicates), (1, 0), "Eve's message is her own, not a duplicate of Dana's");
    assert!(f.active_contents(&eve).iter().any(|c| c.contains("Lisbon")), "{:?}", f.active_contents(&eve));
    // Replay within the same chat stays idempotent.
    let r = f.memory.ingest(&eve, vec![NewMessage::user("I live in Lisbon.", at).with_id("m1")]).unwrap();
    assert_eq!((r.appended, r.duplicates), (0, 1));
}

#[test]
fn a_paused_user_reusing_an_id_withholds_nothing_of_another_user() {
    let f = hashed();
    let (dana, eve) = (chat("dana", "c1"), chat("eve", "c1"));
    let said = "We watched a documentary about octopuses last night, they have three hearts!";
    f.memory.ingest(&dana, vec![NewMessage::user(said, t0()).with_id("m1")]).unwrap();
    f.memory.pause(&eve).unwrap();
    let r = f.memory.ingest(&eve, vec![NewMessage::user("Octopus facts, paused.", t0()).with_id("m1")]).unwrap();
    assert_eq!(r.appended, 1);
    f.clock.set(t0() + Duration::days(20));
    let recall = f.memory.recall(&chat("dana", "c2"), "how many hearts does an octopus have", Some(5)).unwrap();
    assert_eq!(recall.excerpts.len(), 1, "Dana's message is still hers to recall: {:#?}", recall.excerpts);
    assert_eq!(recall.excerpts[0].message.content, said);
}

#[test]
fn identical_turns_without_ids_are_two_messages_and_replay_is_a_no_op() {
    let f = hashed();
    let c1 = chat("dana", "c1");
    let batch = vec![NewMessage::user("ok", t0()), NewMessage::user("ok", t0())];
    let r = f.memory.ingest(&c1, batch.clone()).unwrap();
    assert_eq!((r.appended, r.duplicates), (2, 0));
    let r = f.memory.ingest(&c1, batch).unwrap();
    assert_eq!((r.appended, r.duplicates), (0, 2));
    assert_eq!(f.memory.store().recent_messages(&c1, 10).unwrap().len(), 2);
}
