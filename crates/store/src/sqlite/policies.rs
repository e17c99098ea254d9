//! Policies on SQLite: versions closed and opened in one IMMEDIATE transaction (the single
//! writer serialises authors of the same key).

use mnemo_core::{Policy, Scope};
use rusqlite::params;

use super::SqliteStore;
use super::rows::{execute, insert, query};
use crate::Policies;
use crate::error::Result;
use crate::policies::NextVersion;
use crate::rows::decode::{self, PolicyValue};
use crate::rows::{Row, encode, ms};
use crate::sql::policies as sql;

impl Policies for SqliteStore {
    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = p.tenant.as_str();
        self.write("put policy", |tx| {
            let latest = query(tx, "put policy", sql::LATEST, params![tenant, agent, p.key], |r| r.opt_int(0))?;
            execute(tx, "put policy", sql::CLOSE, params![ms(p.effective_from), tenant, agent, p.key])?;
            let stored = p.next_version(latest.into_iter().flatten().next());
            insert(tx, "put policy", &encode::policy(&stored))?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        let args = params![scope.tenant.as_str(), agent];
        self.read(|conn| query(conn, "policies", sql::BINDING, args, |r| decode::policy(r, PolicyValue::Lenient)))
    }
}
