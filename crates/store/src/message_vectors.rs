//! Archival recall's semantic half over an in-process copy of each user's message vectors.
//!
//! Every `context()` that wants excerpts scores the query against every vector of the user's
//! messages (the whole message and its passages). Read from the database on each call, with
//! every blob copied and converted, that cost about 5 ms for a user of 400 turns: more than the
//! rest of the read path after the embedding together. Here each user's vectors of one model
//! are kept as an [`Archive`], stamped with the user's message version, which every write that
//! changes the user's message vectors moves in its transaction, from any process; a reader uses
//! an archive only while its stamp is the version the database shows.
//!
//! Like the memories' cache ([`crate::vectors`]), a write of this handle does not discard the
//! archive: vectors it stored are put into an archive at the version the write moved from,
//! after the commit and under the writer's lock. Anything else that moved the version (another
//! handle, a message withheld, an import) fails the check and the archive is reloaded.
//!
//! Message vectors outnumber memories' (every turn, and one per passage of a long turn), so the
//! cache has a budget in bytes: the least recently used archives leave first, and a user whose
//! archive alone would take more than half of it is scored from the rows as they are read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mnemo_core::MessageId;

use crate::error::{Result, StoreError};
use crate::vectors::dot;

/// What the cache may hold unless told otherwise: about 10,900 vectors of 384 dimensions, the
/// whole archive of some twenty-five users of 400 turns. Small for the same reason as the
/// memory vectors' budget: memory that levels off; raise it for many users.
pub(crate) const DEFAULT_BUDGET: usize = 16 << 20;

/// Bookkeeping per message beside its vectors (id, agent, chat, index entry).
const ENTRY_OVERHEAD: usize = 128;

/// One message's vectors and what archival recall filters it by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The message's row: what a later write of its vectors names.
    pub(crate) rowid: i64,
    /// The message.
    pub(crate) id: MessageId,
    /// Its agent (recall reaches the scope's agent's messages only).
    pub(crate) agent: Box<str>,
    /// Its chat (a scope naming a chat reaches that chat only).
    pub(crate) chat: Box<str>,
    /// When it was said, in stored milliseconds.
    pub(crate) at: i64,
    /// The whole message's vector, then each passage's, all of one dimension.
    pub(crate) vectors: Box<[f32]>,
}

impl Entry {
    fn bytes(&self) -> usize {
        self.vectors.len() * size_of::<f32>() + self.id.as_str().len() + ENTRY_OVERHEAD
    }
}

/// Which messages one search reaches: an agent's, in one chat or all (`chat` empty), said within
/// `[from, to)` milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach<'a> {
    pub(crate) agent: &'a str,
    pub(crate) chat: &'a str,
    pub(crate) from: i64,
    pub(crate) to: i64,
}

impl Reach<'_> {
    fn admits(&self, e: &Entry) -> bool {
        *e.agent == *self.agent
            && (self.chat.is_empty() || *e.chat == *self.chat)
            && (self.from..self.to).contains(&e.at)
    }
}

/// One user's message vectors of one model, as of `version`.
#[derive(Debug, Clone)]
pub(crate) struct Archive {
    model: String,
    version: i64,
    /// 0 until the first vector fixes it.
    dim: usize,
    entries: Vec<Entry>,
    /// Where each message row's entry is in `entries`.
    rows: HashMap<i64, usize>,
    bytes: usize,
}

impl Archive {
    /// An empty archive of `model` at `version`.
    pub(crate) fn new(model: &str, version: i64) -> Self {
        Self { model: model.to_string(), version, dim: 0, entries: Vec::new(), rows: HashMap::new(), bytes: 0 }
    }

    /// Adds or replaces a message's vectors; refused when they are not of the archive's
    /// dimension (the whole vector's), which only a corrupt row can cause.
    pub(crate) fn put(&mut self, dim: usize, entry: Entry) -> Result<()> {
        if self.entries.is_empty() && self.dim == 0 {
            self.dim = dim;
        }
        if dim != self.dim || dim == 0 || !entry.vectors.len().is_multiple_of(dim) || entry.vectors.is_empty() {
            return Err(StoreError::Dimension { model: self.model.clone(), expected: self.dim, got: dim });
        }
        self.bytes += entry.bytes();
        match self.rows.get(&entry.rowid) {
            Some(&at) => {
                self.bytes -= self.entries[at].bytes();
                self.entries[at] = entry;
            }
            None => {
                self.rows.insert(entry.rowid, self.entries.len());
                self.entries.push(entry);
            }
        }
        Ok(())
    }

    /// Takes a message's vectors out (it has none of this model any more).
    fn remove(&mut self, rowid: i64) {
        let Some(at) = self.rows.remove(&rowid) else { return };
        self.bytes -= self.entries[at].bytes();
        self.entries.swap_remove(at);
        if let Some(moved) = self.entries.get(at) {
            self.rows.insert(moved.rowid, at);
        }
    }

    /// Memory the archive takes, roughly: what the cache's budget counts.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The messages in `reach` closest to `query`, each as close as the closest of its vectors
    /// (the whole or a passage), best first, ties by id: the order the database's scan gave.
    pub(crate) fn nearest(&self, reach: Reach<'_>, query: &[f32], limit: usize) -> Result<Vec<(MessageId, f32)>> {
        if self.entries.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        if self.dim != query.len() {
            return Err(StoreError::Dimension { model: self.model.clone(), expected: self.dim, got: query.len() });
        }
        let dim = self.dim;
        let mut scored: Vec<(&MessageId, f32)> = self
            .entries
            .iter()
            .filter(|e| reach.admits(e))
            .map(|e| {
                let (whole, passages) = e.vectors.split_at(dim);
                let closest = passages.chunks_exact(dim).map(|p| dot(p, query)).fold(dot(whole, query), f32::max);
                (&e.id, closest)
            })
            .collect();
        let order = |a: &(&MessageId, f32), b: &(&MessageId, f32)| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_unstable_by(order);
        Ok(scored.into_iter().map(|(id, s)| (id.clone(), s)).collect())
    }
}

/// Vectors one committed write stored for a user's messages, with the user's message version
/// before and after it.
#[derive(Debug)]
pub(crate) struct Stored {
    /// The user's version before the write (none: the write created it).
    pub(crate) from: Option<i64>,
    /// Its version after.
    pub(crate) to: i64,
    /// The messages' new vectors, each of its model, with its dimension: a message has vectors
    /// of one model, so any it had of another are gone.
    pub(crate) entries: Vec<(String, usize, Entry)>,
}

/// Key of one archive: tenant, user, model.
type Key = (String, String, String);

struct Slot {
    archive: Arc<Archive>,
    /// The cache's clock when the archive was last used: the smallest leaves first.
    used: u64,
}

#[derive(Default)]
struct Slots {
    map: HashMap<Key, Slot>,
    bytes: usize,
    clock: u64,
}

impl Slots {
    fn take(&mut self, key: &Key) -> Option<Slot> {
        let slot = self.map.remove(key)?;
        self.bytes -= slot.archive.bytes();
        Some(slot)
    }

    /// Drops the least recently used archives until those left take at most `budget` bytes.
    fn shrink_to(&mut self, budget: usize) {
        while self.bytes > budget {
            let Some(oldest) = self.map.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| k.clone()) else { break };
            self.take(&oldest);
        }
    }

    fn put(&mut self, key: Key, archive: Arc<Archive>, used: u64) {
        self.bytes += archive.bytes();
        if let Some(old) = self.map.insert(key, Slot { archive, used }) {
            self.bytes -= old.archive.bytes();
        }
    }
}

/// The cache, shared by all readers of one store handle.
pub(crate) struct MessageVectorCache {
    slots: Mutex<Slots>,
    budget: usize,
    /// Archives read from the database, for tests that tell a delta from a reload.
    loads: AtomicUsize,
}

impl Default for MessageVectorCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET)
    }
}

impl MessageVectorCache {
    /// A cache holding at most about `budget` bytes of vectors.
    pub(crate) fn with_budget(budget: usize) -> Self {
        Self { slots: Mutex::default(), budget, loads: AtomicUsize::new(0) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().expect("message vector cache lock")
    }

    /// Bytes the kept archives take, as the budget counts them.
    pub(crate) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn key(tenant: &str, user: &str, model: &str) -> Key {
        (tenant.to_string(), user.to_string(), model.to_string())
    }

    /// The user's archive of `model` if it is at `version`, the version the database shows
    /// now; an older one is dropped.
    pub(crate) fn current(&self, tenant: &str, user: &str, model: &str, version: i64) -> Option<Arc<Archive>> {
        let key = Self::key(tenant, user, model);
        let mut slots = self.lock();
        slots.clock += 1;
        let clock = slots.clock;
        let slot = slots.map.get_mut(&key)?;
        if slot.archive.version == version {
            slot.used = clock;
            return Some(slot.archive.clone());
        }
        if slot.archive.version < version {
            slots.take(&key);
        }
        None
    }

    /// Keeps an archive just read from the database (unless a newer one got there first, or it
    /// is too big to keep), making room by dropping the least recently used.
    pub(crate) fn keep(&self, tenant: &str, user: &str, archive: Archive) -> Arc<Archive> {
        self.loads.fetch_add(1, Ordering::Relaxed);
        let archive = Arc::new(archive);
        if archive.bytes() > self.budget / 2 {
            return archive;
        }
        let key = Self::key(tenant, user, &archive.model);
        let mut slots = self.lock();
        if slots.map.get(&key).is_some_and(|s| s.archive.version >= archive.version) {
            return archive;
        }
        slots.take(&key);
        slots.shrink_to(self.budget.saturating_sub(archive.bytes()));
        slots.clock += 1;
        let clock = slots.clock;
        slots.put(key, archive.clone(), clock);
        archive
    }

    /// Brings this handle's archives of the user along with a write it just committed: one at
    /// the version the write moved from gets its vectors (and loses those a message had of
    /// another model) and its version; a stale one is dropped. Called after the commit, under
    /// the writer's lock, so writes arrive in commit order.
    pub(crate) fn advance(&self, tenant: &str, user: &str, stored: &Stored) {
        let mut slots = self.lock();
        let keys: Vec<Key> = slots.map.keys().filter(|(t, u, _)| t == tenant && u == user).cloned().collect();
        for key in keys {
            let Some(Slot { mut archive, used }) = slots.take(&key) else { continue };
            if archive.version >= stored.to {
                // A reader loaded it after the commit: it already holds the write.
                slots.put(key, archive, used);
                continue;
            }
            // Patched in place only when no reader holds it and it is exactly one write behind;
            // otherwise the next reader loads it again.
            let Some(a) = Arc::get_mut(&mut archive).filter(|a| Some(a.version) == stored.from) else { continue };
            let mut patched = true;
            for (model, dim, entry) in &stored.entries {
                if *model == a.model {
                    patched &= a.put(*dim, entry.clone()).is_ok();
                } else {
                    a.remove(entry.rowid);
                }
            }
            a.version = stored.to;
            if patched {
                slots.put(key, archive, used);
            }
        }
        // The archives it grew may have taken the cache past its budget.
        slots.shrink_to(self.budget);
    }

    /// Drops every archive of an erased user.
    pub(crate) fn forget_user(&self, tenant: &str, user: &str) {
        let mut slots = self.lock();
        let keys: Vec<Key> = slots.map.keys().filter(|(t, u, _)| t == tenant && u == user).cloned().collect();
        for key in keys {
            slots.take(&key);
        }
    }

    /// Archives read from the database so far.
    #[cfg(test)]
    pub(crate) fn loads(&self) -> usize {
        self.loads.load(Ordering::Relaxed)
    }

    /// Bytes the cache holds now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(rowid: i64, agent: &str, chat: &str, at: i64, vectors: &[f32]) -> Entry {
        Entry {
            rowid,
            id: MessageId::new(format!("m{rowid}")).unwrap(),
            agent: agent.into(),
            chat: chat.into(),
            at,
            vectors: vectors.into(),
        }
    }

    const ALL: Reach<'static> = Reach { agent: "", chat: "", from: i64::MIN, to: i64::MAX };

    fn ids(found: &[(MessageId, f32)]) -> Vec<&str> {
        found.iter().map(|(id, _)| id.as_str()).collect()
    }

    #[test]
    fn a_message_is_as_close_as_its_closest_passage() {
        let mut a = Archive::new("m", 1);
        a.put(2, entry(1, "", "", 0, &[1.0, 0.0])).unwrap();
        a.put(2, entry(2, "", "", 0, &[0.0, 1.0, 0.6, 0.8])).unwrap();
        let found = a.nearest(ALL, &[0.6, 0.8], 5).unwrap();
        assert_eq!(ids(&found), ["m2", "m1"]);
        assert!((found[0].1 - 1.0).abs() < 1e-6, "the passage's cosine, not the whole's 0.8");
    }

    #[test]
    fn reach_filters_by_agent_chat_and_time() {
        let mut a = Archive::new("m", 1);
        a.put(1, entry(1, "", "c1", 10, &[1.0])).unwrap();
        a.put(1, entry(2, "", "c2", 20, &[0.9])).unwrap();
        a.put(1, entry(3, "bot", "c1", 10, &[0.8])).unwrap();
        assert_eq!(ids(&a.nearest(ALL, &[1.0], 9).unwrap()), ["m1", "m2"]);
        assert_eq!(ids(&a.nearest(Reach { chat: "c2", ..ALL }, &[1.0], 9).unwrap()), ["m2"]);
        assert_eq!(ids(&a.nearest(Reach { agent: "bot", ..ALL }, &[1.0], 9).unwrap()), ["m3"]);
        assert_eq!(ids(&a.nearest(Reach { from: 11, to: 21, ..ALL }, &[1.0], 9).unwrap()), ["m2"]);
        assert_eq!(ids(&a.nearest(Reach { from: 10, to: 20, ..ALL }, &[1.0], 9).unwrap()), ["m1"]);
    }

    #[test]
    fn the_best_are_kept_in_order_with_ties_by_id() {
        let mut a = Archive::new("m", 1);
        for (rowid, x) in [(5, 0.5), (3, 0.9), (4, 0.5), (1, 0.1), (2, 0.9)] {
            a.put(1, entry(rowid, "", "", 0, &[x])).unwrap();
        }
        assert_eq!(ids(&a.nearest(ALL, &[1.0], 3).unwrap()), ["m2", "m3", "m4"]);
        assert_eq!(ids(&a.nearest(ALL, &[1.0], 9).unwrap()), ["m2", "m3", "m4", "m5", "m1"]);
        assert!(a.nearest(ALL, &[1.0, 0.0], 3).is_err(), "a query of another dimension is refused");
        assert!(a.put(2, entry(9, "", "", 0, &[1.0, 0.0])).is_err(), "so is a vector of another dimension");
    }

    #[test]
    fn replacing_and_removing_keep_the_index_and_the_bytes_right() {
        let mut a = Archive::new("m", 1);
        for rowid in 1..=4 {
            a.put(1, entry(rowid, "", "", 0, &[rowid as f32])).unwrap();
        }
        let four = a.bytes();
        a.put(1, entry(2, "", "", 0, &[7.0, 7.5])).unwrap();
        assert_eq!(a.bytes(), four + 4);
        a.remove(1);
        a.remove(99);
        assert_eq!(ids(&a.nearest(ALL, &[1.0], 9).unwrap()), ["m2", "m4", "m3"]);
        assert!(a.rows.iter().all(|(rowid, &at)| a.entries[at].rowid == *rowid));
        for rowid in 2..=4 {
            a.remove(rowid);
        }
        assert_eq!(a.bytes(), 0);
        assert!(a.nearest(ALL, &[1.0], 9).unwrap().is_empty());
    }

    fn archive(model: &str, version: i64, rows: std::ops::Range<i64>) -> Archive {
        let mut a = Archive::new(model, version);
        for rowid in rows {
            a.put(1, entry(rowid, "", "", 0, &[rowid as f32])).unwrap();
        }
        a
    }

    #[test]
    fn a_write_one_version_ahead_patches_the_archive_and_anything_else_drops_it() {
        let cache = MessageVectorCache::default();
        cache.keep("t", "u", archive("m", 5, 1..3));
        cache.keep("t", "u", archive("other", 5, 1..3));
        cache.keep("t", "v", archive("m", 9, 1..3));
        let stored = Stored {
            from: Some(5),
            to: 6,
            entries: vec![("m".into(), 1, entry(2, "", "", 0, &[9.0])), ("m".into(), 1, entry(3, "", "", 0, &[3.0]))],
        };
        cache.advance("t", "u", &stored);
        let a = cache.current("t", "u", "m", 6).expect("patched to the new version");
        assert_eq!(ids(&a.nearest(ALL, &[1.0], 9).unwrap()), ["m2", "m3", "m1"]);
        let other = cache.current("t", "u", "other", 6).expect("the other model's archive moves too");
        assert_eq!(ids(&other.nearest(ALL, &[1.0], 9).unwrap()), ["m1"], "re-embedded messages leave it");
        assert!(cache.current("t", "v", "m", 9).is_some(), "another user's archive is untouched");

        // A write the cache missed (another handle's): the next one cannot be patched in.
        cache.advance("t", "u", &Stored { from: Some(7), to: 8, entries: vec![] });
        assert!(cache.current("t", "u", "m", 8).is_none());
        assert!(cache.current("t", "u", "m", 6).is_none(), "the stale archive is gone");
        // Held by a reader: dropped, not copied.
        let held = cache.keep("t", "u", archive("m", 8, 1..3));
        cache.advance("t", "u", &Stored { from: Some(8), to: 9, entries: vec![] });
        assert!(cache.current("t", "u", "m", 9).is_none());
        drop(held);
    }

    #[test]
    fn an_older_version_is_dropped_and_a_newer_one_kept() {
        let cache = MessageVectorCache::default();
        cache.keep("t", "u", archive("m", 5, 1..3));
        assert!(cache.current("t", "u", "m", 4).is_none(), "the database is behind: not used");
        assert!(cache.current("t", "u", "m", 5).is_some(), "and not dropped either");
        cache.keep("t", "u", archive("m", 4, 1..3));
        assert!(cache.current("t", "u", "m", 5).is_some(), "an older load does not replace a newer archive");
        assert!(cache.current("t", "u", "m", 6).is_none());
        assert_eq!(cache.held(), 0);
        cache.keep("t", "u", archive("m", 6, 1..3));
        cache.forget_user("t", "u");
        assert_eq!(cache.held(), 0);
    }

    #[test]
    fn the_least_recently_used_leave_first_and_a_huge_archive_is_not_kept() {
        let one = archive("m", 1, 1..101).bytes();
        let cache = MessageVectorCache::with_budget(3 * one);
        for user in ["a", "b", "c"] {
            cache.keep("t", user, archive("m", 1, 1..101));
        }
        assert!(cache.current("t", "a", "m", 1).is_some());
        cache.keep("t", "d", archive("m", 1, 1..101));
        assert!(cache.current("t", "b", "m", 1).is_none(), "b was used least recently");
        for user in ["a", "c", "d"] {
            assert!(cache.current("t", user, "m", 1).is_some(), "{user} stays");
        }
        assert!(cache.held() <= 3 * one);
        let huge = cache.keep("t", "e", archive("m", 1, 1..400));
        assert_eq!(huge.nearest(ALL, &[1.0], 1).unwrap().len(), 1, "scored all the same");
        assert!(cache.current("t", "e", "m", 1).is_none(), "but not kept");
        assert_eq!(cache.loads(), 5);

        // Writes that grow a kept archive past the budget let the least recent others go.
        let grown: Vec<_> = (101..201).map(|rowid| ("m".to_string(), 1, entry(rowid, "", "", 0, &[1.0]))).collect();
        cache.advance("t", "d", &Stored { from: Some(1), to: 2, entries: grown });
        assert!(cache.held() <= 3 * one, "held {} of {}", cache.held(), 3 * one);
        assert!(cache.current("t", "d", "m", 2).is_some(), "the grown archive is the most recent");
        assert!(cache.current("t", "a", "m", 1).is_none(), "a was used least recently");
    }
}
