//! The SQLite handle's shared connections (one writer, a few readers), taken in turn with
//! foreground work first ([`crate::priority`]).
//!
//! A read (`recall`, `context`) queries on readers (its turn's record goes to the writer from
//! the engine's own thread since). Behind another tenant's big ingests, each a transaction of
//! its own, a write waited for all of them: 4 ms of recall became 70–140 ms on two cores under
//! twelve concurrent ingests; behind eight exports holding every reader, its queries waited the
//! same way. Served first, a foreground waiter waits at most for the statement or transaction
//! already running.
//! Where there are several places (the readers), background work never holds the last one, so
//! a read does not even wait for that: one export's long listing no longer sits between another
//! tenant's recall and its reader. Foreground work is short and bounded by each tenant's rate
//! limit, so it cannot keep background work out.

use std::sync::{Condvar, Mutex, MutexGuard};

use crate::priority::is_background;

#[derive(Debug, Default)]
struct Count {
    in_use: usize,
    background_in_use: usize,
    foreground_waiting: usize,
}

/// `capacity` places, granted to foreground waiters before background ones.
#[derive(Debug)]
pub(super) struct Turnstile {
    capacity: usize,
    count: Mutex<Count>,
    released: Condvar,
}

/// One place, given back when dropped; whether background work holds it.
pub(super) struct Place<'a>(&'a Turnstile, bool);

impl Turnstile {
    pub(super) fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), count: Mutex::new(Count::default()), released: Condvar::new() }
    }

    /// The most places background work holds at once: all but one, when there are several.
    fn background_cap(&self) -> usize {
        if self.capacity > 1 { self.capacity - 1 } else { 1 }
    }

    /// A place, once one is free and, for background work, no foreground waiter is left and
    /// background work holds fewer than [`Self::background_cap`].
    pub(super) fn enter(&self) -> Place<'_> {
        let foreground = !is_background();
        let mut count = self.count.lock().expect("turnstile");
        if foreground {
            count.foreground_waiting += 1;
        }
        while count.in_use >= self.capacity
            || (!foreground && (count.foreground_waiting > 0 || count.background_in_use >= self.background_cap()))
        {
            count = self.released.wait(count).expect("turnstile");
        }
        if foreground {
            count.foreground_waiting -= 1;
        } else {
            count.background_in_use += 1;
        }
        count.in_use += 1;
        Place(self, !foreground)
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        // Poisoned only if a thread panicked inside `enter`'s few lines; every later `enter`
        // fails loudly on it, so there is nothing to give back.
        if let Ok(mut count) = self.0.count.lock() {
            count.in_use -= 1;
            if self.1 {
                count.background_in_use -= 1;
            }
        }
        self.0.released.notify_all();
    }
}

/// Connections behind a turnstile of as many places: whoever passes it finds one free.
pub(super) struct Pool<C> {
    turnstile: Turnstile,
    conns: Vec<Mutex<C>>,
}

/// A connection of a [`Pool`], held until dropped (the connection first, then the place).
pub(super) struct Held<'a, C> {
    conn: MutexGuard<'a, C>,
    _place: Place<'a>,
}

impl<C> Pool<C> {
    pub(super) fn new(conns: Vec<C>) -> Self {
        Self { turnstile: Turnstile::new(conns.len()), conns: conns.into_iter().map(Mutex::new).collect() }
    }

    /// A free connection, waiting in turn ([`Turnstile::enter`]) when none is.
    pub(super) fn take(&self) -> Held<'_, C> {
        let place = self.turnstile.enter();
        // At most `capacity` threads are past the turnstile, so one of the locks is free; a
        // thread between its place and its lock can only make this loop go round once more.
        loop {
            for c in &self.conns {
                match c.try_lock() {
                    Ok(conn) => return Held { conn, _place: place },
                    Err(std::sync::TryLockError::Poisoned(p)) => panic!("a store connection was poisoned: {p}"),
                    Err(std::sync::TryLockError::WouldBlock) => {}
                }
            }
            std::thread::yield_now();
        }
    }
}

impl<C> std::ops::Deref for Held<'_, C> {
    type Target = C;
    fn deref(&self) -> &C {
        &self.conn
    }
}

impl<C> std::ops::DerefMut for Held<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        &mut self.conn
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::priority::in_background;

    /// Waits until `n` threads said they are about to wait, and a little more so that every one
    /// of them is parked inside `take`.
    fn until_waiting(waiting: &AtomicUsize, n: usize) {
        while waiting.load(Ordering::SeqCst) < n {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    #[test]
    fn a_foreground_waiter_goes_ahead_of_every_background_one_already_waiting() {
        let pool = Arc::new(Pool::new(vec![()]));
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiting = Arc::new(AtomicUsize::new(0));
        let held = pool.take();
        let spawn = |name: &'static str, background: bool| {
            let (pool, order, waiting) = (pool.clone(), order.clone(), waiting.clone());
            std::thread::spawn(move || {
                let work = || {
                    waiting.fetch_add(1, Ordering::SeqCst);
                    let _c = pool.take();
                    order.lock().unwrap().push(name);
                };
                if background { in_background(work) } else { work() }
            })
        };
        let bulk: Vec<_> = (0..4).map(|_| spawn("background", true)).collect();
        until_waiting(&waiting, 4);
        let read = spawn("foreground", false);
        until_waiting(&waiting, 5);
        drop(held);
        read.join().unwrap();
        bulk.into_iter().for_each(|b| b.join().unwrap());
        let order = order.lock().unwrap();
        assert_eq!(order.first(), Some(&"foreground"), "{order:?}");
        assert_eq!(order.len(), 5);
    }

    #[test]
    fn background_work_leaves_one_of_several_places_to_foreground_work() {
        let pool = Arc::new(Pool::new(vec![(), ()]));
        let held = in_background(|| pool.take());
        // A second background taker waits although a connection is free...
        let waiting = Arc::new(AtomicUsize::new(0));
        let bulk = {
            let (pool, waiting) = (pool.clone(), waiting.clone());
            std::thread::spawn(move || {
                in_background(|| {
                    waiting.fetch_add(1, Ordering::SeqCst);
                    let _c = pool.take();
                })
            })
        };
        until_waiting(&waiting, 1);
        assert!(!bulk.is_finished());
        // ...which a foreground taker gets at once.
        drop(pool.take());
        drop(held);
        bulk.join().unwrap();
        let count = pool.turnstile.count.lock().unwrap();
        assert_eq!((count.in_use, count.background_in_use), (0, 0));
    }

    #[test]
    fn no_more_holders_than_connections_and_each_holds_its_own() {
        let pool = Arc::new(Pool::new(vec![0usize; 3]));
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (pool, inside) = (pool.clone(), inside.clone());
                std::thread::spawn(move || {
                    let work = || {
                        for _ in 0..100 {
                            let mut c = pool.take();
                            assert!(inside.fetch_add(1, Ordering::SeqCst) < 3, "more holders than connections");
                            *c += 1;
                            inside.fetch_sub(1, Ordering::SeqCst);
                        }
                    };
                    if i % 2 == 0 { in_background(work) } else { work() }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let total: usize = pool.conns.iter().map(|c| *c.lock().unwrap()).sum();
        assert_eq!(total, 800);
        assert_eq!(pool.turnstile.count.lock().unwrap().in_use, 0);
    }
}
