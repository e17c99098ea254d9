//! Proposed operations: what an extractor suggests doing to memory, before the gate decides.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::id::{MemoryId, MessageId};
use crate::kind::{Kind, Surface};
use crate::memory::Sensitivity;

/// The memory an extractor would like to exist. Carries no status and no id: those are the
/// engine's to decide, never the proposer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    /// Kind of memory.
    pub kind: Kind,
    /// Natural-language statement.
    pub content: String,
    /// Exact-lookup key (keyed preferences, profile slots such as `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Value for the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Extractor's confidence, 0..=1.
    pub confidence: f32,
    /// Extractor's salience estimate, 0..=1.
    pub salience: f32,
    /// Surface policy; the kind's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// Due date for open loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// When an event happened / from when a fact holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<DateTime<Utc>>,
    /// TTL expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Sensitivity class.
    #[serde(default = "normal")]
    pub sensitivity: Sensitivity,
    /// The heuristic rule that proposed it (`preference.likes`), kept in the memory's provenance
    /// so `mnemo show` can say why it was remembered; `None` from the model or the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// A client's key-value data for the memory (mem0's `metadata`), stored as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<crate::memory::Metadata>,
    /// Why the surface was changed after the rule proposed it (another speaker's words are never
    /// DO NOT CONTRADICT), in words for the trace; `None` when the rule or the kind decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface_by: Option<String>,
}

fn normal() -> Sensitivity {
    Sensitivity::Normal
}

/// Confidence of a memory a person wrote: their own words.
pub const AUTHORED_CONFIDENCE: f32 = 1.0;
/// Salience of a memory a person wrote: they chose to keep it.
pub const AUTHORED_SALIENCE: f32 = 0.8;

impl Draft {
    /// A memory a person (or the application on their behalf) wrote through the API: their own
    /// words are certain (confidence 1.0) and worth keeping (salience 0.8) unless they say otherwise.
    pub fn authored(kind: Kind, content: impl Into<String>) -> Self {
        Self::new(kind, content, AUTHORED_CONFIDENCE, AUTHORED_SALIENCE)
    }

    /// A draft with the kind's default surface and no dates.
    pub fn new(kind: Kind, content: impl Into<String>, confidence: f32, salience: f32) -> Self {
        Self {
            kind,
            content: content.into(),
            key: None,
            value: None,
            confidence,
            salience,
            surface: None,
            due_at: None,
            valid_from: None,
            expires_at: None,
            sensitivity: Sensitivity::Normal,
            rule: None,
            metadata: None,
            surface_by: None,
        }
    }

    /// Same draft with a key and value.
    pub fn keyed(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self.value = Some(value.into());
        self
    }

    /// Same draft with an explicit surface policy.
    pub fn surfaced(mut self, surface: Surface) -> Self {
        self.surface = Some(surface);
        self
    }

    /// The surface policy that applies.
    pub fn effective_surface(&self) -> Surface {
        self.surface.unwrap_or_else(|| self.kind.default_surface())
    }

    /// What set [`Self::effective_surface`], in words for the trace: a reviewer asking "why is
    /// this DO NOT CONTRADICT?" gets the rule, the step that overrode it, or the kind's default.
    pub fn surface_basis(&self) -> String {
        match (&self.surface_by, self.surface, &self.rule) {
            (Some(why), _, _) => why.clone(),
            (None, Some(_), Some(rule)) => format!("rule {rule}"),
            (None, Some(_), None) => "the writer (the model or the API)".into(),
            (None, None, Some(rule)) => format!("a {}'s default (rule {rule} chose the kind)", self.kind),
            (None, None, None) => format!("a {}'s default", self.kind),
        }
    }
}

/// Which existing memory an op is about.
///
/// Extractors often know only words ("forget about my job"), not ids; the engine resolves a
/// textual target against the scope's memories before the gate sees the op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum Target {
    /// A known memory.
    Id(MemoryId),
    /// The best-matching active memory for this text.
    Matching(String),
    /// The active memory with this key (keyed preferences and profile slots).
    Key(String),
    /// The user's latest active memory naming a value of this shape, said shortly before the
    /// op's own time (its draft's `valid_from`): what a take-back in a message of its own that
    /// names only the new value ("No sorry, it's the 10th") corrects.
    Latest(crate::shape::ValueShape),
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "target", rename_all = "snake_case")]
pub enum Action {
    /// Write a new memory.
    Add,
    /// Replace the target with the draft (corrections, switches).
    Update(Target),
    /// The draft re-asserts the target.
    Reinforce(Target),
    /// The draft proves the target wrong.
    Contradict(Target),
    /// The target open loop is resolved.
    CloseLoop(Target),
    /// Archive the target at the user's request.
    Forget(Target),
    /// One detail of the target was said wrong ("actually it's not Tuesday, it's Wednesday"):
    /// the draft holds the user's correcting words, and the engine writes the target's text with
    /// them beside it as a new memory that supersedes the target. The correction alone names
    /// nothing ("it's Wednesday" of what?), so with no target nothing is written.
    Amend(Target),
}

impl Action {
    /// The op's name as it appears in traces.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Update(_) => "update",
            Action::Reinforce(_) => "reinforce",
            Action::Contradict(_) => "contradict",
            Action::CloseLoop(_) => "close_loop",
            Action::Forget(_) => "forget",
            Action::Amend(_) => "amend",
        }
    }

    /// The target, for every op but add.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Action::Add => None,
            Action::Update(t)
            | Action::Reinforce(t)
            | Action::Contradict(t)
            | Action::CloseLoop(t)
            | Action::Forget(t)
            | Action::Amend(t) => Some(t),
        }
    }
}

/// One proposal from an extractor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedOp {
    /// What to do.
    pub action: Action,
    /// The memory it proposes (for forget and close, a description of the target).
    pub draft: Draft,
    /// The messages it was drawn from.
    pub sources: Vec<MessageId>,
}
