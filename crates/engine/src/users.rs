//! Per-user privacy switches: pause (keep what is known, learn and recall nothing), disable
//! (store nothing at all), and back. The write and read paths ask [`Memory::user_state`] first.

use std::collections::BTreeMap;

use mnemo_core::{AgentId, ChatId, Scope, TenantId, UserId, UserState};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::{Error, Result};

/// One user of a tenant with where their memories live: what a console lists so a person can
/// find whom the system remembers things about, and open their chats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSummary {
    /// The user.
    pub user: UserId,
    /// Agents holding memories of the user, sorted.
    pub agents: Vec<AgentId>,
    /// Chats holding chat-private memories of the user (memos among them), sorted.
    pub chats: Vec<ChatId>,
}

impl Memory {
    /// The tenant's users that have memories in use (provisional, active or stale), sorted by
    /// id; with `text`, only those whose id contains it, ignoring case. A user whose memories are
    /// all archived or erased is not listed: nothing is remembered about them.
    pub fn users(&self, tenant: &TenantId, text: Option<&str>) -> Result<Vec<UserSummary>> {
        let needle = text.map(str::trim).filter(|t| !t.is_empty()).map(str::to_lowercase);
        let mut by_user: BTreeMap<UserId, UserSummary> = BTreeMap::new();
        for owner in self.store.owners(tenant)? {
            let Some(user) = owner.user else { continue };
            if needle.as_ref().is_some_and(|n| !user.as_str().to_lowercase().contains(n.as_str())) {
                continue;
            }
            let entry = by_user.entry(user.clone()).or_insert_with(|| UserSummary {
                user,
                agents: Vec::new(),
                chats: Vec::new(),
            });
            if let Some(agent) = owner.agent
                && !entry.agents.contains(&agent)
            {
                entry.agents.push(agent);
            }
            if let Some(chat) = owner.chat
                && !entry.chats.contains(&chat)
            {
                entry.chats.push(chat);
            }
        }
        Ok(by_user
            .into_values()
            .map(|mut u| {
                u.agents.sort();
                u.chats.sort();
                u
            })
            .collect())
    }

    /// The scope's user's privacy switch; [`UserState::Active`] unless someone paused or
    /// disabled them (an erasure resets it). Agent and chat of the scope play no part: the
    /// switch is the person's, across every agent and chat of the tenant.
    pub fn user_state(&self, scope: &Scope) -> Result<UserState> {
        let user = scope.require_user()?;
        Ok(self.store.user_state(&scope.tenant, user)?)
    }

    /// Sets the scope's user's switch and returns it. Idempotent: setting the state the user is
    /// in changes nothing but its time.
    pub fn set_user_state(&self, scope: &Scope, state: UserState) -> Result<UserState> {
        let user = scope.require_user()?;
        self.store.set_user_state(&scope.tenant, user, state, self.clock.now())?;
        Ok(state)
    }

    /// Pauses the user: memories are kept, but new messages are only kept in the trace (never
    /// extracted, never quoted back by archival recall) and recall and context return nothing
    /// about the user until [`Memory::resume`].
    pub fn pause(&self, scope: &Scope) -> Result<UserState> {
        self.set_user_state(scope, UserState::Paused)
    }

    /// Ends a pause (or a disable): the user is active again. What was said while paused stays
    /// out of extraction and archival recall for good.
    pub fn resume(&self, scope: &Scope) -> Result<UserState> {
        self.set_user_state(scope, UserState::Active)
    }

    /// Disables the user: from now on nothing of theirs is stored (ingest writes nothing; adding
    /// memories or memos is refused) and nothing is recalled, until [`Memory::enable`]. What was
    /// stored before stays until cleared or erased.
    pub fn disable(&self, scope: &Scope) -> Result<UserState> {
        self.set_user_state(scope, UserState::Disabled)
    }

    /// Enables a disabled (or paused) user again: normal behaviour resumes; nothing of the
    /// disabled period exists to resume from.
    pub fn enable(&self, scope: &Scope) -> Result<UserState> {
        self.set_user_state(scope, UserState::Active)
    }

    /// Refuses a write a person asked for (`what`: "memory", "memo") when the user is disabled,
    /// so "store nothing" holds for every path, not only ingest.
    pub(crate) fn refuse_if_disabled(&self, scope: &Scope, what: &'static str) -> Result<()> {
        match self.user_state(scope)? {
            UserState::Disabled => Err(Error::Rejected {
                what,
                reason: format!(
                    "user {} is disabled, so nothing of theirs is stored; enable the user first \
                     (POST /v1/users/{{user_id}}/enable, `mnemo user enable`)",
                    scope.user.as_ref().map_or("", |u| u.as_str())
                ),
            }),
            _ => Ok(()),
        }
    }
}
