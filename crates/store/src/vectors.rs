//! Exact vector search within scope, over an in-process cache of each ownership partition
//! (per-user sets are small, so exact scoring beats approximate indexes), for both backends:
//! each supplies its partitions through [`PartSource`].
//!
//! A cached part is stamped with its partition's `version`, which every apply that changes the
//! partition's recallable rows moves in its transaction, from any process; a reader uses a part
//! only while the stamp is the version the database shows. A write of this handle does not
//! discard the part: the change set reports what it did to each partition's vectors
//! ([`Moved`]), and after the commit, under the writer's lock (so in commit order), a part at
//! the version the write moved from gets that delta and the new version. Any other gap (another
//! process or handle wrote, an import) fails the check and the part is reloaded, as before. A
//! partition row created again after an erasure starts at the current time in microseconds, so
//! versions never repeat and a stale part of an erased user cannot pass for current.
//!
//! Readers scan parts through `Arc`s outside any lock, so vectors live in chunks of [`CHUNK`]
//! behind their own `Arc`s: a delta changes a part nobody holds in place, and copies only the
//! chunk list, the id index and the chunks it touches of one a reader holds, never the part.
//!
//! The scan runs over an int8 copy of the vectors (it is bound by memory bandwidth) and rescores
//! its shortlist exactly in f32: cosines are exact; only near-ties at the shortlist's edge can
//! be ordered differently. A scope of many thousand vectors is first narrowed by the Hamming
//! distance of sign bits (an eighth of the int8 bytes), and only the rows nearest by that
//! measure are scanned in int8: a number that grows with the shortlist asked for and with the
//! scope (1,312 for recall's 50 at 10,000, 592 for the write gate's 5; [`coarse_keep`]). A
//! scope of vectors whose energy sits in a few components (a hashed bag of words) is scanned
//! whole: their sign bits say little ([`peaked`]). A full chunk of such vectors also keeps its
//! int8 copy by column, and a query with few non-zero components (the same embedder's) sums only
//! its own columns ([`by_columns`]): the same integers from a twentieth of the bytes, so a write
//! gate's lookup in a large hash-embedded scope no longer grows with it by 384 bytes a row.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mnemo_core::{Memory, MemoryId, Scope, Status};

use crate::Embedding;
use crate::error::{Result, StoreError};
use crate::plan::apply::PartKey;

/// Rows per chunk: what a delta copies when a reader still holds the chunk it changes
/// (256 vectors of 384 dimensions are under half a megabyte with their int8 copy).
const CHUNK: usize = 256;

/// Extra candidates the int8 scan keeps beyond `limit` before exact rescoring.
const SHORTLIST_SLACK: usize = 32;

/// Rows the sign-bit pass keeps per shortlisted row, at least.
const COARSE_PER_SHORTLISTED: usize = 16;

/// Rows of the scope per row the sign-bit pass keeps, per shortlisted row: what it keeps grows
/// with the scope as well as with the shortlist. A large user holds many memories close to one
/// another, and sign bits order near-equal cosines poorly (at 100,000 memories with 50
/// near-copies of each sentence, recall's 82 shortlisted with a fixed 1,312 kept lost up to half
/// of a query's nearest 50). At 656, recall's 82 keep an eighth of the scope; the write gate's
/// 37 keep under a seventeenth, since its lookup asks for the nearest 5, not 50.
const SCOPE_PER_KEPT: usize = 656;

/// How many rows of `rows` the sign-bit pass keeps for a shortlist of `shortlist`; None when the
/// scope is too small for the pass to pay (it reads an eighth of the int8 bytes, but then reads
/// its kept rows at random: below four times what it keeps, one int8 scan of all is as fast).
fn coarse_keep(rows: usize, shortlist: usize) -> Option<usize> {
    let keep = shortlist.saturating_mul(COARSE_PER_SHORTLISTED.max(rows / SCOPE_PER_KEPT));
    (rows >= keep.saturating_mul(4)).then_some(keep)
}

/// Up to [`CHUNK`] vectors of one part, stored flat for cache-friendly scans.
#[derive(Clone, Default)]
struct Chunk {
    ids: Vec<MemoryId>,
    data: Vec<f32>,
    /// int8 copy of `data`, each vector scaled so its largest component is ±127.
    quantized: Vec<i8>,
    /// Per-vector scale: `data ≈ quantized / scale`.
    scales: Vec<f32>,
    /// Sign bits of each vector, [`words`] `u64`s per row (bit set: component > 0).
    signs: Vec<u64>,
    /// Rows whose energy sits in a few components ([`peaked`]): their sign bits are mostly
    /// those of near-zero components, so they say little about where the vector points.
    peaked: u32,
    /// `quantized` again, column by column ([`CHUNK`] bytes per column, rows past the last
    /// unused), once a chunk of mostly peaked rows has filled: a query with few non-zero
    /// components (a hashed bag of words has a dozen or two) reads only its own columns, about
    /// 20 bytes a row instead of 384, and gets the same integer sums ([`by_columns`]). None in a
    /// chunk of dense rows, whose model's queries are dense too, and in a chunk still filling,
    /// so a small user never pays a whole chunk's columns for a few rows.
    columns: Option<Box<[i8]>>,
}

/// `u64` words of sign bits per vector of `dim` components.
fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// True when `v` holds its energy in fewer than an eighth of its components, by participation
/// ratio (`(Σx²)² / Σx⁴`: the number of components that carry the vector; about a third of
/// them for a dense model's vector, 76 to 160 of 384 over LoCoMo's texts with all-MiniLM-L6-v2).
/// A hashed bag of words has a dozen or two non-zero components, and the sign bits of the rest
/// are those of zeros or of noise: over such vectors the sign-bit pass kept the wrong rows (19%
/// of the exact 50 nearest at 10,000 memories), so a scope of them is scanned whole.
fn peaked(v: &[f32]) -> bool {
    let (s2, s4) = v.iter().fold((0f32, 0f32), |(s2, s4), x| (s2 + x * x, s4 + x * x * x * x));
    s4 == 0.0 || s2 * s2 / s4 < v.len() as f32 / 8.0
}

/// Appends the sign bits of `v`.
fn signs(v: &[f32], out: &mut Vec<u64>) {
    out.extend(v.chunks(64).map(|c| c.iter().enumerate().fold(0u64, |w, (i, x)| w | (u64::from(*x > 0.0) << i))));
}

impl Chunk {
    fn push(&mut self, id: MemoryId, v: &[f32]) {
        self.ids.push(id);
        self.data.extend_from_slice(v);
        self.scales.push(quantize(v, &mut self.quantized));
        signs(v, &mut self.signs);
        self.peaked += u32::from(peaked(v));
        let (rows, dim) = (self.ids.len(), v.len());
        if self.columns.is_some() {
            self.copy_to_columns(rows - 1, dim);
        } else if rows == CHUNK && dim > 0 && 2 * self.peaked as usize >= CHUNK {
            self.columns = Some(vec![0; dim * CHUNK].into_boxed_slice());
            (0..rows).for_each(|row| self.copy_to_columns(row, dim));
        }
    }

    /// Copies `row` of `quantized` into `columns`, if the chunk keeps them.
    fn copy_to_columns(&mut self, row: usize, dim: usize) {
        if let Some(columns) = &mut self.columns {
            for (j, x) in self.quantized[row * dim..(row + 1) * dim].iter().enumerate() {
                columns[j * CHUNK + row] = *x;
            }
        }
    }

    fn set(&mut self, row: usize, v: &[f32]) {
        let dim = v.len();
        self.peaked -= u32::from(peaked(&self.data[row * dim..(row + 1) * dim]));
        self.peaked += u32::from(peaked(v));
        self.data[row * dim..(row + 1) * dim].copy_from_slice(v);
        let mut q = Vec::with_capacity(dim);
        self.scales[row] = quantize(v, &mut q);
        self.quantized[row * dim..(row + 1) * dim].copy_from_slice(&q);
        let (w, mut b) = (words(dim), Vec::with_capacity(words(dim)));
        signs(v, &mut b);
        self.signs[row * w..(row + 1) * w].copy_from_slice(&b);
        self.copy_to_columns(row, dim);
    }

    /// Removes `row` by moving the last row into its place; returns the id that moved, if any.
    /// Memory the chunk takes, roughly: its vectors, their int8, sign and column copies, ids.
    fn bytes(&self) -> usize {
        self.data.capacity() * size_of::<f32>()
            + self.quantized.capacity()
            + self.scales.capacity() * size_of::<f32>()
            + self.signs.capacity() * size_of::<u64>()
            + self.columns.as_ref().map_or(0, |c| c.len())
            + self.ids.capacity() * size_of::<MemoryId>()
    }

    fn swap_remove(&mut self, row: usize, dim: usize) -> Option<MemoryId> {
        let (last, w) = (self.ids.len() - 1, words(dim));
        self.peaked -= u32::from(peaked(&self.data[row * dim..(row + 1) * dim]));
        if row != last {
            self.data.copy_within(last * dim..(last + 1) * dim, row * dim);
            self.quantized.copy_within(last * dim..(last + 1) * dim, row * dim);
            self.signs.copy_within(last * w..(last + 1) * w, row * w);
            self.copy_to_columns(row, dim);
        }
        self.data.truncate(last * dim);
        self.quantized.truncate(last * dim);
        self.signs.truncate(last * w);
        self.scales.swap_remove(row);
        self.ids.swap_remove(row);
        (row != last).then(|| self.ids[row])
    }
}

/// One partition's active vectors of one model, as of `version`.
#[derive(Clone)]
struct Part {
    version: i64,
    /// 0 while the part is empty and no vector fixed it.
    dim: usize,
    chunks: Vec<Arc<Chunk>>,
    /// Where each id's vector is: (chunk, row).
    index: HashMap<MemoryId, (u32, u32)>,
}

impl Part {
    fn new(version: i64) -> Self {
        Self { version, dim: 0, chunks: Vec::new(), index: HashMap::new() }
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    /// Memory the part takes, roughly: its chunks and its id index.
    fn bytes(&self) -> usize {
        let index = self.index.capacity() * (size_of::<MemoryId>() + size_of::<(u32, u32)>() + 1);
        self.chunks.iter().map(|c| c.bytes()).sum::<usize>() + index
    }

    /// The vector of the `row`-th entry of chunk `c`.
    fn vector(&self, c: usize, row: usize) -> &[f32] {
        &self.chunks[c].data[row * self.dim..(row + 1) * self.dim]
    }

    /// Adds or replaces `id`'s vector; false (nothing changed) when its dimension is not the
    /// part's, which the store's own check makes impossible short of a corrupt row.
    fn put(&mut self, id: MemoryId, v: &[f32]) -> bool {
        if self.dim == 0 && self.index.is_empty() {
            self.dim = v.len();
        }
        if v.len() != self.dim {
            return false;
        }
        if let Some(&(c, row)) = self.index.get(&id) {
            Arc::make_mut(&mut self.chunks[c as usize]).set(row as usize, v);
            return true;
        }
        if self.chunks.last().is_none_or(|c| c.ids.len() >= CHUNK) {
            self.chunks.push(Arc::new(Chunk::default()));
        }
        let c = self.chunks.len() - 1;
        let chunk = Arc::make_mut(&mut self.chunks[c]);
        self.index.insert(id, (c as u32, chunk.ids.len() as u32));
        chunk.push(id, v);
        true
    }

    fn remove(&mut self, id: MemoryId) {
        let Some((c, row)) = self.index.remove(&id) else { return };
        let chunk = Arc::make_mut(&mut self.chunks[c as usize]);
        if let Some(moved) = chunk.swap_remove(row as usize, self.dim) {
            self.index.insert(moved, (c, row));
        }
        self.repack_if_sparse();
    }

    /// Rewrites the chunks full once removals left them less than half full on average, so a
    /// part that lived through many supersessions scans as few chunks as a fresh one.
    fn repack_if_sparse(&mut self) {
        if self.chunks.len() <= 2 * self.len().div_ceil(CHUNK) + 1 {
            return;
        }
        let mut packed = Part::new(self.version);
        packed.dim = self.dim;
        for chunk in &self.chunks {
            for (row, id) in chunk.ids.iter().enumerate() {
                packed.put(*id, &chunk.data[row * self.dim..(row + 1) * self.dim]);
            }
        }
        *self = packed;
    }
}

/// What a committed change set did to the recallable vectors of one partition, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum VectorChange<'a> {
    /// The memory is recallable with this vector of `model` (new, re-embedded, or made active
    /// again); a vector it had of another model is gone (a memory has one).
    Put {
        /// The memory.
        id: MemoryId,
        /// The vector's model.
        model: Cow<'a, str>,
        /// The vector.
        vector: Cow<'a, [f32]>,
    },
    /// The memory is no longer recallable (superseded, archived, ...).
    Remove(MemoryId),
}

/// A partition version this handle moved in a committed transaction, and what moved it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Moved<'a> {
    /// The partition.
    pub(crate) partition: PartKey,
    /// Its version before (none: the transaction created its row).
    pub(crate) from: Option<i64>,
    /// Its version after.
    pub(crate) to: i64,
    /// Every change to its vectors, in order.
    pub(crate) changes: Vec<VectorChange<'a>>,
}

/// What a change set's writes do to each partition's recallable vectors, followed write by
/// write as a backend runs them, so that after the commit this handle's cache can take the
/// deltas instead of reloading ([`VectorCache::advance`]). Both backends' `apply` feed it.
pub(crate) struct Deltas<'a> {
    /// Each memory read or inserted: its partition and whether it is recallable now.
    recallable: HashMap<MemoryId, (PartKey, bool)>,
    /// Changes not yet claimed by a partition's version bump.
    changed: HashMap<PartKey, Vec<VectorChange<'a>>>,
    moved: Vec<Moved<'a>>,
}

impl<'a> Deltas<'a> {
    /// Starts from the memories the plan read, as they were stored.
    pub(crate) fn new(stored: &HashMap<MemoryId, crate::plan::apply::Stored>) -> Self {
        let recallable = stored.iter().map(|(id, s)| (*id, (s.owner.clone(), s.status == Status::Active))).collect();
        Self { recallable, changed: HashMap::new(), moved: Vec::new() }
    }

    /// A memory inserted, with its vector if it has one.
    pub(crate) fn inserted(&mut self, memory: &Memory, embedding: Option<&'a Embedding>) {
        let owner: PartKey = memory.owner.key_parts().map(str::to_string);
        let active = memory.status == Status::Active;
        if let (Some(e), true) = (embedding, active) {
            self.changed.entry(owner.clone()).or_default().push(put(memory.id, e));
        }
        self.recallable.insert(memory.id, (owner, active));
    }

    /// A memory's status moved from `from` to `to`. Some(partition) when it became recallable
    /// again: its stored vector must then be read and handed to [`Deltas::restored`].
    pub(crate) fn status(&mut self, id: MemoryId, from: Status, to: Status) -> Option<PartKey> {
        let (owner, active) = self.recallable.get_mut(&id)?;
        *active = to == Status::Active;
        match (from == Status::Active, *active) {
            (true, false) => {
                self.changed.entry(owner.clone()).or_default().push(VectorChange::Remove(id));
                None
            }
            (false, true) => Some(owner.clone()),
            _ => None,
        }
    }

    /// The stored vector of a memory [`Deltas::status`] made recallable again.
    pub(crate) fn restored(&mut self, owner: PartKey, put: VectorChange<'a>) {
        self.changed.entry(owner).or_default().push(put);
    }

    /// A memory's vector replaced.
    pub(crate) fn embedded(&mut self, id: MemoryId, e: &'a Embedding) {
        if let Some((owner, true)) = self.recallable.get(&id) {
            self.changed.entry(owner.clone()).or_default().push(put(id, e));
        }
    }

    /// A partition's version moved, from `from` (none: its row was created, or the backend
    /// cannot tell) to `to`: the changes so far to its vectors are that move's.
    pub(crate) fn bumped(&mut self, partition: &PartKey, from: Option<i64>, to: i64) {
        let changes = self.changed.remove(partition).unwrap_or_default();
        self.moved.push(Moved { partition: partition.clone(), from, to, changes });
    }

    /// The moves, in the order the writes ran.
    pub(crate) fn into_moved(self) -> Vec<Moved<'a>> {
        self.moved
    }
}

/// The cache's view of a vector a change set stores for a recallable memory.
fn put(id: MemoryId, e: &Embedding) -> VectorChange<'_> {
    VectorChange::Put { id, model: Cow::Borrowed(e.model.as_str()), vector: Cow::Borrowed(e.vector.as_slice()) }
}

/// What the cache may hold unless told otherwise: about 10,000 vectors of 384 dimensions with
/// their int8 copies, the memories of some sixty users of 170. Small on purpose: a server's
/// memory should level off within minutes, not grow for hours with its store; a user who left
/// the cache is read again in a few milliseconds. Deployments with many active users raise it.
pub(crate) const DEFAULT_BUDGET: usize = 16 << 20;

/// One cached part and when it was last used.
struct Slot {
    part: Arc<Part>,
    /// The cache's clock at the last use: the smallest leaves first.
    used: u64,
}

/// The cached parts, per partition and model, with the bytes they take.
#[derive(Default)]
struct Parts {
    map: HashMap<PartKey, HashMap<String, Slot>>,
    bytes: usize,
    clock: u64,
}

impl Parts {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Drops least recently used parts until the cache is within `budget`, never `spare` (the
    /// part just loaded: a partition larger than the whole budget is still kept while it is the
    /// most recent, or every recall of its user would read it again).
    fn shrink_to(&mut self, budget: usize, spare: Option<(&PartKey, &str)>) {
        while self.bytes > budget {
            let oldest = self
                .map
                .iter()
                .flat_map(|(key, models)| models.iter().map(move |(model, slot)| (key, model, slot.used)))
                .filter(|(key, model, _)| spare != Some((*key, model.as_str())))
                .min_by_key(|(_, _, used)| *used)
                .map(|(key, model, _)| (key.clone(), model.clone()));
            let Some((key, model)) = oldest else { return };
            let models = self.map.get_mut(&key).expect("the key was just found");
            if let Some(slot) = models.remove(&model) {
                self.bytes -= slot.part.bytes();
            }
            if models.is_empty() {
                self.map.remove(&key);
            }
        }
    }
}

/// The cache, shared by all readers of one store handle: per partition, per model, within a
/// budget in bytes (least recently used parts leave first).
pub(crate) struct VectorCache {
    parts: Mutex<Parts>,
    budget: usize,
    /// Parts loaded from the database, for tests that tell a delta from a reload.
    loads: AtomicUsize,
}

impl Default for VectorCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET)
    }
}

/// Quantises one vector to int8 with its own scale.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { 127.0 / max } else { 1.0 };
    out.extend(v.iter().map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

/// Integer dot product; integer addition is associative, so this vectorises. Inlined into
/// [`approximate`]'s loop, which is compiled once per instruction set the CPU may have.
#[inline(always)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

/// The int8 dot product of `query` with every vector of `quantized` (rows of `dim`), into `out`.
///
/// The scan is the whole cost of recall's vector half for a large user (100,000 vectors are
/// 38 MB of int8). Built for the baseline x86_64 target, the loop widens bytes with SSE2 only;
/// `pulp` runs it in a copy compiled for AVX2 when the CPU has it (chosen once, at run time, so
/// the binary still runs anywhere), which is about three times faster.
fn approximate(arch: pulp::Arch, quantized: &[i8], dim: usize, query: &[i8], out: &mut Vec<i32>) {
    out.clear();
    arch.dispatch(
        #[inline(always)]
        || out.extend(quantized.chunks_exact(dim).map(|v| dot_i8(v, query))),
    );
}

/// Rows the column scan sums at once: one cache line of each column read, 64 sums in vector
/// registers.
const BLOCK: usize = 64;
const _: () = assert!(CHUNK.is_multiple_of(BLOCK), "a column holds whole blocks");

/// A query reads columns (where a chunk keeps them) when at most one in this many of its int8
/// components is non-zero: summing a column costs more per byte than the row scan's multiply-add,
/// but a hashed bag of words has a dozen or two non-zero components of 384.
const COLUMNS_SHARE: usize = 4;

/// The int8 dot product of a query with each of the first `rows` rows of a chunk's `columns`,
/// into `out`, reading only the columns of the query's `nonzero` components ((column, value)):
/// the same integer sums as [`approximate`] over the rows, since every other term is zero.
fn by_columns(arch: pulp::Arch, columns: &[i8], nonzero: &[(usize, i8)], rows: usize, out: &mut Vec<i32>) {
    out.clear();
    arch.dispatch(ColumnSums { columns, nonzero, rows, out });
}

/// [`by_columns`]'s loop, compiled once per instruction set the CPU may have and chosen at run
/// time like [`approximate`]'s. A [`pulp::WithSimd`] rather than a closure: a closure this size
/// was left out of line, in the baseline instruction set, at a third of the speed.
struct ColumnSums<'a> {
    columns: &'a [i8],
    nonzero: &'a [(usize, i8)],
    rows: usize,
    out: &'a mut Vec<i32>,
}

impl pulp::WithSimd for ColumnSums<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for start in (0..self.rows).step_by(BLOCK) {
            let mut sums = [0i32; BLOCK];
            for &(j, q) in self.nonzero {
                let column: &[i8; BLOCK] =
                    self.columns[j * CHUNK + start..][..BLOCK].try_into().expect("a block of a column");
                for (s, x) in sums.iter_mut().zip(column) {
                    // |q · x| ≤ 127², so the product fits in 16 bits.
                    *s += i32::from(i16::from(q) * i16::from(*x));
                }
            }
            self.out.extend_from_slice(&sums[..BLOCK.min(self.rows - start)]);
        }
    }
}

/// The Hamming distance of `query`'s sign bits to every row of `signs` (rows of `w` words),
/// appended to `out`, each also counted in `count` (indexed by distance, `dim + 1` long): the
/// coarse pass over a large scope, which reads every row's bits once. Dispatched like
/// [`approximate`], since the baseline x86_64 target has no population-count instruction.
fn hamming(arch: pulp::Arch, signs: &[u64], w: usize, query: &[u64], out: &mut Vec<u16>, count: &mut [u32]) {
    arch.dispatch(
        #[inline(always)]
        || {
            for r in signs.chunks_exact(w) {
                let h = r.iter().zip(query).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>();
                count[h as usize] += 1;
                // At most `dim`: the search takes this pass only below 65,536 dimensions.
                out.push(h as u16);
            }
        },
    );
}

/// The `n` best entries offered, by a score that is not `Ord` (`f32`): a min-heap of `n`, so
/// a scan of a large part keeps what it needs and no more (offering is O(1) for the many
/// entries below the worst kept one).
struct Best<T> {
    n: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<Ranked<T>>>,
}

/// An entry of [`Best`], ordered by its score alone (`total_cmp`).
struct Ranked<T>(f32, T);

impl<T> PartialEq for Ranked<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl<T> Eq for Ranked<T> {}
impl<T> PartialOrd for Ranked<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Ranked<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl<T> Best<T> {
    fn new(n: usize) -> Self {
        Self { n, heap: std::collections::BinaryHeap::with_capacity(n + 1) }
    }

    /// Keeps `item` when its score beats [`Best::floor`], dropping the worst kept if full.
    fn offer(&mut self, score: f32, item: T) {
        if self.n == 0 || !score.total_cmp(&self.floor()).is_gt() {
            return;
        }
        if self.heap.len() == self.n {
            self.heap.pop();
        }
        self.heap.push(std::cmp::Reverse(Ranked(score, item)));
    }

    /// What a score must beat to be kept: the worst kept once `n` are, else -∞ (scores are
    /// finite). A scan compares against it before offering, so most rows cost one comparison.
    fn floor(&self) -> f32 {
        match self.heap.peek() {
            Some(std::cmp::Reverse(worst)) if self.heap.len() == self.n => worst.0,
            _ if self.n == 0 => f32::INFINITY,
            _ => f32::NEG_INFINITY,
        }
    }

    fn into_items(self) -> impl Iterator<Item = T> {
        self.heap.into_iter().map(|std::cmp::Reverse(Ranked(_, item))| item)
    }
}

/// Dot product with independent accumulators so the compiler can vectorise it.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Where a backend's partitions come from: the versions the database shows, and one
/// partition's vectors. SQLite reads them from a reader connection, PostgreSQL from a tenant's
/// read transaction; the cache and the scan are the same for both.
pub(crate) trait PartSource {
    /// Every partition visible to `scope` (tenant × {none, agent} × {none, user} × {none, chat})
    /// that has ever held a memory, with its version.
    fn versions(&mut self, scope: &Scope) -> Result<Vec<(PartKey, i64)>>;

    /// One partition's version and its active vectors of `model`, read from one snapshot (the
    /// vectors are those of that version, or newer: a part must never claim a version newer than
    /// its rows). [`Loaded::TooBig`] past `max` rows, [`Loaded::Gone`] when the partition was
    /// erased since [`PartSource::versions`] listed it.
    fn load(&mut self, key: &PartKey, model: &str, max: usize) -> Result<Loaded>;
}

/// What [`PartSource::load`] found.
pub(crate) enum Loaded {
    /// The partition's version and its vectors, in a stable order.
    Part(i64, Vec<(MemoryId, Vec<f32>)>),
    /// More rows than the caller will keep in memory: its backend searches it another way.
    TooBig,
    /// No such partition any more.
    Gone,
}

/// Where a row is: (part, chunk, row), as the scans of [`VectorCache::search`] keep it.
type At = (u32, u32, u32);

fn at(part: usize, chunk: usize, row: usize) -> At {
    (part as u32, chunk as u32, row as u32)
}

/// The `keep` rows of `parts` nearest `query` by the Hamming distance of sign bits, in scan
/// order: every row's distance, then the distance at which `keep` rows are reached (rows nearer
/// all go in, rows at it fill what room is left, earliest first, as ties fall in one pass).
fn nearest_by_signs(arch: pulp::Arch, parts: &[Arc<Part>], query: &[f32], keep: usize) -> Vec<At> {
    let (dim, mut qs) = (query.len(), Vec::with_capacity(words(query.len())));
    signs(query, &mut qs);
    let rows = parts.iter().map(|p| p.len()).sum();
    let (mut distances, mut count) = (Vec::with_capacity(rows), vec![0u32; dim + 1]);
    for chunk in parts.iter().flat_map(|p| &p.chunks) {
        hamming(arch, &chunk.signs, words(dim), &qs, &mut distances, &mut count);
    }
    let (mut cut, mut below) = (0, 0);
    while cut < dim && below + (count[cut] as usize) < keep {
        below += count[cut] as usize;
        cut += 1;
    }
    let (mut room, cut) = (keep - below, cut as u16);
    let mut kept = Vec::with_capacity(keep);
    let mut next = distances.iter();
    for (pi, part) in parts.iter().enumerate() {
        for (ci, chunk) in part.chunks.iter().enumerate() {
            for (row, &h) in next.by_ref().take(chunk.ids.len()).enumerate() {
                if h < cut || (h == cut && room > 0) {
                    room -= usize::from(h == cut);
                    kept.push(at(pi, ci, row));
                }
            }
        }
    }
    kept
}

impl VectorCache {
    /// The current parts visible to the scope, reloading any whose version moved without this
    /// handle's delta; None when one holds more than `max` vectors.
    fn visible(
        &self,
        src: &mut dyn PartSource,
        scope: &Scope,
        model: &str,
        max: usize,
    ) -> Result<Option<Vec<Arc<Part>>>> {
        let listed = src.versions(scope)?;
        let mut out = Vec::with_capacity(listed.len());
        for (key, version) in listed {
            let cached = {
                let mut parts = self.lock();
                let clock = parts.tick();
                parts.map.get_mut(&key).and_then(|models| models.get_mut(model)).map(|slot| {
                    slot.used = clock;
                    slot.part.clone()
                })
            };
            match cached {
                Some(p) if p.version == version => out.push(p),
                _ => match src.load(&key, model, max)? {
                    Loaded::Part(version, rows) => out.push(self.keep(&key, model, version, rows)?),
                    Loaded::TooBig => return Ok(None),
                    Loaded::Gone => {}
                },
            }
        }
        Ok(Some(out))
    }

    /// Builds a loaded part and caches it unless a newer one got there first.
    fn keep(&self, key: &PartKey, model: &str, version: i64, rows: Vec<(MemoryId, Vec<f32>)>) -> Result<Arc<Part>> {
        let mut part = Part::new(version);
        for (id, v) in rows {
            if !part.put(id, &v) {
                return Err(StoreError::Dimension { model: model.to_string(), expected: part.dim, got: v.len() });
            }
        }
        self.loads.fetch_add(1, Ordering::Relaxed);
        let part = Arc::new(part);
        let mut parts = self.lock();
        let used = parts.tick();
        let slot = parts.map.entry(key.clone()).or_default().entry(model.to_string());
        // Versions of one partition only grow, even across an erasure: the larger one is newer.
        let (added, removed) = match slot {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Slot { part: part.clone(), used });
                (part.bytes(), 0)
            }
            std::collections::hash_map::Entry::Occupied(mut o) if o.get().part.version < version => {
                let old = std::mem::replace(o.get_mut(), Slot { part: part.clone(), used });
                (part.bytes(), old.part.bytes())
            }
            std::collections::hash_map::Entry::Occupied(_) => (0, 0),
        };
        parts.bytes = parts.bytes + added - removed;
        parts.shrink_to(self.budget, Some((key, model)));
        Ok(part)
    }

    /// A cache holding about `budget` bytes of parts at most (and always the part last loaded).
    pub(crate) fn with_budget(budget: usize) -> Self {
        Self { parts: Mutex::default(), budget, loads: AtomicUsize::new(0) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Parts> {
        self.parts.lock().expect("vector cache lock")
    }

    /// Brings this handle's parts along with partition versions it just moved: a part at the
    /// version a move started from gets the move's changes and its version; any other part of
    /// those partitions is left to the version check (it is stale, or already current).
    ///
    /// Called after the commit, under the writer's lock, so moves arrive in commit order.
    pub(crate) fn advance(&self, moved: &[Moved<'_>]) {
        let mut guard = self.lock();
        let parts = &mut *guard;
        for m in moved {
            let Some(from) = m.from else { continue };
            let Some(models) = parts.map.get_mut(&m.partition) else { continue };
            let bytes = &mut parts.bytes;
            models.retain(|model, slot| {
                if slot.part.version != from {
                    return true;
                }
                *bytes -= slot.part.bytes();
                let part = Arc::make_mut(&mut slot.part);
                for change in &m.changes {
                    match change {
                        VectorChange::Put { id, model: of, vector } if of == model => {
                            if !part.put(*id, vector) {
                                return false;
                            }
                        }
                        VectorChange::Put { id, .. } | VectorChange::Remove(id) => part.remove(*id),
                    }
                }
                part.version = m.to;
                *bytes += part.bytes();
                true
            });
            if models.is_empty() {
                parts.map.remove(&m.partition);
            }
        }
        parts.shrink_to(self.budget, None);
    }

    /// Drops every cached partition of one user of a tenant (after an erasure: the bytes should
    /// not outlive the rows even in memory).
    pub(crate) fn forget_user(&self, tenant: &str, user: &str) {
        let mut parts = self.lock();
        let mut freed = 0;
        parts.map.retain(|k, models| {
            let keep = !(k[0] == tenant && k[2] == user);
            if !keep {
                freed += models.values().map(|slot| slot.part.bytes()).sum::<usize>();
            }
            keep
        });
        parts.bytes -= freed;
    }

    /// Memory the cached parts take, roughly (a chunk a reader and a part share counts once
    /// per part that holds it): what the budget counts.
    pub(crate) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Parts loaded from the database so far.
    #[cfg(test)]
    pub(crate) fn loads(&self) -> usize {
        self.loads.load(Ordering::Relaxed)
    }

    /// Top `limit` by cosine (vectors are normalised, so dot = cosine).
    /// None when a visible partition holds more than `max` vectors (the backend's own index
    /// serves it).
    pub(crate) fn search(
        &self,
        src: &mut dyn PartSource,
        scope: &Scope,
        model: &str,
        (query, limit): (&[f32], usize),
        max: usize,
    ) -> Result<Option<Vec<(MemoryId, f32)>>> {
        let mut qq = Vec::with_capacity(query.len());
        let qscale = quantize(query, &mut qq);
        let Some(parts) = self.visible(src, scope, model, max)? else { return Ok(None) };
        for part in &parts {
            check_dim(model, part.dim, query.len())?;
        }
        // Approximate scan, keeping the shortlist's (part, chunk, row) by approximate cosine.
        let shortlist = limit.saturating_add(SHORTLIST_SLACK);
        let rows: usize = parts.iter().map(|p| p.len()).sum();
        let (arch, dim) = (pulp::Arch::new(), query.len().max(1));
        let mut best = Best::new(shortlist);
        // An empty query has no sign bits, and distances are counted in 16 bits: the plain scan
        // serves both ends (no embedding model comes near 65,536 dimensions).
        // A scope of peaked vectors (a hashed bag of words) is scanned whole: their sign bits
        // would choose the rows at random. One in a hundred among dense ones costs nothing.
        let peaked: usize = parts.iter().flat_map(|p| &p.chunks).map(|c| c.peaked as usize).sum();
        let signed = !query.is_empty() && query.len() <= usize::from(u16::MAX) && peaked <= rows / 100;
        match coarse_keep(rows, shortlist).filter(|_| signed) {
            None => {
                let (mut dots, mut scores) = (Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK));
                let nonzero: Vec<(usize, i8)> = qq.iter().copied().enumerate().filter(|(_, x)| *x != 0).collect();
                let sparse = nonzero.len() * COLUMNS_SHARE <= dim;
                for (pi, part) in parts.iter().enumerate() {
                    for (ci, chunk) in part.chunks.iter().enumerate() {
                        match &chunk.columns {
                            Some(columns) if sparse => by_columns(arch, columns, &nonzero, chunk.ids.len(), &mut dots),
                            _ => approximate(arch, &chunk.quantized, dim, &qq, &mut dots),
                        }
                        // Scores in one pass the compiler vectorises; only those above the
                        // kept floor go to the heap (its test in [`Best::offer`] is the same).
                        scores.clear();
                        scores.extend(dots.iter().zip(&chunk.scales).map(|(d, s)| *d as f32 / (s * qscale)));
                        let mut floor = best.floor();
                        for (row, score) in scores.iter().enumerate() {
                            if score.total_cmp(&floor).is_gt() {
                                best.offer(*score, at(pi, ci, row));
                                floor = best.floor();
                            }
                        }
                    }
                }
            }
            Some(keep) => {
                let kept = nearest_by_signs(arch, &parts, query, keep);
                arch.dispatch(
                    #[inline(always)]
                    || {
                        for (pi, ci, row) in kept {
                            let chunk = &parts[pi as usize].chunks[ci as usize];
                            let (row, v) = (row as usize, &chunk.quantized);
                            let d = dot_i8(&v[row * dim..(row + 1) * dim], &qq);
                            best.offer(d as f32 / (chunk.scales[row] * qscale), (pi, ci, row as u32));
                        }
                    },
                );
            }
        }
        let mut scored: Vec<(MemoryId, f32)> = best
            .into_items()
            .map(|(pi, ci, row)| {
                let (p, ci, row) = (&parts[pi as usize], ci as usize, row as usize);
                (p.chunks[ci].ids[row], dot(p.vector(ci, row), query))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(Some(scored))
    }

    /// Cosines of specific ids (those without a vector of this model are omitted).
    pub(crate) fn cosines(
        &self,
        src: &mut dyn PartSource,
        scope: &Scope,
        model: &str,
        query: &[f32],
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, f32)>> {
        let parts = self.visible(src, scope, model, usize::MAX)?.unwrap_or_default();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            for p in &parts {
                if let Some(&(c, row)) = p.index.get(id) {
                    check_dim(model, p.dim, query.len())?;
                    out.push((*id, dot(p.vector(c as usize, row as usize), query)));
                }
            }
        }
        Ok(out)
    }
}

fn check_dim(model: &str, expected: usize, got: usize) -> Result<()> {
    if expected != 0 && expected != got {
        return Err(StoreError::Dimension { model: model.to_string(), expected, got });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use chrono::{DateTime, Utc};
    use mnemo_core::{HistoryEvent, Kind, Memory, MemoryId, Scope, Status};
    use proptest::prelude::*;

    use super::{CHUNK, Part};
    use crate::sqlite::SqliteStore;
    use crate::{Change, ChangeSet, Embedding, Search, Store, Users};

    #[test]
    fn int8_cosines_track_f32_cosines() {
        let mk = |seed: u32| -> Vec<f32> {
            let v: Vec<f32> =
                (0..384).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / n).collect()
        };
        let (a, b) = (mk(7), mk(11));
        let (mut qa, mut qb) = (Vec::new(), Vec::new());
        let (sa, sb) = (super::quantize(&a, &mut qa), super::quantize(&b, &mut qb));
        let approx = super::dot_i8(&qa, &qb) as f32 / (sa * sb);
        assert!((approx - super::dot(&a, &b)).abs() < 0.02, "{approx} vs {}", super::dot(&a, &b));
    }

    /// The scan gives each row the plain integer sum, in whichever instruction set the CPU runs
    /// it: dimensions of whole vector registers and others, extremes included.
    #[test]
    fn the_scan_gives_every_row_its_exact_integer_sum() {
        for dim in [32, 64, 384, 1024, 130, 7] {
            let byte = |i: usize, seed: usize| -> i8 {
                match (i * 31 + seed * 17) % 11 {
                    0 => 127,
                    1 => -127,
                    k => (i.wrapping_mul(2_654_435_761).wrapping_add(seed * 40_503) % 255) as i8 ^ (k as i8),
                }
            };
            let query: Vec<i8> = (0..dim).map(|i| byte(i, 3)).collect();
            let rows: Vec<i8> = (0..dim * 9).map(|i| byte(i, i / dim + 5)).collect();
            let mut dots = Vec::new();
            super::approximate(pulp::Arch::new(), &rows, dim, &query, &mut dots);
            let naive: Vec<i32> = rows
                .chunks_exact(dim)
                .map(|r| r.iter().zip(&query).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum())
                .collect();
            assert_eq!(dots, naive, "dimension {dim}");
            let ones = vec![127i8; dim];
            super::approximate(pulp::Arch::new(), &ones, dim, &ones, &mut dots);
            assert_eq!(dots, vec![127 * 127 * dim as i32], "dimension {dim}, every byte at its largest");
        }
    }

    /// The coarse pass counts, for every row, the components whose sign differs from the
    /// query's, for dimensions of whole words and others.
    #[test]
    fn the_sign_pass_counts_every_differing_sign() {
        for dim in [384, 64, 130, 7] {
            let component = |i: usize, seed: usize| ((i * 37 + seed * 101) % 13) as f32 - 6.0;
            let query: Vec<f32> = (0..dim).map(|i| component(i, 1)).collect();
            let rows: Vec<Vec<f32>> = (0..9).map(|r| (0..dim).map(|i| component(i, r + 2)).collect()).collect();
            let (mut qs, mut bits) = (Vec::new(), Vec::new());
            super::signs(&query, &mut qs);
            rows.iter().for_each(|r| super::signs(r, &mut bits));
            let (mut distances, mut count) = (Vec::new(), vec![0u32; dim + 1]);
            super::hamming(pulp::Arch::new(), &bits, super::words(dim), &qs, &mut distances, &mut count);
            let naive: Vec<u16> = rows
                .iter()
                .map(|r| r.iter().zip(&query).filter(|(a, b)| (**a > 0.0) != (**b > 0.0)).count() as u16)
                .collect();
            assert_eq!(distances, naive, "dimension {dim}");
            for (h, n) in count.iter().enumerate() {
                let at_h = naive.iter().filter(|d| usize::from(**d) == h).count();
                assert_eq!(*n as usize, at_h, "rows counted at distance {h}, dimension {dim}");
            }
        }
    }

    /// Where the sign-bit pass starts and what it keeps, for recall's shortlist (50 + slack) and
    /// the write gate's (5 + slack): only at four times what it keeps, so small users scan all
    /// in int8; past that, a share of the scope that grows with the shortlist.
    #[test]
    fn the_sign_pass_starts_at_four_times_what_it_keeps() {
        let (recall, gate) = (50 + super::SHORTLIST_SLACK, 5 + super::SHORTLIST_SLACK);
        assert_eq!(super::coarse_keep(5_247, recall), None);
        assert_eq!(super::coarse_keep(5_248, recall), Some(1_312));
        assert_eq!(super::coarse_keep(100_000, recall), Some(12_464), "about an eighth of a large scope");
        assert_eq!(super::coarse_keep(2_367, gate), None);
        assert_eq!(super::coarse_keep(10_000, gate), Some(592));
        assert_eq!(super::coarse_keep(100_000, gate), Some(5_624), "a seventeenth of a large scope");
        assert_eq!(super::coarse_keep(1_000_000, usize::MAX), None, "no overflow for any limit");
    }

    /// A full chunk of peaked rows keeps its columns, a filling one does not, and a sparse
    /// query's column sums are the row scan's, exactly, through replacements and removals that
    /// move rows within the chunk.
    #[test]
    fn the_column_scan_gives_every_row_its_exact_integer_sum() {
        let dim = 384;
        let ids: Vec<MemoryId> = (0..CHUNK + 44).map(|_| MemoryId::new()).collect();
        let mut part = Part::new(1);
        let mut reference = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            // Row 7 at a byte's extreme: a single component, quantised to -127.
            let v = if i == 7 {
                let mut v = vec![0.0; dim];
                v[3] = -1.0;
                v
            } else {
                bag_of_words(i, dim, 0.0)
            };
            assert!(part.put(*id, &v));
            reference.insert(*id, v);
        }
        assert!(part.chunks[0].columns.is_some(), "a full chunk of peaked rows keeps columns");
        assert!(part.chunks[1].columns.is_none(), "a chunk still filling does not");
        let check = |part: &Part| {
            for seed in [CHUNK + 100, 7, 3] {
                let mut query = Vec::new();
                super::quantize(&bag_of_words(seed, dim, 0.0), &mut query);
                query[3] = -127;
                let nonzero: Vec<(usize, i8)> = query.iter().copied().enumerate().filter(|(_, x)| *x != 0).collect();
                assert!(nonzero.len() * super::COLUMNS_SHARE <= dim, "a sparse query");
                let chunk = &part.chunks[0];
                let (mut rows, mut columns) = (Vec::new(), Vec::new());
                super::approximate(pulp::Arch::new(), &chunk.quantized, dim, &query, &mut rows);
                let columns_of = chunk.columns.as_ref().expect("columns");
                super::by_columns(pulp::Arch::new(), columns_of, &nonzero, chunk.ids.len(), &mut columns);
                assert_eq!(columns, rows, "query {seed}");
            }
        };
        check(&part);
        assert!(reference.len() > CHUNK);
        // Replace a row, remove some (the last row moves into their places), add one back.
        let v = bag_of_words(9_999, dim, 0.0);
        assert!(part.put(ids[10], &v));
        reference.insert(ids[10], v);
        for id in [ids[0], ids[7], ids[CHUNK - 1], ids[100]] {
            part.remove(id);
            reference.remove(&id);
        }
        assert!(part.put(ids[0], &bag_of_words(0, dim, 0.0)));
        reference.insert(ids[0], bag_of_words(0, dim, 0.0));
        assert_holds(&part, &reference);
        check(&part);
    }

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((super::dot(&a, &b) - naive).abs() < 1e-4);
    }

    /// A part holds exactly `expected`: every id once, where its index says, with its vector and
    /// that vector's int8 copy.
    fn assert_holds(part: &Part, expected: &HashMap<MemoryId, Vec<f32>>) {
        assert_eq!(part.len(), expected.len());
        let mut seen = 0;
        for (c, chunk) in part.chunks.iter().enumerate() {
            assert!(chunk.ids.len() <= CHUNK);
            assert_eq!(chunk.data.len(), chunk.ids.len() * part.dim);
            assert_eq!(chunk.quantized.len(), chunk.data.len());
            assert_eq!(chunk.scales.len(), chunk.ids.len());
            assert_eq!(chunk.signs.len(), chunk.ids.len() * super::words(part.dim));
            let peaked = chunk.ids.iter().filter(|id| super::peaked(&expected[*id])).count();
            assert_eq!(chunk.peaked as usize, peaked, "peaked rows of chunk {c}");
            if let Some(columns) = &chunk.columns {
                for (i, x) in chunk.quantized.iter().enumerate() {
                    let (row, j) = (i / part.dim, i % part.dim);
                    assert_eq!(columns[j * CHUNK + row], *x, "column {j} of row {row} of chunk {c}");
                }
            }
            for (row, id) in chunk.ids.iter().enumerate() {
                seen += 1;
                assert_eq!(part.index.get(id), Some(&(c as u32, row as u32)), "index of {id}");
                let v = &expected[id];
                assert_eq!(part.vector(c, row), v.as_slice());
                let mut q = Vec::new();
                let scale = super::quantize(v, &mut q);
                assert_eq!(&chunk.quantized[row * part.dim..(row + 1) * part.dim], q.as_slice());
                assert_eq!(chunk.scales[row], scale);
                let (w, mut b) = (super::words(part.dim), Vec::new());
                super::signs(v, &mut b);
                assert_eq!(&chunk.signs[row * w..(row + 1) * w], b.as_slice());
            }
        }
        assert_eq!(seen, expected.len());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put(usize, f32),
        Remove(usize),
        /// A reader takes the part as it stands: later ops must not show through.
        Snapshot,
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        // More ids than two chunks hold, and removals frequent enough to trigger repacking.
        let op = prop_oneof![
            4 => (0..700usize, -1.0f32..1.0).prop_map(|(i, x)| Op::Put(i, x)),
            3 => (0..700usize).prop_map(Op::Remove),
            1 => Just(Op::Snapshot),
        ];
        proptest::collection::vec(op, 0..2500)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any sequence of adds, replacements and removals leaves a part holding what a reference
        /// map holds, and a reader's earlier `Arc` keeps what it saw.
        #[test]
        fn deltas_keep_a_part_equal_to_a_reference(ops in ops()) {
            let ids: Vec<MemoryId> = (0..700).map(|_| MemoryId::new()).collect();
            let mut part = Part::new(1);
            let mut reference: HashMap<MemoryId, Vec<f32>> = HashMap::new();
            let mut snapshots = Vec::new();
            for op in ops {
                match op {
                    Op::Put(i, x) => {
                        // Dense for x ≥ 0.5; otherwise carried by one component (peaked), so
                        // most chunks that fill keep columns.
                        let (rest, head) = if x >= 0.5 {
                            (0.5, [x, 1.0, -0.5, i as f32 / 700.0])
                        } else {
                            (0.01 * x, [0.1 * x, 1.0, -0.05, i as f32 / 7_000.0])
                        };
                        let mut v = vec![rest; 16];
                        v[..4].copy_from_slice(&head);
                        prop_assert!(part.put(ids[i], &v));
                        reference.insert(ids[i], v);
                    }
                    Op::Remove(i) => {
                        part.remove(ids[i]);
                        reference.remove(&ids[i]);
                    }
                    Op::Snapshot => snapshots.push((std::sync::Arc::new(part.clone()), reference.clone())),
                }
            }
            assert_holds(&part, &reference);
            prop_assert!(part.chunks.len() <= 2 * part.len().div_ceil(CHUNK) + 1, "{} chunks", part.chunks.len());
            for (snapshot, expected) in &snapshots {
                assert_holds(snapshot, expected);
            }
            // A part takes the dimension of its first vector (an empty run of ops gave it none);
            // after that, another dimension is refused.
            let mut v = vec![0.0; 16];
            v[1] = 1.0;
            prop_assert!(part.put(ids[0], &v));
            prop_assert!(!part.put(ids[0], &[1.0, 0.0]), "another dimension is refused");
        }
    }

    pub(crate) fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    /// A deterministic unit vector; distinct seeds are far apart.
    pub(crate) fn unit(seed: usize) -> Vec<f32> {
        unit_of(seed, 16)
    }

    /// A deterministic unit vector of `dim` components.
    fn unit_of(seed: usize, dim: usize) -> Vec<f32> {
        let mut x = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    /// A vector like a hashed bag of words: twelve words of a 600-word vocabulary, each a
    /// signed component, with `noise` times a unit vector on every component, normalised.
    fn bag_of_words(seed: usize, dim: usize, noise: f32) -> Vec<f32> {
        let mut v: Vec<f32> = unit_of(3_000_000 + seed, dim).iter().map(|x| noise * x).collect();
        for k in 0..12 {
            let word = (seed * 7 + k * 131 + (seed / 5) * k) % 600;
            v[word * 7 % dim] += if word.is_multiple_of(2) { 1.0 } else { -1.0 };
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    pub(crate) fn insert(owner: &Scope, seed: usize, status: Status) -> (Memory, Change) {
        let mut m = Memory::new(owner.clone(), Kind::Fact, format!("User fact number {seed}"), t0());
        m.status = status;
        let e = Embedding { model: "test:16".into(), vector: unit(seed) };
        (m.clone(), Change::Insert { memory: m, embedding: Some(e), reason: "r".into() })
    }

    /// One active fact per vector, inserted in one apply; the memories, in the vectors' order.
    fn insert_all(store: &SqliteStore, owner: &Scope, model: &str, vectors: &[Vec<f32>]) -> Vec<Memory> {
        let rows: Vec<Memory> = (0..vectors.len())
            .map(|i| Memory::new(owner.clone(), Kind::Fact, format!("User fact number {i}"), t0()))
            .collect();
        let changes = rows
            .iter()
            .zip(vectors)
            .map(|(m, v)| Change::Insert {
                memory: m.clone(),
                embedding: Some(Embedding { model: model.into(), vector: v.clone() }),
                reason: "r".into(),
            })
            .collect();
        apply(store, owner, changes);
        rows
    }

    /// The `k` memories nearest `query` by exact cosine, ties by id.
    fn exact_nearest(rows: &[Memory], vectors: &[Vec<f32>], query: &[f32], k: usize) -> Vec<MemoryId> {
        let mut exact: Vec<(MemoryId, f32)> =
            rows.iter().zip(vectors).map(|(m, v)| (m.id, super::dot(v, query))).collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        exact.truncate(k);
        ids(&exact)
    }

    fn ids(found: &[(MemoryId, f32)]) -> Vec<MemoryId> {
        found.iter().map(|(id, _)| *id).collect()
    }

    fn set_status(id: MemoryId, status: Status) -> Change {
        Change::SetStatus { id, status, event: HistoryEvent::Closed, reason: "r".into(), sources: vec![] }
    }

    pub(crate) fn apply(store: &dyn Store, owner: &Scope, changes: Vec<Change>) {
        store.apply(&ChangeSet { tenant: owner.tenant.clone(), at: t0(), changes }).unwrap();
    }

    fn top(store: &dyn Store, owner: &Scope, seed: usize) -> Vec<MemoryId> {
        store.vector(owner, "test:16", &unit(seed), 3).unwrap().into_iter().map(|(id, _)| id).collect()
    }

    #[test]
    fn this_handles_writes_update_the_cache_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnemo.db");
        let (store, reference) = (SqliteStore::open(&path).unwrap(), SqliteStore::open(&path).unwrap());
        writes_update_the_cache_in_place(&store, &|| store.vectors.loads(), &reference);
    }

    /// Every write kind of `store` reaches its cached part without reloading it (`loads` counts
    /// the parts it loaded), and leaves it answering as `reference`, another handle on the same
    /// database, does: both backends' apply hand the cache their deltas.
    pub(crate) fn writes_update_the_cache_in_place(
        store: &dyn Store,
        loads: &dyn Fn() -> usize,
        reference: &dyn Store,
    ) {
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let rows: Vec<(Memory, Change)> = (0..40).map(|i| insert(&owner, i, Status::Active)).collect();
        apply(store, &owner, rows.iter().map(|(_, c)| c.clone()).collect());
        assert_eq!(top(store, &owner, 3)[0], rows[3].0.id);
        let loads_before = loads();

        // Insert, then a supersession as the engine writes it (new row, old one superseded).
        let (fresh, add) = insert(&owner, 100, Status::Active);
        apply(store, &owner, vec![add]);
        assert_eq!(top(store, &owner, 100)[0], fresh.id);
        let (newer, add) = insert(&owner, 101, Status::Active);
        apply(store, &owner, vec![add, set_status(rows[5].0.id, Status::Superseded { by: newer.id })]);
        assert!(!top(store, &owner, 5).contains(&rows[5].0.id), "a superseded memory left the cache");
        assert_eq!(top(store, &owner, 101)[0], newer.id);
        // Archive (forget, close), re-embed, and a provisional memory made active.
        apply(store, &owner, vec![set_status(rows[6].0.id, Status::Archived)]);
        assert!(!top(store, &owner, 6).contains(&rows[6].0.id));
        let reembed = Embedding { model: "test:16".into(), vector: unit(200) };
        apply(store, &owner, vec![Change::SetEmbedding { id: rows[7].0.id, embedding: reembed }]);
        assert_eq!(top(store, &owner, 200)[0], rows[7].0.id);
        let (provisional, add) = insert(&owner, 300, Status::Provisional);
        apply(store, &owner, vec![add]);
        assert!(!top(store, &owner, 300).contains(&provisional.id));
        apply(store, &owner, vec![set_status(provisional.id, Status::Active)]);
        assert_eq!(top(store, &owner, 300)[0], provisional.id);
        assert_eq!(loads(), loads_before, "no write of this handle made it reload");

        for seed in (0..40).chain([100, 101, 200, 300]) {
            assert_eq!(
                store.vector(&owner, "test:16", &unit(seed), 10).unwrap(),
                reference.vector(&owner, "test:16", &unit(seed), 10).unwrap()
            );
        }
    }

    /// A scope large enough for the sign-bit pass still finds, in order, the rows truly near a
    /// query among thousands of unrelated ones: ten planted at falling cosines (0.95 down to
    /// 0.5) around each query, in 384 dimensions, where unrelated rows sit near cosine 0.
    #[test]
    fn a_large_scope_narrowed_by_sign_bits_finds_the_exact_best() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let (n, dim, model) = (6_000, 384, "test:384");
        assert!(super::coarse_keep(n, 10 + super::SHORTLIST_SLACK).is_some(), "the test covers the coarse pass");
        let queries: Vec<Vec<f32>> = (0..5).map(|q| unit_of(1_000_000 + q, dim)).collect();
        let mut vectors: Vec<Vec<f32>> = (0..n).map(|i| unit_of(i, dim)).collect();
        // Row 97·(10q + k) becomes the k-th nearest of query q: a·query + b·noise, normalised.
        for (q, query) in queries.iter().enumerate() {
            for k in 0..10 {
                let cos = 0.95 - 0.05 * k as f32;
                let noise = unit_of(2_000_000 + 10 * q + k, dim);
                let along = super::dot(&noise, query);
                let ortho: Vec<f32> = noise.iter().zip(query).map(|(x, y)| x - along * y).collect();
                let norm = ortho.iter().map(|x| x * x).sum::<f32>().sqrt();
                let sin = (1.0 - cos * cos).sqrt();
                vectors[97 * (10 * q + k)] = query.iter().zip(&ortho).map(|(y, o)| cos * y + sin * o / norm).collect();
            }
        }
        let rows = insert_all(&store, &owner, model, &vectors);
        for (q, query) in queries.iter().enumerate() {
            let planted: Vec<MemoryId> = (0..10).map(|k| rows[97 * (10 * q + k)].id).collect();
            assert_eq!(
                exact_nearest(&rows, &vectors, query, 10),
                planted,
                "the planted rows are the exact best of query {q}"
            );
            assert_eq!(ids(&store.vector(&owner, model, query, 10).unwrap()), planted, "query {q}");
        }
    }

    /// Vectors that hold their energy in a few components, like a hashed bag of words, are
    /// scanned whole however many there are: with a little noise on every component their sign
    /// bits are mostly the noise's, and the pass would keep rows at random; without it (as the
    /// hashing embedder makes them) the scan reads only the query's columns of full chunks.
    #[test]
    fn a_large_scope_of_peaked_vectors_is_scanned_whole() {
        for noise in [0.04, 0.0] {
            let dir = tempfile::tempdir().unwrap();
            let store = SqliteStore::open(dir.path().join("mnemo.db")).unwrap();
            let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
            let (n, dim, model) = (6_000, 384, "test:384");
            let sparse = |seed: usize| bag_of_words(seed, dim, noise);
            let vectors: Vec<Vec<f32>> = (0..n).map(sparse).collect();
            assert!(vectors.iter().all(|v| super::peaked(v)), "the test's vectors are peaked");
            assert!(super::coarse_keep(n, 10 + super::SHORTLIST_SLACK).is_some(), "large enough for the pass");
            let rows = insert_all(&store, &owner, model, &vectors);
            for q in 0..20 {
                let query = sparse(n + q);
                let found = store.vector(&owner, model, &query, 10).unwrap();
                assert_eq!(ids(&found), exact_nearest(&rows, &vectors, &query, 10), "noise {noise}, query {q}");
            }
        }
    }

    #[test]
    fn another_handles_write_makes_this_one_reload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnemo.db");
        let (a, b) = (SqliteStore::open(&path).unwrap(), SqliteStore::open(&path).unwrap());
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let (first, add) = insert(&owner, 1, Status::Active);
        apply(&a, &owner, vec![add]);
        assert_eq!(top(&a, &owner, 1), vec![first.id]);
        let loads = a.vectors.loads();
        let (second, add) = insert(&owner, 2, Status::Active);
        apply(&b, &owner, vec![add, set_status(first.id, Status::Archived)]);
        assert_eq!(top(&a, &owner, 2), vec![second.id], "the other handle's insert and archive are seen");
        assert_eq!(a.vectors.loads(), loads + 1);
        // And this handle's next write lands on the reloaded part in place again.
        let (third, add) = insert(&owner, 3, Status::Active);
        apply(&a, &owner, vec![add]);
        assert_eq!(top(&a, &owner, 3)[0], third.id);
        assert_eq!(a.vectors.loads(), loads + 1);
    }

    /// Past its budget the cache lets the least recently used users go: it never holds more than
    /// the budget (but for the part it just loaded), a user it let go is read again and answers
    /// as before, and a user in use stays; its byte count is what its parts take.
    #[test]
    fn the_cache_keeps_to_its_budget_least_recently_used_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnemo.db");
        let reference = SqliteStore::open(&path).unwrap();
        let owners: Vec<Scope> =
            (0..6).map(|u| Scope::parse("acme", None, Some(&format!("user{u}")), None).unwrap()).collect();
        for (u, owner) in owners.iter().enumerate() {
            let rows = (0..20).map(|i| insert(owner, 100 * u + i, Status::Active).1).collect();
            apply(&reference, owner, rows);
        }
        // Measure one user's part, then allow three.
        let probe = SqliteStore::open(&path).unwrap();
        top(&probe, &owners[0], 0);
        let one = probe.vectors.bytes();
        assert!(one > 0);
        let store = SqliteStore::open(&path)
            .unwrap()
            .with_cache_budgets(crate::CacheBudgets {
                memory_vectors: 3 * one + one / 2,
                message_vectors: 0,
                ..crate::CacheBudgets::default()
            })
            .unwrap();
        let sum = |s: &SqliteStore| {
            let parts = s.vectors.lock();
            parts.map.values().flat_map(|m| m.values()).map(|slot| slot.part.bytes()).sum::<usize>()
        };
        for round in 0..3 {
            for u in 0..owners.len() {
                // user0 is asked for between every other user: it is never the least recent.
                for asked in [0, u] {
                    let (owner, seed) = (&owners[asked], 100 * asked + 1);
                    assert_eq!(top(&store, owner, seed), top(&reference, owner, seed));
                }
                assert!(store.vectors.bytes() <= 3 * one + one / 2, "round {round}, user {u}");
                assert_eq!(store.vectors.bytes(), sum(&store), "the count is what the parts take");
            }
        }
        let loads = store.vectors.loads();
        top(&store, &owners[0], 1);
        assert_eq!(store.vectors.loads(), loads, "the user in use was never let go");
        top(&store, &owners[1], 101);
        assert_eq!(store.vectors.loads(), loads + 1, "a user let go is read again");
        // A write this handle makes grows a cached part in place, and the count follows it.
        let more = (0..300).map(|i| insert(&owners[1], 10_000 + i, Status::Active).1).collect();
        apply(&store, &owners[1], more);
        assert_eq!(store.vectors.bytes(), sum(&store));
        assert!(store.vectors.bytes() <= 3 * one + one / 2);
        top(&store, &owners[1], 10_001);
        store.vectors.forget_user("acme", "user1");
        assert_eq!(store.vectors.bytes(), sum(&store), "an erased user's bytes leave the count");
    }

    /// An erasure deletes the partition's row and a later write creates it again: a cache of
    /// another handle holding the erased user's part must not take the new row's version for its
    /// own (with versions restarting at 1, both were 1 here).
    #[test]
    fn a_partition_recreated_after_an_erasure_is_not_mistaken_for_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnemo.db");
        let (a, b) = (SqliteStore::open(&path).unwrap(), SqliteStore::open(&path).unwrap());
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let (erased, add) = insert(&owner, 1, Status::Active);
        apply(&b, &owner, vec![add]);
        assert_eq!(top(&a, &owner, 1), vec![erased.id]);
        let event = crate::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
        b.erase_user(&owner.tenant, owner.user.as_ref().unwrap(), &event).unwrap();
        let (after, add) = insert(&owner, 2, Status::Active);
        apply(&b, &owner, vec![add]);
        assert_eq!(top(&a, &owner, 1), vec![after.id], "the erased memory's vector is gone from the other cache");
    }
}
