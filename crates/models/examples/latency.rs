//! Measures how long the local model takes to embed one short query, the latency a user
//! feels on every recall. Run: `cargo run --release -p mnemo-models --example latency`.

use std::time::{Duration, Instant};

use mnemo_models::{Embedder, LocalEmbedder, default_model_dir};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(default_model_dir, Into::into);
    let started = Instant::now();
    let model = LocalEmbedder::open(&dir)?;
    println!("load: {:?}", started.elapsed());

    let query = "what is my dog's name?";
    for _ in 0..20 {
        model.embed(&[query])?;
    }
    let mut times: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            model.embed(&[query]).map(|_| t.elapsed())
        })
        .collect::<Result<_, _>>()?;
    times.sort();
    let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
    println!(
        "single short query over {} runs: p50 {:?}  p95 {:?}  max {:?}",
        times.len(),
        pct(50),
        pct(95),
        pct(100)
    );

    let batch: Vec<String> = (0..64)
        .map(|i| format!("memory number {i} about a puppy named Biscuit"))
        .collect();
    let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
    let t = Instant::now();
    model.embed(&refs)?;
    println!("batch of 64 short texts: {:?}", t.elapsed());
    Ok(())
}
