//! The trace of the conversation and archival recall over it.

use std::ops::Range;

use chrono::{DateTime, Utc};
use mnemo_core::archive::Adjacent;
use mnemo_core::common::TermSpread;
use mnemo_core::{Message, MessageId, Scope};

use crate::error::Result;
use crate::memories::Embedding;

/// The trace: every message of every chat, kept verbatim, and archival recall over it (the
/// lexical and semantic halves and the turns around a hit). Nothing here derives memories; the
/// trace is what replays and audits read.
pub trait Messages {
    /// Appends messages, ignoring ids already present in the same chat of the same user (a
    /// message id is the client's, unique within its tenant, user and chat only: another user
    /// may use it too). Returns, per message, whether it was new. One transaction.
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>>;

    /// The latest `limit` messages of the scope's chat, oldest first.
    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>>;

    /// Messages by id among those `owner` reaches (see [`owner_key`]), for provenance display.
    fn messages(&self, owner: &Scope, ids: &[MessageId]) -> Result<Vec<Message>>;

    /// Attaches vectors to stored messages `owner` reaches (unknown ids are skipped): the
    /// semantic half of archival recall. A message without a vector is still found lexically.
    /// Replaces whatever vectors the message had, passages included.
    fn embed_messages(&self, owner: &Scope, vectors: &[(MessageId, MessageVectors)]) -> Result<()>;

    /// Archival recall, lexical half: the scope's user's own messages (same tenant, agent and
    /// user; only the scope's chat when it names one, every chat otherwise) matching any term,
    /// with a BM25-style score (higher is better), best first. Extraction keeps what is worth
    /// keeping; this finds what was merely said. Withheld messages are never found.
    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>>;

    /// How widely each of `terms` is spread over the messages `search_messages` would search:
    /// of the latest [`mnemo_core::common::SAMPLE`] at most (never a withheld one), how many
    /// were looked at and how many contain each term, matched as the lexical half matches it.
    /// What counts as common is the engine's call ([`mnemo_core::common`]); this only counts,
    /// and its cost is bounded by the sample however large the user.
    fn term_spread(&self, scope: &Scope, terms: &[String]) -> Result<TermSpread>;

    /// The messages right around each of `ids` in its own chat: up to `span` before it and
    /// `span` after, each with the id it neighbours and on which side, never a withheld one.
    /// A hit's neighbours hold the question it answers or the answer it got (archival recall's
    /// neighbourhood). Only messages `owner` reaches count (see [`owner_key`]); unknown ids are
    /// skipped.
    fn adjacent_messages(&self, owner: &Scope, ids: &[MessageId], span: usize) -> Result<Vec<Adjacent>>;

    /// Archival recall, semantic half: exact cosine over the same messages' vectors of `model`,
    /// a message as close as the closest of its vectors (the whole or a passage), best first; with `said`, only messages said within that time range (a question that
    /// names a period also draws candidates from it, which a lift alone cannot reach).
    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
        said: Option<&Range<DateTime<Utc>>>,
    ) -> Result<Vec<(MessageId, f32)>>;
}

/// A message's vectors for archival recall: the whole message's, and one per passage of a
/// longer message (`mnemo_core::passage`). A message is as close to a query as the closest of
/// them, so a turn that talks about two things is found by either.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageVectors {
    /// The whole message's vector, with the model every vector here comes from.
    pub embedding: Embedding,
    /// The passages' vectors, of the same model and dimension; empty for a short message.
    pub passages: Vec<Vec<f32>>,
}

impl From<Embedding> for MessageVectors {
    fn from(embedding: Embedding) -> Self {
        Self { embedding, passages: Vec::new() }
    }
}

/// A time range as the stored milliseconds, every time when `None`.
pub(crate) fn said_ms(said: Option<&Range<DateTime<Utc>>>) -> (i64, i64) {
    said.map_or((i64::MIN, i64::MAX), |r| (crate::rows::ms(r.start), crate::rows::ms(r.end)))
}

/// The key parts of the archive `scope` reaches, or `None` for a scope without a user: archival
/// recall (and the summaries that read a user's messages) is over one user's own messages, so a
/// tenant- or agent-wide scope has no archive.
pub(crate) fn archive(scope: &Scope) -> Option<[&str; 4]> {
    let parts = scope.key_parts();
    (!parts[2].is_empty()).then_some(parts)
}

/// The parts of `owner` that pick messages by id: tenant, user and chat, an empty one matching
/// any. Message ids are unique per (tenant, user, chat) only, so a lookup naming the user never
/// reaches another user's message that happens to share an id; a chat narrows it further. A
/// scope without a user (a tenant- or agent-wide memory's sources) matches the tenant's users.
pub(crate) fn owner_key(owner: &Scope) -> [&str; 3] {
    let [t, _, u, c] = owner.key_parts();
    [t, u, c]
}
