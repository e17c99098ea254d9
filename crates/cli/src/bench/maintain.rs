//! `mnemo bench maintain`: one `maintain` run (lifecycle, cap, consolidation, retention) over a
//! store of N synthetic memories spread over many users, timed, with the peak resident memory of
//! the run, then a second run that must change nothing (idempotence, and its cost).
//!
//! Rows are loaded through `Store::apply` in large batches, aged over the half year before the
//! run so a realistic share is due: ephemeral moods past their three days, events past thirty,
//! open loops overdue or silent, stale rows past their archive period, TTLs passed, some users
//! over the per-user cap, and repeated sentences that consolidation merges. Vectors come from the
//! hashing embedder over a pool of sentences (the job reads stored vectors; it embeds nothing).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::{ChatId, Kind, Memory as Row, MessageId, Provenance, Scope, Status};
use mnemo::models::{Embedder, HashEmbedder};
use mnemo::store::{Change, ChangeSet, Embedding, Store};
use mnemo::{Config, ManualClock, Memory};
use serde::Serialize;

use super::{Machine, Rng, command, machine, proc_status_mib, reset_peak_rss, sentence, write_report};

/// Memories of the one-in-a-hundred heavy users: beyond the default cap of 500 active.
const HEAVY: usize = 800;

/// The plan of a run.
#[derive(Debug)]
pub(super) struct Plan {
    /// Memories in the store.
    pub(super) memories: usize,
    /// Users they are spread over.
    pub(super) users: usize,
    /// Distinct sentences (repeats within a user are near-duplicates to merge).
    pub(super) pool: usize,
    /// Rows per `Store::apply` while loading.
    pub(super) batch: usize,
}

#[derive(Debug, Serialize)]
struct Run {
    seconds: f64,
    memories_per_second: f64,
    examined: usize,
    transitions: usize,
    merged: usize,
    knowledge: usize,
    changes: BTreeMap<String, usize>,
    /// Peak resident set of the process during this run (VmHWM after resetting it), MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_mib: Option<f64>,
}

#[derive(Debug, Serialize)]
struct MaintainBench {
    benchmark: &'static str,
    machine: Machine,
    command: String,
    backend: &'static str,
    memories: usize,
    users: usize,
    at: DateTime<Utc>,
    load_seconds: f64,
    /// Resident set before the run (store loaded, nothing else held), MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    rss_before_mib: Option<f64>,
    first_run: Run,
    /// The same `maintain` again at the same time: must change nothing.
    second_run: Run,
}

/// One synthetic row's shape: kind, status, creation, due date, expiry.
type Shape = (Kind, Status, DateTime<Utc>, Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// The kinds and ages of synthetic rows: what share of a real store falls due at once.
fn shape(rng: &mut Rng, now: DateTime<Utc>) -> Shape {
    let age = Duration::hours((rng.next() % (180 * 24)) as i64);
    let created = now - age;
    match rng.next() % 20 {
        0 | 1 => (Kind::Ephemeral, Status::Active, created, None, Some(created + Duration::days(3))),
        2..=4 => (Kind::Event, Status::Active, created, None, None),
        5 | 6 => {
            let due = (rng.next() % 2 == 0).then(|| created + Duration::days((rng.next() % 30) as i64));
            (Kind::OpenLoop, Status::Active, created, due, None)
        }
        7 => (Kind::Event, Status::Stale, created, None, None),
        8 | 9 => (Kind::Preference, Status::Active, created, None, None),
        10 | 11 => (Kind::Profile, Status::Active, created, None, None),
        12 => (Kind::Lore, Status::Active, created, None, None),
        13 => (Kind::Episode, Status::Active, created, None, None),
        _ => (Kind::Fact, Status::Active, created, None, None),
    }
}

fn load(store: &dyn Store, plan: &Plan, now: DateTime<Utc>) -> Result<usize> {
    let embedder = HashEmbedder::default();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let sentences: Vec<String> = (0..plan.pool).map(|_| sentence(&mut rng)).collect();
    let mut vectors = Vec::with_capacity(sentences.len());
    for chunk in sentences.chunks(512) {
        let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
        vectors.extend(embedder.embed(&texts).context("embedding the sentence pool")?);
    }
    let model = embedder.id().to_string();
    // One user in a hundred is heavy (HEAVY memories, over the per-user cap once the others'
    // share is taken); the rest share what is left evenly.
    let heavy: Vec<usize> = (0..plan.users).filter(|u| u % 100 == 50).collect();
    let heavy_total = heavy.len() * HEAVY;
    let light_users = plan.users - heavy.len();
    let use_heavy = light_users > 0 && heavy_total * 2 <= plan.memories;
    let (light_total, light_users) =
        if use_heavy { (plan.memories - heavy_total, light_users) } else { (plan.memories, plan.users) };
    let per_user = light_total / light_users;
    let mut extra = light_total % light_users;
    let mut rows = 0usize;
    let mut pending = Vec::with_capacity(plan.batch);
    for u in 0..plan.users {
        let owner = Scope::parse("bench", None, Some(&format!("user-{u}")), None)?;
        let n = if use_heavy && heavy.contains(&u) {
            HEAVY
        } else {
            let n = per_user + usize::from(extra > 0);
            extra = extra.saturating_sub(1);
            n
        };
        for i in 0..n {
            let (kind, status, created, due_at, expires_at) = shape(&mut rng, now);
            let j = (rng.next() % sentences.len() as u64) as usize;
            let chat = ChatId::new(format!("c{}", i % 7))?;
            let provenance = Provenance {
                sources: vec![MessageId::new(format!("m{u}-{i}"))?],
                chat: Some(chat),
                extractor: "bench".into(),
                extractor_version: "1".into(),
                rule: None,
            };
            let mut memory = Row::new(owner.clone(), kind, sentences[j].clone(), created);
            memory.status = status;
            memory.due_at = due_at;
            memory.expires_at = expires_at;
            memory.salience = 0.3 + (rng.next() % 70) as f32 / 100.0;
            memory.provenance = provenance;
            pending.push(Change::Insert {
                memory,
                embedding: Some(Embedding { model: model.clone(), vector: vectors[j].clone() }),
                reason: "bench".into(),
            });
            rows += 1;
            if pending.len() >= plan.batch {
                let changes = std::mem::replace(&mut pending, Vec::with_capacity(plan.batch));
                store.apply(&ChangeSet { tenant: owner.tenant.clone(), at: now, changes })?;
            }
        }
        if u % 1000 == 999 {
            eprintln!("  {rows} rows loaded");
        }
    }
    if !pending.is_empty() {
        store.apply(&ChangeSet { tenant: "bench".parse()?, at: now, changes: pending })?;
    }
    Ok(rows)
}

fn timed(memory: &Memory) -> Result<Run> {
    reset_peak_rss("self");
    let started = Instant::now();
    let report = memory.maintain()?;
    let seconds = started.elapsed().as_secs_f64();
    ensure!(report.skipped.is_none(), "maintenance was skipped: {:?}", report.skipped);
    Ok(Run {
        seconds,
        memories_per_second: report.examined as f64 / seconds.max(1e-9),
        examined: report.examined,
        transitions: report.transitions.len(),
        merged: report.consolidation.merged.len(),
        knowledge: report.consolidation.knowledge.len(),
        changes: report.summary(),
        peak_rss_mib: proc_status_mib("self", "VmHWM"),
    })
}

pub(super) fn run(mut config: Config, plan: &Plan, out: &Path) -> Result<()> {
    ensure!(plan.memories > 0 && plan.users > 0, "--memories and --users must be at least 1");
    ensure!(plan.users <= plan.memories, "--users {} exceeds --memories {}", plan.users, plan.memories);
    ensure!(plan.pool > 0 && plan.batch > 0, "--pool and --batch must be at least 1");
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    ensure!(!postgres, "bench maintain builds a scratch SQLite store; unset MNEMO_DATABASE_URL");
    let tmp = tempfile::tempdir()?;
    config.data_dir = tmp.path().to_path_buf();
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    let at: DateTime<Utc> = "2026-06-01T00:00:00Z".parse()?;

    let started = Instant::now();
    eprintln!("loading {} memories over {} users", plan.memories, plan.users);
    let rows = load(&*store, plan, at)?;
    let load_seconds = started.elapsed().as_secs_f64();
    eprintln!("loaded {rows} memories in {load_seconds:.1} s; running maintain");

    let memory = Memory::from_parts(config, store, None, Arc::new(ManualClock::new(at)));
    let rss_before_mib = proc_status_mib("self", "VmRSS");
    let first_run = timed(&memory)?;
    let second_run = timed(&memory)?;
    ensure!(
        second_run.transitions == 0 && second_run.merged == 0 && second_run.knowledge == 0,
        "a second run at the same time changed something: {:?}",
        second_run.changes
    );
    println!(
        "maintain over {rows} memories ({} users): {:.2} s ({:.0} memories/s), {} transitions, {} merged, {} knowledge, peak RSS {:.0} MiB; second run {:.2} s, no changes",
        plan.users,
        first_run.seconds,
        first_run.memories_per_second,
        first_run.transitions,
        first_run.merged,
        first_run.knowledge,
        first_run.peak_rss_mib.unwrap_or(f64::NAN),
        second_run.seconds,
    );
    for (what, n) in &first_run.changes {
        println!("  {what}: {n}");
    }
    let report = MaintainBench {
        benchmark: "maintain",
        machine: machine(),
        command: command(),
        backend: "sqlite",
        memories: rows,
        users: plan.users,
        at,
        load_seconds,
        rss_before_mib,
        first_run,
        second_run,
    };
    write_report(out, &report)
}
