//! Trace statements both backends share: the latest turns of a chat, messages by id, and the
//! turns around an archival hit.

use super::Dialect;
use crate::rows::MESSAGE_COLUMNS;

/// The latest `$5` messages of the chat `$1`..`$4`, newest first.
pub(crate) fn recent(d: Dialect) -> String {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
         AND chat = $4 ORDER BY at DESC, {} DESC LIMIT $5",
        d.seq()
    )
}

/// `n` messages of tenant `$1` by id (from `$2` on), oldest first.
pub(crate) fn by_ids(d: Dialect, n: usize) -> String {
    format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND id {} ORDER BY at, {}", d.any(2, n), d.seq())
}

/// Up to `$3` messages before and after message `$2` of tenant `$1` in its own chat, never
/// withheld: the neighbourhood of an archival hit, read through the alias `n`.
pub(crate) fn adjacent(d: Dialect) -> String {
    let cols = MESSAGE_COLUMNS.split(", ").map(|c| format!("n.{c}")).collect::<Vec<_>>().join(", ");
    let order = d.seq();
    let side = |name: &str, cmp: &str, dir: &str| {
        format!(
            "SELECT * FROM (SELECT {cols} FROM messages h JOIN messages n ON n.tenant = h.tenant \
             AND n.agent = h.agent AND n.user_id = h.user_id AND n.chat = h.chat \
             WHERE h.tenant = $1 AND h.id = $2 AND NOT n.withheld AND (n.at, n.{order}) {cmp} (h.at, h.{order}) \
             ORDER BY n.at {dir}, n.{order} {dir} LIMIT $3) AS {name}"
        )
    };
    format!("{} UNION ALL {}", side("before_hit", "<", "DESC"), side("after_hit", ">", "ASC"))
}
