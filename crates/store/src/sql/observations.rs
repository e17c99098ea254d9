//! Observation statements, shared by both backends (vectors are a BLOB on SQLite and a `real[]`
//! on PostgreSQL, bound by each backend; never searched in SQL, only read back for mining).

/// Columns of an observation row, in the order [`decode::observation`](crate::rows::decode::observation)
/// reads them. Aliased `m`.
pub(crate) const COLUMNS: &str =
    "m.id, m.tenant, m.agent, m.user_id, m.chat, m.tool, m.args_summary, m.outcome, m.text, m.at";

/// Observations of tenant `$1`, agent `$2`, user `$3` (the empty string: none), of chat `$4`
/// unless it is empty; newest first, `$5` after skipping `$6`.
pub(crate) fn page() -> String {
    format!(
        "SELECT {COLUMNS} FROM observations m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 \
         AND ($4 = '' OR m.chat = $4) ORDER BY m.at DESC, m.id DESC LIMIT $5 OFFSET $6"
    )
}

/// Every (tenant, agent) with an observation at or after `$1`.
pub(crate) const AGENTS: &str = "SELECT DISTINCT tenant, agent FROM observations WHERE at >= $1";

/// The newest `$4` observations of tenant `$1`, agent `$2` at or after `$3`, with model and vector.
pub(crate) fn recent() -> String {
    format!(
        "SELECT {COLUMNS}, m.model, m.embedding FROM observations m WHERE m.tenant = $1 AND m.agent = $2 \
         AND m.at >= $3 ORDER BY m.at DESC, m.id DESC LIMIT $4"
    )
}

/// Sets the model `$2` and vector `$3` of observation `$1`.
pub(crate) const SET_EMBEDDING: &str = "UPDATE observations SET model = $2, embedding = $3 WHERE id = $1";
