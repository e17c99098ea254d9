//! Privacy-switch statements: one keyed lookup per ingest and recall, and the switch's removal.

/// The switch of user `$2` of tenant `$1`.
pub(crate) const STATE: &str = "SELECT state FROM user_states WHERE tenant = $1 AND user_id = $2";

/// Removes the switch of user `$2` of tenant `$1` (back to active).
pub(crate) const CLEAR: &str = "DELETE FROM user_states WHERE tenant = $1 AND user_id = $2";

/// Sets the switch (columns as [`encode::user_state`](crate::rows::encode::user_state)).
pub(crate) const SET: &str = "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (tenant, user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at";

/// The tables whose rows carry the user's id: an erasure deletes them by it, after the rows
/// that refer to the user's memories (links, history, sessions, vectors, lexical entries).
pub(crate) const OWNED_BY_USER: [&str; 8] =
    ["memories", "messages", "traces", "extraction_queue", "chat_progress", "user_states", "documents", "observations"];

/// Every user of tenant `$1` with a row in any table that carries user ids, sorted: whoever a
/// tenant's reset must erase, including a user with only messages or a switch.
pub(crate) fn known_users() -> String {
    let each: Vec<String> = OWNED_BY_USER
        .iter()
        .map(|t| format!("SELECT user_id FROM {t} WHERE tenant = $1 AND user_id IS NOT NULL AND user_id <> ''"))
        .collect();
    format!("{} ORDER BY user_id", each.join(" UNION "))
}

/// Deletes the rows of user `$2` of tenant `$1` from `table` (one of [`OWNED_BY_USER`], or
/// `partitions` or `message_versions`: a user id can itself be personal data, an e-mail address).
pub(crate) fn delete_owned(table: &str) -> String {
    format!("DELETE FROM {table} WHERE tenant = $1 AND user_id = $2")
}

/// The statement and parameters that set a user's switch: `Active` removes the row, so a user
/// who was never switched and one switched back look the same.
pub(crate) fn switch(
    tenant: &mnemo_core::TenantId,
    user: &mnemo_core::UserId,
    state: mnemo_core::UserState,
    at: chrono::DateTime<chrono::Utc>,
) -> (&'static str, Vec<crate::rows::Value>) {
    if state == mnemo_core::UserState::Active {
        (CLEAR, vec![tenant.as_str().into(), user.as_str().into()])
    } else {
        (SET, crate::rows::encode::user_state(tenant, user, state, at).values)
    }
}

/// A stored switch, or `Active` when there is no row.
pub(crate) fn state(stored: Option<String>) -> crate::Result<mnemo_core::UserState> {
    stored.map_or(Ok(mnemo_core::UserState::Active), |t| {
        t.parse().map_err(|e: mnemo_core::CoreError| crate::StoreError::Corrupt {
            what: "user state",
            detail: e.to_string(),
        })
    })
}
