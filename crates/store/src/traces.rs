//! Trace envelopes of recall and context calls, and their retention.

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{MemoryId, Scope, TenantId};

use crate::error::Result;

/// Envelopes of recall and context calls: why an answer looked the way it did, the access
/// statistics of what it returned, and their retention sweeps.
pub trait Traces {
    /// Records one recall or context call in one transaction: its envelope, and the access
    /// stats of the memories it returned (`accessed`) and placed in a block (`envelope.surfaced`).
    /// The envelope's chat is the session for the spacing signal.
    fn record_turn(&self, envelope: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()>;

    /// One envelope by turn id, within a tenant.
    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>>;

    /// The latest `limit` envelopes of the scope's agent and user (only the scope's chat when it
    /// names one, every chat otherwise), newest first: what a person browses to see what the
    /// model was told on past turns. Another tenant's, agent's or user's are never listed.
    fn recent_traces(&self, scope: &Scope, limit: usize) -> Result<Vec<TraceEnvelope>>;

    /// Memories placed in context blocks by the last `turns` context calls of the scope's chat.
    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>>;

    /// Deletes, across tenants, trace envelopes of operation `op` recorded before `before`,
    /// oldest first, at most `limit` in one transaction; returns how many went. These are logs
    /// that explain past answers, not memories: nothing a memory cites is touched (access stats
    /// live on the memories themselves). Each tenant's rows go by their own age.
    fn sweep_traces(&self, op: TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64>;
}
