//! Per-user privacy switches on PostgreSQL: one `user_states` row per user who is not active,
//! under row-level security like every tenant table.

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};

use super::PostgresStore;
use super::rows::{get, ms};
use crate::error::{Result, StoreError};

/// The user's switch; `Active` when no row says otherwise.
pub(crate) fn user_state(store: &PostgresStore, tenant: &TenantId, user: &UserId) -> Result<UserState> {
    let (t, u) = (tenant.as_str(), user.as_str());
    let text: Option<String> = store.read("read user state", t, |tx| {
        tx.query_opt("SELECT state FROM user_states WHERE tenant = $1 AND user_id = $2", &[&t, &u])?
            .map(|r| get::<String>(&r, 0))
            .transpose()
    })?;
    text.map_or(Ok(UserState::Active), |s| {
        s.parse().map_err(|e: mnemo_core::CoreError| StoreError::Corrupt { what: "user state", detail: e.to_string() })
    })
}

/// Sets the user's switch: `Active` deletes the row, any other state upserts it.
pub(crate) fn set_user_state(
    store: &PostgresStore,
    tenant: &TenantId,
    user: &UserId,
    state: UserState,
    at: DateTime<Utc>,
) -> Result<()> {
    let (t, u) = (tenant.as_str(), user.as_str());
    store.write("set user state", t, |tx| {
        if state == UserState::Active {
            tx.execute("DELETE FROM user_states WHERE tenant = $1 AND user_id = $2", &[&t, &u])?;
        } else {
            tx.execute(
                "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (tenant, user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                &[&t, &u, &state.as_str(), &ms(at)],
            )?;
        }
        Ok(())
    })
}
