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
    pub(crate) _database: Database,
}

pub(crate) fn t0() -> DateTime<Utc> {
    "2026-03-02T09:00:00Z".parse().unwrap()
}

/// The engine over the backend under test: SQLite, or with `MNEMO_TEST_BACKEND=postgres` (and the
/// `postgres` feature) a throwaway database on the server of `MNEMO_TEST_DATABASE_URL`, so the
/// same tests prove both backends.
pub(crate) fn with_embedder(embedder: Option<Arc<dyn Embedder>>) -> Fixture {
    configured(embedder, |_| {})
}

/// [`with_embedder`] with settings changed from the defaults by `tune`.
pub(crate) fn configured(embedder: Option<Arc<dyn Embedder>>, tune: impl FnOnce(&mut Config)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    tune(&mut config);
    let (store, database) = backend(&config);
    let clock = Arc::new(ManualClock::new(t0()));
    let memory = Memory::from_parts(config, store, embedder, clock.clone());
    Fixture { memory, clock, _dir: dir, _database: database }
}

/// The embedded store, whatever backend is under test (for tests about its files).
pub(crate) fn sqlite_with_embedder(embedder: Option<Arc<dyn Embedder>>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
    let store = Arc::new(SqliteStore::open(config.db_path()).unwrap());
    let clock = Arc::new(ManualClock::new(t0()));
    let memory = Memory::from_parts(config, store, embedder, clock.clone());
    Fixture { memory, clock, _dir: dir, _database: Default::default() }
}

#[cfg(feature = "postgres")]
pub(crate) type Database = Option<mnemo::store::TempDatabase>;
#[cfg(not(feature = "postgres"))]
pub(crate) type Database = ();

pub(crate) fn backend(config: &Config) -> (Arc<dyn mnemo::store::Store>, Database) {
    let wanted = std::env::var("MNEMO_TEST_BACKEND").unwrap_or_default();
    match wanted.as_str() {
        "" | "sqlite" => (Arc::new(SqliteStore::open(config.db_path()).unwrap()), Default::default()),
        #[cfg(feature = "postgres")]
        "postgres" => {
            let db = mnemo::store::TempDatabase::from_env()
                .unwrap()
                .expect("MNEMO_TEST_BACKEND=postgres needs MNEMO_TEST_DATABASE_URL (scripts/pg.sh url)");
            (Arc::new(mnemo::store::PostgresStore::connect(db.url()).unwrap()), Some(db))
        }
        other => panic!("MNEMO_TEST_BACKEND={other:?}: expected sqlite or postgres (with --features postgres)"),
    }
}

/// Every file under `dir` (database, WAL, shared memory, anything), lower-cased bytes: what
/// the tests about what reaches storage read.
pub(crate) fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap().to_ascii_lowercase()));
        }
    }
    out
}

/// True when `needle` occurs in `hay`, byte for byte.
pub(crate) fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
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
