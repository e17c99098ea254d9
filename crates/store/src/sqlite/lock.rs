//! Job locks on SQLite: OS file locks beside the database, one file per job.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::PathBuf;

use super::SqliteStore;
use crate::error::{Result, StoreError};
use crate::lock::{JobLock, JobLocks, file_name_part};

/// The lock file of job `name`: beside the database, one per job.
fn lock_path(store: &SqliteStore, name: &str) -> PathBuf {
    let mut file = store.path().file_name().map(|f| f.to_os_string()).unwrap_or_else(|| "mnemo.db".into());
    file.push(format!("-job-{}.lock", file_name_part(name)));
    store.path().with_file_name(file)
}

impl JobLocks for SqliteStore {
    /// Takes an exclusive OS lock on the job's lock file, or `None` when another handle (in this
    /// process or another) holds it. The lock lives as long as the open file: closing it, or the
    /// process ending, releases it. The file itself stays (empty); removing it could let two
    /// processes lock two different files of the same name.
    fn try_job_lock(&self, name: &str) -> Result<Option<JobLock>> {
        let path = lock_path(self, name);
        let io =
            |what: &str, e: std::io::Error| StoreError::Open { path: path.clone(), reason: format!("{what}: {e}") };
        let file: File = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("cannot open the job lock file", e))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(JobLock::new(name, file))),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(io("cannot lock the job lock file", e)),
        }
    }
}
