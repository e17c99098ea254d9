//! `mnemo bench extract`: what extraction keeps against LoCoMo's annotations (the harness is in
//! `mnemo-eval`), and the heuristic extractor's latency per message alone (`--latency-only`).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use mnemo::core::extract::{Extractor, HeuristicExtractor};
use mnemo::core::{Message, MessageId, Role, Scope};
use mnemo::models::EmbedderKind;
use mnemo::{Config, ExtractorKind};
use mnemo_eval::locomo::{Dataset, ExtractionOptions, run_extraction};
use serde::Serialize;

use super::{Dist, Machine, command, dist, embedder, machine, synthetic_messages, write_report};

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

pub(super) fn latency(data: Option<&Path>, passes: usize, out: &Path) -> Result<()> {
    let (corpus, lines) = match data {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
            let mut out = Vec::new();
            texts(&v, &mut out);
            (path.display().to_string(), out)
        }
        None => ("synthetic".to_string(), synthetic_messages(5000, 42)),
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
        per_message_ms: dist(&ms),
        machine: machine(),
        command: command(),
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

/// Runs the annotation-based measure and prints its headline figures.
pub(super) fn recall(
    mut config: Config,
    data: &Path,
    json: Option<&Path>,
    extractor: Option<ExtractorKind>,
    kind: EmbedderKind,
    options: &ExtractionOptions,
) -> Result<()> {
    if let Some(x) = extractor {
        config.extractor = x;
    }
    let dataset = Dataset::load(data)?;
    let embedder = embedder(&mut config, kind)?;
    eprintln!("extraction against LoCoMo's annotations: {}, embedder {}", data.display(), embedder.id());
    let r = run_extraction(&dataset, &config, &embedder, options, &mut |line| eprintln!("  {line}"))
        .context("running the extraction benchmark")?;
    println!(
        "observation_recall {:.3} ({}/{}) · event_recall {:.3} ({}/{}) · event_date_accuracy {:.3} ({}/{})",
        r.observation_recall,
        r.observations.hits,
        r.observations.of,
        r.event_recall,
        r.events.hits,
        r.events.of,
        r.event_date_accuracy,
        r.event_dates.hits,
        r.event_dates.of
    );
    println!(
        "precision {:.3} ({}/{}) · memories_per_100_turns {:.1} · extraction p50 {:.3} ms p95 {:.3} ms per message",
        r.precision,
        r.memories.hits,
        r.memories.of,
        r.memories_per_100_turns,
        r.extraction_ms_per_message.p50,
        r.extraction_ms_per_message.p95
    );
    if let Some(out) = json {
        let mut v = serde_json::to_value(&r)?;
        v["machine"] = serde_json::to_value(machine())?;
        v["command"] = serde_json::Value::String(command());
        write_report(out, &v)?;
    }
    Ok(())
}
