//! A tenant's reset on SQLite: `MNEMO_BENCH_USERS` users (300 by default) with three messages
//! each, erased one by one (`Memory::erase_user` per user, one purge each: how `/reset` worked
//! before) and together (`Memory::erase_users`, one purge at the end), each on a fresh store of
//! the same shape with another tenant's users beside them. While each runs, a thread recalls for
//! the other tenant and reports how long its recalls took: what a reset costs the neighbours.
//!
//! `cargo bench -p mnemo --bench erase_users` (a plain program, no harness).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mnemo::core::{NewMessage, Scope, UserId};
use mnemo::store::SqliteStore;
use mnemo::{Config, Memory, SystemClock};

fn scope(tenant: &str, user: &str) -> Scope {
    Scope::parse(tenant, None, Some(user), Some("c1")).unwrap()
}

fn fill(memory: &Memory, tenant: &str, users: usize) {
    for i in 0..users {
        let now = memory.now();
        let lines = [format!("I live in Town{i}."), format!("My dog is named Rex{i}."), "I like tea.".to_string()];
        let msgs =
            lines.iter().enumerate().map(|(k, l)| NewMessage::user(l, now + chrono::Duration::seconds(k as i64)));
        memory.ingest(&scope(tenant, &format!("user{i:03}")), msgs.collect()).unwrap();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let users: usize = std::env::var("MNEMO_BENCH_USERS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    for together in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
        let store = Arc::new(SqliteStore::open(config.db_path()).unwrap());
        let embedder = Arc::new(mnemo::models::HashEmbedder::new(384));
        let memory = Arc::new(Memory::from_parts(config, store, Some(embedder), Arc::new(SystemClock)));
        fill(&memory, "acme", users);
        fill(&memory, "globex", 50);

        let stop = Arc::new(AtomicBool::new(false));
        let neighbour = {
            let (memory, stop) = (memory.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut took = Vec::new();
                let who = scope("globex", "user007");
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    memory.recall(&who, "where does the user live?", None).unwrap();
                    took.push(t.elapsed());
                    std::thread::sleep(Duration::from_millis(5));
                }
                took
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        let tenant = "acme".parse().unwrap();
        let ids: Vec<UserId> = (0..users).map(|i| UserId::new(format!("user{i:03}")).unwrap()).collect();
        let t = Instant::now();
        if together {
            assert_eq!(memory.erase_users(&tenant, &ids).unwrap().len(), users);
        } else {
            for i in 0..users {
                memory.erase_user(&scope("acme", &format!("user{i:03}"))).unwrap();
            }
        }
        let elapsed = t.elapsed();
        stop.store(true, Ordering::Relaxed);
        let mut took = neighbour.join().unwrap();
        took.sort();
        println!(
            "{users} users erased {}: {:.2} s; the other tenant's recall meanwhile: {} calls, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            if together { "together (erase_users, one purge)" } else { "one by one (erase_user, a purge each)" },
            elapsed.as_secs_f64(),
            took.len(),
            percentile(&took, 0.5).as_secs_f64() * 1e3,
            percentile(&took, 0.99).as_secs_f64() * 1e3,
            took.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
    }
}
