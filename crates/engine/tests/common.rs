//! Shared fixtures.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use mnemo::core::NewMessage;
use mnemo::models::{Embedder, HashEmbedder};
use mnemo::store::SqliteStore;
use mnemo::{Config, ManualClock, Memory, Scope};

pub(crate) struct Fixture {
    pub(crate) memory: Memory,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) _dir: tempfile::TempDir,
}

pub(crate) fn t0() -> DateTime<Utc> {
    "2026-03-02T09:00:00Z".parse().unwrap()
}

pub(crate) fn with_embedder(embedder: Option<Arc<dyn Embedder>>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    let store = Arc::new(SqliteStore::open(config.db_path()).unwrap());
    let clock = Arc::new(ManualClock::new(t0()));
    let memory = Memory::from_parts(config, store, embedder, clock.clone());
    Fixture { memory, clock, _dir: dir }
}

pub(crate) fn hashed() -> Fixture {
    with_embedder(Some(Arc::new(HashEmbedder::new(384))))
}

pub(crate) fn chat(user: &str, chat: &str) -> Scope {
    Scope::parse("acme", None, Some(user), Some(chat)).unwrap()
}

impl Fixture {
    /// Ingests user messages, one minute apart, advancing the clock.
    pub(crate) fn say(&self, scope: &Scope, lines: &[&str]) -> mnemo::IngestReport {
        let now = self.memory.now();
        let msgs =
            lines.iter().enumerate().map(|(i, l)| NewMessage::user(*l, now + Duration::minutes(i as i64))).collect();
        let r = self.memory.ingest(scope, msgs).unwrap();
        self.clock.set(now + Duration::minutes(lines.len() as i64));
        r
    }

    pub(crate) fn active_contents(&self, scope: &Scope) -> Vec<String> {
        let f = mnemo::store::ListFilter { statuses: vec![mnemo::core::StatusKind::Active], ..Default::default() };
        self.memory.list(scope, &f).unwrap().into_iter().map(|m| m.content).collect()
    }
}
