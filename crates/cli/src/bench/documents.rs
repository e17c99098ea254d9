//! `mnemo bench documents`: research persistence at scale, in one agent's scope. The first
//! `--embedded` synthetic documents (research notes, Rust files) go through
//! `Memory::store_document` one call each, the real model embedding each; the rest of the N are
//! written straight to the store with one of those vectors plus a little deterministic noise
//! (embedding 10,000 overviews on two cores takes most of an hour), each insert timed. Then
//! `search_documents` and `similar_documents` are timed end to end (query embedding included),
//! and the store's nearest-neighbour read alone (query vector given).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use chrono::Utc;
use mnemo::core::DocumentKind;
use mnemo::models::EmbedderKind;
use mnemo::store::Embedding;
use mnemo::{Config, DocumentOwner, Memory, Scope, SystemClock};
use serde::Serialize;

use super::{Dist, Machine, Rng, command, dist, embedder, machine, write_report};

const TOPICS: &[&str] = &[
    "SQLite write-ahead logging",
    "PostgreSQL row-level security",
    "tokio task scheduling",
    "axum middleware ordering",
    "Kubernetes pod memory limits",
    "GitHub Actions dependency caching",
    "Python asyncio timeouts",
    "TypeScript strict null checks",
    "Go context cancellation",
    "Redis eviction policies",
    "gRPC deadline propagation",
    "OpenTelemetry trace sampling",
    "Terraform state locking",
    "Docker layer caching",
    "pgvector HNSW index tuning",
    "Rust trait object safety",
    "HTTP/2 flow control",
    "OAuth refresh token rotation",
    "S3 multipart uploads",
    "Kafka consumer rebalancing",
];
const ASPECTS: &[&str] = &[
    "failure modes",
    "configuration",
    "performance under load",
    "migration steps",
    "testing strategy",
    "security review",
    "observability",
    "version differences",
];
const CLAIMS: &[&str] = &[
    "the default is safe for a single writer but not for several processes",
    "the setting must be raised before the first deployment, not after",
    "the documentation recommends measuring with production-sized data first",
    "a restart is required for the change to take effect",
    "the behaviour changed in the last major release",
    "the cost grows linearly with the number of connections",
    "errors are retried three times with exponential backoff",
    "the feature is disabled on managed hosting by default",
];

/// One synthetic document: its kind, source and text, deterministic for `i`.
fn document(rng: &mut Rng, i: usize) -> (DocumentKind, String, String) {
    let topic = rng.pick(TOPICS);
    let aspect = rng.pick(ASPECTS);
    if i % 5 == 4 {
        let name = topic.split_whitespace().last().unwrap_or("item").to_lowercase().replace(['-', '/'], "_");
        let text = format!(
            "use std::collections::HashMap;\nuse serde::Deserialize;\n\n/// {topic}: {aspect}.\npub struct \
             {}Config {{\n    pub limit: usize,\n}}\n\npub fn apply_{name}_{i}(config: &{0}Config, input: &str) -> \
             Result<usize, Error> {{\n    Ok(input.len().min(config.limit))\n}}\n\nfn check_{name}(x: usize) -> bool \
             {{\n    x > 0\n}}\n",
            topic.split_whitespace().next().unwrap_or("Item"),
        );
        return (DocumentKind::File, format!("src/{name}_{i}.rs"), text);
    }
    let mut text = format!("# {topic}: {aspect}\n\n");
    for _ in 0..3 {
        let claims: Vec<String> = (0..4).map(|_| format!("For {topic}, {}.", rng.pick(CLAIMS))).collect();
        text.push_str(&claims.join(" "));
        text.push_str("\n\n");
    }
    let source = format!("https://docs.example.com/{}/{i}", topic.to_lowercase().replace(' ', "-"));
    (DocumentKind::Research, source, text)
}

#[derive(Debug, Serialize)]
struct DocumentsBench {
    benchmark: &'static str,
    machine: Machine,
    command: String,
    backend: &'static str,
    embedder: String,
    documents: usize,
    queries: usize,
    /// Documents stored through `store_document` (the rest were loaded with reused vectors).
    embedded: usize,
    /// `store_document` per call: limits, redaction, levels, embedding, insert (ms).
    store_ms: Dist,
    /// `Store::put_document` alone per call while the store grows to N (ms).
    insert_ms: Dist,
    /// `search_documents` (top 10) per call, query embedding included (ms).
    search_ms: Dist,
    /// `similar_documents` (default threshold) per call, query embedding included (ms).
    similar_ms: Dist,
    /// The store's nearest-neighbour read alone, query vector given (ms).
    nearest_store_only_ms: Dist,
    /// Share of `similar` probes (a topic and aspect stored before) that found a document.
    similar_found_share: f64,
}

/// Runs the benchmark and writes its JSON to `out`.
pub(super) fn run(
    mut config: Config,
    documents: usize,
    embedded: usize,
    queries: usize,
    kind: EmbedderKind,
    out: &Path,
) -> Result<()> {
    ensure!(documents > 0 && queries > 0, "--documents and --queries must be at least 1");
    ensure!((1..=documents).contains(&embedded), "--embedded must be 1 to --documents");
    let embedder = embedder(&mut config, kind)?;
    let postgres = config.database_url.as_deref().is_some_and(|u| !u.is_empty());
    let tmp = tempfile::tempdir()?;
    if !postgres {
        config.data_dir = tmp.path().to_path_buf();
    }
    let store = mnemo::open_store(&config).context("opening the benchmark store")?;
    let memory = Memory::from_parts(config, store.clone(), Some(embedder.clone()), std::sync::Arc::new(SystemClock));
    // A shared database keeps earlier runs: a tenant of its own keeps this run's rows apart.
    let tenant = if postgres { format!("bench-docs-{}", Utc::now().timestamp()) } else { "bench".into() };
    let scope = Scope::parse(&tenant, Some("coder"), Some("dana"), None)?;

    let mut rng = Rng(0x5EED_D0C5);
    let (mut store_ms, mut insert_ms, mut pool) = (Vec::new(), Vec::new(), Vec::new());
    let tuning = memory.config().documents.clone();
    for i in 0..documents {
        let (kind, source, text) = document(&mut rng, i);
        if i < embedded {
            let t = Instant::now();
            let stored = memory.store_document(&scope, DocumentOwner::Agent, kind, &source, &text)?;
            store_ms.push(t.elapsed().as_secs_f64() * 1e3);
            ensure!(stored.degraded.is_none(), "document {i} stored without a vector: {:?}", stored.degraded);
            pool.push(embedder.embed(&[&stored.document.embedding_text()])?.remove(0));
        } else {
            let doc = mnemo::core::Document::new(scope.clone(), kind, &source, &text, Utc::now(), &tuning)?;
            let mut v: Vec<f32> = pool[i % pool.len()].iter().map(|x| x + 0.02 * rng.signed_unit()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            let vector = Embedding { model: embedder.id().to_string(), vector: v };
            let t = Instant::now();
            store.put_document(&doc, Some(&vector))?;
            insert_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        if (i + 1) % 1000 == 0 {
            eprintln!("stored {} documents", i + 1);
        }
    }

    let mut rng = Rng(0xA5C3);
    let (mut search_ms, mut similar_ms, mut nearest_ms, mut found) = (vec![], vec![], vec![], 0usize);
    for _ in 0..queries {
        let question = format!("what did we find about {} and its {}?", rng.pick(TOPICS), rng.pick(ASPECTS));
        let t = Instant::now();
        memory.search_documents(&scope, &question, Some(10))?;
        search_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        found += usize::from(!memory.similar_documents(&scope, "", &question, None, None)?.is_empty());
        similar_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let vector = embedder.embed(&[&question])?.remove(0);
        let query = Embedding { model: embedder.id().to_string(), vector };
        let t = Instant::now();
        store.nearest_documents(&scope, &query, 10)?;
        nearest_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }

    let report = DocumentsBench {
        benchmark: "documents",
        machine: machine(),
        command: command(),
        backend: if postgres { "postgres" } else { "sqlite" },
        embedder: embedder.id().to_string(),
        documents,
        embedded,
        queries,
        store_ms: dist(&store_ms),
        insert_ms: dist(if insert_ms.is_empty() { &[0.0] } else { &insert_ms }),
        search_ms: dist(&search_ms),
        similar_ms: dist(&similar_ms),
        nearest_store_only_ms: dist(&nearest_ms),
        similar_found_share: found as f64 / queries as f64,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    write_report(out, &report)
}
