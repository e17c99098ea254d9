//! Foreground and background work at the store's shared connections.
//!
//! A server answers reads (recall, context: a person is waiting) and does bulk work (a big
//! ingest, an export, an erasure) on the same few connections. Bulk work marks its thread with
//! [`in_background`]; wherever the store makes threads wait for a connection (SQLite's one
//! writer, its readers), a foreground waiter goes ahead of every background one, so a burst of
//! one tenant's bulk work delays another tenant's read by at most the one statement or
//! transaction already running, not by the whole queue.

use std::cell::Cell;

thread_local! {
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread's store work behind every foreground waiter.
pub fn in_background<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            BACKGROUND.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BACKGROUND.with(|b| b.replace(true)));
    f()
}

/// Whether this thread's store work is background work now.
pub(crate) fn is_background() -> bool {
    BACKGROUND.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::{in_background, is_background};

    #[test]
    fn background_lasts_for_the_call_and_nests() {
        assert!(!is_background());
        in_background(|| {
            assert!(is_background());
            in_background(|| assert!(is_background()));
            assert!(is_background());
        });
        assert!(!is_background());
        // A panic inside still restores the thread.
        let _ = std::panic::catch_unwind(|| in_background(|| panic!("bulk work failed")));
        assert!(!is_background());
    }
}
