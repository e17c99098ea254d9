//! `mnemo bench sessions`: context-window management timed end to end. One user holds M
//! memories; a coding session then runs R segments of S messages each, and after every segment
//! the agent reports its window (`Memory::session_usage` over H held memories and the segment's
//! messages) and rotates (`Memory::rotate_session`: extraction drained, the bundle built within
//! its budget, the rotation traced). What is reported: usage and rotation latency, the share of
//! the rotation spent draining extraction, and the bundle's size against its budget.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::detail::Detail;
use mnemo::core::{Draft, Kind, NewMessage, Scope, StatusKind};
use mnemo::models::EmbedderKind;
use mnemo::store::ListFilter;
use mnemo::{Config, HeldItem, HeldRef, ManualClock, Memory};
use serde::Serialize;

use super::add::distinct_sentence;
use super::{Dist, Machine, command, dist, embedder, machine, write_report};

/// What `mnemo bench sessions` measures.
pub(super) struct Plan {
    pub(super) memories: usize,
    pub(super) segments: usize,
    pub(super) messages: usize,
    pub(super) held: usize,
    pub(super) budget: usize,
}

#[derive(Debug, Serialize)]
struct SessionsReport {
    benchmark: &'static str,
    embedder: String,
    backend: &'static str,
    extractor: String,
    machine: Machine,
    command: String,
    memories: usize,
    segments: usize,
    messages_per_segment: usize,
    held_memories: usize,
    budget_tokens: usize,
    usage_ms: Dist,
    rotate_ms: Dist,
    /// Of each rotation, draining extraction (the chat's queue) before the bundle is built.
    rotate_extract_ms: Dist,
    bundle_tokens: Dist,
    /// Rotations whose bundle was over its budget (the contract is 0).
    over_budget: usize,
    /// Messages the rotations extracted themselves (0 with the heuristic extractor, which
    /// extracts at ingest).
    extracted_by_rotation: usize,
}

pub(super) fn run(mut config: Config, plan: &Plan, kind: EmbedderKind, out: &Path) -> Result<()> {
    ensure!(
        plan.segments > 0 && plan.messages > 0 && plan.budget > 0,
        "--segments, --messages and --budget must be >= 1"
    );
    let embedder = embedder(&mut config, kind)?;
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    let tmp = tempfile::tempdir()?;
    if !postgres {
        config.data_dir = tmp.path().to_path_buf();
    }
    let extractor = config.extractor.as_str().to_string();
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    let tenant = if postgres { format!("bench-sessions-{}", Utc::now().timestamp()) } else { "bench".to_string() };
    let session = Scope::parse(&tenant, Some("coder"), Some("dana"), Some("session"))?;
    let start: DateTime<Utc> = "2026-06-01T09:00:00Z".parse()?;
    let clock = Arc::new(ManualClock::new(start));
    let memory = Memory::from_parts(config, store, Some(embedder.clone()), clock.clone());

    eprintln!("adding {} memories ...", plan.memories);
    for i in 0..plan.memories {
        clock.set(start + Duration::seconds(i as i64));
        memory.add(&session.without_chat(), Draft::new(Kind::Fact, distinct_sentence(i), 0.9, 0.7))?;
    }
    let active = ListFilter { statuses: vec![StatusKind::Active], limit: plan.held, ..ListFilter::default() };
    let held_memories: Vec<HeldItem> = memory
        .list(&session.without_chat(), &active)?
        .into_iter()
        .map(|m| HeldItem { item: HeldRef::Memory(m.id), level: Detail::Full, tokens: None })
        .collect();

    let (mut usage_ms, mut rotate_ms, mut extract_ms, mut tokens) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut over_budget, mut extracted) = (0, 0);
    let mut at = start + Duration::days(1);
    for segment in 0..plan.segments {
        let said: Vec<NewMessage> = (0..plan.messages)
            .map(|i| {
                let n = plan.memories + segment * plan.messages + i;
                at += Duration::seconds(30);
                let text = format!("We decided that {}.", distinct_sentence(n).replace("User's", "our"));
                if i % 2 == 0 { NewMessage::user(text, at) } else { NewMessage::assistant(text, at) }
            })
            .collect();
        clock.set(at);
        memory.ingest(&session, said)?;
        let ids = memory.store().recent_messages(&session, plan.messages)?.into_iter().map(|m| m.id).collect();
        let mut items = held_memories.clone();
        items.push(HeldItem { item: HeldRef::Messages(ids), level: Detail::Full, tokens: None });

        let t = Instant::now();
        let advice = memory.session_usage(&session, 95_000, 100_000, &items)?;
        usage_ms.push(t.elapsed().as_secs_f64() * 1e3);
        ensure!(advice.rotate, "95 % of the window must advise a rotation");

        let t = Instant::now();
        let r = memory.rotate_session(&session, Some(plan.budget))?;
        rotate_ms.push(t.elapsed().as_secs_f64() * 1e3);
        extract_ms.push(r.extract_micros as f64 / 1e3);
        tokens.push(r.bundle.tokens as f64);
        over_budget += usize::from(r.bundle.tokens > plan.budget);
        extracted += r.extracted;
    }
    let report = SessionsReport {
        benchmark: "sessions",
        embedder: embedder.id().to_string(),
        backend: if postgres { "postgres" } else { "sqlite" },
        extractor,
        machine: machine(),
        command: command(),
        memories: plan.memories,
        segments: plan.segments,
        messages_per_segment: plan.messages,
        held_memories: held_memories.len(),
        budget_tokens: plan.budget,
        usage_ms: dist(&usage_ms),
        rotate_ms: dist(&rotate_ms),
        rotate_extract_ms: dist(&extract_ms),
        bundle_tokens: dist(&tokens),
        over_budget,
        extracted_by_rotation: extracted,
    };
    println!(
        "{} rotations of {}-message segments, {} memories, {} held: usage p50 {:.1} ms p95 {:.1} ms; rotate p50 {:.1} \
         ms p95 {:.1} ms (draining extraction p50 {:.2} ms); bundle p50 {:.0} tokens of {} ({} over budget)",
        plan.segments,
        plan.messages,
        plan.memories,
        report.held_memories,
        report.usage_ms.p50,
        report.usage_ms.p95,
        report.rotate_ms.p50,
        report.rotate_ms.p95,
        report.rotate_extract_ms.p50,
        report.bundle_tokens.p50,
        plan.budget,
        over_budget
    );
    write_report(out, &report)
}
