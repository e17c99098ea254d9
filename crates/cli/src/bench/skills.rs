//! `mnemo bench skills`: behavioural learning at scale, in one agent. N observations spread over
//! S sessions (and a few users) go through `Memory::observe` one call each (limits, redaction,
//! embedding, insert: each timed); a share repeat one of a few patterns (a tool, a kind of file,
//! an outcome, a note), the rest are one-off actions. Then `maintain` runs once, timed (the skill
//! mining clusters every observation of the window), and once more, which must propose nothing.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use chrono::Utc;
use mnemo::core::Outcome;
use mnemo::models::EmbedderKind;
use mnemo::{Config, Memory, Scope, SystemClock};
use serde::Serialize;

use super::{Dist, Machine, Rng, command, dist, embedder, machine, write_report};

/// Recurring patterns: tool, what it is applied to (a file name is appended), outcome, note.
const PATTERNS: &[(&str, &str, Outcome, &str)] = &[
    ("edit_file", "SwiftUI view", Outcome::Failure, "Check accessibility modifiers on every SwiftUI view."),
    ("write_file", "Go handler indentation", Outcome::Corrected, "Indent Go code with tabs, as gofmt does."),
    ("run_tests", "cargo nextest workspace", Outcome::Failure, "Start the PostgreSQL test server first."),
    ("edit_file", "SQL migration schema", Outcome::Corrected, "Never edit a shipped migration; add a new one."),
    ("run_command", "npm install lockfile", Outcome::Success, "Use npm ci in CI so the lockfile is respected."),
    ("edit_file", "React component props", Outcome::Corrected, "Type every prop; no implicit any."),
];
const ONE_OFF_TOOLS: &[&str] = &["read_file", "grep", "list_dir", "web_search", "open_url", "git_diff"];
const ONE_OFF_TOPICS: &[&str] = &[
    "release notes draft",
    "docker compose ports",
    "terraform state",
    "kafka consumer lag",
    "redis eviction",
    "oauth callback",
    "css grid layout",
    "python asyncio timeout",
];

#[derive(Debug, Serialize)]
struct SkillsBench {
    benchmark: &'static str,
    machine: Machine,
    command: String,
    backend: &'static str,
    embedder: String,
    observations: usize,
    sessions: usize,
    /// Share of observations that repeat one of the recurring patterns.
    patterned_share: f64,
    /// `Memory::observe` per call: limits, redaction, embedding, insert (ms).
    observe_ms: Dist,
    /// The first `maintain` after the observations (skill mining included), wall time (ms).
    maintain_ms: f64,
    /// Skill candidates it proposed, corrections first.
    candidates: Vec<String>,
    /// A second `maintain`: must propose nothing (ms).
    rerun_ms: f64,
    rerun_candidates: usize,
}

/// Runs the benchmark and writes its JSON to `out`.
pub(super) fn run(
    mut config: Config,
    observations: usize,
    sessions: usize,
    patterned: f64,
    kind: EmbedderKind,
    out: &Path,
) -> Result<()> {
    ensure!(observations > 0 && sessions > 0, "--observations and --sessions must be at least 1");
    ensure!((0.0..=1.0).contains(&patterned), "--patterned must be in 0..=1");
    let embedder = embedder(&mut config, kind)?;
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    let tmp = tempfile::tempdir()?;
    if !postgres {
        config.data_dir = tmp.path().to_path_buf();
    }
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    let memory = Memory::from_parts(config, store, Some(embedder.clone()), std::sync::Arc::new(SystemClock));
    // A shared database keeps earlier runs: a tenant of its own keeps this run's rows apart.
    let tenant = if postgres { format!("bench-skills-{}", Utc::now().timestamp()) } else { "bench".into() };

    let mut rng = Rng(0x5111_7E57);
    let mut observe_ms = Vec::with_capacity(observations);
    for i in 0..observations {
        let session = i % sessions;
        let user = format!("user{}", session % 5);
        let scope = Scope::parse(&tenant, Some("coder"), Some(&user), Some(&format!("s{session}")))?;
        let file = format!("File{}.src", rng.next() % 1000);
        let (tool, args, outcome, note) = if (rng.next() % 1000) as f64 / 1000.0 < patterned {
            let (tool, what, outcome, note) = PATTERNS[(rng.next() % PATTERNS.len() as u64) as usize];
            (tool.to_string(), format!("{what} {file}"), outcome, Some(note.to_string()))
        } else {
            let topic = rng.pick(ONE_OFF_TOPICS);
            (rng.pick(ONE_OFF_TOOLS).to_string(), format!("{topic} {file}"), Outcome::Success, None)
        };
        let t = Instant::now();
        let stored = memory.observe(&scope, &tool, &args, outcome, note.as_deref())?;
        observe_ms.push(t.elapsed().as_secs_f64() * 1e3);
        ensure!(stored.degraded.is_none(), "observation {i} stored without a vector: {:?}", stored.degraded);
    }
    let t = Instant::now();
    let first = memory.maintain()?;
    let maintain_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let second = memory.maintain()?;
    let rerun_ms = t.elapsed().as_secs_f64() * 1e3;

    let report = SkillsBench {
        benchmark: "skills",
        machine: machine(),
        command: command(),
        backend: if postgres { "postgres" } else { "sqlite" },
        embedder: embedder.id().to_string(),
        observations,
        sessions,
        patterned_share: patterned,
        observe_ms: dist(&observe_ms),
        maintain_ms,
        candidates: first
            .consolidation
            .skills
            .iter()
            .map(|s| format!("{} ({} sessions, {})", s.rule, s.sessions, s.outcome))
            .collect(),
        rerun_ms,
        rerun_candidates: second.consolidation.skills.len(),
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    write_report(out, &report)
}
