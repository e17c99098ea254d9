//! `/v1/memos`: a chat's memo book, written by a person or by the memo job.
//!
//! Memos are memories of kind `memo`, so their answers reuse [`MemoryOut`]; only the requests
//! differ, since a memo always belongs to one chat.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::MemoryOut;

/// `POST /v1/memos`: a memo a person writes for a chat.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemoRequest {
    /// The end user.
    pub user_id: String,
    /// The chat it is about.
    pub chat_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The memo: a few highlights worth keeping.
    pub text: String,
    /// Where it sits in the chat's timeline; now when absent.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// `PATCH /v1/memos/{id}`: new text for a memo.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditMemoRequest {
    /// The end user.
    pub user_id: String,
    /// The chat.
    pub chat_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The new text.
    pub text: String,
}

/// A chat's memos.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MemoList {
    /// Oldest first, as they read.
    pub items: Vec<MemoryOut>,
}
