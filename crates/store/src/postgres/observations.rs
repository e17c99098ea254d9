//! Observations on PostgreSQL: one row each under the tenant's row-level security, the vector a
//! `real[]` in the row (read back for mining, never searched in SQL).

use chrono::{DateTime, Utc};
use mnemo_core::{Observation, Scope};

use super::apply::insert;
use super::pool::Tx;
use super::{Actor, PostgresStore};
use crate::error::Result;
use crate::memories::Embedding;
use crate::observations::Observations;
use crate::rows::{Row, corrupt, decode, encode, ms};
use crate::sql::observations as sql;

/// Writes one observation with its vector: a live write, or a copy's import.
pub(super) fn write(tx: &mut Tx<'_>, o: &Observation, embedding: Option<&Embedding>) -> Result<()> {
    insert(tx, &encode::observation(o))?;
    if let Some(e) = embedding {
        tx.execute(sql::SET_EMBEDDING, &[&o.id.to_string(), &e.model, &e.vector])?;
    }
    Ok(())
}

impl Observations for PostgresStore {
    fn put_observation(&self, o: &Observation, embedding: Option<&Embedding>) -> Result<()> {
        self.write("put observation", o.owner.tenant.as_str(), |tx| write(tx, o, embedding))
    }

    fn observations(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Observation>> {
        let [t, a, u, c] = scope.key_parts();
        self.read("observations", t, |tx| {
            tx.query(&sql::page(), &[&t, &a, &u, &c, &(limit as i64), &(offset as i64)])?
                .iter()
                .map(decode::observation)
                .collect()
        })
    }

    fn observation_agents(&self, since: DateTime<Utc>) -> Result<Vec<Scope>> {
        self.tx("observation agents", Actor::Jobs, true, |tx| {
            tx.query(sql::AGENTS, &[&ms(since)])?
                .iter()
                .map(|r| Scope::from_key_parts(&r.text(0)?, &r.text(1)?, "", "").map_err(|e| corrupt("scope", 0, e)))
                .collect()
        })
    }

    fn agent_observations(
        &self,
        agent: &Scope,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<(Observation, Option<Embedding>)>> {
        let [t, a, _, _] = agent.key_parts();
        self.read("agent observations", t, |tx| {
            tx.query(&sql::recent(), &[&t, &a, &ms(since), &(limit as i64)])?
                .iter()
                .map(|r| {
                    let embedding =
                        r.opt_text(10)?.zip(r.vector(11)?).map(|(model, vector)| Embedding { model, vector });
                    Ok((decode::observation(r)?, embedding))
                })
                .collect()
        })
    }
}
