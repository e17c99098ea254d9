//! [`Queue`](mnemo_store::Queue): the durable background-work queue.

use chrono::Duration;
use mnemo_core::{MemoryId, Message, MessageId};
use mnemo_store::Store;

use super::{msg, scope, t0};

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
