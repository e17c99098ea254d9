//! The background worker: a thread that runs due extraction batches, memos, episodes and the
//! per-user syntheses every few seconds, so `ingest` can return at once, and `maintain`
//! (lifecycle, consolidation, retention) every `background.maintain_interval_secs`. What
//! `mnemo serve` starts beside the HTTP API; stopped (and joined) when the handle is dropped.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::Memory;

/// Passes of the run loop between two synthesis runs (summaries and reflections change daily;
/// no need to look every few seconds).
const SYNTHESIS_EVERY: u32 = 60;

/// A running background worker; dropping it stops the thread after its current pass.
#[derive(Debug)]
pub struct Worker {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the worker over `memory`, waking every `background.worker_interval_secs`; the
    /// first `maintain` runs one maintenance interval after the start (several servers on one
    /// store take turns through the job lock, so it runs once per interval, not once per server).
    /// Failures (a store that is briefly unavailable) are logged as warnings and retried on the
    /// next pass: the worker never takes the process down.
    pub fn start(memory: Arc<Memory>) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let every = Duration::from_secs_f64(memory.config().background.worker_interval_secs.clamp(0.05, 3600.0));
        let chats = memory.config().background.chats_per_pass.max(1);
        let maintain_every = memory.config().background.maintain_interval_secs;
        let maintain_every = (maintain_every.is_finite() && maintain_every > 0.0)
            .then(|| Duration::from_secs_f64(maintain_every.clamp(1.0, 30.0 * 86_400.0)));
        // Background work at the store's shared connections too: a request waiting for the
        // writer goes ahead of this thread's batches ([`mnemo_store::priority`]).
        let thread = std::thread::Builder::new().name("mnemo-worker".into()).spawn(move || {
            mnemo_store::priority::in_background(|| Self::run(&memory, chats, every, maintain_every, &stopped))
        })?;
        Ok(Self { stop: Some(stop), thread: Some(thread) })
    }

    /// The worker's loop, until `stopped` says so or its sender is gone.
    fn run(
        memory: &Memory,
        chats: usize,
        every: Duration,
        maintain_every: Option<Duration>,
        stopped: &mpsc::Receiver<()>,
    ) {
        let mut pass = 0u32;
        let mut last_maintain = Instant::now();
        loop {
            if maintain_every.is_some_and(|every| last_maintain.elapsed() >= every) {
                last_maintain = Instant::now();
                match memory.maintain() {
                    Ok(r) if r.skipped.is_none() => {
                        let changed: Vec<String> = r.summary().into_iter().map(|(k, n)| format!("{k}: {n}")).collect();
                        if !changed.is_empty() {
                            tracing::info!(
                                examined = r.examined,
                                transitions = r.transitions.len(),
                                changed = %changed.join(", "),
                                "background maintenance changed memories"
                            );
                        }
                    }
                    Ok(_) => {} // another server holds the job lock and is doing it
                    Err(e) => tracing::warn!(error = %e, "background maintenance failed; retried next interval"),
                }
            }
            if let Err(e) = memory.run_pending(chats) {
                tracing::warn!(error = %e, "background extraction failed; retried next pass");
            }
            if pass % SYNTHESIS_EVERY == 0 {
                if let Err(e) = memory.synthesize() {
                    tracing::warn!(error = %e, "background summaries failed; retried next pass");
                }
            }
            pass = pass.wrapping_add(1);
            match stopped.recv_timeout(every) {
                Err(RecvTimeoutError::Timeout) => continue,
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// Stops the worker and waits for its current pass to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.shutdown();
    }
}
