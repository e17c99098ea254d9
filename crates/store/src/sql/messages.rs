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

/// `n` messages by id (from `$4` on) of tenant `$1`, user `$2` and chat `$3` (see
/// [`owner_key`](crate::messages::owner_key)), oldest first.
pub(crate) fn by_ids(d: Dialect, n: usize) -> String {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND $2 IN ('', user_id) AND $3 IN ('', chat) \
         AND id {} ORDER BY at, {}",
        d.any(4, n),
        d.seq()
    )
}

/// Up to `$5` messages before and after message `$4` of tenant `$1`, user `$2` and chat `$3`
/// (see [`owner_key`](crate::messages::owner_key)) in its own chat, never withheld: the
/// neighbourhood of an archival hit, read through the alias `n`, each row's last column
/// telling whether it came after the hit. `CROSS JOIN` makes SQLite find
/// the hit first (by id) and then walk its chat; left to choose, it walked every message of the
/// tenant. PostgreSQL plans it as any inner join.
pub(crate) fn adjacent(d: Dialect) -> String {
    let cols = MESSAGE_COLUMNS.split(", ").map(|c| format!("n.{c}")).collect::<Vec<_>>().join(", ");
    let order = d.seq();
    let side = |name: &str, cmp: &str, dir: &str, after: &str| {
        format!(
            "SELECT * FROM (SELECT {cols}, {after} AS after_it FROM messages h CROSS JOIN messages n WHERE n.tenant = h.tenant \
             AND n.agent = h.agent AND n.user_id = h.user_id AND n.chat = h.chat \
             AND h.tenant = $1 AND $2 IN ('', h.user_id) AND $3 IN ('', h.chat) AND h.id = $4 AND NOT n.withheld \
             AND (n.at, n.{order}) {cmp} (h.at, h.{order}) ORDER BY n.at {dir}, n.{order} {dir} LIMIT $5) AS {name}"
        )
    };
    format!("{} UNION ALL {}", side("before_hit", "<", "DESC", "FALSE"), side("after_hit", ">", "ASC", "TRUE"))
}
