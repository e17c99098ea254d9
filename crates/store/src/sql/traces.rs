//! Trace statements: one envelope by turn, a user's latest envelopes, and the surfaced ids of a
//! chat's latest context calls.

use super::Dialect;

/// The envelope of turn `$2` of tenant `$1`.
pub(crate) const ENVELOPE: &str = "SELECT body FROM traces WHERE tenant = $1 AND turn_id = $2";

/// The bodies of the latest `$5` envelopes of agent `$2` and user `$3` of tenant `$1`, of chat
/// `$4` or (`''`) of every chat, newest first.
pub(crate) fn recent(d: Dialect) -> String {
    format!(
        "SELECT body FROM traces WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND $4 IN ('', chat) \
         ORDER BY at DESC, {} DESC LIMIT $5",
        d.seq()
    )
}

/// The surfaced ids of the last `$6` calls of operation `$5` in the chat `$1`..`$4`.
pub(crate) fn recently_surfaced(d: Dialect) -> String {
    format!(
        "SELECT surfaced FROM traces WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
         AND op = $5 ORDER BY at DESC, {} DESC LIMIT $6",
        d.seq()
    )
}
