//! Per-user privacy switches on SQLite: one `user_states` row per user who is not active.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};
use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use super::rows::ms;
use crate::error::{Result, StoreError};

/// The user's switch; `Active` when no row says otherwise.
pub(crate) fn user_state(store: &SqliteStore, tenant: &TenantId, user: &UserId) -> Result<UserState> {
    let text: Option<String> = store.read(|c| {
        c.prepare_cached("SELECT state FROM user_states WHERE tenant = ?1 AND user_id = ?2")
            .and_then(|mut s| s.query_row(params![tenant.as_str(), user.as_str()], |r| r.get(0)).optional())
            .map_err(StoreError::sql("read user state"))
    })?;
    text.map_or(Ok(UserState::Active), |t| {
        t.parse().map_err(|e: mnemo_core::CoreError| StoreError::Corrupt { what: "user state", detail: e.to_string() })
    })
}

/// Sets the user's switch: `Active` deletes the row, any other state upserts it.
pub(crate) fn set_user_state(
    store: &SqliteStore,
    tenant: &TenantId,
    user: &UserId,
    state: UserState,
    at: DateTime<Utc>,
) -> Result<()> {
    store.write("set user state", |tx| {
        let (t, u) = (tenant.as_str(), user.as_str());
        let done = if state == UserState::Active {
            tx.execute("DELETE FROM user_states WHERE tenant = ?1 AND user_id = ?2", params![t, u])
        } else {
            tx.execute(
                "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (tenant, user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                params![t, u, state.as_str(), ms(at)],
            )
        };
        done.map(drop).map_err(StoreError::sql("set user state"))
    })
}
