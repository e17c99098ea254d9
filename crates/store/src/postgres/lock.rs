//! Job locks for PostgreSQL: a session advisory lock held on a connection of its own, so that
//! of several servers sharing the database one runs a given job at a time, and a server that
//! dies (its connection with it) releases the lock.

use postgres::Client;

use super::PostgresStore;
use super::pool::pg;
use crate::error::Result;
use crate::lock::{JobLock, JobLocks};

/// The connection holding one advisory lock; dropping it unlocks.
struct AdvisoryLock {
    client: Client,
    name: String,
}

impl Drop for AdvisoryLock {
    fn drop(&mut self) {
        // Closing the connection would release it too; unlocking first frees it at once even if
        // the close lingers. A failure here means the connection is gone, and the lock with it.
        let _ = self.client.execute("SELECT pg_advisory_unlock(hashtext('mnemo.job'), hashtext($1))", &[&self.name]);
    }
}

impl JobLocks for PostgresStore {
    /// Takes the cluster-wide lock of job `name` if no session holds it.
    fn try_job_lock(&self, name: &str) -> Result<Option<JobLock>> {
        let mut client = self.pool.connect().map_err(pg("job lock"))?;
        let got: bool = client
            .query_one("SELECT pg_try_advisory_lock(hashtext('mnemo.job'), hashtext($1))", &[&name])
            .map_err(pg("job lock"))?
            .get(0);
        Ok(got.then(|| JobLock::new(name, AdvisoryLock { client, name: name.to_string() })))
    }
}
