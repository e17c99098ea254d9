//! `mnemo bench recall`: recall latency for users of 1k..100k memories inside a store of up to
//! millions, through the configured backend (`mnemo::open_store`), excluding the query embedding.
//!
//! Embedding a million rows with the real model would take hours on two cores, so a pool of
//! distinct generated sentences is embedded for real once and every stored row takes one of
//! those sentences with its vector plus small deterministic noise. Queries are embedded for real
//! on every call, as in production; that time is reported apart.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::{Memory as Row, MessageId, Provenance, Scope, StatusKind};
use mnemo::models::{Embedder, EmbedderKind, cosine, normalize};
use mnemo::store::{Change, ChangeSet, Embedding, ListFilter, Store};
use mnemo::{Config, ManualClock, Memory};
use serde::Serialize;

use super::{
    Dist, KINDS, Machine, Rng, SUBJECTS, THINGS, WHEN, command, dist, embedder, machine, sentence, write_report,
};

/// Nearest memories the agreement check compares: the vector half's candidates in recall.
const AGREEMENT_K: usize = 50;

/// The same for the write gate's near-duplicate lookup, which asks for fewer and keeps fewer.
const DEDUP_LOOKUP_K: usize = 5;

/// Queries the agreement check asks (each one scores every memory of the user exactly).
const AGREEMENT_QUERIES: usize = 100;

/// Half-width of the uniform noise added to each component of a pooled vector (before
/// re-normalising): about 0.97 cosine to the sentence's true vector at 384 dimensions.
const NOISE: f32 = 0.02;

/// Sizes and shape of the store to build.
#[derive(Debug)]
pub(super) struct Plan {
    /// Memories of each measured user.
    pub(super) sizes: Vec<usize>,
    /// Memories in the whole store (default: the measured ones plus 30%).
    pub(super) total: Option<usize>,
    /// Users in the store, measured ones included.
    pub(super) users: usize,
    /// Sentences embedded for real.
    pub(super) pool: usize,
    /// Rows per `Store::apply`.
    pub(super) batch: usize,
    /// An earlier run's tenant to measure again without loading (PostgreSQL, or SQLite with
    /// `store`).
    pub(super) reuse: Option<String>,
    /// SQLite: where the store is built and kept (a temporary directory otherwise).
    pub(super) store: Option<PathBuf>,
    /// Also measure recalls with a write to the measured user before every N-th of them.
    pub(super) write_every: Option<usize>,
}

#[derive(Debug, Serialize)]
struct RecallRun {
    memories_of_user: usize,
    memories_in_store: usize,
    queries: usize,
    recall_ms_excluding_embedding: Dist,
    query_embedding_ms: Dist,
    end_to_end_ms: Dist,
    mean_items_returned: f64,
    /// With `--write-every N`: the same queries again, a new memory (with its vector) written to
    /// this user before every N-th recall; the write itself is not in these times.
    #[serde(skip_serializing_if = "Option::is_none")]
    recall_with_writes_ms_excluding_embedding: Option<Dist>,
    #[serde(skip_serializing_if = "Option::is_none")]
    with_writes: Option<WritesPass>,
    vector_agreement: Agreement,
    /// The same check for the write gate's lookup ([`DEDUP_LOOKUP_K`] nearest).
    dedup_lookup_agreement: Agreement,
}

/// How much of the exact nearest memories by cosine the store's vector search returns: what a
/// search that narrows its scan (the sign-bit pass of a large user) gives up, measured.
#[derive(Debug, Serialize)]
struct Agreement {
    /// Nearest memories compared.
    k: usize,
    queries: usize,
    /// Share of the exact `k` nearest found among the search's `k`, over all queries.
    mean: f64,
    /// The worst query's share.
    min: f64,
    /// Share of queries whose nearest memory the search returned first.
    nearest_first: f64,
}

/// How the pass with writes ran.
#[derive(Debug, Serialize)]
struct WritesPass {
    write_every: usize,
    /// Memories written to the user during the pass (its size grows by this much).
    writes: usize,
    /// Each write: one `Store::apply` of one insert.
    write_ms: Dist,
    query_embedding_ms: Dist,
}

#[derive(Debug, Serialize)]
struct StoreShape {
    backend: &'static str,
    memories: usize,
    users: usize,
    measured_users: Vec<usize>,
    filler_memories: usize,
    filler_users: usize,
    tenants: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Vectors {
    method: String,
    pool_sentences: usize,
    pool_embed_seconds: f64,
    noise_half_width: f32,
    mean_cosine_to_true_vector: f32,
}

#[derive(Debug, Serialize)]
struct Load {
    /// Writing the rows, with the indexes a bulk load defers dropped (`Store::begin_bulk_load`).
    seconds: f64,
    rows_per_second: f64,
    rows_per_apply: usize,
    /// Building the deferred indexes once over the loaded rows (`Store::finish_bulk_load`).
    index_build_seconds: f64,
}

#[derive(Debug, Serialize)]
struct RecallReport {
    benchmark: &'static str,
    embedder: String,
    machine: Machine,
    command: String,
    store: StoreShape,
    vectors: Vectors,
    /// Absent when an earlier run's store was measured again (`--reuse`).
    load: Option<Load>,
    runs: Vec<RecallRun>,
}

/// The embedded pool: sentences and their real vectors.
struct Pool {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

impl Pool {
    fn build(embedder: &dyn Embedder, n: usize, rng: &mut Rng) -> Result<Self> {
        let mut seen = HashSet::new();
        let mut sentences = Vec::with_capacity(n);
        let mut tries = 0;
        while sentences.len() < n && tries < n * 50 {
            tries += 1;
            let s = sentence(rng);
            if seen.insert(s.clone()) {
                sentences.push(s);
            }
        }
        ensure!(sentences.len() == n, "could only generate {} distinct sentences; lower --pool", sentences.len());
        let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
        let mut vectors = Vec::with_capacity(n);
        for chunk in texts.chunks(256) {
            vectors.extend(embedder.embed(chunk).context("embedding the sentence pool")?);
        }
        Ok(Self { sentences, vectors })
    }

    /// A row's content and vector: a pooled sentence, its vector with deterministic noise.
    fn draw(&self, rng: &mut Rng) -> (String, Vec<f32>) {
        let j = (rng.next() % self.sentences.len() as u64) as usize;
        let mut v: Vec<f32> = self.vectors[j].iter().map(|x| x + NOISE * rng.signed_unit()).collect();
        normalize(&mut v);
        (self.sentences[j].clone(), v)
    }
}

/// Buffers inserts and writes them through `Store::apply`, one tenant per change set.
struct Loader<'a> {
    store: &'a dyn Store,
    model: String,
    batch: usize,
    now: DateTime<Utc>,
    pending: Option<ChangeSet>,
    rows: usize,
}

/// One stored row as the benchmark writes it: a memory of a random kind with its vector.
fn insert_change(
    owner: &Scope,
    (content, vector): (String, Vec<f32>),
    model: &str,
    at: DateTime<Utc>,
    rng: &mut Rng,
) -> Result<Change> {
    let kind = KINDS[(rng.next() % KINDS.len() as u64) as usize];
    let provenance = Provenance {
        sources: vec![MessageId::new("bench")?],
        chat: None,
        extractor: "bench".into(),
        extractor_version: "1".into(),
        rule: None,
    };
    let memory = Row { provenance, ..Row::new(owner.clone(), kind, content, at) };
    Ok(Change::Insert {
        memory,
        embedding: Some(Embedding { model: model.to_string(), vector }),
        reason: "bench".into(),
    })
}

impl Loader<'_> {
    fn insert(&mut self, owner: &Scope, content: String, vector: Vec<f32>, rng: &mut Rng) -> Result<()> {
        if self.pending.as_ref().is_some_and(|c| c.tenant != owner.tenant || c.changes.len() >= self.batch) {
            self.flush()?;
        }
        let at = self.now - Duration::hours((self.rows % 4000) as i64);
        let change = insert_change(owner, (content, vector), &self.model, at, rng)?;
        let set = self.pending.get_or_insert_with(|| ChangeSet {
            tenant: owner.tenant.clone(),
            at: self.now,
            changes: Vec::with_capacity(self.batch),
        });
        set.changes.push(change);
        self.rows += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(set) = self.pending.take() {
            self.store.apply(&set).context("loading benchmark rows")?;
        }
        Ok(())
    }
}

/// Loads the planned rows: the measured users', then the filler spread over the other users
/// (one in ten under another tenant: scope must keep all of them out of the measured users'
/// candidates). Indexes a bulk load defers are built once at the end, and timed apart.
fn load(
    mut loader: Loader<'_>,
    measured: &[(usize, Scope)],
    (tenant, other_tenant): (&str, &str),
    (filler, filler_users): (usize, usize),
    pool: &Pool,
) -> Result<Load> {
    let store = loader.store;
    let mut rng = Rng(0x0DDB_A110);
    let started = Instant::now();
    store.begin_bulk_load().context("preparing the bulk load")?;
    for (n, owner) in measured {
        for _ in 0..*n {
            let (content, v) = pool.draw(&mut rng);
            loader.insert(owner, content, v, &mut rng)?;
        }
    }
    let base = filler.checked_div(filler_users).unwrap_or(0);
    let extra = filler.checked_rem(filler_users).unwrap_or(0);
    for u in 0..filler_users {
        let t = if u % 10 == 9 { other_tenant } else { tenant };
        let owner = Scope::parse(t, None, Some(&format!("filler-{u}")), None)?;
        for _ in 0..base + usize::from(u < extra) {
            let (content, v) = pool.draw(&mut rng);
            loader.insert(&owner, content, v, &mut rng)?;
        }
        if u % 1000 == 999 {
            eprintln!("  {} rows loaded ({:.0} s)", loader.rows, started.elapsed().as_secs_f64());
        }
    }
    loader.flush()?;
    let seconds = started.elapsed().as_secs_f64();
    let rows = loader.rows;
    eprintln!("loaded {rows} memories in {seconds:.1} s; building deferred indexes");
    let started = Instant::now();
    store.finish_bulk_load().context("building the indexes after the bulk load")?;
    let index_build_seconds = started.elapsed().as_secs_f64();
    eprintln!("indexes built in {index_build_seconds:.1} s");
    Ok(Load {
        seconds,
        rows_per_second: rows as f64 / seconds.max(1e-9),
        rows_per_apply: loader.batch,
        index_build_seconds,
    })
}

pub(super) fn run(mut config: Config, plan: &Plan, queries: usize, kind: EmbedderKind, out: &Path) -> Result<()> {
    ensure!(!plan.sizes.is_empty() && !plan.sizes.contains(&0), "--memories must be at least 1");
    ensure!(queries > 0, "--queries must be at least 1");
    ensure!(plan.pool > 0 && plan.batch > 0, "--pool and --batch must be at least 1");
    ensure!(plan.write_every != Some(0), "--write-every must be at least 1");
    let measured: usize = plan.sizes.iter().sum();
    let total = plan.total.unwrap_or(measured + (measured * 3 / 10).max(300));
    if total < measured {
        bail!("--total {total} is smaller than the measured users' {measured} memories; raise it or drop --total");
    }
    let filler = total - measured;
    let filler_users = plan.users.saturating_sub(plan.sizes.len());
    if filler > 0 && filler_users == 0 {
        bail!(
            "--users {} leaves no user for the {filler} filler memories; give more users than --memories sizes",
            plan.users
        );
    }

    let embedder = embedder(&mut config, kind)?;
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    let tmp = tempfile::tempdir()?;
    match (&plan.store, postgres) {
        (Some(_), true) => bail!("--store keeps a SQLite store; drop it, or unset MNEMO_DATABASE_URL"),
        (Some(dir), false) => {
            config.data_dir = dir.clone();
            match (config.db_path().exists(), plan.reuse.is_some()) {
                (true, false) => bail!(
                    "{} already holds a store: add --reuse bench to measure it again, or give an empty directory",
                    dir.display()
                ),
                (false, true) => {
                    bail!("{} holds no store to --reuse; run once without --reuse to load it", dir.display())
                }
                _ => {}
            }
        }
        (None, false) if plan.reuse.is_some() => bail!(
            "--reuse measures a store an earlier run left: in PostgreSQL (set MNEMO_DATABASE_URL) or in a --store directory"
        ),
        (None, false) => config.data_dir = tmp.path().to_path_buf(),
        (None, true) => {}
    }
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    let now: DateTime<Utc> = "2026-06-01T12:00:00Z".parse()?;
    // A shared database keeps earlier runs: a tenant of its own keeps this run's rows apart.
    let tenant = match (&plan.reuse, postgres) {
        (Some(t), _) => t.clone(),
        (None, true) => format!("bench-{}", Utc::now().timestamp()),
        (None, false) => "bench".to_string(),
    };
    let other_tenant = format!("{tenant}-other");

    let started = Instant::now();
    let pool = Pool::build(&*embedder, plan.pool, &mut Rng(0x9E37_79B9_7F4A_7C15))?;
    let pool_embed_seconds = started.elapsed().as_secs_f64();
    let mean_cosine = {
        let mut r = Rng(7);
        let n = 1000.min(plan.pool * 4);
        (0..n)
            .map(|_| {
                let j = (r.next() % pool.sentences.len() as u64) as usize;
                let mut v: Vec<f32> = pool.vectors[j].iter().map(|x| x + NOISE * r.signed_unit()).collect();
                normalize(&mut v);
                cosine(&v, &pool.vectors[j])
            })
            .sum::<f32>()
            / n as f32
    };
    let measured_scopes: Vec<(usize, Scope)> = plan
        .sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| Ok((n, Scope::parse(&tenant, None, Some(&format!("measured-{i}-{n}")), None)?)))
        .collect::<Result<_>>()?;
    let (load, rows) = match &plan.reuse {
        Some(t) => {
            for (n, owner) in &measured_scopes {
                let filter = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
                let held = store.list(owner, &filter)?.len();
                ensure!(
                    held == *n,
                    "tenant {t:?} holds {held} memories of {}, not {n}: give the --memories sizes of the run that \
                     loaded it, or drop --reuse to load a new store",
                    owner.user.as_ref().map_or("", |u| u.as_str())
                );
            }
            let rows = store.counts()?.get("memories").copied().unwrap_or_default() as usize;
            eprintln!("measuring tenant {t} again ({rows} memories in the store)");
            (None, rows)
        }
        None => {
            eprintln!("embedded {} pool sentences in {pool_embed_seconds:.1} s; loading {total} memories", plan.pool);
            let loader = Loader {
                store: &*store,
                model: embedder.id().to_string(),
                batch: plan.batch,
                now,
                pending: None,
                rows: 0,
            };
            let load = load(loader, &measured_scopes, (&tenant, &other_tenant), (filler, filler_users), &pool)?;
            (Some(load), total)
        }
    };
    eprintln!("tenant {tenant}");
    // Queries of their own sequence, so a --reuse run asks what the loading run asked.
    let mut rng = Rng(0x05EE_D0F0_E1E5);

    let model = embedder.id().to_string();
    // Queries repeat their templates; the model is timed on every one of them.
    let memory = Memory::from_parts(config, store.clone(), Some(embedder.clone()), Arc::new(ManualClock::new(now)))
        .with_embedding_cache(0);
    // Writes of the pass with writes: rows like the loaded ones, drawn from their own sequence.
    let mut write_rng = Rng(0x0B5E_55ED_F00D);
    let mut runs = Vec::new();
    for (n, user) in &measured_scopes {
        let chat = user.clone().with_chat("bench-chat".parse()?);
        let qs: Vec<String> = (0..queries + 20)
            .map(|i| match i % 3 {
                0 => format!("what did my {} do {}", rng.pick(SUBJECTS), rng.pick(WHEN)),
                1 => format!("anything about {}?", rng.pick(THINGS)),
                _ => sentence(&mut rng),
            })
            .collect();
        let (mut recall_ms, mut embed_ms, mut total_ms, mut returned) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
        for (i, q) in qs.iter().enumerate() {
            let t = Instant::now();
            let r = memory.recall(&chat, q, Some(10))?;
            let all = t.elapsed().as_secs_f64() * 1e3;
            if i < 20 {
                continue; // warm-up: caches, prepared statements
            }
            let embed = r.embed_micros as f64 / 1e3;
            total_ms.push(all);
            embed_ms.push(embed);
            recall_ms.push(all - embed);
            returned += r.items.len();
        }
        let with_writes = match plan.write_every {
            Some(every) => {
                let writer = |rng: &mut Rng| -> Result<()> {
                    let change = insert_change(user, pool.draw(rng), &model, now, rng)?;
                    let set = ChangeSet { tenant: user.tenant.clone(), at: now, changes: vec![change] };
                    store.apply(&set).context("writing to the measured user")
                };
                Some(recalls_with_writes(&memory, &chat, &qs, every, || writer(&mut write_rng))?)
            }
            None => None,
        };
        let [vector_agreement, dedup_lookup_agreement] =
            agreement(&*store, &*embedder, user, &qs[20..], [AGREEMENT_K, DEDUP_LOOKUP_K])?;
        let run = RecallRun {
            memories_of_user: *n,
            memories_in_store: rows,
            queries,
            recall_ms_excluding_embedding: dist(&recall_ms),
            query_embedding_ms: dist(&embed_ms),
            end_to_end_ms: dist(&total_ms),
            mean_items_returned: returned as f64 / queries as f64,
            recall_with_writes_ms_excluding_embedding: with_writes.as_ref().map(|(ms, _)| dist(ms)),
            with_writes: with_writes.map(|(_, pass)| pass),
            vector_agreement,
            dedup_lookup_agreement,
        };
        println!(
            "{:>7} memories/user in a store of {rows}: recall p50 {:.2} ms · p95 {:.2} ms · p99 {:.2} ms (excl. embedding) | query embedding p50 {:.2} ms · p95 {:.2} ms",
            n,
            run.recall_ms_excluding_embedding.p50,
            run.recall_ms_excluding_embedding.p95,
            run.recall_ms_excluding_embedding.p99,
            run.query_embedding_ms.p50,
            run.query_embedding_ms.p95,
        );
        for (a, what) in
            [(&run.vector_agreement, "recall's vector search"), (&run.dedup_lookup_agreement, "the gate's lookup")]
        {
            println!(
                "{:>7} memories/user: {what} returned {:.2}% of the exact {} nearest (worst query {:.0}%), \
                 the nearest first in {:.1}% of {} queries",
                n,
                a.mean * 100.0,
                a.k,
                a.min * 100.0,
                a.nearest_first * 100.0,
                a.queries
            );
        }
        if let (Some(d), Some(w)) = (&run.recall_with_writes_ms_excluding_embedding, &run.with_writes) {
            println!(
                "{:>7} memories/user, a write before every {} recall(s): recall p50 {:.2} ms · p95 {:.2} ms · p99 {:.2} ms (excl. embedding) | write p50 {:.2} ms",
                n, w.write_every, d.p50, d.p95, d.p99, w.write_ms.p50,
            );
        }
        runs.push(run);
    }
    let report = RecallReport {
        benchmark: "recall",
        embedder: embedder.id().to_string(),
        machine: machine(),
        command: command(),
        store: StoreShape {
            backend: if postgres { "postgres" } else { "sqlite" },
            memories: rows,
            users: plan.sizes.len() + filler_users,
            measured_users: plan.sizes.clone(),
            filler_memories: filler,
            filler_users,
            tenants: if filler_users >= 10 { vec![tenant, other_tenant] } else { vec![tenant] },
        },
        vectors: Vectors {
            method: format!(
                "{} distinct generated sentences embedded with {}; each stored row is one of them, its vector plus \
                 uniform noise of half-width {NOISE} per component, re-normalised; queries embedded for real",
                plan.pool,
                embedder.id()
            ),
            pool_sentences: plan.pool,
            pool_embed_seconds,
            noise_half_width: NOISE,
            mean_cosine_to_true_vector: mean_cosine,
        },
        load,
        runs,
    };
    write_report(out, &report)
}

/// The queries again, `write` called before every `every`-th recall (the first 20 recalls warm
/// up and are not counted, as in the read-only pass). Returns the recalls' times excluding the
/// query embedding, and how the writes went.
fn recalls_with_writes(
    memory: &Memory,
    chat: &Scope,
    qs: &[String],
    every: usize,
    mut write: impl FnMut() -> Result<()>,
) -> Result<(Vec<f64>, WritesPass)> {
    let (mut recall_ms, mut embed_ms, mut write_ms) = (Vec::new(), Vec::new(), Vec::new());
    for (i, q) in qs.iter().enumerate() {
        if i % every == 0 {
            let t = Instant::now();
            write()?;
            write_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let t = Instant::now();
        let r = memory.recall(chat, q, Some(10))?;
        let all = t.elapsed().as_secs_f64() * 1e3;
        if i < 20 {
            continue;
        }
        let embed = r.embed_micros as f64 / 1e3;
        embed_ms.push(embed);
        recall_ms.push(all - embed);
    }
    let pass = WritesPass {
        write_every: every,
        writes: write_ms.len(),
        write_ms: dist(&write_ms),
        query_embedding_ms: dist(&embed_ms),
    };
    Ok((recall_ms, pass))
}

/// The store's vector search against exact cosines over every active memory of `owner`, for
/// the first [`AGREEMENT_QUERIES`] of `qs` (embedded as they are), once per number of nearest
/// asked for in `ks`.
fn agreement<const N: usize>(
    store: &dyn Store,
    embedder: &dyn Embedder,
    owner: &Scope,
    qs: &[String],
    ks: [usize; N],
) -> Result<[Agreement; N]> {
    let filter = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    let ids: Vec<_> = store.list(owner, &filter)?.into_iter().map(|m| m.id).collect();
    let texts: Vec<&str> = qs.iter().take(AGREEMENT_QUERIES).map(String::as_str).collect();
    let vectors = embedder.embed(&texts).context("embedding the agreement check's queries")?;
    let mut shares = ks.map(|_| Vec::with_capacity(vectors.len()));
    let mut first = [0usize; N];
    for q in &vectors {
        let mut exact = store.cosines(owner, embedder.id(), q, &ids)?;
        exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (i, k) in ks.iter().enumerate() {
            let exact = &exact[..exact.len().min(*k)];
            let found = store.vector(owner, embedder.id(), q, *k)?;
            let returned: HashSet<_> = found.iter().map(|(id, _)| *id).collect();
            let share = exact.iter().filter(|(id, _)| returned.contains(id)).count() as f64;
            shares[i].push(share / exact.len().max(1) as f64);
            first[i] += usize::from(found.first().map(|f| f.0) == exact.first().map(|e| e.0));
        }
    }
    Ok(std::array::from_fn(|i| {
        let n = shares[i].len().max(1) as f64;
        Agreement {
            k: ks[i],
            queries: shares[i].len(),
            mean: shares[i].iter().sum::<f64>() / n,
            min: shares[i].iter().copied().fold(1.0, f64::min),
            nearest_first: first[i] as f64 / n,
        }
    }))
}
