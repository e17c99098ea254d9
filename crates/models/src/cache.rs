//! Recently embedded texts keep their vectors, so the same text is not run through the model
//! twice in a row.
//!
//! Why it pays: a message's archival vector leans toward the turn before it, so a chat ingested
//! turn by turn would embed every turn twice (once as itself, once as the next turn's context);
//! a retried batch, a re-asked question and a memory written from the message it came from all
//! repeat text too. Embedding is deterministic for a model, so a cached vector is the vector.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::embedder::Embedder;
use crate::error::Result;

/// Texts longer than this (in bytes) are embedded every time: they are rarely repeated, and
/// keeping them would let a few long texts hold most of the cache's memory.
pub const MAX_CACHED_TEXT_BYTES: usize = 2_048;

/// An [`Embedder`] that remembers the vectors of its last `capacity` distinct texts (first in,
/// first out) and sends only the others to the model, in one batch, in their original order.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    capacity: usize,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    vectors: HashMap<String, Vec<f32>>,
    order: VecDeque<String>,
}

impl CachedEmbedder {
    /// Wraps `inner`, keeping up to `capacity` vectors (0 keeps none).
    pub fn new(inner: Arc<dyn Embedder>, capacity: usize) -> Self {
        Self { inner, capacity, cache: Mutex::new(Cache::default()) }
    }

    /// The embedder behind the cache.
    pub fn inner(&self) -> &Arc<dyn Embedder> {
        &self.inner
    }

    fn lookup(&self, text: &str) -> Option<Vec<f32>> {
        self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner).vectors.get(text).cloned()
    }

    fn keep(&self, text: &str, vector: &[f32]) {
        if self.capacity == 0 || text.len() > MAX_CACHED_TEXT_BYTES {
            return;
        }
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.vectors.contains_key(text) {
            return;
        }
        while cache.order.len() >= self.capacity {
            if let Some(old) = cache.order.pop_front() {
                cache.vectors.remove(&old);
            }
        }
        cache.order.push_back(text.to_owned());
        cache.vectors.insert(text.to_owned(), vector.to_vec());
    }
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder").field("inner", &self.inner.id()).field("capacity", &self.capacity).finish()
    }
}

impl Embedder for CachedEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn worth_caching(&self) -> bool {
        false // already cached
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with(texts, |missing| self.inner.embed(missing))
    }

    fn embed_query(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with(texts, |missing| self.inner.embed_query(missing))
    }
}

impl CachedEmbedder {
    /// Looks every text up, and embeds the missing ones with `run`.
    fn embed_with(&self, texts: &[&str], run: impl Fn(&[&str]) -> Result<Vec<Vec<f32>>>) -> Result<Vec<Vec<f32>>> {
        if self.capacity == 0 || !self.inner.worth_caching() {
            return run(texts);
        }
        let mut out: Vec<Option<Vec<f32>>> = texts.iter().map(|t| self.lookup(t)).collect();
        // Each missing text once, however often the batch repeats it.
        let mut seen = std::collections::HashSet::new();
        let missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(text, found)| found.is_none() && seen.insert(**text))
            .map(|(text, _)| *text)
            .collect();
        if !missing.is_empty() {
            let fresh = run(&missing)?;
            let fresh: HashMap<&str, Vec<f32>> = missing.into_iter().zip(fresh).collect();
            for (text, slot) in texts.iter().zip(&mut out) {
                if slot.is_none() {
                    if let Some(v) = fresh.get(text) {
                        self.keep(text, v);
                        *slot = Some(v.clone());
                    }
                }
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::HashEmbedder;

    /// Counts the texts that reach the model.
    struct Counting {
        inner: HashEmbedder,
        texts: AtomicUsize,
    }

    impl Embedder for Counting {
        fn id(&self) -> &str {
            self.inner.id()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn worth_caching(&self) -> bool {
            true
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            self.inner.embed(texts)
        }
    }

    fn counting() -> Arc<Counting> {
        Arc::new(Counting { inner: HashEmbedder::new(64), texts: AtomicUsize::new(0) })
    }

    #[test]
    fn a_repeated_text_reaches_the_model_once_and_gets_the_same_vector() {
        let model = counting();
        let cached = CachedEmbedder::new(model.clone(), 8);
        let first = cached.embed(&["the previous turn", "a new turn"]).unwrap();
        let second = cached.embed(&["a new turn", "the next turn", "a new turn"]).unwrap();
        assert_eq!(model.texts.load(Ordering::SeqCst), 3);
        assert_eq!(second[0], first[1]);
        assert_eq!(second[2], first[1]);
        assert_eq!(second[1], model.inner.embed(&["the next turn"]).unwrap()[0]);
        assert_eq!(cached.id(), model.id());
        assert!(cached.embed(&[]).unwrap().is_empty());
    }

    #[test]
    fn the_oldest_text_leaves_first_and_long_texts_are_not_kept() {
        let model = counting();
        let cached = CachedEmbedder::new(model.clone(), 2);
        cached.embed(&["a", "b", "c"]).unwrap(); // "a" is pushed out by "c"
        cached.embed(&["b", "c"]).unwrap();
        assert_eq!(model.texts.load(Ordering::SeqCst), 3);
        cached.embed(&["a"]).unwrap();
        assert_eq!(model.texts.load(Ordering::SeqCst), 4);
        let long = "x".repeat(MAX_CACHED_TEXT_BYTES + 1);
        cached.embed(&[&long]).unwrap();
        cached.embed(&[&long]).unwrap();
        assert_eq!(model.texts.load(Ordering::SeqCst), 6);
        let none = CachedEmbedder::new(model.clone(), 0);
        none.embed(&["z"]).unwrap();
        none.embed(&["z"]).unwrap();
        assert_eq!(model.texts.load(Ordering::SeqCst), 8);
        // Feature hashing is cheaper than the lookup: passed straight through.
        let hashing = CachedEmbedder::new(Arc::new(HashEmbedder::new(8)), 8);
        assert!(!hashing.worth_caching());
        assert_eq!(hashing.embed(&["a"]).unwrap(), HashEmbedder::new(8).embed(&["a"]).unwrap());
    }
}
