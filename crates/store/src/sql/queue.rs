//! The background-work queue's statements. Parameters 1 to 4 are always the chat's key parts.

use super::Dialect;
use crate::rows::{PROGRESS_COLUMNS, message_columns_of_m};

/// Recomputes a chat's counts and earliest retry from its queue rows, in the transaction that
/// changed them, so they can never drift.
pub(crate) const RECOUNT: &str = "UPDATE chat_progress AS p SET pending = s.pending, retrying = s.retrying, \
     retry_at = s.retry_at FROM ( \
       SELECT count(*) FILTER (WHERE state = 'pending') AS pending, \
              count(*) FILTER (WHERE state = 'fallback') AS retrying, \
              min(retry_at) FILTER (WHERE state = 'fallback') AS retry_at \
       FROM extraction_queue WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4) AS s \
     WHERE p.tenant = $1 AND p.agent = $2 AND p.user_id = $3 AND p.chat = $4";

/// Counts `$5` newly registered messages, the latest at `$6`, toward the chat's progress.
pub(crate) const COUNT_REGISTERED: &str = "INSERT INTO chat_progress (tenant, agent, user_id, chat, messages, \
     last_message_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET \
     messages = chat_progress.messages + excluded.messages, \
     last_message_at = CASE WHEN excluded.last_message_at > chat_progress.last_message_at \
       THEN excluded.last_message_at ELSE chat_progress.last_message_at END";

/// Chats with work at `$1` (pending, a retry due, `$2` messages without a memo, activity since
/// `$3`), least recently active first, at most `$4`.
pub(crate) fn chats_with_work() -> String {
    format!(
        "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE pending > 0 OR retry_at <= $1 \
         OR messages - memo_covered >= $2 OR last_message_at >= $3 \
         ORDER BY last_message_at, tenant, agent, user_id, chat LIMIT $4"
    )
}

/// One chat's progress.
pub(crate) fn chat_progress() -> String {
    format!(
        "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4"
    )
}

/// Claims the chat until `$5` unless a claim still runs at `$6`.
pub(crate) const CLAIM: &str = "UPDATE chat_progress SET claimed_until = $5 WHERE tenant = $1 AND agent = $2 \
     AND user_id = $3 AND chat = $4 AND (claimed_until IS NULL OR claimed_until <= $6)";

/// Gives a claim back.
pub(crate) const RELEASE: &str = "UPDATE chat_progress SET claimed_until = NULL WHERE tenant = $1 AND agent = $2 \
     AND user_id = $3 AND chat = $4";

/// The chat's oldest queued messages in state `$5` (fallback rows once due by `$6`), at most
/// `$7`, in registration order; read by [`decode::queued`](crate::rows::decode::queued).
pub(crate) fn queued(d: Dialect) -> String {
    format!(
        "SELECT {}, q.state, q.attempts, q.retry_at, q.last_error, q.fallback FROM extraction_queue q \
         JOIN messages m ON m.tenant = q.tenant AND m.user_id = q.user_id AND m.chat = q.chat AND m.id = q.message_id \
         WHERE q.tenant = $1 AND q.agent = $2 AND q.user_id = $3 AND q.chat = $4 AND q.state = $5 \
         AND (q.state <> 'fallback' OR q.retry_at <= $6) ORDER BY q.{} LIMIT $7",
        message_columns_of_m(),
        d.seq()
    )
}

/// Keeps a batch's error `$5` on its chat.
pub(crate) const KEEP_ERROR: &str = "UPDATE chat_progress SET last_error = $5 WHERE tenant = $1 AND agent = $2 \
     AND user_id = $3 AND chat = $4";

/// The chat's registered messages in registration order, `$5` from position `$6`.
pub(crate) fn chat_messages(d: Dialect) -> String {
    format!(
        "SELECT {} FROM extraction_queue q JOIN messages m ON m.tenant = q.tenant AND m.user_id = q.user_id AND m.chat = q.chat AND m.id = q.message_id \
         WHERE q.tenant = $1 AND q.agent = $2 AND q.user_id = $3 AND q.chat = $4 ORDER BY q.{} LIMIT $5 OFFSET $6",
        message_columns_of_m(),
        d.seq()
    )
}

/// Moves a cursor from `$5` to `$6` if it still stands at `$5`; `$7` is the gap's reason.
pub(crate) fn advance(cursor: crate::ChatCursor) -> &'static str {
    match cursor {
        crate::ChatCursor::Memo => {
            "UPDATE chat_progress SET memo_covered = $6, \
             memo_gaps = memo_gaps + CASE WHEN CAST($7 AS TEXT) IS NULL THEN 0 ELSE 1 END, \
             last_error = coalesce($7, last_error) WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
             AND memo_covered = $5 AND messages >= $6"
        }
        crate::ChatCursor::Episode => {
            "UPDATE chat_progress SET episode_checked = $6, last_error = coalesce($7, last_error) \
             WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND episode_checked = $5 AND messages >= $6"
        }
    }
}

/// The user's messages with the agent, every chat, with `$4 <= at < $5`, oldest first, at most
/// `$6` (parameters 1 to 3: tenant, agent, user).
pub(crate) fn user_messages(d: Dialect) -> String {
    format!(
        "SELECT {} FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
         AND at >= $4 AND at < $5 ORDER BY at, {} LIMIT $6",
        crate::rows::MESSAGE_COLUMNS,
        d.seq()
    )
}

/// Records a settlement on the batch's rows: state `$5`, attempts `$6`, retry `$7`, error
/// `$8`, fallback memories `$9` (each kept as it was when null); the message ids from `$10` on.
pub(crate) fn settle(d: Dialect, ids: usize) -> String {
    format!(
        "UPDATE extraction_queue SET state = $5, attempts = coalesce($6, attempts), retry_at = $7, \
         last_error = coalesce($8, last_error), fallback = coalesce($9, fallback) \
         WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND message_id {}",
        d.any(10, ids)
    )
}
