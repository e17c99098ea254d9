//! Heavy work (ingest, storing a document, export, clear, erase, reset) on a thread of its own
//! at a lower CPU priority than the threads that answer reads, and behind them at the store's
//! shared connections ([`mnemo::store::priority`]).
//!
//! A tenant's cap on heavy work ([`crate::admission`]) bounds how many threads it holds, but on
//! a machine with few cores even a handful of CPU-bound ingests take every core, and their
//! writes hold the store's connections. Under one tenant's twelve big ingests another tenant's
//! recall went from 4 ms idle to 84 ms on two cores, most of it waiting for SQLite's writer
//! behind the ingests' transactions. Marked background, the work waits behind reads there;
//! at a lower priority, it uses every core the reads leave idle and yields one as soon as a
//! read wants it, so heavy work keeps its throughput when nothing else runs.
//!
//! Each job gets a fresh thread: the niceness of a thread can only be raised by an unprivileged
//! process, never lowered back, so a pooled thread shared with reads could not carry it. A
//! thread's start costs tens of microseconds against work of milliseconds to seconds.

use tokio::sync::oneshot;

/// How much nicer than the rest of the server heavy work runs: at +10, Linux's scheduler gives
/// a thread at the default priority about nine times the CPU share of a heavy one.
pub(crate) const NICENESS: i32 = 10;

/// Runs `f` on a new thread in Linux's idle scheduling class and at [`NICENESS`] and waits for its result without holding an async
/// worker. `Err` carries the panic message when `f` panicked.
pub(crate) async fn run<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("mnemo-heavy".into())
        .spawn(move || {
            mnemo::models::lower_thread_priority(NICENESS);
            let work = std::panic::AssertUnwindSafe(|| mnemo::store::priority::in_background(f));
            let _ = tx.send(std::panic::catch_unwind(work));
        })
        .map_err(|e| format!("no thread for heavy work: {e}"))?;
    match rx.await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(panic)) => Err(panic_message(&*panic)),
        Err(_) => Err("heavy work ended without an answer".into()),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    format!("heavy work panicked: {}", text.unwrap_or("(no message)"))
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    use super::NICENESS;
    use super::run;

    #[cfg(target_os = "linux")]
    fn own_niceness() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
    }

    /// The calling thread's scheduling policy, field 41 of its `stat` (`proc(5)`).
    #[cfg(target_os = "linux")]
    fn own_policy() -> u32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        after_name.split(' ').nth(41 - 3).unwrap().parse().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn heavy_work_runs_nicer_than_the_caller_in_the_idle_class_and_returns_its_value() {
        const SCHED_IDLE: u32 = 5;
        let (caller, caller_policy) = (own_niceness(), own_policy());
        assert_ne!(caller_policy, SCHED_IDLE);
        let (value, heavy, policy) = run(|| (42, own_niceness(), own_policy())).await.unwrap();
        assert_eq!(value, 42);
        assert_eq!(heavy, (caller + NICENESS).min(19));
        assert_eq!(policy, SCHED_IDLE);
        // The caller's own thread is untouched.
        assert_eq!((own_niceness(), own_policy()), (caller, caller_policy));
    }

    #[tokio::test]
    async fn a_panic_is_an_error_naming_it_not_a_lost_answer() {
        let got = run(|| -> u8 { panic!("the index is gone") }).await;
        assert_eq!(got.unwrap_err(), "heavy work panicked: the index is gone");
    }
}
