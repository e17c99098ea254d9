//! Whole-store copies: the export query of every table whose layout both backends share. Each
//! selects the columns its decoder in [`decode::record`](crate::rows::decode::record) reads,
//! in insertion order where the schema keeps one, else bytewise, so both backends stream the
//! same rows in the same order.

use super::Dialect;
use crate::rows::{MESSAGE_COLUMNS, PROGRESS_COLUMNS};

/// The export query of `table`, or `None` for the tables whose layout is the backend's own
/// (`message_embeddings`, `memories`, `memory_sessions`).
pub(crate) fn export_sql(table: &str, d: Dialect) -> Option<String> {
    let (seq, c) = (d.seq(), d.bytewise());
    Some(match table {
        "messages" => format!("SELECT {MESSAGE_COLUMNS}, withheld FROM messages ORDER BY {seq}"),
        "history" => format!(
            "SELECT tenant, memory_id, at, event, from_status, to_status, reason, sources FROM history ORDER BY {seq}"
        ),
        "links" => format!("SELECT tenant, from_id, to_id, kind, at FROM links ORDER BY {seq}"),
        "policies" => format!(
            "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
             ORDER BY tenant{c}, agent{c}, key{c}, version"
        ),
        "traces" => {
            format!("SELECT turn_id, tenant, agent, user_id, chat, op, at, surfaced, body FROM traces ORDER BY {seq}")
        }
        "deletions" => format!("SELECT tenant, subject, at, counts, digest FROM deletions ORDER BY {seq}"),
        "extraction_queue" => format!(
            "SELECT tenant, agent, user_id, chat, message_id, state, attempts, retry_at, last_error, fallback, \
             queued_at FROM extraction_queue ORDER BY {seq}"
        ),
        "chat_progress" => format!(
            "SELECT {PROGRESS_COLUMNS}, claimed_until FROM chat_progress \
             ORDER BY tenant{c}, agent{c}, user_id{c}, chat{c}"
        ),
        "observations" => format!(
            "SELECT {}, m.model, m.embedding FROM observations m ORDER BY m.id{c}",
            super::observations::COLUMNS
        ),
        "user_states" => {
            format!("SELECT tenant, user_id, state, updated_at FROM user_states ORDER BY tenant{c}, user_id{c}")
        }
        _ => return None,
    })
}

/// The check that a queue row's message is in the trace of its chat (parameters 1 to 4 the
/// chat's key parts, 5 the message id): an import refuses a row naming one it has not written.
pub(crate) const QUEUED_MESSAGE_EXISTS: &str =
    "SELECT 1 FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND id = $5";
