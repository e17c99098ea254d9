//! A chat's conversation as a person reads it: its latest messages in order, so a console can
//! show what was actually said where a memo or a memory points.

use mnemo_core::{Message, Scope};

use crate::Memory;
use crate::error::Result;

impl Memory {
    /// The chat's latest `limit` messages, oldest first, as stored (PII already redacted). The
    /// scope must name a user and a chat: a conversation is one user's. Messages a user said
    /// while paused are here too (they stay in the conversation); a disabled user's were never
    /// stored.
    pub fn conversation(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>> {
        scope.require_user()?;
        scope.require_chat()?;
        Ok(self.store.recent_messages(scope, limit)?)
    }
}
