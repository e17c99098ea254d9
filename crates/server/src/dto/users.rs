//! `/v1/users/{user_id}`: a user's privacy rights — export, clear, erase, pause, disable.
//!
//! The erasure receipt holds counts and digests, never content, so it can be kept as proof after
//! everything it describes is gone.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::UserStateName;

/// What `POST /v1/users/{user_id}/clear` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClearOut {
    /// Memories archived (history kept; erase is what deletes).
    pub archived: usize,
}

/// The receipt of an erasure: what was removed, with no content in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErasureOut {
    /// HMAC-SHA256 of tenant and user id under this installation's secret key: the only trace of
    /// the user the store keeps, stable per installation, and no way to test a guessed id.
    pub subject: String,
    /// When the erasure happened.
    pub at: DateTime<Utc>,
    /// Rows removed per table.
    pub counts: std::collections::BTreeMap<String, u64>,
    /// SHA-256 over subject, time and counts, to quote as proof.
    pub digest: String,
}

impl From<mnemo::ErasureReceipt> for ErasureOut {
    fn from(r: mnemo::ErasureReceipt) -> Self {
        Self { subject: r.subject, at: r.at, counts: r.counts, digest: r.digest }
    }
}

/// `GET /v1/users/{user_id}` and the answer of every switch: where the user stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UserOut {
    /// The user.
    pub user_id: String,
    /// The privacy switch in force now.
    pub state: UserStateName,
}

/// `GET /v1/users`: which users to list.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UsersQuery {
    /// Only users whose id contains this, ignoring case.
    #[serde(default)]
    pub text: Option<String>,
}

/// One user of the tenant and where their memories live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UserSummaryOut {
    /// The user.
    pub user_id: String,
    /// Agents holding memories of the user.
    pub agents: Vec<String>,
    /// Chats holding chat-private memories of the user (memos among them).
    pub chats: Vec<String>,
}

impl From<&mnemo::UserSummary> for UserSummaryOut {
    fn from(u: &mnemo::UserSummary) -> Self {
        Self {
            user_id: u.user.to_string(),
            agents: u.agents.iter().map(ToString::to_string).collect(),
            chats: u.chats.iter().map(ToString::to_string).collect(),
        }
    }
}

/// `GET /v1/users`: the tenant's users with memories in use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UserList {
    /// Sorted by id.
    pub items: Vec<UserSummaryOut>,
}
