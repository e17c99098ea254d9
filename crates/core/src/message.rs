//! Messages: the trace's unit. Validated here, so bad input is refused before anything is written.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::IngestTuning;
use crate::error::{CoreError, Result};
use crate::id::{MessageId, validate_id};
use crate::kind::text_enum;
use crate::scope::Scope;

text_enum!(
    /// Who spoke.
    Role, "role" {
        /// The person.
        User => "user",
        /// The model.
        Assistant => "assistant",
        /// The application's instructions.
        System => "system",
        /// A tool result.
        Tool => "tool",
    }
);

/// A message as a caller sends it: id and time optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMessage {
    /// The caller's id; re-sending the same id is a no-op. Derived from content when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who spoke.
    pub role: Role,
    /// What was said.
    pub content: String,
    /// When; the engine's clock when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
}

impl NewMessage {
    /// A user message at a time.
    pub fn user(content: impl Into<String>, at: DateTime<Utc>) -> Self {
        Self { id: None, role: Role::User, content: content.into(), at: Some(at) }
    }

    /// An assistant message at a time.
    pub fn assistant(content: impl Into<String>, at: DateTime<Utc>) -> Self {
        Self { id: None, role: Role::Assistant, content: content.into(), at: Some(at) }
    }

    /// Same message with an id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// A message in the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Identity within the tenant.
    pub id: MessageId,
    /// Tenant, agent, user and chat it belongs to (chat always present).
    pub scope: Scope,
    /// Who spoke.
    pub role: Role,
    /// What was said, with PII redacted.
    pub content: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// Validates a whole batch before anything is written: all or nothing.
///
/// The scope must name a user and a chat. Each message must be non-empty and within the size
/// limit; ids must be valid and unique within the batch. Messages without an id get one derived
/// from chat, role, time, content and, for a repeat of the same turn in the batch, how many came
/// before it: re-sending the same batch stays a no-op, yet two identical turns ("ok", "ok") are
/// two messages. Content is
/// PII-redacted here: secrets never reach the trace.
pub fn validate_batch(
    scope: &Scope,
    batch: Vec<NewMessage>,
    now: DateTime<Utc>,
    t: &IngestTuning,
) -> Result<Vec<Message>> {
    scope.require_user()?;
    let chat = scope.require_chat()?;
    if batch.is_empty() {
        return Err(CoreError::InvalidMessage { index: 0, id: None, reason: "the batch holds no messages".into() });
    }
    check_batch_size(&batch, t)?;
    let mut seen = std::collections::HashSet::new();
    // Identical turns so far, by derivation input: the n-th repeat gets its own id.
    let mut repeats: std::collections::HashMap<(Role, DateTime<Utc>, String), u32> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(batch.len());
    for (index, m) in batch.into_iter().enumerate() {
        let bad = |reason: String| CoreError::InvalidMessage { index, id: m.id.clone(), reason };
        if m.content.trim().is_empty() {
            return Err(bad("content is empty".into()));
        }
        let chars = m.content.chars().count();
        if chars > t.max_message_chars {
            return Err(bad(format!("content is {chars} characters; the limit is {}", t.max_message_chars)));
        }
        if crate::tokens::count_at_most(&m.content, t.max_message_tokens).is_none() {
            return Err(bad(format!(
                "content is more than {} tokens; the limit is {} (ingest.max_message_tokens)",
                t.max_message_tokens, t.max_message_tokens
            )));
        }
        if m.content.contains('\0') {
            return Err(bad("content contains a NUL byte".into()));
        }
        let at = m.at.unwrap_or(now);
        let id = match &m.id {
            Some(id) => {
                validate_id("message id", id).map_err(|e| bad(e.to_string()))?;
                id.clone()
            }
            None => {
                let n = repeats.entry((m.role, at, m.content.clone())).or_insert(0);
                *n += 1;
                derived_id(chat.as_str(), m.role, at, &m.content, *n - 1)
            }
        };
        if !seen.insert(id.clone()) {
            return Err(bad(format!("id {id:?} appears twice in the batch")));
        }
        out.push(Message {
            id: MessageId::new(id).map_err(|e| bad(e.to_string()))?,
            scope: scope.clone(),
            role: m.role,
            content: crate::pii::redact(&m.content),
            at,
        });
    }
    Ok(out)
}

/// Checks that a batch is within what one request may write: at most `ingest.max_batch`
/// messages and `ingest.max_batch_chars` characters in all. [`validate_batch`] starts with it;
/// a caller that writes messages another way (mem0's `add` without inference, one memory per
/// message) calls it first, so no request does unbounded work.
pub fn check_batch_size(batch: &[NewMessage], t: &IngestTuning) -> Result<()> {
    if batch.len() > t.max_batch {
        return Err(CoreError::InvalidMessage {
            index: t.max_batch,
            id: None,
            reason: format!(
                "batch of {} messages exceeds the limit of {} (ingest.max_batch); split it",
                batch.len(),
                t.max_batch
            ),
        });
    }
    let total: usize = batch.iter().map(|m| m.content.chars().count()).sum();
    if total > t.max_batch_chars {
        return Err(CoreError::OutOfRange {
            field: "messages",
            reason: format!(
                "{total} characters in all; the limit is {} (ingest.max_batch_chars): send the conversation in \
                 several calls",
                t.max_batch_chars
            ),
        });
    }
    Ok(())
}

/// The id of a message sent without one. `repeat` counts the identical turns before it in the
/// batch; the first of them hashes as ids always have, so batches stored before repeats got ids
/// of their own stay idempotent on replay.
fn derived_id(chat: &str, role: Role, at: DateTime<Utc>, content: &str, repeat: u32) -> String {
    let mut h = Sha256::new();
    for part in [chat, role.as_str(), &at.to_rfc3339(), content] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    if repeat > 0 {
        h.update(repeat.to_string().as_bytes());
        h.update([0u8]);
    }
    let d = h.finalize();
    format!("m-{}", d.iter().take(10).map(|b| format!("{b:02x}")).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap()
    }

    fn now() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    #[test]
    fn valid_batches_get_stable_ids_and_redaction() {
        let t = IngestTuning::default();
        let batch = vec![NewMessage::user("my card is 4111 1111 1111 1111", now())];
        let a = validate_batch(&scope(), batch.clone(), now(), &t).unwrap();
        let b = validate_batch(&scope(), batch, now(), &t).unwrap();
        assert_eq!(a[0].id, b[0].id);
        assert_eq!(a[0].content, "my card is [redacted card_number]");
    }

    #[test]
    fn bad_input_names_what_and_where() {
        let t = IngestTuning { max_message_chars: 10, max_batch: 3, ..IngestTuning::default() };
        let err = |batch: Vec<NewMessage>| validate_batch(&scope(), batch, now(), &t).unwrap_err().to_string();
        assert!(err(vec![]).contains("no messages"));
        let e = err(vec![NewMessage::user("hi", now()), NewMessage::user("   ", now()).with_id("x1")]);
        assert!(e.contains("message 1") && e.contains("x1") && e.contains("empty"), "{e}");
        assert!(err(vec![NewMessage::user("x".repeat(11), now())]).contains("limit is 10"));
        assert!(err(vec![NewMessage::user("a", now()); 4]).contains("exceeds"));
        let dup = vec![NewMessage::user("a", now()).with_id("1"), NewMessage::user("b", now()).with_id("1")];
        assert!(err(dup).contains("twice"));
        let no_user = Scope::parse("acme", None, None, Some("c1")).unwrap();
        let e = validate_batch(&no_user, vec![NewMessage::user("hi", now())], now(), &t).unwrap_err().to_string();
        assert!(e.contains("user_id"), "{e}");
    }
}
