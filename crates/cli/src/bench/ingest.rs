//! `mnemo bench ingest`: messages per second through `Memory::ingest` (trace append, heuristic
//! extraction, gate, embeddings, apply; `flush` at the end of each session), per embedder and
//! batch size, on a fresh store each run.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, ensure};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::{NewMessage, Role, Scope, StatusKind};
use mnemo::models::EmbedderKind;
use mnemo::store::{ListFilter, SqliteStore};
use mnemo::{Config, ManualClock, Memory};
use mnemo_eval::locomo::{Dataset, TurnRendering};
use serde::Serialize;

use super::{Dist, Machine, command, dist, embedder, machine, synthetic_messages, write_report};

/// Messages of one chat, sent at one clock time.
pub(super) struct Session {
    scope: Scope,
    at: DateTime<Utc>,
    pub(super) messages: Vec<NewMessage>,
}

#[derive(Debug, Serialize)]
struct IngestRun {
    embedder: String,
    batch: usize,
    messages: usize,
    calls: usize,
    seconds: f64,
    messages_per_second: f64,
    per_call_ms: Dist,
    ops_proposed: usize,
    active_memories: usize,
}

#[derive(Debug, Serialize)]
struct IngestReport {
    benchmark: &'static str,
    corpus: String,
    extractor: &'static str,
    store: &'static str,
    machine: Machine,
    command: String,
    runs: Vec<IngestRun>,
}

/// The corpus a run reads, with its name: LoCoMo's turns from `data`, else `messages` synthetic
/// ones. `mnemo bench embed` reads the same, so the two compare.
pub(super) fn corpus(data: Option<&Path>, messages: usize) -> Result<(String, Vec<Session>)> {
    Ok(match data {
        Some(p) => (p.display().to_string(), locomo_corpus(p)?),
        None => {
            ensure!(messages > 0, "--messages must be at least 1");
            (format!("synthetic ({messages} messages)"), synthetic_corpus(messages)?)
        }
    })
}

fn locomo_corpus(path: &Path) -> Result<Vec<Session>> {
    let data = Dataset::load(path)?;
    let mut out = Vec::new();
    for c in &data.conversations {
        for s in &c.sessions {
            let scope = Scope::parse("bench", None, Some(&c.sample_id), Some(&format!("session_{}", s.number)))?;
            let messages = s
                .turns
                .iter()
                .enumerate()
                .map(|(i, t)| NewMessage {
                    // Message ids are unique per tenant; dialog ids repeat across conversations.
                    id: Some(format!("{}/{}", c.sample_id, t.dia_id)),
                    role: Role::User,
                    content: t.render(TurnRendering::default()),
                    at: Some(s.at + Duration::seconds(30 * i as i64)),
                })
                .collect();
            out.push(Session { scope, at: s.at, messages });
        }
    }
    Ok(out)
}

/// LoCoMo's turns in order, each with the user and chat it is ingested into and its id: what
/// `mnemo bench serve --data` sends one request at a time.
pub(super) fn turns(path: &Path) -> Result<Vec<(String, String, NewMessage)>> {
    Ok(locomo_corpus(path)?
        .into_iter()
        .flat_map(|s| {
            let (user, chat) = (s.scope.user.map(|u| u.to_string()), s.scope.chat.map(|c| c.to_string()));
            s.messages.into_iter().map(move |m| (user.clone().unwrap_or_default(), chat.clone().unwrap_or_default(), m))
        })
        .collect())
}

fn synthetic_corpus(n: usize) -> Result<Vec<Session>> {
    let start: DateTime<Utc> = "2026-03-02T09:00:00Z".parse()?;
    let lines = synthetic_messages(n, 42);
    let mut out = Vec::new();
    for (j, chunk) in lines.chunks(40).enumerate() {
        let at = start + Duration::days(j as i64);
        let scope = Scope::parse("bench", None, Some("u0"), Some(&format!("c{j}")))?;
        let messages = chunk
            .iter()
            .enumerate()
            .map(|(i, l)| {
                NewMessage::user(l.clone(), at + Duration::seconds(30 * i as i64)).with_id(format!("m{j}-{i}"))
            })
            .collect();
        out.push(Session { scope, at, messages });
    }
    Ok(out)
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
    let (corpus, sessions) = corpus(data, messages)?;
    let total: usize = sessions.iter().map(|s| s.messages.len()).sum();
    let mut runs = Vec::new();
    for &kind in kinds {
        let mut config = config.clone();
        let embedder = embedder(&mut config, kind)?;
        for &batch in batches {
            let tmp = tempfile::tempdir()?;
            config.data_dir = tmp.path().to_path_buf();
            let store = SqliteStore::open(config.db_path())?;
            let clock = Arc::new(ManualClock::new(sessions[0].at));
            let memory = Memory::from_parts(config.clone(), Arc::new(store), Some(embedder.clone()), clock.clone());
            let (mut ms, mut ops, mut appended) = (Vec::new(), 0usize, 0usize);
            let started = Instant::now();
            for s in &sessions {
                clock.set(s.at);
                for chunk in s.messages.chunks(batch) {
                    let t = Instant::now();
                    let report = memory.ingest(&s.scope, chunk.to_vec())?;
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                    ops += report.ops.len();
                    appended += report.appended;
                }
                // Queued extraction (LLM extractor) runs at the end of the session, and counts.
                let t = Instant::now();
                memory.flush(&s.scope)?;
                if let Some(last) = ms.last_mut() {
                    *last += t.elapsed().as_secs_f64() * 1e3;
                }
            }
            let seconds = started.elapsed().as_secs_f64();
            ensure!(appended == total, "only {appended} of {total} messages were new to the trace: ids repeat");
            let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
            let mut active_memories = 0;
            let mut users: Vec<&Scope> = Vec::new();
            for s in &sessions {
                if !users.iter().any(|u| u.user == s.scope.user) {
                    users.push(&s.scope);
                }
            }
            for u in users {
                let user = Scope { chat: None, ..u.clone() };
                active_memories += memory.list(&user, &active)?.len();
            }
            let run = IngestRun {
                embedder: embedder.id().to_string(),
                batch,
                messages: total,
                calls: ms.len(),
                seconds,
                messages_per_second: total as f64 / seconds.max(1e-9),
                per_call_ms: dist(&ms),
                ops_proposed: ops,
                active_memories,
            };
            println!(
                "{:<28} batch {:>4}: {} messages in {:.1} s = {:.0} messages/s (per call p50 {:.2} ms, p95 {:.2} ms); {} ops, {} active memories",
                run.embedder,
                batch,
                total,
                seconds,
                run.messages_per_second,
                run.per_call_ms.p50,
                run.per_call_ms.p95,
                ops,
                active_memories
            );
            runs.push(run);
        }
    }
    let report = IngestReport {
        benchmark: "ingest",
        corpus,
        extractor: "heuristic",
        store: "sqlite (a fresh temporary store per run)",
        machine: machine(),
        command: command(),
        runs,
    };
    write_report(out, &report)
}
