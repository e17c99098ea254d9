//! Job locks: the guard a backend hands out so that, of several processes sharing one store, one
//! runs a given job at a time.

/// A held job lock; dropping it releases the lock.
///
/// Backend-neutral so the engine can take one through `dyn Store`: the backend puts whatever
/// holds the lock (a PostgreSQL session with an advisory lock, a locked file beside the SQLite
/// database) inside, and its own `Drop` releases it. A process that dies releases its locks too.
pub struct JobLock {
    name: String,
    _held: Box<dyn Send>,
}

impl JobLock {
    /// Wraps the value whose lifetime is the lock's (its drop must release the lock).
    pub(crate) fn new(name: &str, held: impl Send + 'static) -> Self {
        Self { name: name.to_string(), _held: Box::new(held) }
    }

    /// The job's name, as passed to [`JobLocks::try_job_lock`].
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Debug for JobLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobLock").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Job locks, so that of several processes sharing one store one runs a given job at a time.
pub trait JobLocks {
    /// Takes the lock of job `name` for as long as the returned guard lives, or `None` when
    /// another handle holds it, in this process or another server sharing the store: several
    /// servers each try, and one runs the job. Names are independent of each other.
    fn try_job_lock(&self, name: &str) -> crate::Result<Option<JobLock>>;
}

/// The lock file name of job `name`: its characters outside `[A-Za-z0-9_-]` are hex-escaped, so
/// any job name maps to one safe file name and different names never share a file.
pub(crate) fn file_name_part(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!(".{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn lock_file_names_are_safe_and_distinct() {
        assert_eq!(super::file_name_part("maintain"), "maintain");
        assert_eq!(super::file_name_part("../x"), ".2e.2e.2fx");
        assert_ne!(super::file_name_part("a.b"), super::file_name_part("a_b"));
        assert_ne!(super::file_name_part("a b"), super::file_name_part("a.20b"));
    }
}
