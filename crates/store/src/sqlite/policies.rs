//! Policies on SQLite: versions closed and opened in one IMMEDIATE transaction.

use mnemo_core::{Policy, Scope};
use rusqlite::params;

use super::rows::{ms, parse, time, time_opt};
use super::{SqliteStore, rows};
use crate::Policies;
use crate::error::{Result, StoreError};

impl Policies for SqliteStore {
    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str()).to_string();
        self.write("put policy", |tx| {
            let latest: Option<i64> = tx
                .query_row(
                    "SELECT max(version) FROM policies WHERE tenant = ?1 AND agent = ?2 AND key = ?3",
                    params![p.tenant.as_str(), agent, p.key],
                    |r| r.get(0),
                )
                .map_err(StoreError::sql("put policy"))?;
            tx.execute(
                "UPDATE policies SET effective_until = ?1 WHERE tenant = ?2 AND agent = ?3 AND key = ?4 \
                 AND (effective_until IS NULL OR effective_until > ?1)",
                params![ms(p.effective_from), p.tenant.as_str(), agent, p.key],
            )
            .map_err(StoreError::sql("put policy"))?;
            let stored = Policy { version: latest.unwrap_or(0) as u32 + 1, ..p.clone() };
            tx.execute(
                "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    stored.tenant.as_str(),
                    agent,
                    stored.key,
                    stored.version,
                    stored.text,
                    stored.value.to_string(),
                    ms(stored.effective_from),
                    rows::ms_opt(stored.effective_until)
                ],
            )
            .map_err(StoreError::sql("put policy"))?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
                     WHERE tenant = ?1 AND agent IN ('', ?2) ORDER BY key, agent, version",
                )
                .map_err(StoreError::sql("policies"))?;
            stmt.query_map(params![scope.tenant.as_str(), agent], |r| {
                let agent: String = r.get(1)?;
                let value: String = r.get(5)?;
                Ok(Policy {
                    tenant: parse(r, 0)?,
                    agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(
                        |e: mnemo_core::CoreError| {
                            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
                        },
                    )?,
                    key: r.get(2)?,
                    version: r.get(3)?,
                    text: r.get(4)?,
                    value: serde_json::from_str(&value).unwrap_or(serde_json::Value::Null),
                    effective_from: time(r, 6)?,
                    effective_until: time_opt(r, 7)?,
                })
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("policies"))
        })
    }
}
