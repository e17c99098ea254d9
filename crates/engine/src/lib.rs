//! mnemo: durable memory for LLM applications.
//!
//! [`Memory`] wires the pure rules of `mnemo-core`, a [`Store`] backend and an embedder:
//! [`Memory::ingest`] appends messages to the trace and runs extraction through the gate;
//! [`Memory::recall`] returns path A (exact) and path B (ranked) results; [`Memory::context`]
//! assembles the token-budgeted block for the next turn. Every recall and context call leaves a
//! trace envelope.
//!
//! ```no_run
//! use mnemo::{Config, Memory, Scope};
//! use mnemo::core::NewMessage;
//!
//! let memory = Memory::open(Config::load(None)?)?;
//! let scope = Scope::parse("acme", None, Some("dana"), Some("chat-1"))?;
//! memory.ingest(&scope, vec![NewMessage::user("My name is Dana and I live in Lisbon.", chrono::Utc::now())])?;
//! let block = memory.context(&scope, "Any weekend ideas?", None)?;
//! println!("{}", block.block.text);
//! # Ok::<(), mnemo::Error>(())
//! ```
#![deny(missing_docs)]
// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod clock;
mod config;
mod consolidate;
mod conversation;
mod documents;
mod error;
mod export;
mod jobs;
mod limits;
mod llm_extract;
mod manage;
mod memos;
mod privacy;
mod queue;
mod read;
mod redact;
mod sessions;
mod skills;
mod state;
mod synthesis;
mod turns;
mod users;
mod worker;
mod write;

use std::sync::Arc;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    BackgroundTuning, CacheSettings, Config, DEFAULT_LLM_MODEL, ExtractorKind, MemoryScope, ProxySettings,
    default_data_dir,
};
pub use consolidate::{ConsolidationReport, DerivedKnowledge};
pub use documents::{DocumentHit, DocumentOwner, StoredDocument};
pub use error::{Error, Result};
pub use export::{ExportDocument, ExportedMemory};
pub use jobs::{AppliedTransition, MaintainProgress, MaintainReport, RetentionTuning};
pub use manage::MemoryDetail;
pub use mnemo_core as core;
pub use mnemo_core::Scope;
pub use mnemo_models as models;
pub use mnemo_store as store;
pub use privacy::ErasureReceipt;
pub use queue::{BatchReport, MemoReport, PendingReport};
pub use read::{ContextResult, RecallResult};
pub use redact::{redact_history, redact_record};
pub use sessions::{HeldItem, HeldRef, Rotation};
pub use skills::{SkillCandidate, StoredObservation};
pub use synthesis::SynthesisReport;
pub use users::UserSummary;
pub use worker::Worker;
pub use write::{IngestReport, OpRecord};

use mnemo_core::Tuning;
use mnemo_core::extract::{Extractor, HeuristicExtractor};
use mnemo_models::{BatchingEmbedder, CachedEmbedder, ChatModel, DEFAULT_MAX_BATCH, Embedder};
use mnemo_store::{SqliteStore, Store};

/// The backend the configuration selects: PostgreSQL for a `postgres://` URL, else the
/// embedded SQLite file under the data directory.
pub fn open_store(config: &Config) -> Result<Arc<dyn Store>> {
    match config.database_url.as_deref() {
        None | Some("") => {
            Ok(Arc::new(SqliteStore::open(config.db_path())?.with_cache_budgets(config.cache.budgets())?))
        }
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            #[cfg(feature = "postgres")]
            {
                Ok(Arc::new(mnemo_store::PostgresStore::connect(url)?.with_cache_budgets(config.cache.budgets())))
            }
            #[cfg(not(feature = "postgres"))]
            {
                Err(Error::Config {
                    source_name: "database_url".into(),
                    reason: "this build has no PostgreSQL support; rebuild with `--features postgres`".into(),
                })
            }
        }
        Some(other) => Err(Error::Config {
            source_name: "database_url".into(),
            reason: format!(
                "{:?} is not a postgres:// URL; leave it unset for the embedded SQLite store",
                other.split('@').next_back().unwrap_or(other)
            ),
        }),
    }
}

/// Distinct texts whose vectors the engine keeps (about 1.5 MB at 384 dimensions): a chat's
/// previous turn, embedded again as the next turn's context, is the common repeat.
const EMBEDDING_CACHE: usize = 1_024;

/// A handle on one memory store. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct Memory {
    config: Config,
    tuning: Tuning,
    store: Arc<dyn Store>,
    embedder: Option<Arc<CachedEmbedder>>,
    extractor: Box<dyn Extractor>,
    /// The chat model of LLM extraction, memos and summaries; `None` when none is configured,
    /// or `Err` with why it could not be built (batches then fall back, and say why).
    chat: std::result::Result<Arc<dyn ChatModel>, String>,
    clock: Arc<dyn Clock>,
    /// Recall's and context's trace envelopes, written off their path ([`turns`]).
    turns: turns::TurnLog,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("data_dir", &self.config.data_dir)
            .field("embedder", &self.embedder.as_ref().map(|e| e.id().to_string()))
            .field("extractor", &self.config.extractor.as_str())
            .field("chat", &self.chat.as_ref().map(|c| c.id().to_string()))
            .finish_non_exhaustive()
    }
}

impl Memory {
    /// Opens the embedded store under `config.data_dir` and loads the configured embedder.
    ///
    /// A missing or broken model is an error here, not a silent downgrade: recall would quietly
    /// lose its vector half. Use `MNEMO_EMBEDDER=hash` to run without a model on purpose.
    ///
    /// With the LLM extractor (or an `[llm]` server) configured, the chat model is built here
    /// too, and settings that can never work are an error now rather than a fallback later.
    pub fn open(config: Config) -> Result<Self> {
        if config.llm_enabled() {
            config.llm.validate().map_err(|e| Error::Config { source_name: "[llm]".into(), reason: e.to_string() })?;
        }
        let store = open_store(&config)?;
        let mut embedder = mnemo_models::open_embedder(&config.embedder)?;
        // A model's runs are shared by concurrent callers (a server's requests); feature hashing
        // costs less than the coordination.
        if embedder.worth_caching() {
            embedder = Arc::new(BatchingEmbedder::new(embedder, DEFAULT_MAX_BATCH));
        }
        Ok(Self::from_parts(config, store, Some(embedder), Arc::new(SystemClock)))
    }

    /// Assembles an engine from parts: another backend, no embedder, a manual clock.
    pub fn from_parts(
        config: Config,
        store: Arc<dyn Store>,
        embedder: Option<Arc<dyn Embedder>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        // The heuristic extractor is also the LLM extractor's fallback.
        let extractor: Box<dyn Extractor> = Box::new(HeuristicExtractor);
        let chat = match config.llm_enabled() {
            true => mnemo_models::open_chat_model(&config.llm).map_err(|e| e.to_string()),
            false => Err("no chat model is configured (set MNEMO_LLM_BASE_URL)".to_string()),
        };
        let embedder = embedder.map(|e| Arc::new(CachedEmbedder::new(e, EMBEDDING_CACHE)));
        let turns = turns::TurnLog::start(Arc::clone(&store));
        Self { tuning: config.tuning(), config, store, embedder, extractor, chat, clock, turns }
    }

    /// The same engine keeping the vectors of up to `capacity` recent texts (0: none), for
    /// benchmarks that must time the model on every call.
    #[must_use]
    pub fn with_embedding_cache(mut self, capacity: usize) -> Self {
        self.embedder = self.embedder.map(|e| Arc::new(CachedEmbedder::new(e.inner().clone(), capacity)));
        self
    }

    /// The same engine talking to `model` for LLM extraction, memos and summaries (another
    /// client, a test double beside the real path).
    pub fn with_chat_model(mut self, model: Arc<dyn ChatModel>) -> Self {
        self.chat = Ok(model);
        self
    }

    /// The chat model's id, when one is configured.
    pub fn chat_model_id(&self) -> Option<&str> {
        self.chat.as_ref().ok().map(|c| c.id())
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store, for tools (benchmarks, export) that need it directly.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Waits until every recall's and context call's trace envelope is in the store: they are
    /// written off the read's path, a few milliseconds after it answers. The engine's own reads
    /// of traces and access statistics wait for the user's queued turns by themselves; this is
    /// for a tool reading the store directly.
    pub fn settle(&self) {
        self.turns.settle_all();
    }

    /// The embedder's id, if one is loaded.
    pub fn embedder_id(&self) -> Option<&str> {
        self.embedder.as_ref().map(|e| e.id())
    }

    /// The engine's clock.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// Embeds texts, or says why vectors are unavailable (the cascade records the reason).
    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String> {
        self.embed_as(texts, |e, texts| e.embed(texts))
    }

    /// [`Memory::embed`] for a query a caller waits on: it passes bulk work queued at the model.
    fn embed_query_texts(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String> {
        self.embed_as(texts, |e, texts| e.embed_query(texts))
    }

    fn embed_as(
        &self,
        texts: &[&str],
        run: impl Fn(&dyn Embedder, &[&str]) -> mnemo_models::Result<Vec<Vec<f32>>>,
    ) -> std::result::Result<Vec<Vec<f32>>, String> {
        match &self.embedder {
            None => Err("no embedder configured".into()),
            Some(e) => run(e.as_ref(), texts).map_err(|e| e.to_string()),
        }
    }
}

/// Appends one more reason a call ran degraded (`"a; b"`), so no reason hides another.
pub(crate) fn add_problem(degraded: &mut Option<String>, problem: String) {
    *degraded = Some(match degraded.take() {
        Some(d) => format!("{d}; {problem}"),
        None => problem,
    });
}
