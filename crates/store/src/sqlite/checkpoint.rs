//! Write-ahead log checkpoints on a thread of their own.
//!
//! Left to itself, SQLite checkpoints the log inside the commit that takes it past 1,000 pages:
//! that commit copies the logged pages into the database file and syncs it before it returns.
//! A recall records its turn in a commit, so at a million rows one recall in about forty took
//! 2.6–6.2 ms to record instead of 0.7. The store turns that off on its writer and nudges this
//! thread after every commit; the thread checkpoints on its own connection, in PASSIVE mode
//! (it never waits for readers or the writer, and they never wait for it), once every
//! [`EVERY_COMMITS`] commits, and after [`IDLE`] of quiet when any commit is left over.
//!
//! Durability is unchanged: a commit is durable once it is in the log (synchronous FULL), and a
//! checkpoint only moves it into the database file.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// Commits between two checkpoints: small ones, often, on the thread (SQLite's own default
/// waits for 1,000 pages of log and then copies them all inside one commit).
pub(crate) const EVERY_COMMITS: u64 = 64;

/// Quiet time after which the commits left over are checkpointed too.
const IDLE: Duration = Duration::from_secs(1);

/// The checkpointing thread of one store handle; dropping it checkpoints what is left and
/// stops the thread.
pub(crate) struct Checkpointer {
    commits: Arc<AtomicU64>,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Held around every checkpoint of this handle, so that a purge (erasure's TRUNCATE
    /// checkpoint and VACUUM) never races one.
    pub(crate) lock: Arc<Mutex<()>>,
}

impl Checkpointer {
    /// Starts the thread over `conn`, a read-write connection of its own to the store's file.
    pub(crate) fn start(conn: Connection) -> std::io::Result<Self> {
        let commits = Arc::new(AtomicU64::new(0));
        let lock = Arc::new(Mutex::new(()));
        let (wake, asleep) = mpsc::sync_channel::<()>(1);
        let (seen, held) = (Arc::clone(&commits), Arc::clone(&lock));
        let thread = std::thread::Builder::new().name("mnemo-checkpoint".into()).spawn(move || {
            let mut done = 0;
            loop {
                let event = asleep.recv_timeout(IDLE);
                let now = seen.load(Ordering::Acquire);
                let due = match event {
                    Ok(()) => now - done >= EVERY_COMMITS,
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => now > done,
                };
                if due {
                    let _held = held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    // A failed or partial checkpoint is taken up by the next one; the log keeps
                    // every commit meanwhile, so nothing is lost.
                    let _ = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE);");
                    done = now;
                }
                if event == Err(RecvTimeoutError::Disconnected) {
                    return;
                }
            }
        })?;
        Ok(Self { commits, wake: Some(wake), thread: Some(thread), lock })
    }

    /// Counts a commit of the writer and wakes the thread; never blocks.
    pub(crate) fn committed(&self) {
        self.commits.fetch_add(1, Ordering::Release);
        if let Some(wake) = &self.wake {
            // Full: a wake-up is pending already. Disconnected: the thread is gone (it only
            // stops on drop), and the next handle's thread checkpoints.
            let _ = wake.try_send(());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A database in WAL mode whose own commits never checkpoint, a checkpointer over a second
    /// connection, and the main file's path.
    fn setup(dir: &tempfile::TempDir) -> (Connection, Checkpointer, std::path::PathBuf) {
        let path = dir.path().join("db.sqlite");
        let writer = Connection::open(&path).unwrap();
        writer.pragma_update(None, "journal_mode", "WAL").unwrap();
        writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        writer.execute_batch("CREATE TABLE t (x TEXT);").unwrap();
        let checkpointer = Checkpointer::start(Connection::open(&path).unwrap()).unwrap();
        (writer, checkpointer, path)
    }

    /// Commits `n` rows holding `marker`, telling the checkpointer of each commit.
    fn commit(writer: &Connection, checkpointer: &Checkpointer, marker: &str, n: u64) {
        for i in 0..n {
            writer.execute("INSERT INTO t VALUES (?1)", [format!("{marker}-{i}")]).unwrap();
            checkpointer.committed();
        }
    }

    /// Whether the main database file (not the log) holds `marker`: only a checkpoint puts it
    /// there while the writer is open.
    fn in_main_file(path: &std::path::Path, marker: &str) -> bool {
        let bytes = std::fs::read(path).unwrap();
        bytes.windows(marker.len()).any(|w| w == marker.as_bytes())
    }

    fn eventually(what: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_run_of_commits_is_checkpointed_by_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, checkpointer, path) = setup(&dir);
        commit(&writer, &checkpointer, "busy-marker", EVERY_COMMITS);
        assert!(eventually(|| in_main_file(&path, "busy-marker-0")), "never checkpointed");
        drop(checkpointer);
    }

    #[test]
    fn a_few_commits_are_checkpointed_once_the_store_is_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, checkpointer, path) = setup(&dir);
        commit(&writer, &checkpointer, "quiet-marker", 3);
        assert!(eventually(|| in_main_file(&path, "quiet-marker-2")), "never checkpointed");
    }

    #[test]
    fn dropping_the_checkpointer_checkpoints_what_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, checkpointer, path) = setup(&dir);
        commit(&writer, &checkpointer, "last-marker", 2);
        drop(checkpointer);
        assert!(in_main_file(&path, "last-marker-1"));
        drop(writer);
    }

    #[test]
    fn a_store_s_writer_leaves_checkpoints_to_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::SqliteStore::open(dir.path().join("store.db")).unwrap();
        let auto: i64 =
            store.writer.lock().unwrap().pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0)).unwrap();
        assert_eq!(auto, 0);
    }
}
