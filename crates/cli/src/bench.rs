//! `mnemo bench`: benchmarks whose results are written to files (never timed unit tests). The
//! subcommands live in `bench/`; this file holds their arguments and what they share.

mod add;
mod documents;
mod embed;
mod extract;
mod ingest;
mod locomo;
mod maintain;
mod recall;
mod serve;
mod sessions;
mod skills;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use mnemo::core::Kind;
use mnemo::models::EmbedderKind;
use mnemo::{Config, ExtractorKind};
use serde::Serialize;

/// `--speaker-as`: the role LoCoMo's speaker A is ingested as (speaker B takes the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SpeakerAs {
    /// Speaker A is the user, speaker B the assistant.
    User,
    /// Speaker A is the assistant, speaker B the user.
    Assistant,
}

impl SpeakerAs {
    /// The harness's rendering for the flag, absent or given: both speakers the user when absent.
    fn speakers(flag: Option<Self>) -> mnemo_eval::locomo::Speakers {
        use mnemo_eval::locomo::Speakers;
        match flag {
            None => Speakers::BothUser,
            Some(SpeakerAs::User) => Speakers::AIsUser,
            Some(SpeakerAs::Assistant) => Speakers::AIsAssistant,
        }
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum BenchCommand {
    /// Recall latency, excluding the query embedding, for users with 1k..100k memories in a store
    /// of up to millions (other users' memories as filler). Opens the configured store:
    /// MNEMO_DATABASE_URL=postgres://... benchmarks PostgreSQL (use a scratch database).
    Recall {
        /// Memories of one measured user (repeatable: --memories 1000 --memories 10000).
        #[arg(long, default_values_t = [10_000usize])]
        memories: Vec<usize>,
        /// Memories in the whole store; what the measured users do not hold is spread over other
        /// users as filler (default: the measured users plus 30% more).
        #[arg(long)]
        total: Option<usize>,
        /// Users in the store, the measured ones included (filler goes to the others).
        #[arg(long, default_value_t = 10)]
        users: usize,
        /// Timed queries per measured user.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Embedder for the stored vectors and queries: local (the real model) or hash.
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Distinct sentences embedded for real; every stored row takes one of their vectors
        /// with small deterministic noise (embedding a million rows would take hours here).
        #[arg(long, default_value_t = 2_000)]
        pool: usize,
        /// Rows per `Store::apply` batch while loading.
        #[arg(long, default_value_t = 5_000)]
        batch: usize,
        /// Measure again the store an earlier run loaded into this tenant (PostgreSQL keeps it;
        /// SQLite keeps it with --store; the earlier run printed the tenant), without loading:
        /// for comparing query changes.
        #[arg(long, value_name = "TENANT")]
        reuse: Option<String>,
        /// SQLite: build the store in DIR (which must hold no store yet) and leave it there,
        /// instead of in a temporary directory; with --reuse, measure the store DIR holds.
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// After the read-only queries, run them again with a write (a new memory with its
        /// vector) to the measured user before every N-th recall, and report those recalls too.
        #[arg(long, value_name = "N")]
        write_every: Option<usize>,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/recall.json")]
        out: PathBuf,
    },
    /// Memories added one by one to one user through `Memory::add` (embedding, gate with its
    /// dedup lookups, apply), timed per block: whether an add gets slower as the user grows.
    /// Opens the configured store (MNEMO_DATABASE_URL for PostgreSQL).
    Add {
        /// Memories to add.
        #[arg(long, default_value_t = 10_000)]
        memories: usize,
        /// Adds per reported block.
        #[arg(long, default_value_t = 1_000)]
        block: usize,
        /// Embedder: hash (the default: what is measured is the store and the gate, not a
        /// model) or local.
        #[arg(long, default_value = "hash")]
        embedder: EmbedderKind,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/add.json")]
        out: PathBuf,
    },
    /// The embedding model alone over the texts an ingest embeds (each message and its
    /// passages), batched like `ingest --batch`: the ceiling ingest is measured against.
    Embed {
        /// LoCoMo-format JSON (read at run time); a synthetic corpus when absent.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Messages of the synthetic corpus (ignored with --data).
        #[arg(long, default_value_t = 3_000)]
        messages: usize,
        /// Messages per model call (repeatable: --batch 1 --batch 20).
        #[arg(long, default_values_t = [1usize])]
        batch: Vec<usize>,
        /// Embedders to run (repeatable).
        #[arg(long, default_values_t = [EmbedderKind::Local])]
        embedder: Vec<EmbedderKind>,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/embed.json")]
        out: PathBuf,
    },
    /// Ingest throughput (messages per second) through `Memory::ingest`: trace, heuristic
    /// extraction, gate, embeddings and apply, over LoCoMo turns or a synthetic corpus.
    Ingest {
        /// LoCoMo-format JSON (read at run time); a synthetic corpus when absent.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Messages of the synthetic corpus (ignored with --data).
        #[arg(long, default_value_t = 3_000)]
        messages: usize,
        /// Messages per ingest call (repeatable: --batch 1 --batch 50).
        #[arg(long, default_values_t = [1usize])]
        batch: Vec<usize>,
        /// Embedders to run with (repeatable: --embedder hash --embedder local).
        #[arg(long, default_values_t = [EmbedderKind::Local])]
        embedder: Vec<EmbedderKind>,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/ingest.json")]
        out: PathBuf,
    },
    /// The LoCoMo benchmark: each conversation ingested into its own store, then for every
    /// question the text of the block `context()` returns at each token budget, scored against
    /// the gold answer and the evidence turns' words (docs/locomo-metrics.md), beside three
    /// baselines packing whole turns into the same budget (BM25, dense, their fusion).
    Locomo {
        /// The LoCoMo JSON file (e.g. ../shared/data/locomo10.json); read, never copied.
        #[arg(long)]
        data: PathBuf,
        /// Also write the full report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Embedder: local (the real model) or hash (fast, for iterating).
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Skip the first N conversations (the held-out split: --skip 5; tune on --conversations 5).
        #[arg(long, default_value_t = 0)]
        skip: usize,
        /// Only the first N conversations (after the skipped ones).
        #[arg(long)]
        conversations: Option<usize>,
        /// Only the first N questions of each conversation.
        #[arg(long)]
        questions: Option<usize>,
        /// Token budgets for context() (repeatable).
        #[arg(long = "budget", default_values_t = [250usize, 500, 1000, 2000])]
        budgets: Vec<usize>,
        /// k for recall@k (repeatable; the largest is what recall() is asked for).
        #[arg(long = "k", default_values_t = [5usize, 10, 25, 50])]
        ks: Vec<usize>,
        /// Ingest turns without the speaker's name in front.
        #[arg(long)]
        no_speaker_prefix: bool,
        /// Ingest turns without the captions of shared photos.
        #[arg(long)]
        no_captions: bool,
        /// Ingest speaker A (the file's speaker_a) as the user and speaker B as the assistant
        /// (`user`), or the reverse (`assistant`), with no names in front; by default every turn
        /// is the user's, named.
        #[arg(long, value_name = "ROLE")]
        speaker_as: Option<SpeakerAs>,
        /// Keep every question's outcome in the JSON.
        #[arg(long)]
        per_question: bool,
        /// Write every question's blocks at every budget (mnemo's and the best baseline's, with
        /// the question, answer, evidence and metrics) to FILE, one JSON object a line.
        #[arg(long, value_name = "FILE")]
        dump_blocks: Option<PathBuf>,
        /// Keep each conversation's ingested store in DIR and reuse it on later runs with the same
        /// ingestion settings (for trying read-path changes; empty DIR after changing ingestion).
        #[arg(long, value_name = "DIR")]
        stores: Option<std::path::PathBuf>,
        /// Time each call's own wall time with its question embedded inside the call, beside
        /// the store's reads, as in an application (the engine's cache of recent texts answers
        /// the question's later budgets, so the first budget's figure is the end-to-end one);
        /// by default one embedding per question is added to every call's time.
        #[arg(long)]
        embed_each_call: bool,
    },
    /// Research persistence: N documents stored one `store_document` call at a time, then
    /// `search_documents`, `similar_documents` and the store's nearest-neighbour read timed in
    /// one agent's scope. Opens the configured store (MNEMO_DATABASE_URL for PostgreSQL).
    Documents {
        /// Documents to store.
        #[arg(long, default_value_t = 10_000)]
        documents: usize,
        /// Documents stored end to end through `store_document` (the model embeds each); the
        /// rest reuse their vectors with noise, inserted straight into the store.
        #[arg(long, default_value_t = 500)]
        embedded: usize,
        /// Timed queries of each kind.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Embedder for documents and queries: local (the real model) or hash.
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/documents.json")]
        out: PathBuf,
    },
    /// Behavioural learning: N observations of one agent over S sessions through `observe`, each
    /// timed, then `maintain` (skill mining) timed once and once more (which must propose
    /// nothing). Opens the configured store (MNEMO_DATABASE_URL for PostgreSQL).
    Skills {
        /// Observations to record.
        #[arg(long, default_value_t = 1_000)]
        observations: usize,
        /// Sessions (chats) they are spread over, round robin, among five users.
        #[arg(long, default_value_t = 50)]
        sessions: usize,
        /// Share of observations repeating one of six recurring patterns (the rest are one-off).
        #[arg(long, default_value_t = 0.3)]
        patterned: f64,
        /// Embedder: local (the real model) or hash.
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/skills.json")]
        out: PathBuf,
    },
    /// Context-window management: after each of N segments of a coding session, the agent's
    /// usage report (`session_usage` over held memories and the segment's messages) and the
    /// rotation (`rotate_session`: extraction drained, bundle within budget) timed. Opens the
    /// configured store (MNEMO_DATABASE_URL for PostgreSQL).
    Sessions {
        /// Memories of the user before the session starts.
        #[arg(long, default_value_t = 500)]
        memories: usize,
        /// Segments, each ended by a rotation.
        #[arg(long, default_value_t = 50)]
        segments: usize,
        /// Messages per segment.
        #[arg(long, default_value_t = 20)]
        messages: usize,
        /// Memories the agent reports holding.
        #[arg(long, default_value_t = 50)]
        held: usize,
        /// Token budget of each bundle.
        #[arg(long, default_value_t = 2_000)]
        budget: usize,
        /// Embedder: hash (the default: what is measured is the engine, not a model) or local.
        #[arg(long, default_value = "hash")]
        embedder: EmbedderKind,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/sessions.json")]
        out: PathBuf,
    },
    /// `mnemo maintain` over a synthetic store (many users, a realistic share of due
    /// transitions and near-duplicates): wall time, memories per second and peak RSS of one run,
    /// then a second run that must change nothing.
    Maintain {
        /// Memories in the store.
        #[arg(long, default_value_t = 100_000)]
        memories: usize,
        /// Users they are spread over (one in a hundred holds 800, over the per-user cap).
        #[arg(long, default_value_t = 1_000)]
        users: usize,
        /// Distinct sentences; a sentence drawn twice for one user is a near-duplicate.
        #[arg(long, default_value_t = 3_000)]
        pool: usize,
        /// Rows per `Store::apply` batch while loading.
        #[arg(long, default_value_t = 5_000)]
        batch: usize,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/maintain.json")]
        out: PathBuf,
    },
    /// Bounded load on a real `mnemo serve` over loopback: a mix of ingest, recall and context
    /// from N concurrent HTTP clients for a fixed time per concurrency; throughput, p50/p95/p99,
    /// errors and the server's peak RSS per level. Starts the server (this binary, a temporary
    /// data dir, a fresh key) unless --url is given. Exits 1 when any request failed.
    Serve {
        /// Concurrent clients (repeatable: --concurrency 1 --concurrency 8 --concurrency 32).
        #[arg(long, default_values_t = [1usize, 8, 32])]
        concurrency: Vec<usize>,
        /// Seconds of load per concurrency.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Relative weight of ingest (one message to POST /v1/messages).
        #[arg(long, default_value_t = 20)]
        ingest: u32,
        /// Relative weight of POST /v1/recall.
        #[arg(long, default_value_t = 40)]
        recall: u32,
        /// Relative weight of POST /v1/context.
        #[arg(long, default_value_t = 40)]
        context: u32,
        /// Users seeded before the load; every request picks one.
        #[arg(long, default_value_t = 20)]
        users: usize,
        /// Messages seeded per user.
        #[arg(long, default_value_t = 20)]
        seed_messages: usize,
        /// Embedder of the started server: local (the real model, what users run) or hash.
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Async worker threads of the started server (`mnemo serve --workers`).
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Seconds a client waits for one answer before counting it an error.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
        /// Load a running server instead of starting one (e.g. http://127.0.0.1:8080).
        #[arg(long)]
        url: Option<String>,
        /// The tenant key for --url.
        #[arg(long, env = "MNEMO_API_KEY", hide_env_values = true)]
        key: Option<String>,
        /// Ingest LoCoMo's turns (this file, e.g. ../shared/data/locomo10.json) in order, each to
        /// its conversation's user and session, instead of synthetic messages: the texts
        /// `mnemo bench embed --data` and `bench ingest --data` embed, so the three compare.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Where to write the JSON results.
        #[arg(long, default_value = "bench-results/serve.json")]
        out: PathBuf,
    },
    /// What extraction keeps, judged against LoCoMo's own annotations: observation and event
    /// recall (cosine >= 0.6 with all-MiniLM-L6-v2, provenance in the annotated turns), event
    /// dates, precision, memories per 100 turns and time per message. With --latency-only, the
    /// heuristic extractor's time per message alone, over any LoCoMo-format file or a synthetic
    /// corpus.
    Extract {
        /// LoCoMo-format JSON (e.g. ../shared/data/locomo10.json); required unless
        /// --latency-only, where synthetic messages stand in when it is absent.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Also write the full report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Extractor to measure (default: the configured one).
        #[arg(long)]
        extractor: Option<ExtractorKind>,
        /// Embedder for the engine and the match: local (the contract) or hash (smoke runs).
        #[arg(long, default_value = "local")]
        embedder: EmbedderKind,
        /// Skip the first N conversations (a held-out split: --skip 5).
        #[arg(long, default_value_t = 0)]
        skip: usize,
        /// Then only N conversations.
        #[arg(long)]
        conversations: Option<usize>,
        /// Ingest speaker A as the user and B as the assistant (`user`), or the reverse
        /// (`assistant`), unnamed, as `bench locomo --speaker-as` does; extraction is then judged
        /// against the user-speaker's annotations only.
        #[arg(long, value_name = "ROLE")]
        speaker_as: Option<SpeakerAs>,
        /// Unmatched memories and missed observations listed in the JSON, for a person to judge.
        #[arg(long, default_value_t = 20)]
        list: usize,
        /// Only time the heuristic extractor per message (the earlier form of this benchmark).
        #[arg(long)]
        latency_only: bool,
        /// Timed passes over the corpus (--latency-only).
        #[arg(long, default_value_t = 3)]
        passes: usize,
        /// Where to write the latency results (--latency-only).
        #[arg(long, default_value = "bench-results/extract.json")]
        out: PathBuf,
    },
}

pub(crate) fn run(which: &BenchCommand, config: Config) -> Result<()> {
    match which {
        BenchCommand::Recall {
            memories,
            total,
            users,
            queries,
            embedder,
            pool,
            batch,
            reuse,
            store,
            write_every,
            out,
        } => recall::run(
            config,
            &recall::Plan {
                sizes: memories.clone(),
                total: *total,
                users: *users,
                pool: *pool,
                batch: *batch,
                reuse: reuse.clone(),
                store: store.clone(),
                write_every: *write_every,
            },
            *queries,
            *embedder,
            out,
        ),
        BenchCommand::Add { memories, block, embedder, out } => add::run(config, *memories, *block, *embedder, out),
        BenchCommand::Embed { data, messages, batch, embedder, out } => {
            embed::run(&config, data.as_deref(), *messages, batch, embedder, out)
        }
        BenchCommand::Ingest { data, messages, batch, embedder, out } => {
            ingest::run(&config, data.as_deref(), *messages, batch, embedder, out)
        }
        BenchCommand::Locomo {
            data,
            json,
            embedder,
            skip,
            conversations,
            questions,
            budgets,
            ks,
            no_speaker_prefix,
            no_captions,
            speaker_as,
            per_question,
            dump_blocks,
            stores,
            embed_each_call,
        } => {
            let options = mnemo_eval::locomo::LocomoOptions {
                budgets: budgets.clone(),
                ks: ks.clone(),
                skip: *skip,
                conversations: *conversations,
                questions: *questions,
                rendering: mnemo_eval::locomo::TurnRendering {
                    speaker_prefix: !no_speaker_prefix,
                    captions: !no_captions,
                    speakers: SpeakerAs::speakers(*speaker_as),
                },
                per_question: *per_question,
                keep_blocks: dump_blocks.is_some(),
                stores: stores.clone(),
                embed_each_call: *embed_each_call,
            };
            locomo::run(config, data, json.as_deref(), dump_blocks.as_deref(), *embedder, &options)
        }
        BenchCommand::Extract { data, latency_only: true, passes, out, .. } => {
            extract::latency(data.as_deref(), *passes, out)
        }
        BenchCommand::Extract { data, json, extractor, embedder, skip, conversations, speaker_as, list, .. } => {
            let data =
                data.as_deref().context("--data FILE is required (a LoCoMo-format file), or use --latency-only")?;
            let options = mnemo_eval::locomo::ExtractionOptions {
                skip: *skip,
                conversations: *conversations,
                listed: *list,
                rendering: mnemo_eval::locomo::TurnRendering {
                    speakers: SpeakerAs::speakers(*speaker_as),
                    ..Default::default()
                },
            };
            extract::recall(config, data, json.as_deref(), *extractor, *embedder, &options)
        }
        BenchCommand::Documents { documents, embedded, queries, embedder, out } => {
            documents::run(config, *documents, *embedded, *queries, *embedder, out)
        }
        BenchCommand::Skills { observations, sessions, patterned, embedder, out } => {
            skills::run(config, *observations, *sessions, *patterned, *embedder, out)
        }
        BenchCommand::Sessions { memories, segments, messages, held, budget, embedder, out } => sessions::run(
            config,
            &sessions::Plan {
                memories: *memories,
                segments: *segments,
                messages: *messages,
                held: *held,
                budget: *budget,
            },
            *embedder,
            out,
        ),
        BenchCommand::Serve {
            concurrency,
            seconds,
            ingest,
            recall,
            context,
            users,
            seed_messages,
            embedder,
            workers,
            timeout,
            url,
            key,
            data,
            out,
        } => serve::run(
            config,
            &serve::Plan {
                url: url.clone(),
                key: key.clone(),
                concurrency: concurrency.clone(),
                seconds: *seconds,
                weights: [*ingest, *recall, *context],
                users: *users,
                seed_messages: *seed_messages,
                embedder: *embedder,
                workers: *workers,
                timeout: std::time::Duration::from_secs((*timeout).max(1)),
                corpus: data.as_deref().map(ingest::turns).transpose()?,
            },
            out,
        ),
        BenchCommand::Maintain { memories, users, pool, batch, out } => maintain::run(
            config,
            &maintain::Plan { memories: *memories, users: *users, pool: *pool, batch: *batch },
            out,
        ),
    }
}

/// Latency distribution in milliseconds (nearest-rank percentiles).
#[derive(Debug, Serialize)]
struct Dist {
    p50: f64,
    p95: f64,
    p99: f64,
    mean: f64,
    max: f64,
}

fn dist(v: &[f64]) -> Dist {
    let s = mnemo_eval::locomo::Summary::of(v);
    Dist { p50: s.p50, p95: s.p95, p99: s.p99, mean: s.mean, max: s.max }
}

/// A field of `/proc/<pid>/status` in MiB (Linux), e.g. "VmHWM" (peak) or "VmRSS" (now), for
/// `pid` a process id or "self".
fn proc_status_mib(pid: &str, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Resets the kernel's peak-RSS mark of `pid` (or "self") to its current RSS, so VmHWM read
/// afterwards is the peak since this call (Linux 4.0+; elsewhere the process peak is reported).
fn reset_peak_rss(pid: &str) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// Where a number was measured: results from a different machine are not comparable.
#[derive(Debug, Serialize)]
struct Machine {
    cpus: usize,
    os: &'static str,
    arch: &'static str,
    profile: &'static str,
    /// 1, 5 and 15 minute load averages when the results were written (Linux): on a shared
    /// machine, other work competes for the same cores and inflates latencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    load_average: Option<[f64; 3]>,
}

fn machine() -> Machine {
    let load_average = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
        let v: Vec<f64> = s.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
        <[f64; 3]>::try_from(v).ok()
    });
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        profile: if cfg!(debug_assertions) { "debug" } else { "release" },
        load_average,
    }
}

/// The command line, recorded beside its results so they can be reproduced. The program is
/// named `mnemo`, not by the path it ran from: a result file names no machine's directories.
fn command() -> String {
    std::iter::once("mnemo".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ")
}

fn write_report(out: &Path, report: &impl Serialize) -> Result<()> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(out, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("writing {}", out.display()))?;
    println!("results written to {}", out.display());
    Ok(())
}

/// Opens the embedder a benchmark asked for, saying how to get the local model if it is missing.
fn embedder(config: &mut Config, kind: EmbedderKind) -> Result<std::sync::Arc<dyn mnemo::models::Embedder>> {
    config.embedder.kind = kind;
    mnemo::models::open_embedder(&config.embedder).with_context(|| {
        format!("opening the {kind} embedder (for the local model run `mnemo model fetch` or pass --embedder hash)")
    })
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
    /// Uniform in [-1, 1).
    fn signed_unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
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

/// A memory-like sentence about the user's world.
fn sentence(rng: &mut Rng) -> String {
    format!("User's {} {} {} {}", rng.pick(SUBJECTS), rng.pick(VERBS), rng.pick(THINGS), rng.pick(WHEN))
}

/// A synthetic chat corpus: plans, corrections, preferences, filler and plain statements.
fn synthetic_messages(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    (0..n)
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
        .collect()
}
