//! Measures how long the local model takes to embed one short query, the latency a user
//! feels on every recall. Run: `cargo run --release -p mnemo-models --example latency [DIR]`.
//! On Linux it also prints CPU time per query, which stays meaningful on a busy machine
//! where wall-clock numbers are inflated by other processes.

use std::time::{Duration, Instant};

use mnemo_models::{Embedder, LocalEmbedder, default_model_dir};

const RUNS: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).map_or_else(default_model_dir, Into::into);
    let started = Instant::now();
    let model = LocalEmbedder::open(&dir)?;
    println!("load: {:?}", started.elapsed());

    let query = "what is my dog's name?";
    for _ in 0..20 {
        model.embed(&[query])?;
    }
    let cpu_before = cpu_time();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            model.embed(&[query]).map(|_| t.elapsed())
        })
        .collect::<Result<_, _>>()?;
    let cpu_after = cpu_time();
    times.sort();
    let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
    println!("single short query over {RUNS} runs: p50 {:?}  p95 {:?}  max {:?}", pct(50), pct(95), pct(100));
    if let (Some(a), Some(b)) = (cpu_before, cpu_after) {
        println!("CPU time per query (all threads): {:?}", (b - a) / RUNS as u32);
    }

    // A query with and without a word most of the user's messages share (the engine's blend).
    for (label, texts) in [
        ("one query", vec!["What does Melanie do to destress?"]),
        ("the query and its blend, one call", vec!["What does Melanie do to destress?", "What does do to destress?"]),
    ] {
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                model.embed(&texts).map(|_| t.elapsed())
            })
            .collect::<Result<_, _>>()?;
        times.sort();
        let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
        println!("{label}: p50 {:?}  p95 {:?}", pct(50), pct(95));
    }

    let batch: Vec<String> = (0..64).map(|i| format!("memory number {i} about a puppy named Biscuit")).collect();
    let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
    let t = Instant::now();
    model.embed(&refs)?;
    println!("batch of 64 short texts: {:?}", t.elapsed());
    Ok(())
}

/// User + system CPU time of this process, from /proc (clock ticks assumed to be 100 Hz).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
