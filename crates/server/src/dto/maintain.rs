//! `POST /v1/maintain`: what one lifecycle run changed.
//!
//! Each transition is listed, so an operator can see why a memory went stale or was archived.

use mnemo::{AppliedTransition, MaintainReport};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One lifecycle transition a maintenance run applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TransitionOut {
    /// The memory.
    pub id: String,
    /// Status before.
    pub from: String,
    /// Status after.
    pub to: String,
    /// Why.
    pub reason: String,
}

impl From<&AppliedTransition> for TransitionOut {
    fn from(t: &AppliedTransition) -> Self {
        Self { id: t.id.to_string(), from: t.from.to_string(), to: t.to.to_string(), reason: t.reason.clone() }
    }
}

/// What `POST /v1/maintain` changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MaintainOut {
    /// Memories examined.
    pub examined: usize,
    /// Transitions applied.
    pub transitions: Vec<TransitionOut>,
    /// Present when nothing was done because another server sharing the store was running
    /// maintenance at that moment (it held the job lock): why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl From<&MaintainReport> for MaintainOut {
    fn from(r: &MaintainReport) -> Self {
        Self {
            examined: r.examined,
            transitions: r.transitions.iter().map(TransitionOut::from).collect(),
            skipped: r.skipped.clone(),
        }
    }
}
