//! Observations on SQLite: one row each, the vector a little-endian BLOB in the row.

use chrono::{DateTime, Utc};
use mnemo_core::{Observation, Scope};
use rusqlite::params;

use super::SqliteStore;
use super::rows::{execute, insert, query, vector_blob};
use crate::error::Result;
use crate::memories::Embedding;
use crate::observations::Observations;
use crate::rows::{Row, corrupt, decode, encode, ms};
use crate::sql::observations as sql;

/// Writes one observation with its vector: a live write, or a copy's import.
pub(super) fn write(tx: &rusqlite::Transaction<'_>, o: &Observation, embedding: Option<&Embedding>) -> Result<()> {
    insert(tx, "put observation", &encode::observation(o))?;
    if let Some(e) = embedding {
        execute(tx, "put observation", sql::SET_EMBEDDING, params![o.id.to_string(), e.model, vector_blob(&e.vector)])?;
    }
    Ok(())
}

impl Observations for SqliteStore {
    fn put_observation(&self, o: &Observation, embedding: Option<&Embedding>) -> Result<()> {
        self.write("put observation", |tx| write(tx, o, embedding))
    }

    fn observations(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Observation>> {
        let [t, a, u, c] = scope.key_parts();
        let args = params![t, a, u, c, limit as i64, offset as i64];
        self.read(|conn| query(conn, "observations", &sql::page(), args, |r| decode::observation(r)))
    }

    fn observation_agents(&self, since: DateTime<Utc>) -> Result<Vec<Scope>> {
        self.read(|conn| {
            let rows =
                query(conn, "observation agents", sql::AGENTS, params![ms(since)], |r| Ok((r.text(0)?, r.text(1)?)))?;
            rows.iter().map(|(t, a)| Scope::from_key_parts(t, a, "", "").map_err(|e| corrupt("scope", 0, e))).collect()
        })
    }

    fn agent_observations(
        &self,
        agent: &Scope,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<(Observation, Option<Embedding>)>> {
        let [t, a, _, _] = agent.key_parts();
        let args = params![t, a, ms(since), limit as i64];
        self.read(|conn| {
            query(conn, "agent observations", &sql::recent(), args, |r| {
                let embedding = r.opt_text(10)?.zip(r.vector(11)?).map(|(model, vector)| Embedding { model, vector });
                Ok((decode::observation(r)?, embedding))
            })
        })
    }
}
