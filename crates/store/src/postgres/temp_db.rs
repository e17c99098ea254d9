//! Throwaway databases on a PostgreSQL server, for tests and evaluations that need a real one:
//! each gets a database of its own (so they run in parallel) that is dropped afterwards.

use postgres::{Client, NoTls};

use super::redact;
use crate::error::{Result, StoreError};

/// A database created for one test, dropped (with any connections left to it) when this guard
/// goes.
pub struct TempDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl TempDatabase {
    /// The variable naming the server: an admin URL such as `scripts/pg.sh url` prints.
    pub const URL_VAR: &'static str = "MNEMO_TEST_DATABASE_URL";

    /// A fresh database on the server named by `MNEMO_TEST_DATABASE_URL`; `None` when the
    /// variable is unset outside CI, so a developer without PostgreSQL can skip such tests. With
    /// `CI` set an unset variable is an error instead, so CI can never skip them silently.
    pub fn from_env() -> Result<Option<Self>> {
        match std::env::var(Self::URL_VAR) {
            Ok(url) if !url.trim().is_empty() => Self::create(&url).map(Some),
            _ if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) => Err(StoreError::Open {
                path: format!("${}", Self::URL_VAR).into(),
                reason: "the variable is not set, but CI is, and in CI the tests that need PostgreSQL must run. \
                         Run `scripts/pg.sh start` and `export MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url)` first"
                    .into(),
            }),
            _ => Ok(None),
        }
    }

    /// Creates a database with a unique name on the server of `admin_url` (a role that may
    /// create databases).
    pub fn create(admin_url: &str) -> Result<Self> {
        let open_err = |reason: String| StoreError::Open { path: redact(admin_url).into(), reason };
        let name = format!("mnemo_t_{}", mnemo_core::MemoryId::new().to_string().to_lowercase());
        let mut admin = Client::connect(admin_url, NoTls)
            .map_err(|e| open_err(format!("cannot connect (is `scripts/pg.sh start` running?): {e}")))?;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| open_err(format!("cannot create a test database: {}", server_message(&e))))?;
        let url = with_dbname(admin_url, &name);
        Ok(Self { admin_url: admin_url.to_string(), name, url })
    }

    /// The URL of the new database (same server, role and options as the admin URL).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The admin URL it was created from.
    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }

    /// A raw connection to the database as the connecting role, for checks below the store.
    pub fn client(&self) -> Result<Client> {
        Client::connect(&self.url, NoTls).map_err(|e| StoreError::Open {
            path: redact(&self.url).into(),
            reason: format!("cannot connect: {}", server_message(&e)),
        })
    }

    /// Every table of the database with all its rows, each row in PostgreSQL's text form, one
    /// per line, lower-cased: what tests read to prove that a value reached no row, whatever
    /// table or column a change put it in.
    pub fn rows_as_text(&self) -> Result<Vec<(String, String)>> {
        let mut client = self.client()?;
        let failed = |source| StoreError::Postgres { op: "read every row", source };
        let tables: Vec<String> = client
            .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()", &[])
            .map_err(failed)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut out = Vec::with_capacity(tables.len());
        for table in tables {
            let rows = client.query(&format!("SELECT t::text FROM \"{table}\" t"), &[]).map_err(failed)?;
            let text: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0).to_lowercase()).collect();
            out.push((table, text.join("\n")));
        }
        Ok(out)
    }
}

impl std::fmt::Debug for TempDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempDatabase").field("url", &redact(&self.url)).finish_non_exhaustive()
    }
}

impl Drop for TempDatabase {
    fn drop(&mut self) {
        if let Ok(mut admin) = Client::connect(&self.admin_url, NoTls) {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// What the server said (the driver's own message is only "db error").
fn server_message(e: &postgres::Error) -> String {
    e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string())
}

/// `url` pointing at database `db` instead (URL or key=value form).
fn with_dbname(url: &str, db: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("{url} dbname={db}");
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (rest, String::new()),
    };
    let authority = before_query.split('/').next().unwrap_or("");
    format!("{scheme}://{authority}/{db}{query}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_database_name_replaces_the_one_in_the_url() {
        assert_eq!(super::with_dbname("postgres://u@h:1/x?sslmode=disable", "t"), "postgres://u@h:1/t?sslmode=disable");
        assert_eq!(super::with_dbname("postgres://u@h:1", "t"), "postgres://u@h:1/t");
        assert_eq!(super::with_dbname("host=h user=u", "t"), "host=h user=u dbname=t");
    }
}
