//! Policy statements: the latest version of a key, closing the version in force, reading every
//! version binding a tenant and agent.

/// The latest version of key `$3` of tenant `$1` and agent `$2` (the empty agent: every agent).
pub(crate) const LATEST: &str = "SELECT max(version) FROM policies WHERE tenant = $1 AND agent = $2 AND key = $3";

/// Closes, as of `$1`, the version of key `$4` (tenant `$2`, agent `$3`) in force then.
pub(crate) const CLOSE: &str = "UPDATE policies SET effective_until = $1 WHERE tenant = $2 AND agent = $3 \
     AND key = $4 AND (effective_until IS NULL OR effective_until > $1)";

/// Every version binding tenant `$1` and agent `$2`, read by
/// [`decode::policy`](crate::rows::decode::policy).
pub(crate) const BINDING: &str = "SELECT tenant, agent, key, version, text, value, effective_from, effective_until \
     FROM policies WHERE tenant = $1 AND agent IN ('', $2) ORDER BY key, agent, version";
