//! Observations an agent records of what it did (a tool, a summary of its arguments, how it
//! ended), each with one vector, mined by the consolidation job into skill candidates.

use chrono::{DateTime, Utc};
use mnemo_core::{Observation, Scope};

use crate::error::Result;
use crate::memories::Embedding;

/// Stored observations: kept apart from memories because they are raw evidence of behaviour,
/// never recalled or placed in a block themselves; only the skills mined from them are.
pub trait Observations {
    /// Stores one observation with its vector (none when the embedder was unavailable: mining
    /// then compares it by words only).
    fn put_observation(&self, observation: &Observation, embedding: Option<&Embedding>) -> Result<()>;

    /// Observations of the scope's tenant, agent (none: observations made without one) and user
    /// (none: made without one), of its chat only when it names one; newest first.
    fn observations(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Observation>>;

    /// Every (tenant, agent) that recorded an observation at or after `since`, as scopes
    /// without user or chat: the partitions skill mining walks. Reads across tenants (jobs).
    fn observation_agents(&self, since: DateTime<Utc>) -> Result<Vec<Scope>>;

    /// The newest `limit` observations of one agent partition (`agent`: the scope's tenant and
    /// agent, any user, any chat) at or after `since`, with their vectors, newest first.
    fn agent_observations(
        &self,
        agent: &Scope,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<(Observation, Option<Embedding>)>>;
}
