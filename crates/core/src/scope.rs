//! Scope: the access boundary (tenant, agent, user, chat) every row carries and every read filters by.
//!
//! Scope is never a relevance signal. A request scope sees exactly the partitions at or above it:
//! its tenant's shared rows, its agent's, its user's, and its own chat's — nothing else.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::id::{AgentId, ChatId, TenantId, UserId};

/// Who is asking (for reads) or who owns a row (for writes).
///
/// As an owner, a scope names one partition: `tenant` alone is tenant-wide, `tenant+agent` is
/// shared by every user of an agent, `user` and `user+agent` belong to one person, and a chat
/// makes the row private to one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    /// The organisation; always present.
    pub tenant: TenantId,
    /// The bot or project, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentId>,
    /// The end user, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "user_id")]
    pub user: Option<UserId>,
    /// The conversation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<ChatId>,
}

/// The ownership layer of a row, ordered from least to most specific.
///
/// Where two layers disagree on the same preference key, the most specific wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Shared by the whole tenant.
    Tenant,
    /// Shared by every user of one agent.
    TenantAgent,
    /// One user, every agent.
    User,
    /// One user with one agent.
    UserAgent,
    /// One conversation.
    Chat,
}

impl Scope {
    /// A tenant-wide scope.
    pub fn tenant(tenant: TenantId) -> Self {
        Self { tenant, agent: None, user: None, chat: None }
    }

    /// Parses the four parts as they arrive from a CLI or HTTP request.
    pub fn parse(tenant: &str, agent: Option<&str>, user: Option<&str>, chat: Option<&str>) -> Result<Self> {
        Ok(Self {
            tenant: TenantId::new(tenant)?,
            agent: agent.map(AgentId::new).transpose()?,
            user: user.map(UserId::new).transpose()?,
            chat: chat.map(ChatId::new).transpose()?,
        })
    }

    /// Same scope with a chat.
    pub fn with_chat(mut self, chat: ChatId) -> Self {
        self.chat = Some(chat);
        self
    }

    /// Same scope without the chat: where user-level memories of this conversation are owned.
    pub fn without_chat(&self) -> Self {
        Self { chat: None, ..self.clone() }
    }

    /// The user, or an error naming what is missing: operations on a person's memory need one.
    pub fn require_user(&self) -> Result<&UserId> {
        self.user.as_ref().ok_or(CoreError::MissingScope("user_id"))
    }

    /// The chat, or an error naming what is missing.
    pub fn require_chat(&self) -> Result<&ChatId> {
        self.chat.as_ref().ok_or(CoreError::MissingScope("chat"))
    }

    /// The layer this scope occupies when it owns a row.
    pub fn layer(&self) -> Layer {
        match (&self.user, &self.agent, &self.chat) {
            (_, _, Some(_)) => Layer::Chat,
            (Some(_), Some(_), None) => Layer::UserAgent,
            (Some(_), None, None) => Layer::User,
            (None, Some(_), None) => Layer::TenantAgent,
            (None, None, None) => Layer::Tenant,
        }
    }

    /// Whether a row owned by `owner` is visible to a request made in this scope.
    ///
    /// The same predicate every backend applies in its queries; kept here so it is tested once
    /// and so in-memory filtering (caches, tests) can never drift from the SQL.
    pub fn can_see(&self, owner: &Scope) -> bool {
        fn part<T: PartialEq>(row: &Option<T>, req: &Option<T>) -> bool {
            match row {
                None => true,
                Some(r) => req.as_ref() == Some(r),
            }
        }
        self.tenant == owner.tenant
            && part(&owner.agent, &self.agent)
            && part(&owner.user, &self.user)
            && part(&owner.chat, &self.chat)
    }

    /// Storage form of the optional parts: the empty string stands for "none".
    ///
    /// Ids can never be empty (see `validate_id`), so the sentinel is unambiguous, and it keeps
    /// unique indexes and the visibility predicate (`agent IN ('', ?)`) simple on every backend.
    pub fn key_parts(&self) -> [&str; 4] {
        [
            self.tenant.as_str(),
            self.agent.as_ref().map_or("", AgentId::as_str),
            self.user.as_ref().map_or("", UserId::as_str),
            self.chat.as_ref().map_or("", ChatId::as_str),
        ]
    }

    /// Rebuilds a scope from its storage form.
    pub fn from_key_parts(tenant: &str, agent: &str, user: &str, chat: &str) -> Result<Self> {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Self::parse(tenant, opt(agent).as_deref(), opt(user).as_deref(), opt(chat).as_deref())
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tenant={}", self.tenant)?;
        if let Some(a) = &self.agent {
            write!(f, " agent={a}")?;
        }
        if let Some(u) = &self.user {
            write!(f, " user={u}")?;
        }
        if let Some(c) = &self.chat {
            write!(f, " chat={c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str, a: Option<&str>, u: Option<&str>, c: Option<&str>) -> Scope {
        Scope::parse(t, a, u, c).unwrap()
    }

    #[test]
    fn visibility_follows_the_partition_rules() {
        let req = s("acme", Some("bot"), Some("dana"), Some("c1"));
        assert!(req.can_see(&s("acme", None, None, None)));
        assert!(req.can_see(&s("acme", Some("bot"), None, None)));
        assert!(req.can_see(&s("acme", None, Some("dana"), None)));
        assert!(req.can_see(&s("acme", Some("bot"), Some("dana"), Some("c1"))));
        assert!(!req.can_see(&s("other", None, None, None)));
        assert!(!req.can_see(&s("acme", Some("bot2"), None, None)));
        assert!(!req.can_see(&s("acme", None, Some("eve"), None)));
        assert!(!req.can_see(&s("acme", None, Some("dana"), Some("c2"))));
        // A request without a chat never sees chat-private rows.
        assert!(!req.without_chat().can_see(&s("acme", None, Some("dana"), Some("c1"))));
    }

    #[test]
    fn layers_order_by_specificity() {
        assert!(Layer::Tenant < Layer::TenantAgent);
        assert!(Layer::TenantAgent < Layer::User);
        assert!(Layer::User < Layer::UserAgent);
        assert!(Layer::UserAgent < Layer::Chat);
        assert_eq!(s("a", Some("b"), Some("u"), None).layer(), Layer::UserAgent);
        assert_eq!(s("a", None, None, None).layer(), Layer::Tenant);
    }

    #[test]
    fn key_parts_round_trip() {
        let x = s("acme", None, Some("dana"), Some("c1"));
        let [t, a, u, c] = x.key_parts();
        assert_eq!(Scope::from_key_parts(t, a, u, c).unwrap(), x);
        assert!(s("acme", None, None, None).require_user().is_err());
    }
}
