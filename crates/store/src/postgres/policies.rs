//! Policies on PostgreSQL: authors of one key serialised by an advisory lock.

use mnemo_core::{Policy, Scope};

use super::PostgresStore;
use super::rows::{get, ms, ms_opt, parse, time, time_opt};
use crate::Policies;
use crate::error::{Result, StoreError};

impl Policies for PostgresStore {
    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = p.tenant.as_str();
        self.write("put policy", tenant, |tx| {
            // Serialises authors of the same key (several servers): each sees the other's version.
            tx.query(
                "SELECT pg_advisory_xact_lock(hashtext('mnemo.policy'), hashtext($1 || '/' || $2 || '/' || $3))",
                &[&tenant, &agent, &p.key],
            )?;
            let latest: Option<i32> = get(
                &tx.query_one(
                    "SELECT max(version) FROM policies WHERE tenant = $1 AND agent = $2 AND key = $3",
                    &[&tenant, &agent, &p.key],
                )?,
                0,
            )?;
            tx.execute(
                "UPDATE policies SET effective_until = $1 WHERE tenant = $2 AND agent = $3 AND key = $4 \
                 AND (effective_until IS NULL OR effective_until > $1)",
                &[&ms(p.effective_from), &tenant, &agent, &p.key],
            )?;
            let stored = Policy { version: latest.unwrap_or(0) as u32 + 1, ..p.clone() };
            tx.execute(
                "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &tenant,
                    &agent,
                    &stored.key,
                    &(stored.version as i32),
                    &stored.text,
                    &stored.value.to_string(),
                    &ms(stored.effective_from),
                    &ms_opt(stored.effective_until),
                ],
            )?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = scope.tenant.as_str();
        self.read("policies", tenant, |tx| {
            tx.query(
                "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
                 WHERE tenant = $1 AND agent IN ('', $2) ORDER BY key, agent, version",
                &[&tenant, &agent],
            )?
            .iter()
            .map(|r| {
                let agent: &str = get(r, 1)?;
                let version: i32 = get(r, 3)?;
                Ok(Policy {
                    tenant: parse(r, 0)?,
                    agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(
                        |e: mnemo_core::CoreError| StoreError::Corrupt { what: "policy agent", detail: e.to_string() },
                    )?,
                    key: get(r, 2)?,
                    version: version as u32,
                    text: get(r, 4)?,
                    value: serde_json::from_str(get(r, 5)?).unwrap_or(serde_json::Value::Null),
                    effective_from: time(r, 6)?,
                    effective_until: time_opt(r, 7)?,
                })
            })
            .collect()
        })
    }
}
