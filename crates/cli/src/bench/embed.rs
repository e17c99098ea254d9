//! `mnemo bench embed`: what the embedding model alone does with the texts an ingest embeds
//! (each message and its passages), in batches of the same sizes, so `mnemo bench ingest`'s
//! messages per second can be stated as a share of the model's own speed.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, ensure};
use mnemo::Config;
use mnemo::core::passage;
use mnemo::models::EmbedderKind;
use serde::Serialize;

use super::ingest::corpus;
use super::{Dist, Machine, command, dist, embedder, machine, write_report};

#[derive(Debug, Serialize)]
struct EmbedRun {
    embedder: String,
    /// Messages per ingest call this run mirrors: the texts of that many messages per model call.
    batch: usize,
    messages: usize,
    texts: usize,
    calls: usize,
    seconds: f64,
    texts_per_second: f64,
    /// Messages whose texts the model embeds per second: the ceiling for ingest.
    messages_per_second: f64,
    per_call_ms: Dist,
}

#[derive(Debug, Serialize)]
struct EmbedReport {
    benchmark: &'static str,
    corpus: String,
    max_passages: usize,
    machine: Machine,
    command: String,
    runs: Vec<EmbedRun>,
}

pub(super) fn run(
    config: &Config,
    data: Option<&Path>,
    messages: usize,
    batches: &[usize],
    kinds: &[EmbedderKind],
    out: &Path,
) -> Result<()> {
    ensure!(!batches.is_empty() && !batches.contains(&0), "--batch must be at least 1");
    ensure!(!kinds.is_empty(), "give at least one --embedder");
    let (name, sessions) = corpus(data, messages)?;
    let max_passages = config.tuning().ranking.max_passages;
    // Per message, the texts an ingest embeds for it: its content, then its passages.
    let per_message: Vec<Vec<String>> = sessions
        .iter()
        .flat_map(|s| &s.messages)
        .map(|m| std::iter::once(m.content.clone()).chain(passage::passages(&m.content, max_passages)).collect())
        .collect();
    let texts: usize = per_message.iter().map(Vec::len).sum();
    let mut runs = Vec::new();
    for &kind in kinds {
        let mut config = config.clone();
        let model = embedder(&mut config, kind)?;
        for &batch in batches {
            let mut ms = Vec::new();
            let started = Instant::now();
            for group in per_message.chunks(batch) {
                let call: Vec<&str> = group.iter().flatten().map(String::as_str).collect();
                let t = Instant::now();
                model.embed(&call)?;
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let seconds = started.elapsed().as_secs_f64().max(1e-9);
            let run = EmbedRun {
                embedder: model.id().to_string(),
                batch,
                messages: per_message.len(),
                texts,
                calls: ms.len(),
                seconds,
                texts_per_second: texts as f64 / seconds,
                messages_per_second: per_message.len() as f64 / seconds,
                per_call_ms: dist(&ms),
            };
            println!(
                "{:<28} batch {:>4}: {} messages ({} texts) in {:.1} s = {:.0} messages/s, {:.0} texts/s (per call p50 {:.2} ms, p95 {:.2} ms)",
                run.embedder,
                batch,
                run.messages,
                texts,
                seconds,
                run.messages_per_second,
                run.texts_per_second,
                run.per_call_ms.p50,
                run.per_call_ms.p95
            );
            runs.push(run);
        }
    }
    let report =
        EmbedReport { benchmark: "embed", corpus: name, max_passages, machine: machine(), command: command(), runs };
    write_report(out, &report)
}
