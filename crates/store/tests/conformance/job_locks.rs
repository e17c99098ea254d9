//! [`JobLocks`](mnemo_store::JobLocks): one holder per job name.

use mnemo_store::Store;

/// A job lock is held once per name: a second taker (a separate lock, as another server's would
/// be) is refused while the first lives, names are independent, dropping releases.
pub(crate) fn job_locks_are_exclusive_per_name(store: &dyn Store) {
    let held = store.try_job_lock("maintain").unwrap().expect("a free lock");
    assert_eq!(held.name(), "maintain");
    assert!(store.try_job_lock("maintain").unwrap().is_none(), "a second holder of the same job");
    let other = store.try_job_lock("reembed").unwrap();
    assert!(other.is_some(), "locks of different jobs are independent");
    let odd = store.try_job_lock("../a b").unwrap();
    assert!(odd.is_some(), "any name is a lock of its own");
    assert!(store.try_job_lock("../a b").unwrap().is_none());
    drop(held);
    assert!(store.try_job_lock("maintain").unwrap().is_some(), "released on drop");
}
