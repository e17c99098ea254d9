//! `mnemo copy`: moves a whole store to another backend (typically a SQLite data directory to
//! PostgreSQL), then proves the copy: row counts per table, and a random sample of memories
//! compared field by field with their history, links and vectors. Texts are redacted on the way
//! (`mnemo::redact_record`), so a copy never carries PII its source kept.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use mnemo::Config;
use mnemo::core::{Memory, MemoryId};
use mnemo::store::transfer::TABLES;
use mnemo::store::{Embedding, Record, Store};

/// A progress line at least every this many rows (and whenever the copy reaches a new table).
const PROGRESS_EVERY: usize = 10_000;

/// What to copy and how.
#[derive(Debug, Clone)]
pub(crate) struct CopyArgs {
    /// Source: a data directory holding `mnemo.db`, or a `postgres://` URL.
    pub(crate) from: String,
    /// Target: a data directory or a `postgres://` URL; must hold no rows.
    pub(crate) to: String,
    /// Records written per transaction.
    pub(crate) batch: usize,
    /// Memories compared in depth after the copy.
    pub(crate) sample: usize,
    /// Seed of the sample (random when absent), to repeat a check exactly.
    pub(crate) seed: Option<u64>,
}

fn is_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// Where a location points, without its password, for messages.
fn label(s: &str) -> String {
    if !is_url(s) {
        return s.to_string();
    }
    let (scheme, rest) = s.split_once("://").expect("a URL");
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{}@{host}", user.split(':').next().unwrap_or("")),
        None => s.to_string(),
    }
}

/// Opens a store the way the engine does for this location. A source directory must already
/// hold a store: opening would otherwise create an empty one and "copy" nothing.
fn open(location: &str, source: bool) -> Result<Arc<dyn Store>> {
    let mut config = Config::default();
    if is_url(location) {
        config.database_url = Some(location.to_string());
    } else {
        config.data_dir = Path::new(location).to_path_buf();
        if source && !config.db_path().is_file() {
            bail!(
                "{} holds no mnemo store ({} is missing); --from takes a data directory or a postgres:// URL",
                location,
                config.db_path().display()
            );
        }
    }
    mnemo::open_store(&config).with_context(|| format!("opening {}", label(location)))
}

/// A memory kept for the in-depth comparison.
struct Sampled {
    memory: Memory,
    embedding: Option<Embedding>,
}

/// Reservoir sampling (algorithm R) with a small xorshift generator: a uniform sample of the
/// memories in one pass, whatever their number.
struct Reservoir {
    want: usize,
    seen: usize,
    seed: u64,
    state: u64,
    kept: Vec<Sampled>,
}

impl Reservoir {
    fn new(want: usize, seed: u64) -> Self {
        Self { want, seen: 0, seed, state: seed | 1, kept: Vec::new() }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn offer(&mut self, memory: &Memory, embedding: &Option<Embedding>) {
        self.seen += 1;
        let slot = if self.kept.len() < self.want {
            None
        } else {
            let j = (self.next() % self.seen as u64) as usize;
            if j >= self.want {
                return;
            }
            Some(j)
        };
        let s = Sampled { memory: memory.clone(), embedding: embedding.clone() };
        match slot {
            None => self.kept.push(s),
            Some(j) => self.kept[j] = s,
        }
    }
}

/// Runs the copy and its verification; an error (non-zero exit) on any difference.
pub(crate) fn run(args: &CopyArgs) -> Result<()> {
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    if args.from == args.to {
        bail!("--from and --to are the same store ({}); copy into a new, empty one", label(&args.from));
    }
    let source = open(&args.from, true)?;
    let target = open(&args.to, false)?;
    let before = source.counts().context("counting the source's rows")?;
    eprintln!("copying {} -> {}", label(&args.from), label(&args.to));
    eprintln!(
        "source: {}",
        TABLES.iter().map(|t| format!("{} {t}", before.get(*t).copied().unwrap_or(0))).collect::<Vec<_>>().join(", ")
    );

    let seed = args.seed.unwrap_or_else(|| std::collections::hash_map::RandomState::new().build_hasher().finish());
    let mut sample = Reservoir::new(args.sample, seed);
    let mut streamed: BTreeMap<String, u64> = TABLES.iter().map(|t| (t.to_string(), 0)).collect();
    let mut importer = target.import().context("starting the import")?;
    target.begin_bulk_load().context("preparing the target for a bulk load")?;
    let mut batch: Vec<Record> = Vec::with_capacity(args.batch);
    let mut written = 0usize;
    let mut last_table = "";
    let mut flush = |batch: &mut Vec<Record>| -> mnemo::store::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        importer.write(batch)?;
        let before = written;
        written += batch.len();
        let table = batch.last().expect("non-empty").table();
        if written / PROGRESS_EVERY > before / PROGRESS_EVERY || table != last_table {
            eprintln!("  {written} rows written (now at {table})");
            last_table = table;
        }
        batch.clear();
        Ok(())
    };
    source
        .export(&mut |record| {
            // What redaction catches now is cleaned on the way: the copy holds no PII even
            // where its source, written by an older version, did.
            let record = mnemo::redact_record(record);
            *streamed.get_mut(record.table()).expect("a known table") += 1;
            if let Record::Memory { memory, embedding } = &record {
                if embedding.is_some() {
                    *streamed.get_mut("embeddings").expect("a known table") += 1;
                }
                sample.offer(memory, embedding);
            }
            batch.push(record);
            if batch.len() >= args.batch { flush(&mut batch) } else { Ok(()) }
        })
        .context("copying")?;
    flush(&mut batch).context("copying")?;
    eprintln!("  {written} rows written in all; building the target's indexes");
    drop(importer);
    target.finish_bulk_load().context("building the target's indexes")?;

    let mut problems = verify_counts(&*source, &*target, &streamed)?;
    problems.extend(verify_sample(&*source, &*target, &sample)?);
    if !problems.is_empty() {
        for p in &problems {
            println!("MISMATCH {p}");
        }
        bail!("the copy differs from its source in {} place(s), listed above", problems.len());
    }
    println!("copy verified: every count and every sampled memory is equal");
    Ok(())
}

/// Prints source, streamed and target rows per table; returns the tables that differ.
fn verify_counts(source: &dyn Store, target: &dyn Store, streamed: &BTreeMap<String, u64>) -> Result<Vec<String>> {
    let now = source.counts().context("counting the source's rows after the copy")?;
    let copied = target.counts().context("counting the target's rows")?;
    println!("{:<20} {:>10} {:>10} {:>10}", "table", "source", "copied", "target");
    let mut problems = Vec::new();
    for table in TABLES {
        let (s, c, t) = (now[*table], streamed[*table], copied[*table]);
        let ok = s == c && c == t;
        println!("{table:<20} {s:>10} {c:>10} {t:>10}  {}", if ok { "ok" } else { "DIFFERS" });
        if !ok {
            problems.push(format!(
                "{table}: source {s}, copied {c}, target {t}{}",
                if s != c { " (did something write to the source during the copy?)" } else { "" }
            ));
        }
    }
    Ok(problems)
}

/// Compares each sampled memory in both stores: the row, its history, its links, its vector.
fn verify_sample(source: &dyn Store, target: &dyn Store, sample: &Reservoir) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for s in &sample.kept {
        let (tenant, id) = (&s.memory.owner.tenant, s.memory.id);
        let mut differs: Vec<&str> = Vec::new();
        if target.get(tenant, id)?.as_ref() != Some(&s.memory) {
            differs.push("row");
        }
        if mnemo::redact_history(source.history(tenant, id)?) != target.history(tenant, id)? {
            differs.push("history");
        }
        if sorted_links(source, tenant, id)? != sorted_links(target, tenant, id)? {
            differs.push("links");
        }
        if target.embedding(tenant, id)? != s.embedding {
            differs.push("embedding");
        }
        let history = target.history(tenant, id)?.len();
        let links = target.links(tenant, id)?.len();
        let vector = s.embedding.as_ref().map_or("no vector".to_string(), |e| format!("{} dims", e.vector.len()));
        let verdict =
            if differs.is_empty() { "equal".to_string() } else { format!("DIFFERS in {}", differs.join(", ")) };
        println!("sample {id} [{}] history {history}, links {links}, {vector}: {verdict}", s.memory.owner);
        if !differs.is_empty() {
            problems.push(format!("memory {id}: {}", differs.join(", ")));
        }
    }
    println!("sampled {} of {} memories (seed {}; pass --seed to repeat)", sample.kept.len(), sample.seen, sample.seed);
    Ok(problems)
}

fn sorted_links(store: &dyn Store, tenant: &mnemo::core::TenantId, id: MemoryId) -> Result<Vec<String>> {
    let mut out: Vec<String> = store
        .links(tenant, id)?
        .iter()
        .map(|l| format!("{} {} {} {}", l.from, l.kind.as_str(), l.to, l.at.timestamp_millis()))
        .collect();
    out.sort();
    Ok(out)
}
