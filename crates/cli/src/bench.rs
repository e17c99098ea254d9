//! `mnemo bench`: latency benchmarks with results written to a file (never timed unit tests).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, Utc};
use clap::Subcommand;
use mnemo::core::extract::{Extractor, HeuristicExtractor};
use mnemo::core::{Kind, Memory as Row, Message, MessageId, Provenance, Role, Scope};
use mnemo::models::{Embedder, EmbedderKind, open_embedder};
use mnemo::store::{Change, ChangeSet, Embedding, SqliteStore, Store};
use mnemo::{Config, ManualClock, Memory};
use serde::Serialize;

#[derive(Subcommand, Debug)]
pub(crate) enum BenchCommand {
    /// Recall latency over synthetic memories of one user (plus neighbours in other scopes),
    /// excluding the query embedding, and the query embedding's own latency beside it.
    Recall {
        /// Memories of the measured user (repeatable: --memories 1000 --memories 10000).
        #[arg(long, default_values_t = [10_000usize])]
        memories: Vec<usize>,
        /// Timed queries per size.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Embedder for the stored vectors and queries: local (the real model) or hash.
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/recall.json")]
        out: PathBuf,
    },
    /// Heuristic extraction latency per message, over real conversational turns (a LoCoMo-format
    /// JSON file, read at run time) or a synthetic corpus.
    Extract {
        /// LoCoMo-format JSON (every object with "text" is a turn); synthetic messages if absent.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Timed passes over the corpus.
        #[arg(long, default_value_t = 3)]
        passes: usize,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/extract.json")]
        out: PathBuf,
    },
}

/// Latency distribution in milliseconds.
#[derive(Debug, Serialize)]
struct Dist {
    p50: f64,
    p95: f64,
    p99: f64,
    mean: f64,
    max: f64,
}

fn dist(mut v: Vec<f64>) -> Dist {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    Dist {
        p50: q(0.50),
        p95: q(0.95),
        p99: q(0.99),
        mean: v.iter().sum::<f64>() / v.len() as f64,
        max: *v.last().unwrap_or(&0.0),
    }
}

#[derive(Debug, Serialize)]
struct RecallRun {
    memories_of_user: usize,
    memories_in_store: usize,
    queries: usize,
    recall_ms_excluding_embedding: Dist,
    query_embedding_ms: Dist,
    end_to_end_ms: Dist,
    mean_candidates_returned: f64,
    load_seconds: f64,
}

#[derive(Debug, Serialize)]
struct RecallReport {
    benchmark: &'static str,
    embedder: String,
    machine: Machine,
    command: String,
    runs: Vec<RecallRun>,
}

#[derive(Debug, Serialize)]
struct Machine {
    cpus: usize,
    os: &'static str,
    arch: &'static str,
    profile: &'static str,
}

fn machine() -> Machine {
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        profile: if cfg!(debug_assertions) { "debug" } else { "release" },
    }
}

pub(crate) fn run(which: &BenchCommand, config: Config) -> Result<()> {
    match which {
        BenchCommand::Recall { memories, queries, embedder, out } => recall(config, memories, *queries, *embedder, out),
        BenchCommand::Extract { data, passes, out } => extract(data.as_deref(), *passes, out),
    }
}

/// A deterministic generator (xorshift64*), so every run measures the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const SUBJECTS: &[&str] = &[
    "dog",
    "sister",
    "manager",
    "landlord",
    "neighbour",
    "cat",
    "partner",
    "team",
    "doctor",
    "coach",
    "brother",
    "friend",
    "daughter",
    "son",
    "mentor",
    "client",
    "dentist",
    "teacher",
    "colleague",
    "roommate",
];
const VERBS: &[&str] = &[
    "likes",
    "prefers",
    "visited",
    "booked",
    "planned",
    "cooked",
    "bought",
    "fixed",
    "painted",
    "recommended",
    "missed",
    "cancelled",
    "started",
    "finished",
    "learned",
    "reviewed",
    "moved",
    "sold",
    "built",
    "called",
];
const THINGS: &[&str] = &[
    "a hiking trip",
    "the garden shed",
    "sourdough bread",
    "a jazz concert",
    "the quarterly report",
    "a road bike",
    "Italian lessons",
    "the kitchen sink",
    "a birthday party",
    "the Kubernetes cluster",
    "a pottery class",
    "the dentist appointment",
    "a camping stove",
    "the tax return",
    "a chess tournament",
    "the Postgres migration",
    "a surfing lesson",
    "the wedding gifts",
    "a vegetable curry",
    "the piano recital",
    "a climbing gym pass",
    "the electricity bill",
    "a trip to Kyoto",
    "the marathon training plan",
    "a new laptop",
    "the book club",
];
const WHEN: &[&str] = &[
    "last weekend",
    "in March",
    "every Tuesday",
    "after work",
    "before the holidays",
    "on Sunday mornings",
    "twice a year",
    "during the summer",
    "yesterday",
    "next month",
];
const KINDS: &[Kind] =
    &[Kind::Profile, Kind::Preference, Kind::Fact, Kind::Event, Kind::Lore, Kind::OpenLoop, Kind::Episode];

fn sentence(rng: &mut Rng) -> String {
    format!("User's {} {} {} {}", rng.pick(SUBJECTS), rng.pick(VERBS), rng.pick(THINGS), rng.pick(WHEN))
}

fn row(owner: &Scope, content: String, kind: Kind, at: DateTime<Utc>) -> Row {
    let provenance = Provenance {
        sources: vec![MessageId::new("bench").expect("id")],
        chat: None,
        extractor: "bench".into(),
        extractor_version: "1".into(),
    };
    Row { provenance, ..Row::new(owner.clone(), kind, content, at) }
}

/// Loads `n` memories for `owner`, embedding them in batches, 1,000 per transaction.
fn load(
    store: &dyn Store,
    embedder: &dyn Embedder,
    owner: &Scope,
    n: usize,
    rng: &mut Rng,
    now: DateTime<Utc>,
) -> Result<()> {
    let mut done = 0;
    while done < n {
        let batch = (n - done).min(1000);
        let rows: Vec<Row> = (0..batch)
            .map(|i| {
                let kind = KINDS[(rng.next() % KINDS.len() as u64) as usize];
                row(owner, sentence(rng), kind, now - Duration::hours(((done + i) % 4000) as i64))
            })
            .collect();
        let texts: Vec<&str> = rows.iter().map(|r| r.content.as_str()).collect();
        let vectors = embedder.embed(&texts)?;
        let changes = rows
            .into_iter()
            .zip(vectors)
            .map(|(memory, v)| Change::Insert {
                memory,
                embedding: Some(Embedding { model: embedder.id().into(), vector: v }),
                reason: "bench".into(),
            })
            .collect();
        store.apply(&ChangeSet { tenant: owner.tenant.clone(), at: now, changes })?;
        done += batch;
    }
    Ok(())
}

fn recall(
    mut config: Config,
    sizes: &[usize],
    queries: usize,
    kind: EmbedderKind,
    out: &std::path::Path,
) -> Result<()> {
    config.embedder.kind = kind;
    let embedder = open_embedder(&config.embedder)
        .context("opening the embedder (run `mnemo model fetch` for the local model)")?;
    let mut runs = Vec::new();
    for &n in sizes {
        let dir = tempfile::tempdir()?;
        config.data_dir = dir.path().to_path_buf();
        let store = Arc::new(SqliteStore::open(config.db_path())?);
        let now: DateTime<Utc> = "2026-06-01T12:00:00Z".parse()?;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
        let user = Scope::parse("bench", None, Some("u0"), None)?;
        let started = Instant::now();
        load(&*store, &*embedder, &user, n, &mut rng, now)?;
        // Neighbours: other users of the tenant and another tenant, which scope must exclude.
        let neighbours = (n / 10).max(100);
        for other in ["u1", "u2"] {
            load(&*store, &*embedder, &Scope::parse("bench", None, Some(other), None)?, neighbours, &mut rng, now)?;
        }
        load(&*store, &*embedder, &Scope::parse("other-tenant", None, Some("u0"), None)?, neighbours, &mut rng, now)?;
        let load_seconds = started.elapsed().as_secs_f64();
        let memory = Memory::from_parts(config.clone(), store, Some(embedder.clone()), Arc::new(ManualClock::new(now)));
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
            let total = t.elapsed().as_secs_f64() * 1e3;
            if i < 20 {
                continue; // warm-up: caches, prepared statements
            }
            let embed = r.embed_micros as f64 / 1e3;
            total_ms.push(total);
            embed_ms.push(embed);
            recall_ms.push(total - embed);
            returned += r.items.len();
        }
        let run = RecallRun {
            memories_of_user: n,
            memories_in_store: n + 3 * neighbours,
            queries,
            recall_ms_excluding_embedding: dist(recall_ms),
            query_embedding_ms: dist(embed_ms),
            end_to_end_ms: dist(total_ms),
            mean_candidates_returned: returned as f64 / queries as f64,
            load_seconds,
        };
        println!(
            "{:>7} memories/user: recall p50 {:.2} ms · p95 {:.2} ms · p99 {:.2} ms (excl. embedding) | query embedding p50 {:.2} ms · p95 {:.2} ms | load {:.1} s",
            n,
            run.recall_ms_excluding_embedding.p50,
            run.recall_ms_excluding_embedding.p95,
            run.recall_ms_excluding_embedding.p99,
            run.query_embedding_ms.p50,
            run.query_embedding_ms.p95,
            load_seconds
        );
        runs.push(run);
    }
    let report = RecallReport {
        benchmark: "recall",
        embedder: embedder.id().to_string(),
        machine: machine(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        runs,
    };
    write_report(out, &report)
}

fn write_report(out: &std::path::Path, report: &impl Serialize) -> Result<()> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(out, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("writing {}", out.display()))?;
    println!("results written to {}", out.display());
    Ok(())
}

/// Every string under a "text" key, in document order: the turns of a LoCoMo-format file.
fn texts(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                match (k.as_str(), x) {
                    ("text", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => texts(x, out),
                }
            }
        }
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| texts(x, out)),
        _ => {}
    }
}

#[derive(Debug, Serialize)]
struct ExtractReport {
    benchmark: &'static str,
    corpus: String,
    messages: usize,
    passes: usize,
    ops_proposed_per_pass: usize,
    per_message_ms: Dist,
    machine: Machine,
    command: String,
}

fn extract(data: Option<&std::path::Path>, passes: usize, out: &std::path::Path) -> Result<()> {
    let (corpus, lines) = match data {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
            let mut out = Vec::new();
            texts(&v, &mut out);
            (path.display().to_string(), out)
        }
        None => {
            let mut rng = Rng(42);
            let lines = (0..5000)
                .map(|i| match i % 5 {
                    0 => format!("I need to call my {} this weekend about {}.", rng.pick(SUBJECTS), rng.pick(THINGS)),
                    1 => format!(
                        "Actually my {} {} {} {}.",
                        rng.pick(SUBJECTS),
                        rng.pick(VERBS),
                        rng.pick(THINGS),
                        rng.pick(WHEN)
                    ),
                    2 => format!("I love {} and I live in Porto, haha.", rng.pick(THINGS)),
                    3 => "ok thanks, that makes sense! what do you think about it?".to_string(),
                    _ => sentence(&mut rng),
                })
                .collect();
            ("synthetic".to_string(), lines)
        }
    };
    anyhow::ensure!(!lines.is_empty(), "no messages in the corpus");
    let scope = Scope::parse("bench", None, Some("u"), Some("c"))?;
    let at: DateTime<Utc> = "2026-03-02T09:00:00Z".parse()?;
    let messages: Vec<Message> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Ok(Message {
                id: MessageId::new(format!("m{i}"))?,
                scope: scope.clone(),
                role: Role::User,
                content: l.clone(),
                at,
            })
        })
        .collect::<Result<_>>()?;
    let x = HeuristicExtractor;
    // Warm-up pass: regexes compiled, caches hot; also counts what the corpus yields.
    let ops: usize = messages.iter().map(|m| x.extract(std::slice::from_ref(m)).len()).sum();
    let mut ms = Vec::with_capacity(messages.len() * passes);
    for _ in 0..passes {
        for m in &messages {
            let t = Instant::now();
            let proposed = x.extract(std::slice::from_ref(m));
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(proposed);
        }
    }
    let report = ExtractReport {
        benchmark: "extract",
        corpus,
        messages: messages.len(),
        passes,
        ops_proposed_per_pass: ops,
        per_message_ms: dist(ms),
        machine: machine(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    println!(
        "heuristic extraction over {} messages ({}): p50 {:.4} ms · p95 {:.4} ms · p99 {:.4} ms · max {:.3} ms; {} ops proposed",
        report.messages,
        report.corpus,
        report.per_message_ms.p50,
        report.per_message_ms.p95,
        report.per_message_ms.p99,
        report.per_message_ms.max,
        ops
    );
    write_report(out, &report)
}
