//! Memory statements whose logic both backends share; searches and scope-filtered lists, which
//! each backend tunes for its planner, live with the backend.

use super::{Dialect, VISIBLE};
use crate::rows::MEMORY_COLUMNS;

/// Memory `$2` of tenant `$1`, any status.
pub(crate) fn get() -> String {
    format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.id = $2")
}

/// Active memories visible to `$1`..`$4` whose kept constraint domains meet the set `$5`,
/// newest first, at most `$6` (`Memories::constraints`). `constraints <> 0` lets the planner use
/// the partial index of the rows that state a constraint, so the lookup never reads the rest.
pub(crate) fn constraints() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
         AND m.constraints <> 0 AND (m.constraints & $5) <> 0 ORDER BY m.created_at DESC, m.id LIMIT $6"
    )
}

/// The distinct owners of tenant `$1`'s provisional, active and stale memories, sorted, read
/// with [`Row::scope`](crate::rows::Row::scope) from column 0.
pub(crate) fn owners() -> String {
    use mnemo_core::StatusKind::{Active, Provisional, Stale};
    format!(
        "SELECT DISTINCT tenant, agent, user_id, chat FROM memories WHERE tenant = $1 \
         AND status IN ('{}', '{}', '{}') ORDER BY agent, user_id, chat",
        Provisional.as_str(),
        Active.as_str(),
        Stale.as_str()
    )
}

/// The history of memory `$2` of tenant `$1`, oldest first, read by
/// [`decode::history`](crate::rows::decode::history).
pub(crate) fn history(d: Dialect) -> String {
    format!(
        "SELECT memory_id, at, event, from_status, to_status, reason, sources FROM history \
         WHERE tenant = $1 AND memory_id = $2 ORDER BY {}",
        d.seq()
    )
}

/// Links from or to memory `$2` of tenant `$1`, read by [`decode::link`](crate::rows::decode::link).
pub(crate) fn links(d: Dialect) -> String {
    format!(
        "SELECT from_id, to_id, kind, at FROM links WHERE tenant = $1 AND (from_id = $2 OR to_id = $2) \
         ORDER BY at, {}",
        d.seq()
    )
}
