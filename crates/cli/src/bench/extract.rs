//! `mnemo bench extract`: heuristic extraction latency per message, one message per call.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use mnemo::core::extract::{Extractor, HeuristicExtractor};
use mnemo::core::{Message, MessageId, Role, Scope};
use serde::Serialize;

use super::{Dist, Machine, command, dist, machine, synthetic_messages, write_report};

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

pub(super) fn run(data: Option<&Path>, passes: usize, out: &Path) -> Result<()> {
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
