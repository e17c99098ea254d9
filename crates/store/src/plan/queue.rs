//! What the background-work queue writes: the state a registration starts in, and the columns a
//! settlement sets on its batch's rows. A request naming no message writes nothing.

use chrono::{DateTime, Utc};
use mnemo_core::{MessageId, Scope};

use crate::queue::{QueueState, Settlement};

/// The memo threshold `chats_with_work` compares uncovered messages against: at least one, so a
/// threshold of zero cannot make every chat due forever.
pub(crate) fn memo_threshold(memo_every: usize) -> i64 {
    i64::try_from(memo_every).unwrap_or(i64::MAX).max(1)
}

/// Messages of one chat to register with background work.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Registration<'a> {
    /// The chat's key parts.
    pub(crate) chat: [&'a str; 4],
    /// The messages, in registration order.
    pub(crate) messages: &'a [MessageId],
    /// The state new rows start in: `pending` when they await extraction, `done` when the
    /// heuristic already ran inline.
    pub(crate) state: QueueState,
    /// When they were registered.
    pub(crate) at: DateTime<Utc>,
}

/// Plans registering `messages` of the scope's chat; `None` when there is none.
pub(crate) fn register<'a>(
    scope: &'a Scope,
    messages: &'a [MessageId],
    extract: bool,
    at: DateTime<Utc>,
) -> Option<Registration<'a>> {
    let state = if extract { QueueState::Pending } else { QueueState::Done };
    (!messages.is_empty()).then(|| Registration { chat: scope.key_parts(), messages, state, at })
}

/// How one batch's rows end: the columns a settlement sets on every one of them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settling<'a> {
    /// The chat's key parts.
    pub(crate) chat: [&'a str; 4],
    /// The batch's messages.
    pub(crate) messages: &'a [MessageId],
    /// What each row becomes.
    pub(crate) row: SettledRow<'a>,
}

/// Plans settling `messages` of the scope's chat; `None` when there is none.
pub(crate) fn settle<'a>(scope: &'a Scope, messages: &'a [MessageId], outcome: &'a Settlement) -> Option<Settling<'a>> {
    (!messages.is_empty()).then(|| Settling { chat: scope.key_parts(), messages, row: outcome.row() })
}

/// What a settlement writes on each of its queue rows; every backend stores exactly this.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SettledRow<'a> {
    /// The rows' new state: a batch that gave up leaves the queue as done.
    pub(crate) state: QueueState,
    /// Attempts so far, when this settlement counts one.
    pub(crate) attempts: Option<u32>,
    /// When to try again (fallback only).
    pub(crate) retry_at: Option<DateTime<Utc>>,
    /// The error to keep on the rows and on the chat.
    pub(crate) error: Option<&'a str>,
    /// The fallback's memories, as the JSON list the rows hold.
    pub(crate) fallback: Option<String>,
}

impl Settlement {
    /// The columns this settlement writes.
    pub(crate) fn row(&self) -> SettledRow<'_> {
        let none = SettledRow { state: QueueState::Done, attempts: None, retry_at: None, error: None, fallback: None };
        match self {
            Settlement::Done => none,
            Settlement::Fallback { attempts, retry_at, error, memories } => SettledRow {
                state: QueueState::Fallback,
                attempts: Some(*attempts),
                retry_at: Some(*retry_at),
                error: Some(error),
                fallback: Some(serde_json::to_string(memories).expect("ids serialise")),
            },
            Settlement::GaveUp { attempts, error } => {
                SettledRow { attempts: Some(*attempts), error: Some(error), ..none }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use mnemo_core::{MemoryId, MessageId, Scope};

    use super::{register, settle};
    use crate::queue::{QueueState, Settlement};

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    #[test]
    fn nothing_named_is_nothing_written_and_inline_extraction_registers_as_done() {
        let chat = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
        let ids = [MessageId::new("m1").unwrap()];
        assert!(register(&chat, &[], true, t0()).is_none());
        assert!(settle(&chat, &[], &Settlement::Done).is_none());
        assert_eq!(register(&chat, &ids, true, t0()).unwrap().state, QueueState::Pending);
        assert_eq!(register(&chat, &ids, false, t0()).unwrap().state, QueueState::Done);
    }

    #[test]
    fn a_fallback_keeps_its_memories_and_giving_up_leaves_the_queue() {
        let m = MemoryId::new();
        let fell = Settlement::Fallback { attempts: 2, retry_at: t0(), error: "down".into(), memories: vec![m] };
        let row = fell.row();
        assert_eq!((row.state, row.attempts, row.error), (QueueState::Fallback, Some(2), Some("down")));
        assert_eq!(row.fallback, Some(serde_json::to_string(&[m]).unwrap()));
        let gave_up = Settlement::GaveUp { attempts: 4, error: "gone".into() };
        let row = gave_up.row();
        assert_eq!((row.state, row.attempts, row.retry_at, row.fallback), (QueueState::Done, Some(4), None, None));
        assert_eq!(Settlement::Done.row().error, None);
    }
}
