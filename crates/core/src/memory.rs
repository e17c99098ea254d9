//! A memory row and what sits beside it: provenance, links, history.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::id::{ChatId, MemoryId, MessageId};
use crate::kind::{Kind, Status, Surface, text_enum};
use crate::scope::Scope;

/// Where a memory came from, so any answer can be traced back to the words that taught it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// Messages the memory was extracted from (or that reinforced it).
    pub sources: Vec<MessageId>,
    /// The chat those messages belong to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<ChatId>,
    /// Which extractor proposed it: "heuristic", "llm", "api" (written by a person), "job".
    pub extractor: String,
    /// Version of that extractor, so a behaviour change can be traced to the rows it produced.
    pub extractor_version: String,
    /// The heuristic rule that proposed it (`preference.likes`): why it was remembered, down to
    /// the pattern. `None` for the model, the API, jobs and rows written before rules were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

text_enum!(
    /// How sensitive the content is; sensitive rows are never spoken unprompted.
    Sensitivity, "sensitivity" {
        /// Ordinary content.
        Normal => "normal",
        /// Health, relationships, grief and the like.
        Sensitive => "sensitive",
    }
);

/// One memory. The text is the truth; its embedding is a projection kept by the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Identity.
    pub id: MemoryId,
    /// The partition that owns the row.
    pub owner: Scope,
    /// What it is.
    pub kind: Kind,
    /// The fact as a natural-language statement.
    pub content: String,
    /// Exact-lookup key (for keyed preferences such as `answer_length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Value for the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// How sure the extractor was, 0..=1.
    pub confidence: f32,
    /// How much it matters, 0..=1.
    pub salience: f32,
    /// Always included, exempt from lifecycle.
    pub pinned: bool,
    /// How the model should use it.
    pub surface: Surface,
    /// Lifecycle state, computed by the engine.
    #[serde(flatten)]
    pub status: Status,
    /// For open loops: when the thing is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// From when the assertion holds (event time for events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<DateTime<Utc>>,
    /// Until when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<DateTime<Utc>>,
    /// Source messages and extractor.
    pub provenance: Provenance,
    /// Hash of the normalised content: the exact half of dedup.
    pub content_hash: String,
    /// When written.
    pub created_at: DateTime<Utc>,
    /// When last changed (status, content, reinforcement).
    pub updated_at: DateTime<Utc>,
    /// When last returned by recall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_accessed: Option<DateTime<Utc>>,
    /// When last placed in a context block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_surfaced: Option<DateTime<Utc>>,
    /// Times returned by recall.
    pub access_count: u32,
    /// Distinct sessions (chats) in which it was recalled or reinforced: the spacing signal.
    pub distinct_sessions: u32,
    /// Times re-asserted by the user (dedup hits).
    pub reinforcements: u32,
    /// Hard expiry (TTL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Sensitivity class.
    pub sensitivity: Sensitivity,
    /// Key-value data a client attached (mem0's `metadata`): kept and returned as given, never
    /// read by the engine's rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A client's key-value data on a memory: a JSON object.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

impl Memory {
    /// The text this memory is indexed and embedded by (see [`crate::text::search_text`]).
    pub fn search_text(&self) -> String {
        crate::text::search_text(&self.content, self.key.as_deref())
    }

    /// A new active memory with its kind's default surface, created and updated at `at`.
    ///
    /// The one place a row is built from scratch; the engine and tests set what differs.
    pub fn new(owner: Scope, kind: Kind, content: impl Into<String>, at: DateTime<Utc>) -> Self {
        let content = content.into();
        Self {
            id: MemoryId::new(),
            owner,
            kind,
            content_hash: crate::text::content_hash(&content),
            content,
            key: None,
            value: None,
            confidence: 0.8,
            salience: 0.5,
            pinned: false,
            surface: kind.default_surface(),
            status: Status::Active,
            due_at: None,
            valid_from: None,
            valid_until: None,
            provenance: Provenance::default(),
            created_at: at,
            updated_at: at,
            last_accessed: None,
            last_surfaced: None,
            access_count: 0,
            distinct_sessions: 0,
            reinforcements: 0,
            expires_at: None,
            sensitivity: Sensitivity::Normal,
            metadata: None,
        }
    }
}

text_enum!(
    /// Typed relation between two memories.
    LinkKind, "link kind" {
        /// `from` contradicts `to`.
        Contradicts => "contradicts",
        /// `from` adds detail to `to`.
        Elaborates => "elaborates",
        /// `from` was caused by `to`.
        CausedBy => "caused_by",
        /// `from` replaces `to`.
        Supersedes => "supersedes",
        /// `from` was synthesised from `to`.
        DerivedFrom => "derived_from",
        /// `from` duplicates `to`.
        DuplicateOf => "duplicate_of",
        /// `from` resolved the open loop `to`.
        Resolves => "resolves",
    }
);

/// A typed edge between two memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Source memory.
    pub from: MemoryId,
    /// Target memory.
    pub to: MemoryId,
    /// Relation.
    pub kind: LinkKind,
    /// When recorded.
    pub at: DateTime<Utc>,
}

text_enum!(
    /// What happened to a memory, one append-only history row per change.
    HistoryEvent, "history event" {
        /// Written through the gate.
        Created => "created",
        /// Re-asserted (exact or near duplicate).
        Reinforced => "reinforced",
        /// Replaced by a newer memory.
        Superseded => "superseded",
        /// Proven wrong.
        Contradicted => "contradicted",
        /// Open loop resolved.
        Closed => "closed",
        /// Archived at the user's request.
        Forgotten => "forgotten",
        /// Pinned by a person.
        Pinned => "pinned",
        /// Unpinned by a person.
        Unpinned => "unpinned",
        /// Content edited by a person.
        Edited => "edited",
        /// Lifecycle transition by a job.
        Transitioned => "transitioned",
        /// Content removed by erasure.
        Erased => "erased",
    }
);

/// One row of a memory's append-only history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The memory concerned.
    pub memory: MemoryId,
    /// When.
    pub at: DateTime<Utc>,
    /// What happened.
    pub event: HistoryEvent,
    /// Status before (None for creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<Status>,
    /// Status after.
    pub to_status: Status,
    /// Why, in words: the gate's verdict reason, the job, the user's action.
    pub reason: String,
    /// Messages that caused the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<MessageId>,
}
