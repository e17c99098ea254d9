//! Policies on PostgreSQL: authors of one key serialised by an advisory lock, so of several
//! servers each sees the other's version.

use mnemo_core::{Policy, Scope};

use super::PostgresStore;
use super::apply::insert;
use crate::Policies;
use crate::error::Result;
use crate::policies::NextVersion;
use crate::rows::decode::{self, PolicyValue};
use crate::rows::{Row, encode, ms};
use crate::sql::policies as sql;

impl Policies for PostgresStore {
    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = p.tenant.as_str();
        self.write("put policy", tenant, |tx| {
            tx.query(
                "SELECT pg_advisory_xact_lock(hashtext('mnemo.policy'), hashtext($1 || '/' || $2 || '/' || $3))",
                &[&tenant, &agent, &p.key],
            )?;
            let latest = tx.query_one(sql::LATEST, &[&tenant, &agent, &p.key])?.opt_int(0)?;
            tx.execute(sql::CLOSE, &[&ms(p.effective_from), &tenant, &agent, &p.key])?;
            let stored = p.next_version(latest);
            insert(tx, &encode::policy(&stored))?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = scope.tenant.as_str();
        self.read("policies", tenant, |tx| {
            tx.query(sql::BINDING, &[&tenant, &agent])?
                .iter()
                .map(|r| decode::policy(r, PolicyValue::Lenient))
                .collect()
        })
    }
}
