//! Verdicts: what the gate decided about each proposed op, and why. Recorded for every op.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::id::MemoryId;
use crate::kind::{Kind, StatusKind};
use crate::pii::PiiKind;

/// Why an op was turned away. Every variant says what a person would need to know to agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum RejectReason {
    /// Content shorter than the minimum: not a memory.
    TooShort {
        /// Characters in the content.
        chars: usize,
        /// The minimum.
        min: usize,
    },
    /// Content longer than a memory may be.
    TooLong {
        /// Characters in the content.
        chars: usize,
        /// The maximum.
        max: usize,
    },
    /// Below the kind's confidence floor.
    LowConfidence {
        /// The op's confidence.
        got: f32,
        /// The floor.
        min: f32,
    },
    /// Below the kind's salience floor.
    LowSalience {
        /// The op's salience.
        got: f32,
        /// The floor.
        min: f32,
    },
    /// Contains PII or a secret, which never reaches storage.
    ContainsPii {
        /// What was found.
        kind: PiiKind,
    },
    /// Policies are authored by admins, never extracted.
    PolicyNotExtractable,
    /// The op names a memory that does not exist (or is not active) in scope.
    TargetNotFound {
        /// The op.
        op: String,
    },
    /// close_loop aimed at something that is not an open loop.
    NotAnOpenLoop {
        /// The target.
        target: MemoryId,
        /// Its kind.
        kind: Kind,
    },
    /// Memory is paused or disabled for this user.
    MemoryOff,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::TooShort { chars, min } => write!(f, "too short ({chars} chars < {min})"),
            RejectReason::TooLong { chars, max } => write!(f, "too long ({chars} chars > {max})"),
            RejectReason::LowConfidence { got, min } => write!(f, "confidence {got:.2} below {min:.2}"),
            RejectReason::LowSalience { got, min } => write!(f, "salience {got:.2} below {min:.2}"),
            RejectReason::ContainsPii { kind } => write!(f, "contains {kind}; never stored"),
            RejectReason::PolicyNotExtractable => f.write_str("policies are authored, never extracted"),
            RejectReason::TargetNotFound { op } => write!(f, "{op}: no matching active memory in scope"),
            RejectReason::NotAnOpenLoop { target, kind } => write!(f, "{target} is a {kind}, not an open loop"),
            RejectReason::MemoryOff => f.write_str("memory is paused or disabled for this user"),
        }
    }
}

/// How a duplicate was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum DedupBy {
    /// Same normalised content hash in scope.
    Hash,
    /// Same key and value.
    Key,
    /// Embedding cosine at or above the threshold.
    Embedding {
        /// The cosine.
        cosine: f32,
    },
    /// The extractor said so (a reinforce op).
    Explicit,
    /// The same message was extracted before: re-extraction is idempotent, nothing changes.
    Replay,
}

/// The outcome of one op after it was applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A new memory.
    Written {
        /// Its id.
        id: MemoryId,
        /// Active, or provisional for tenant-scoped facts.
        status: StatusKind,
    },
    /// A new memory replaced an old one (correction, switch, same-key preference).
    Superseded {
        /// The new memory.
        id: MemoryId,
        /// The memory it replaced.
        old: MemoryId,
    },
    /// A new memory proved an old one wrong.
    Contradicted {
        /// The new memory.
        id: MemoryId,
        /// The memory marked contradicted.
        old: MemoryId,
    },
    /// Nothing new written; the existing memory was reinforced.
    Deduplicated {
        /// The memory that already said this.
        existing: MemoryId,
        /// How the duplicate was recognised.
        #[serde(flatten)]
        by: DedupBy,
    },
    /// An open loop was closed.
    Closed {
        /// The loop.
        target: MemoryId,
    },
    /// A memory was archived at the user's request.
    Forgotten {
        /// The memory.
        target: MemoryId,
    },
    /// Nothing changed.
    Rejected {
        /// Why.
        #[serde(flatten)]
        reason: RejectReason,
    },
}

impl Verdict {
    /// Short name as shown in `mnemo show` and traces.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Written { .. } => "written",
            Verdict::Superseded { .. } => "superseded",
            Verdict::Contradicted { .. } => "contradicted",
            Verdict::Deduplicated { .. } => "deduplicated",
            Verdict::Closed { .. } => "closed",
            Verdict::Forgotten { .. } => "forgotten",
            Verdict::Rejected { .. } => "rejected",
        }
    }

    /// The memory this verdict is mainly about, if any.
    pub fn memory(&self) -> Option<MemoryId> {
        match self {
            Verdict::Written { id, .. } | Verdict::Superseded { id, .. } | Verdict::Contradicted { id, .. } => {
                Some(*id)
            }
            Verdict::Deduplicated { existing, .. } => Some(*existing),
            Verdict::Closed { target } | Verdict::Forgotten { target } => Some(*target),
            Verdict::Rejected { .. } => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Written { id, status } => write!(f, "written {id} ({status})"),
            Verdict::Superseded { id, old } => write!(f, "written {id}, superseding {old}"),
            Verdict::Contradicted { id, old } => write!(f, "written {id}, contradicting {old}"),
            Verdict::Deduplicated { existing, by } => match by {
                DedupBy::Hash => write!(f, "deduplicated: same content as {existing}"),
                DedupBy::Key => write!(f, "deduplicated: same key and value as {existing}"),
                DedupBy::Embedding { cosine } => {
                    write!(f, "deduplicated: paraphrase of {existing} (cosine {cosine:.2})")
                }
                DedupBy::Explicit => write!(f, "reinforced {existing}"),
                DedupBy::Replay => write!(f, "already extracted from the same message as {existing}"),
            },
            Verdict::Closed { target } => write!(f, "closed open loop {target}"),
            Verdict::Forgotten { target } => write!(f, "forgot {target} (archived)"),
            Verdict::Rejected { reason } => write!(f, "rejected: {reason}"),
        }
    }
}
