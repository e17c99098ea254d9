//! `mnemo bench add`: memories added one by one to one user through `Memory::add`, the path of
//! `POST /v1/memories` (embedding, the gate's hash, key and nearest-neighbour lookups, apply),
//! timed per block of adds so that a cost growing with the user's size shows as a slope.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::{Draft, Kind, Scope, StatusKind};
use mnemo::models::EmbedderKind;
use mnemo::store::ListFilter;
use mnemo::{Config, ManualClock, Memory};
use serde::Serialize;

use super::{Dist, Machine, SUBJECTS, THINGS, VERBS, WHEN, command, dist, embedder, machine, write_report};

#[derive(Debug, Serialize)]
struct Block {
    /// Adds before this block (the user's size when it started, give or take deduplicated ones).
    from: usize,
    adds: usize,
    seconds: f64,
    adds_per_second: f64,
    per_add_ms: Dist,
}

#[derive(Debug, Serialize)]
struct AddReport {
    benchmark: &'static str,
    embedder: String,
    backend: &'static str,
    machine: Machine,
    command: String,
    memories: usize,
    seconds: f64,
    adds_per_second: f64,
    /// Mean time per add of the last block over the first: 1.0 is flat.
    last_block_over_first: f64,
    blocks: Vec<Block>,
    /// What the gate made of the adds (written, deduplicated, ...).
    verdicts: BTreeMap<String, usize>,
    active_memories_after: usize,
}

/// The `i`-th of the distinct template sentences: a mixed-radix walk over the templates'
/// combinations in a scattered order, so neighbours in time share few words, with a counter
/// once every combination was used.
pub(super) fn distinct_sentence(i: usize) -> String {
    let n = SUBJECTS.len() * VERBS.len() * THINGS.len() * WHEN.len();
    // 7919 is prime and divides none of the template sizes, so this permutes 0..n.
    let mut k = (i % n) * 7919 % n;
    let mut pick = |xs: &[&'static str]| {
        let x = xs[k % xs.len()];
        k /= xs.len();
        x
    };
    let (s, v, t, w) = (pick(SUBJECTS), pick(VERBS), pick(THINGS), pick(WHEN));
    match i / n {
        0 => format!("User's {s} {v} {t} {w}"),
        round => format!("User's {s} {v} {t} {w}, round {round}"),
    }
}

pub(super) fn run(mut config: Config, memories: usize, block: usize, kind: EmbedderKind, out: &Path) -> Result<()> {
    ensure!(memories > 0 && block > 0, "--memories and --block must be at least 1");
    let embedder = embedder(&mut config, kind)?;
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    let tmp = tempfile::tempdir()?;
    if !postgres {
        config.data_dir = tmp.path().to_path_buf();
    }
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    // A shared database keeps earlier runs: a tenant of its own keeps this run's rows apart.
    let tenant = if postgres { format!("bench-add-{}", Utc::now().timestamp()) } else { "bench".to_string() };
    let user = Scope::parse(&tenant, None, Some("adder"), Some("bench-chat"))?;
    let start: DateTime<Utc> = "2026-06-01T12:00:00Z".parse()?;
    let clock = Arc::new(ManualClock::new(start));
    let memory = Memory::from_parts(config, store, Some(embedder.clone()), clock.clone());

    let kinds = [Kind::Fact, Kind::Event];
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    let mut blocks = Vec::new();
    let mut ms = Vec::with_capacity(block);
    let mut block_started = Instant::now();
    let started = Instant::now();
    for i in 0..memories {
        clock.set(start + Duration::seconds(i as i64));
        let draft = Draft::new(kinds[i % kinds.len()], distinct_sentence(i), 0.9, 0.7);
        let t = Instant::now();
        let verdict = memory.add(&user, draft)?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        *verdicts.entry(verdict.name().to_string()).or_default() += 1;
        if ms.len() == block || i + 1 == memories {
            let seconds = block_started.elapsed().as_secs_f64();
            let b = Block {
                from: i + 1 - ms.len(),
                adds: ms.len(),
                seconds,
                adds_per_second: ms.len() as f64 / seconds.max(1e-9),
                per_add_ms: dist(&ms),
            };
            eprintln!(
                "  adds {:>6}..{:<6} {:>7.0} adds/s (per add p50 {:.2} ms, p95 {:.2} ms)",
                b.from,
                b.from + b.adds,
                b.adds_per_second,
                b.per_add_ms.p50,
                b.per_add_ms.p95
            );
            blocks.push(b);
            ms.clear();
            block_started = Instant::now();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let mean = |b: &Block| b.seconds / b.adds.max(1) as f64;
    let last_block_over_first = match (blocks.first(), blocks.last()) {
        (Some(f), Some(l)) => mean(l) / mean(f).max(1e-12),
        _ => 1.0,
    };
    let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    let active_memories_after = memory.list(&user.without_chat(), &active)?.len();
    let report = AddReport {
        benchmark: "add",
        embedder: embedder.id().to_string(),
        backend: if postgres { "postgres" } else { "sqlite" },
        machine: machine(),
        command: command(),
        memories,
        seconds,
        adds_per_second: memories as f64 / seconds.max(1e-9),
        last_block_over_first,
        blocks,
        verdicts,
        active_memories_after,
    };
    println!(
        "{memories} adds to one user in {seconds:.1} s = {:.0} adds/s; last block / first block (time per add) {:.2}; \
         {active_memories_after} active memories; verdicts {:?}",
        report.adds_per_second, last_block_over_first, report.verdicts
    );
    write_report(out, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_distinct_across_rounds() {
        let n = SUBJECTS.len() * VERBS.len() * THINGS.len() * WHEN.len();
        let mut seen = std::collections::HashSet::new();
        for i in (0..n + 50).chain([3 * n + 1]) {
            assert!(seen.insert(distinct_sentence(i)), "sentence {i} repeats");
        }
    }
}
