//! A read's bookkeeping, written off its path.
//!
//! Every recall and context call records a trace envelope and moves the access statistics of
//! what it returned. Written inline, that write waited for the store's one writer, which another
//! tenant's ingest may hold for tens of milliseconds: a read paid for someone else's write. The
//! turn log queues these records instead, and one thread writes them in order. What reads them
//! back (a trace, the over-reference guard, a listing's access counts, an export, an erasure)
//! first waits for the user's own queued turns, so a caller still reads its writes.
//!
//! What this gives up: a turn is in the store a few milliseconds after its reply rather than
//! before, and a process killed in between loses the turns still queued (a read's own
//! bookkeeping, which a power cut could already lose: see the store's `Durability::Logged`).
//! Ingest and rotation traces, which record what a user sent, are still written inline.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mnemo_core::trace::TraceEnvelope;
use mnemo_core::{MemoryId, Scope};
use mnemo_store::Store;

/// Turns queued before a recording call writes inline instead: the queue bounds its memory,
/// and a store that cannot keep up slows the reads that feed it rather than growing without end.
const QUEUE: usize = 4096;

/// The longest a read waits for its user's queued turns before it goes on without them (a store
/// that stopped answering must not hang every listing).
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

/// One turn to record.
struct Queued {
    env: TraceEnvelope,
    accessed: Vec<MemoryId>,
}

/// What a queued turn is waited for by: its scope, chat included, and whether it is a context
/// call (the over-reference guard reads a chat's earlier context calls, nothing else).
type Key = (Scope, bool);

/// Turns queued and not yet written, per [`Key`].
#[derive(Default)]
struct Pending {
    users: Mutex<HashMap<Key, usize>>,
    written: Condvar,
}

impl Pending {
    fn users(&self) -> MutexGuard<'_, HashMap<Key, usize>> {
        self.users.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn add(&self, key: &Key) {
        *self.users().entry(key.clone()).or_default() += 1;
    }

    fn done(&self, key: &Key) {
        let mut users = self.users();
        if let Some(n) = users.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                users.remove(key);
            }
        }
        self.written.notify_all();
    }

    /// Waits until no queued turn's key matches `which`, or [`SETTLE_LIMIT`] has passed.
    fn settle(&self, which: impl Fn(&Key) -> bool) {
        let started = Instant::now();
        let mut users = self.users();
        while users.keys().any(&which) {
            let left = SETTLE_LIMIT.saturating_sub(started.elapsed());
            if left.is_zero() {
                tracing::warn!("queued trace envelopes were not written within {SETTLE_LIMIT:?}; reading without them");
                return;
            }
            users = self.written.wait_timeout(users, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
    }
}

/// The queue of a read's bookkeeping and the thread that writes it.
pub(crate) struct TurnLog {
    store: Arc<dyn Store>,
    sender: Mutex<Option<SyncSender<Queued>>>,
    pending: Arc<Pending>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl TurnLog {
    /// Starts the writing thread over `store`; without one (the thread could not start) every
    /// turn is written inline, as before.
    pub(crate) fn start(store: Arc<dyn Store>) -> Self {
        let (sender, queue) = mpsc::sync_channel::<Queued>(QUEUE);
        let pending = Arc::new(Pending::default());
        let thread = {
            let (store, pending) = (Arc::clone(&store), Arc::clone(&pending));
            std::thread::Builder::new().name("mnemo-turns".into()).spawn(move || write_all(&*store, &pending, &queue))
        };
        match thread {
            Ok(t) => Self { store, sender: Mutex::new(Some(sender)), pending, thread: Mutex::new(Some(t)) },
            Err(e) => {
                tracing::warn!(error = %e, "could not start the trace writer; reads record their turns inline");
                Self { store, sender: Mutex::new(None), pending, thread: Mutex::new(None) }
            }
        }
    }

    /// Queues a turn (its envelope already redacted), or writes it inline when the queue is
    /// full or its thread is gone.
    pub(crate) fn record(&self, env: TraceEnvelope, accessed: &[MemoryId]) -> mnemo_store::Result<()> {
        let key = key(&env);
        let sender = self.sender.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let Some(sender) = sender else { return self.store.record_turn(&env, accessed) };
        self.pending.add(&key);
        match sender.try_send(Queued { env, accessed: accessed.to_vec() }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(q) | TrySendError::Disconnected(q)) => {
                let written = self.store.record_turn(&q.env, &q.accessed);
                self.pending.done(&key);
                written
            }
        }
    }

    /// Waits until the turns queued for `scope`'s user are written (for every user of its
    /// tenant when it names none).
    pub(crate) fn settle_user(&self, scope: &Scope) {
        if scope.user.is_none() {
            return self.settle_tenant(&scope.tenant);
        }
        self.pending.settle(|(s, _)| s.tenant == scope.tenant && s.agent == scope.agent && s.user == scope.user);
    }

    /// Waits until the context calls queued for `scope`'s chat are written: what the
    /// over-reference guard reads. A recall of the same user does not hold it up.
    pub(crate) fn settle_context(&self, scope: &Scope) {
        self.pending.settle(|(s, context)| *context && s == scope);
    }

    /// Waits until the turns queued for any user of `scope`'s tenant are written.
    pub(crate) fn settle_tenant(&self, tenant: &mnemo_core::TenantId) {
        self.pending.settle(|(s, _)| s.tenant == *tenant);
    }

    /// Waits until every queued turn is written.
    pub(crate) fn settle_all(&self) {
        self.pending.settle(|_| true);
    }
}

impl Drop for TurnLog {
    /// Writes what is still queued, then stops the thread.
    fn drop(&mut self) {
        drop(self.sender.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
        if let Some(t) = self.thread.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            let _ = t.join();
        }
    }
}

/// The writing thread: each queued turn in order, until every sender is gone. A turn that
/// cannot be written is logged and dropped: it is the read's bookkeeping, and the read has
/// already answered.
fn write_all(store: &dyn Store, pending: &Pending, queue: &Receiver<Queued>) {
    for q in queue {
        if let Err(e) = store.record_turn(&q.env, &q.accessed) {
            tracing::warn!(error = %e, turn = %q.env.turn_id, "could not record a read's trace envelope");
        }
        pending.done(&key(&q.env));
    }
}

fn key(env: &TraceEnvelope) -> Key {
    (env.scope.clone(), env.op == mnemo_core::trace::TraceOp::Context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settling_waits_for_the_users_own_turns_only() {
        let p = Arc::new(Pending::default());
        let a = (Scope::parse("t", None, Some("a"), None).unwrap(), false);
        let b = (Scope::parse("t", None, Some("b"), None).unwrap(), false);
        p.add(&a);
        // Nothing of b's is queued: no wait.
        p.settle(|s| *s == b);
        let waiter = {
            let (p, a) = (Arc::clone(&p), a.clone());
            std::thread::spawn(move || p.settle(|s| *s == a))
        };
        // a's turn is still queued, so the waiter is still waiting, however late the machine
        // started it; it returns once the turn is done. (No duration is asserted: on a loaded
        // machine the thread may start well after this one sleeps.)
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "settle returned while a's turn was still queued");
        p.done(&a);
        waiter.join().unwrap();
        assert!(p.users().is_empty());
    }
}
