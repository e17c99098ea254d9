//! A small blocking connection pool, and the transaction wrapper every operation runs in.
//!
//! The `Store` trait is synchronous, so a pool of blocking clients is all it needs: no async
//! runtime leaks above the store. Each connection keeps its own cache of prepared statements,
//! which saves a round trip per query (statements live on the connection, across transactions).

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Row, Statement, Transaction};

use crate::error::{Result, StoreError};

/// Most statements one connection keeps prepared; past it the cache starts over. Queries with a
/// variable number of terms are the only ones that vary, so this is never reached in practice.
const MAX_STATEMENTS: usize = 256;

/// Wraps a driver error with the operation it interrupted.
pub(crate) fn pg(op: &'static str) -> impl FnOnce(postgres::Error) -> StoreError {
    move |source| StoreError::Postgres { op, source }
}

/// One pooled connection with its statement cache.
pub(crate) struct PgConn {
    client: Client,
    statements: HashMap<String, Statement>,
}

struct State {
    idle: Vec<PgConn>,
    /// Connections checked out or idle.
    open: usize,
}

/// Connections to one database, at most `max` at a time; callers beyond that wait.
pub(crate) struct Pool {
    config: Config,
    max: usize,
    state: Mutex<State>,
    freed: Condvar,
}

/// A checked-out connection; back to the pool on drop (unless the server closed it).
pub(crate) struct Lease<'a> {
    pool: &'a Pool,
    conn: Option<PgConn>,
}

impl Pool {
    /// A pool that opens connections lazily.
    pub(crate) fn new(config: Config, max: usize) -> Self {
        Self { config, max: max.max(1), state: Mutex::new(State { idle: Vec::new(), open: 0 }), freed: Condvar::new() }
    }

    /// Opens a connection outside the pool (for session-scoped state such as advisory locks).
    pub(crate) fn connect(&self) -> std::result::Result<Client, postgres::Error> {
        self.config.connect(NoTls)
    }

    /// A connection: an idle one, a new one while under the cap, or the next one returned.
    pub(crate) fn get(&self, op: &'static str) -> Result<Lease<'_>> {
        let mut state = self.state.lock().expect("pool lock");
        loop {
            if let Some(conn) = state.idle.pop() {
                if conn.client.is_closed() {
                    state.open -= 1;
                    continue;
                }
                return Ok(Lease { pool: self, conn: Some(conn) });
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match self.connect() {
                    Ok(client) => Ok(Lease { pool: self, conn: Some(PgConn { client, statements: HashMap::new() }) }),
                    Err(e) => {
                        self.state.lock().expect("pool lock").open -= 1;
                        self.freed.notify_one();
                        Err(pg(op)(e))
                    }
                };
            }
            state = self.freed.wait(state).expect("pool lock");
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let mut state = self.pool.state.lock().expect("pool lock");
        if conn.client.is_closed() {
            state.open -= 1;
        } else {
            state.idle.push(conn);
        }
        drop(state);
        self.pool.freed.notify_one();
    }
}

impl Lease<'_> {
    /// The bare client, for transactions that bypass the statement cache.
    pub(crate) fn client(&mut self) -> &mut Client {
        &mut self.conn.as_mut().expect("leased connection").client
    }

    /// Begins a transaction on this connection.
    pub(crate) fn begin(&mut self, op: &'static str, read_only: bool) -> Result<Tx<'_>> {
        let conn = self.conn.as_mut().expect("leased connection");
        let tx = conn.client.build_transaction().read_only(read_only).start().map_err(pg(op))?;
        Ok(Tx { tx, statements: &mut conn.statements, op })
    }
}

/// A transaction with the connection's statement cache, labelled with its operation for errors.
pub(crate) struct Tx<'a> {
    tx: Transaction<'a>,
    statements: &'a mut HashMap<String, Statement>,
    op: &'static str,
}

/// Query parameters.
pub(crate) type Params<'p> = [&'p (dyn ToSql + Sync)];

impl Tx<'_> {
    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.tx.prepare(sql).map_err(pg(self.op))?;
        if self.statements.len() >= MAX_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Rows of a query.
    pub(crate) fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        let s = self.statement(sql)?;
        self.tx.query(&s, params).map_err(pg(self.op))
    }

    /// At most one row.
    pub(crate) fn query_opt(&mut self, sql: &str, params: &Params<'_>) -> Result<Option<Row>> {
        let s = self.statement(sql)?;
        self.tx.query_opt(&s, params).map_err(pg(self.op))
    }

    /// Exactly one row.
    pub(crate) fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row> {
        let s = self.statement(sql)?;
        self.tx.query_one(&s, params).map_err(pg(self.op))
    }

    /// Rows affected by a statement.
    pub(crate) fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64> {
        let s = self.statement(sql)?;
        self.tx.execute(&s, params).map_err(pg(self.op))
    }

    /// Commits.
    pub(crate) fn commit(self) -> Result<()> {
        self.tx.commit().map_err(pg(self.op))
    }
}
