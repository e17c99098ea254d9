//! Micro-batching: concurrent callers of one embedder share model runs.
//!
//! A server embeds a few texts per request, from many requests at once. A model run costs a
//! fixed overhead plus a share per text, so eight requests of one sentence each take much longer
//! one after another than as one batch of eight. [`BatchingEmbedder`] combines them without a
//! timer: a caller that finds the model idle runs at once (a lone request waits for nothing); a
//! caller that finds it busy queues its texts, and when the run in progress ends, the first
//! waiter takes everything queued by then (up to a cap) as the next batch and hands every caller
//! its own vectors. If a combined run fails, each caller of it runs its own texts alone, so one
//! bad input never fails another request and every caller gets its own error.
//!
//! A run embeds each distinct text once, and none the run before it embedded: concurrent
//! requests repeat each other's texts (a chat's turn is embedded as itself and again as the
//! context of the next turn, which another request may be ingesting at the same moment), and
//! the cache in front of this embedder only knows texts whose runs had ended before the request
//! came. On LoCoMo's turns sent by eight clients, 15% of the texts asked for were such repeats.
//!
//! Queries ([`Embedder::embed_query`]: a person waits for the answer) have a lane of their own:
//! they batch with each other, never with bulk work, and never wait for a bulk run to end. One
//! lane for all made another tenant's recall wait behind an import's run of 32 turns.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::embedder::Embedder;
use crate::error::Result;

/// Texts one combined run takes at most (a batch larger than this gains nothing on a CPU and
/// pads short texts to the longest).
pub const DEFAULT_MAX_BATCH: usize = 32;

/// What became of one queued request.
enum Outcome {
    /// Its vectors, in the order of its texts.
    Done(Vec<Vec<f32>>),
    /// The combined run failed: the caller runs its own texts alone.
    Alone,
}

/// What the combined runs have done so far: what operators and tests can check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Model runs made.
    pub runs: u64,
    /// Requests those runs served (`requests / runs` is the mean batch, in requests).
    pub requests: u64,
    /// Texts the requests asked for.
    pub texts: u64,
    /// Texts the model embedded: fewer than asked when requests repeated each other's texts.
    pub embedded: u64,
}

#[derive(Default)]
struct State {
    /// Requests not yet taken into a run: (ticket, texts).
    queue: VecDeque<(u64, Vec<String>)>,
    /// Outcomes not yet collected by their callers.
    done: HashMap<u64, Outcome>,
    /// A combined run is in progress.
    running: bool,
    next_ticket: u64,
    /// The vectors of the last run, by text: a request queued while it ran may ask for them.
    recent: HashMap<String, Vec<f32>>,
    stats: BatchStats,
}

/// One queue of requests and the runs it feeds.
#[derive(Default)]
struct Lane {
    state: Mutex<State>,
    wake: Condvar,
    /// Its runs are queries: the wrapped embedder's [`Embedder::embed_query`], not `embed`.
    queries: bool,
}

impl Lane {
    /// Runs `texts` through `inner` as this lane's kind of work.
    fn run(&self, inner: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match self.queries {
            true => inner.embed_query(texts),
            false => inner.embed(texts),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside a model run is caught before it can poison the lock (see `lead`), so a
        // poisoned lock means a bug in this file; its state is still consistent between steps.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Wraps an embedder so concurrent `embed` calls share model runs (see the module header).
pub struct BatchingEmbedder {
    inner: Arc<dyn Embedder>,
    max_batch: usize,
    /// Everything but queries: ingests, documents, memos.
    bulk: Lane,
    /// Queries, which a reader waits on.
    queries: Lane,
}

impl BatchingEmbedder {
    /// Wraps `inner`; a combined run takes at most `max_batch` texts (a request larger than that
    /// still runs, alone).
    pub fn new(inner: Arc<dyn Embedder>, max_batch: usize) -> Self {
        Self {
            inner,
            max_batch: max_batch.max(1),
            bulk: Lane::default(),
            queries: Lane { queries: true, ..Lane::default() },
        }
    }

    /// The wrapped embedder.
    pub fn inner(&self) -> &Arc<dyn Embedder> {
        &self.inner
    }

    /// What the combined runs have done so far.
    pub fn stats(&self) -> BatchStats {
        let (a, b) = (self.bulk.lock().stats, self.queries.lock().stats);
        BatchStats {
            runs: a.runs + b.runs,
            requests: a.requests + b.requests,
            texts: a.texts + b.texts,
            embedded: a.embedded + b.embedded,
        }
    }

    /// Bulk requests waiting for a run (for tests that need a run to find callers queued).
    #[cfg(test)]
    fn queued(&self) -> usize {
        self.bulk.lock().queue.len()
    }

    /// Queues `texts` in `lane` and waits for their vectors, leading a run when none is going.
    fn embed_in(&self, lane: &Lane, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut st = lane.lock();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue.push_back((ticket, texts.iter().map(|t| t.to_string()).collect()));
        loop {
            match st.done.remove(&ticket) {
                Some(Outcome::Done(vectors)) => return Ok(vectors),
                Some(Outcome::Alone) => {
                    drop(st);
                    return lane.run(self.inner.as_ref(), texts);
                }
                None if !st.running => st = self.lead(lane, st),
                None => st = lane.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    /// Takes queued requests into one run, runs it without the lock, and posts every outcome.
    fn lead<'a>(&'a self, lane: &'a Lane, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let mut batch: Vec<(u64, Vec<String>)> = Vec::new();
        let mut texts = 0;
        while let Some((_, front)) = st.queue.front() {
            if !batch.is_empty() && texts + front.len() > self.max_batch {
                break;
            }
            texts += front.len();
            batch.extend(st.queue.pop_front());
        }
        st.running = true;
        let recent = std::mem::take(&mut st.recent);
        drop(st);
        // Each distinct text once, and none the last run embedded.
        let asked: u64 = batch.iter().map(|(_, t)| t.len() as u64).sum();
        let mut distinct: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for text in batch.iter().flat_map(|(_, t)| t.iter().map(String::as_str)) {
            if !recent.contains_key(text) && seen.insert(text) {
                distinct.push(text);
            }
        }
        let result = match distinct.is_empty() {
            true => Ok(Ok(Vec::new())),
            false => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lane.run(self.inner.as_ref(), &distinct)))
            }
        };
        let mut st = lane.lock();
        st.running = false;
        st.stats.runs += u64::from(!distinct.is_empty());
        st.stats.requests += batch.len() as u64;
        st.stats.texts += asked;
        st.stats.embedded += distinct.len() as u64;
        match result {
            Ok(Ok(vectors)) if vectors.len() == distinct.len() => {
                // Every text this run answers: what it embedded, then what the last run had.
                let mut answered: HashMap<String, Vec<f32>> =
                    distinct.into_iter().map(str::to_string).zip(vectors).collect();
                for t in batch.iter().flat_map(|(_, texts)| texts) {
                    if !answered.contains_key(t) {
                        answered.insert(t.clone(), recent[t].clone());
                    }
                }
                for (ticket, texts) in &batch {
                    st.done.insert(*ticket, Outcome::Done(texts.iter().map(|t| answered[t].clone()).collect()));
                }
                // Kept whole, so a text asked for run after run is embedded once.
                st.recent = answered;
            }
            _ => {
                for (ticket, _) in &batch {
                    st.done.insert(*ticket, Outcome::Alone);
                }
            }
        }
        lane.wake.notify_all();
        st
    }
}

impl Embedder for BatchingEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_in(&self.bulk, texts)
    }

    fn embed_query(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_in(&self.queries, texts)
    }

    fn worth_caching(&self) -> bool {
        self.inner.worth_caching()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    use super::*;
    use crate::error::ModelError;
    use crate::hash::HashEmbedder;

    /// The hashing embedder, slowed down and counting its runs, failing any batch with "boom".
    struct Slow {
        inner: HashEmbedder,
        runs: AtomicUsize,
        largest: AtomicUsize,
    }

    impl Embedder for Slow {
        fn id(&self) -> &str {
            self.inner.id()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            self.largest.fetch_max(texts.len(), Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            if texts.contains(&"boom") {
                return Err(ModelError::Inference("boom".into()));
            }
            self.inner.embed(texts)
        }
    }

    fn slow() -> Arc<Slow> {
        Arc::new(Slow { inner: HashEmbedder::new(64), runs: AtomicUsize::new(0), largest: AtomicUsize::new(0) })
    }

    #[test]
    fn concurrent_callers_share_runs_and_each_gets_its_own_vectors() {
        let model = slow();
        let batching = Arc::new(BatchingEmbedder::new(model.clone(), DEFAULT_MAX_BATCH));
        let callers = 16;
        let start = Arc::new(Barrier::new(callers));
        let handles: Vec<_> = (0..callers)
            .map(|i| {
                let (b, start) = (batching.clone(), start.clone());
                std::thread::spawn(move || {
                    let texts = [format!("caller {i} first"), format!("caller {i} second")];
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    start.wait();
                    (refs.iter().map(|t| t.to_string()).collect::<Vec<_>>(), b.embed(&refs).unwrap())
                })
            })
            .collect();
        let reference = HashEmbedder::new(64);
        for h in handles {
            let (texts, vectors) = h.join().unwrap();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            assert_eq!(vectors, reference.embed(&refs).unwrap(), "a caller got another's vectors");
        }
        let runs = model.runs.load(Ordering::SeqCst);
        assert!(runs < callers, "{runs} runs for {callers} concurrent callers: nothing was shared");
        assert!(model.largest.load(Ordering::SeqCst) <= DEFAULT_MAX_BATCH);
        let stats = batching.stats();
        assert_eq!((stats.runs, stats.requests), (runs as u64, callers as u64));
        assert_eq!((stats.texts, stats.embedded), (2 * callers as u64, 2 * callers as u64));
    }

    /// The hashing embedder, recording every text it embeds; its first run waits at `started`
    /// and then `release`, so a test can queue callers while a run is in progress.
    struct Gated {
        inner: HashEmbedder,
        seen: std::sync::Mutex<Vec<String>>,
        /// Texts asked for as queries (`embed_query`), never held.
        queried: std::sync::Mutex<Vec<String>>,
        first: std::sync::atomic::AtomicBool,
        started: Barrier,
        release: Barrier,
    }

    impl Embedder for Gated {
        fn id(&self) -> &str {
            self.inner.id()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            if self.first.swap(false, Ordering::SeqCst) {
                self.started.wait();
                self.release.wait();
            }
            self.seen.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
            self.inner.embed(texts)
        }
        fn embed_query(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.queried.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
            self.inner.embed(texts)
        }
    }

    /// A [`Gated`] model whose first run is held until the test releases it.
    fn gated() -> Arc<Gated> {
        Arc::new(Gated {
            inner: HashEmbedder::new(64),
            seen: Default::default(),
            queried: Default::default(),
            first: true.into(),
            started: Barrier::new(2),
            release: Barrier::new(2),
        })
    }

    #[test]
    fn a_text_asked_for_again_while_it_is_embedded_or_twice_in_a_run_is_embedded_once() {
        let model = gated();
        let batching = Arc::new(BatchingEmbedder::new(model.clone(), DEFAULT_MAX_BATCH));
        let ask = |texts: Vec<String>| {
            let b = batching.clone();
            std::thread::spawn(move || {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                (texts.clone(), b.embed(&refs).unwrap())
            })
        };
        // The first caller's run is in the model while six more queue, each repeating its text.
        let mut callers = vec![ask(vec!["the last turn".into(), "a turn".into()])];
        model.started.wait();
        for i in 0..6 {
            let own = if i == 0 { "said twice".to_string() } else { format!("turn {i}") };
            callers.push(ask(vec!["the last turn".into(), own.clone(), own]));
        }
        while batching.queued() < 6 {
            std::thread::sleep(Duration::from_millis(1));
        }
        model.release.wait();
        let reference = HashEmbedder::new(64);
        for c in callers {
            let (texts, vectors) = c.join().unwrap();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            assert_eq!(vectors, reference.embed(&refs).unwrap(), "{texts:?}");
        }
        let seen = model.seen.lock().unwrap().clone();
        for text in ["the last turn", "said twice"] {
            assert_eq!(seen.iter().filter(|t| *t == text).count(), 1, "{text}: {seen:?}");
        }
        let stats = batching.stats();
        assert_eq!((stats.runs, stats.requests, stats.texts, stats.embedded), (2, 7, 20, 8), "{stats:?}");
    }

    #[test]
    fn a_lone_caller_runs_at_once_and_an_empty_call_runs_nothing() {
        let model = slow();
        let batching = BatchingEmbedder::new(model.clone(), 4);
        assert!(batching.embed(&[]).unwrap().is_empty());
        assert_eq!(model.runs.load(Ordering::SeqCst), 0);
        // Larger than the cap: still one run, alone.
        let texts = ["a", "b", "c", "d", "e", "f"];
        assert_eq!(batching.embed(&texts).unwrap(), HashEmbedder::new(64).embed(&texts).unwrap());
        assert_eq!(model.runs.load(Ordering::SeqCst), 1);
    }

    /// A query asked while a bulk run is in the model is answered before that run ends, and
    /// queries still share runs with each other.
    #[test]
    fn a_query_does_not_wait_for_a_bulk_run() {
        let model = gated();
        let batching = Arc::new(BatchingEmbedder::new(model.clone(), DEFAULT_MAX_BATCH));
        let bulk = {
            let b = batching.clone();
            std::thread::spawn(move || b.embed(&["turn one", "turn two"]).unwrap())
        };
        model.started.wait();
        // The bulk run is held in the model until `release`: the query must not need it.
        let query = batching.embed_query(&["where does Dana live?"]).unwrap();
        assert_eq!(query, HashEmbedder::new(64).embed(&["where does Dana live?"]).unwrap());
        assert!(model.seen.lock().unwrap().is_empty(), "the bulk run has not ended");
        assert_eq!(*model.queried.lock().unwrap(), ["where does Dana live?"], "the model was asked for a query");
        model.release.wait();
        assert_eq!(bulk.join().unwrap(), HashEmbedder::new(64).embed(&["turn one", "turn two"]).unwrap());
        let stats = batching.stats();
        assert_eq!((stats.runs, stats.requests, stats.texts), (2, 2, 3), "both lanes are counted");
    }

    #[test]
    fn a_failed_combined_run_fails_only_the_caller_whose_text_failed_it() {
        let batching = Arc::new(BatchingEmbedder::new(slow(), DEFAULT_MAX_BATCH));
        let start = Arc::new(Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let (b, start) = (batching.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let text = if i == 3 { "boom".to_string() } else { format!("fine {i}") };
                    (i, b.embed(&[&text]))
                })
            })
            .collect();
        for h in handles {
            let (i, result) = h.join().unwrap();
            assert_eq!(result.is_err(), i == 3, "caller {i}: {result:?}");
        }
    }
}
