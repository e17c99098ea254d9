//! Write-ahead log checkpoints on a thread of their own, with SQLite's own as the bound.
//!
//! Left to itself, SQLite checkpoints the log inside the commit that takes it past 1,000 pages:
//! that commit copies the logged pages into the database file and syncs it before it returns.
//! A recall records its turn in a commit, so at a million rows one recall in about forty took
//! 2.6–6.2 ms to record instead of 0.7. The store counts its commits and wakes this thread at
//! every [`EVERY_COMMITS`]-th (a wake-up per commit would cost each one a context switch); the
//! thread checkpoints on its own connection, in PASSIVE mode (it never waits for readers or the
//! writer, and they never wait for it), then and after [`IDLE`] without a wake-up when any
//! commit is left over.
//!
//! A PASSIVE checkpoint beside a writer that keeps committing never catches up (new frames
//! arrive while it copies), and the log only starts over once a checkpoint has copied all of
//! it. So the writer keeps SQLite's own checkpoint, at [`BOUND_PAGES`] instead of 1,000: under
//! a sustained run of writes (an import, a bulk load) the commit that crosses it checkpoints
//! inline while no other write can begin, which catches up, and the log stays bounded. Below
//! the bound, which ordinary traffic never reaches between two of the thread's checkpoints, no
//! commit pays for one.
//!
//! A checkpoint changes no commit's durability (what `synchronous` gave it when it was logged):
//! it only moves what the log holds into the database file.

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

/// Pages of log at which the writer's own commit checkpoints (SQLite's `wal_autocheckpoint`):
/// 32 MiB of 4 KiB pages, about eight times what the thread lets accumulate from ordinary
/// commits between two of its checkpoints.
pub(crate) const BOUND_PAGES: u32 = 8_192;

/// Bytes the log file is cut back to when it starts over after a burst took it past them.
const LOG_FILE_LIMIT: i64 = 64 << 20;

/// Sets up the writer `conn` for this checkpointer: its own checkpoints only at `bound_pages`
/// of log, and a log file cut back to [`LOG_FILE_LIMIT`] bytes after a burst.
pub(crate) fn bound_writer(conn: &Connection, bound_pages: u32) -> rusqlite::Result<()> {
    conn.pragma_update(None, "wal_autocheckpoint", bound_pages)?;
    conn.pragma_update(None, "journal_size_limit", LOG_FILE_LIMIT)
}

/// The checkpointing thread of one store handle; dropping it checkpoints what is left and
/// stops the thread.
pub(crate) struct Checkpointer {
    commits: Arc<AtomicU64>,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Held around every checkpoint of the thread, so that a purge (erasure's TRUNCATE
    /// checkpoint and VACUUM) never races one. Taken after the writer's lock, never before it.
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
                if now > done {
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

    /// Counts a commit of the writer, and wakes the thread at every [`EVERY_COMMITS`]-th; never
    /// blocks.
    pub(crate) fn committed(&self) {
        let count = self.commits.fetch_add(1, Ordering::Release) + 1;
        if !count.is_multiple_of(EVERY_COMMITS) {
            return;
        }
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

    /// The failure a thread alone had: commits that never pause, while the thread checkpoints
    /// beside them. The log must stay near the writer's bound, not grow with what is written.
    #[test]
    fn a_sustained_run_of_commits_keeps_the_log_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, checkpointer, path) = setup(&dir);
        let bound = 64;
        bound_writer(&writer, bound).unwrap();
        let page = 4096;
        let wal = path.with_extension("sqlite-wal");
        let blob = "x".repeat(3 * page as usize);
        let (mut largest, mut written) = (0, 0);
        for i in 0..1_000 {
            writer.execute("INSERT INTO t VALUES (?1)", [format!("{i}{blob}")]).unwrap();
            checkpointer.committed();
            written += blob.len() as u64;
            largest = largest.max(std::fs::metadata(&wal).unwrap().len());
        }
        // The bound, plus the commits that can land while the thread holds the checkpoint.
        let allowed = (u64::from(bound) + 200) * (page + 24);
        assert!(largest <= allowed, "log reached {largest} bytes (bound {allowed}) for {written} written");
        assert!(written > 10 * allowed, "the run must write far more than the bound");
    }

    #[test]
    fn a_store_s_writer_checkpoints_only_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::SqliteStore::open(dir.path().join("store.db")).unwrap();
        let auto: u32 = store.writer.take().conn.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0)).unwrap();
        assert_eq!(auto, BOUND_PAGES);
    }
}
