//! Authored policies, versioned per tenant, agent and key.

use mnemo_core::{Policy, Scope};

use crate::error::Result;

/// Versioned policies: authored rules, kept apart from memories so a rule is never extracted or
/// decayed like a fact.
pub trait Policies {
    /// Authors a policy: closes the version in force for the same tenant, agent and key and
    /// writes the next version. Returns the stored version.
    fn put_policy(&self, policy: &Policy) -> Result<Policy>;

    /// Every policy version binding the scope's tenant and agent (in force or not).
    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>>;
}

/// The version a new policy gets: one after the latest of its key (1 for a new key).
pub(crate) trait NextVersion {
    /// `self` as the version after `latest`.
    fn next_version(&self, latest: Option<i64>) -> Policy;
}

impl NextVersion for Policy {
    fn next_version(&self, latest: Option<i64>) -> Policy {
        Policy { version: latest.unwrap_or(0) as u32 + 1, ..self.clone() }
    }
}
