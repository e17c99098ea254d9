//! Configuration: defaults, then `mnemo.toml`, then `MNEMO_*` environment variables.
//!
//! Every number of the architecture lives in [`mnemo_core::Tuning`]; this module adds where
//! data lives and which models run, and does the loading. Unknown keys are errors, so a typo
//! never silently falls back to a default.

use std::path::{Path, PathBuf};

use mnemo_core::Tuning;
use mnemo_core::config::{
    AssemblyTuning, DecayTuning, GateTuning, IngestTuning, LifecycleTuning, LimitsTuning, RankingTuning,
};
use mnemo_models::{EmbedderSettings, LLM_ENV_VARS, LlmSettings};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which extractor proposes memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ExtractorKind {
    /// Rules, no model: the offline default. Runs inline in `ingest`.
    #[default]
    Heuristic,
    /// An OpenAI-compatible chat model (`[llm]`), off the request path: `ingest` queues the
    /// messages and returns; batches run on `flush`, in the worker and in `maintain`, falling
    /// back to the heuristic extractor when the model fails.
    Llm,
}

impl ExtractorKind {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractorKind::Heuristic => "heuristic",
            ExtractorKind::Llm => "llm",
        }
    }
}

impl std::str::FromStr for ExtractorKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "heuristic" => Ok(ExtractorKind::Heuristic),
            "llm" => Ok(ExtractorKind::Llm),
            other => Err(Error::Config {
                source_name: "extractor".into(),
                reason: format!("unknown extractor {other:?}; expected heuristic or llm"),
            }),
        }
    }
}

/// When extraction batches run and how failures are retried (LLM extractor), and what the
/// chat-model jobs do: memos, summaries, reflections and episodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackgroundTuning {
    /// A chat's pending messages are extracted once this many are waiting...
    pub batch_messages: usize,
    /// ...or once the chat has been idle this long (seconds).
    pub idle_secs: f64,
    /// Most messages sent to the model in one batch.
    pub max_batch_messages: usize,
    /// Wait before asking the model again about a batch the heuristic stood in for (seconds);
    /// doubled per further attempt.
    pub retry_secs: f64,
    /// Attempts with the model per batch before its fallback's result is kept for good.
    pub max_attempts: u32,
    /// Longest a one-shot `mnemo ingest` waits on the model for its chat's batches, memos and
    /// episode (seconds): no call runs past it, and what it did not reach stays queued for
    /// `mnemo maintain` or the server's worker. The server never waits: its worker runs them.
    pub ingest_wait_secs: f64,
    /// How often the server's worker looks for due work (seconds).
    pub worker_interval_secs: f64,
    /// Chats looked at per worker pass.
    pub chats_per_pass: usize,
    /// A memo is written for every this many messages of a chat (0 turns memos off).
    pub memo_every: usize,
    /// The chat's latest memos placed in its context block.
    pub memos_in_context: usize,
    /// Daily, weekly and monthly summaries per user (needs a chat model).
    pub summaries: bool,
    /// Days looked back for missing daily summaries.
    pub summary_lookback_days: u32,
    /// A reflection is synthesised once a user has this many new memories since the last one
    /// (0 turns reflections off).
    pub reflect_after: usize,
    /// A chat idle this long (seconds) with new messages is checked for a completed task, which
    /// becomes an episode (0 turns episodes off).
    pub episode_idle_secs: f64,
    /// How often the server's worker runs `maintain` (lifecycle, consolidation, retention), in
    /// seconds; 0 leaves it to cron and `mnemo maintain`.
    pub maintain_interval_secs: f64,
}

impl Default for BackgroundTuning {
    fn default() -> Self {
        Self {
            batch_messages: 8,
            idle_secs: 120.0,
            max_batch_messages: 32,
            retry_secs: 60.0,
            max_attempts: 4,
            ingest_wait_secs: 30.0,
            worker_interval_secs: 5.0,
            chats_per_pass: 100,
            memo_every: 8,
            memos_in_context: 15,
            summaries: true,
            summary_lookback_days: 7,
            reflect_after: 20,
            episode_idle_secs: 1800.0,
            maintain_interval_secs: 3600.0,
        }
    }
}

/// Where extracted memories are owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MemoryScope {
    /// Memories follow the user across chats.
    #[default]
    User,
    /// Memories stay inside the chat they came from.
    Chat,
}

/// The engine's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Directory holding the store (`mnemo.db`).
    pub data_dir: PathBuf,
    /// `postgres://...` to use PostgreSQL + pgvector instead of the embedded SQLite store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    /// Embedding model.
    pub embedder: EmbedderSettings,
    /// Extractor.
    pub extractor: ExtractorKind,
    /// The chat model of the LLM extractor, memos and summaries (`[llm]`, `MNEMO_LLM_*`).
    pub llm: LlmSettings,
    /// Batching, retries and the chat-model jobs.
    pub background: BackgroundTuning,
    /// Where extracted memories are owned.
    pub memory_scope: MemoryScope,
    /// When false (the default), a user's memories made with one agent stay with that agent.
    pub share_across_agents: bool,
    /// Input limits.
    pub ingest: IngestTuning,
    /// Write gate.
    pub gate: GateTuning,
    /// Recall ranking.
    pub ranking: RankingTuning,
    /// Decay.
    pub decay: DecayTuning,
    /// Lifecycle.
    pub lifecycle: LifecycleTuning,
    /// Assembly.
    pub assembly: AssemblyTuning,
    /// What one request may ask of the server (query length, `top_k`, MCP sessions...).
    pub limits: LimitsTuning,
    /// Consolidation in `maintain`: merges and knowledge.
    pub consolidation: mnemo_core::consolidate::ConsolidationTuning,
    /// How long traces are kept, per retention class.
    pub retention: crate::jobs::RetentionTuning,
    /// Stored documents: size limits, overview budget, the "researched before" threshold.
    pub documents: mnemo_core::document::DocumentsTuning,
    /// Context-window management of agent sessions (`[sessions]`): thresholds, bundle budget.
    pub sessions: mnemo_core::window::WindowTuning,
    /// Where `mnemo serve`'s OpenAI-compatible proxy forwards chat requests (`[proxy]`,
    /// `MNEMO_PROXY_UPSTREAM_URL`, `MNEMO_PROXY_UPSTREAM_KEY`; docs/openai-proxy.md).
    pub proxy: ProxySettings,
    /// How much the store's in-process caches may hold (`[cache]`).
    pub cache: CacheSettings,
}

/// Budgets of the store's in-process caches, in MiB: past one, its least recently used users
/// leave it and are read from the database again when next asked. They bound what a server's
/// memory grows by as its store grows (`/metrics` shows them filling: `mnemo_cache_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheSettings {
    /// Memories' vectors (recall's vector half), all users together.
    pub memory_vectors_mib: usize,
    /// Message vectors (archival recall, SQLite only), all users together.
    pub message_vectors_mib: usize,
    /// SQLite's own heap, its page caches above all, every connection together (SQLite's soft
    /// heap limit, which holds for the whole process; 0: unlimited). SQLite only.
    pub sqlite_heap_mib: usize,
}

impl Default for CacheSettings {
    fn default() -> Self {
        let b = mnemo_store::CacheBudgets::default();
        Self {
            memory_vectors_mib: b.memory_vectors >> 20,
            message_vectors_mib: b.message_vectors >> 20,
            sqlite_heap_mib: b.sqlite_heap >> 20,
        }
    }
}

impl CacheSettings {
    /// The budgets in bytes, as the store takes them.
    pub fn budgets(&self) -> mnemo_store::CacheBudgets {
        mnemo_store::CacheBudgets {
            memory_vectors: self.memory_vectors_mib.saturating_mul(1 << 20),
            message_vectors: self.message_vectors_mib.saturating_mul(1 << 20),
            sqlite_heap: self.sqlite_heap_mib.saturating_mul(1 << 20),
        }
    }
}

/// The upstream of the OpenAI-compatible proxy: any server that speaks OpenAI's chat
/// completions (OpenAI itself, vLLM, llama.cpp, Ollama). Empty strings mean unset (strings so
/// that an all-digit key from the environment stays text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProxySettings {
    /// Base URL ending in the API version, as an OpenAI SDK's `base_url`
    /// (`https://api.openai.com/v1`). Empty, the proxy answers 503 and says what to set.
    pub upstream_url: String,
    /// Sent upstream as `Authorization: Bearer`; empty, no key is sent (a local server).
    pub upstream_key: String,
    /// Seconds one upstream call may take, from connecting to the answer's last byte.
    pub timeout_secs: u64,
    /// Seconds to connect to the upstream: an address that does not answer fails fast (502)
    /// instead of holding the call for `timeout_secs`.
    pub connect_timeout_secs: u64,
    /// Seconds a streamed answer (`stream: true`) may go without a byte from the upstream,
    /// waiting for it to start included: a stalled stream is let go after this, long before
    /// `timeout_secs`, which still bounds every call as a whole. A non-streamed answer is
    /// silent until it is complete, so it has only `timeout_secs`.
    pub idle_timeout_secs: u64,
    /// Upstream calls one tenant may have in flight; one more is refused at once with 429 and
    /// `Retry-After`, so a tenant whose upstream is slow holds no more than this many of the
    /// proxy's threads.
    pub max_concurrent_per_tenant: usize,
    /// Upstream calls in flight in all (each holds a thread); past it a call is refused with
    /// 503 and `Retry-After`.
    pub max_concurrent: usize,
}

impl Default for ProxySettings {
    fn default() -> Self {
        Self {
            upstream_url: String::new(),
            upstream_key: String::new(),
            timeout_secs: 600,
            connect_timeout_secs: 10,
            idle_timeout_secs: 120,
            max_concurrent_per_tenant: 16,
            max_concurrent: 256,
        }
    }
}

impl ProxySettings {
    /// Refuses settings the proxy cannot work with, naming the key: a zero timeout or cap, or a
    /// tenant's cap above the total.
    fn validate(&self) -> Result<()> {
        let bad = |key: &str, reason: String| Error::Config { source_name: format!("proxy.{key}"), reason };
        let positive = [
            ("timeout_secs", self.timeout_secs as usize),
            ("connect_timeout_secs", self.connect_timeout_secs as usize),
            ("idle_timeout_secs", self.idle_timeout_secs as usize),
            ("max_concurrent_per_tenant", self.max_concurrent_per_tenant),
            ("max_concurrent", self.max_concurrent),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(bad(key, "must be at least 1".into()));
        }
        if self.max_concurrent_per_tenant > self.max_concurrent {
            return Err(bad(
                "max_concurrent_per_tenant",
                format!("{} is above proxy.max_concurrent {}", self.max_concurrent_per_tenant, self.max_concurrent),
            ));
        }
        Ok(())
    }
}

impl Default for Config {
    fn default() -> Self {
        let t = Tuning::default();
        Self {
            data_dir: default_data_dir(),
            database_url: None,
            embedder: EmbedderSettings::default(),
            extractor: ExtractorKind::default(),
            llm: LlmSettings { model: DEFAULT_LLM_MODEL.into(), ..LlmSettings::default() },
            background: BackgroundTuning::default(),
            memory_scope: MemoryScope::default(),
            share_across_agents: false,
            ingest: t.ingest,
            gate: t.gate,
            ranking: t.ranking,
            decay: t.decay,
            lifecycle: t.lifecycle,
            assembly: t.assembly,
            limits: t.limits,
            consolidation: Default::default(),
            retention: Default::default(),
            documents: t.documents,
            sessions: t.sessions,
            proxy: ProxySettings::default(),
            cache: CacheSettings::default(),
        }
    }
}

/// `$XDG_DATA_HOME/mnemo`, else `~/.local/share/mnemo`, else `./mnemo-data`.
pub fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("mnemo");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h).join(".local/share/mnemo");
    }
    PathBuf::from("mnemo-data")
}

/// The chat model asked when `[llm]` names none: small, cheap and good at JSON, as memos and
/// extraction need ("use a cheap model"). Servers that serve one model (llama.cpp)
/// ignore the name; others (vLLM, Ollama) need `MNEMO_LLM_MODEL` to match what they serve.
pub const DEFAULT_LLM_MODEL: &str = "gpt-4o-mini";

/// Environment variables with a short name, and the config path each sets.
const ALIASES: &[(&str, &str)] = &[
    ("MNEMO_DATA_DIR", "data_dir"),
    ("MNEMO_DATABASE_URL", "database_url"),
    ("MNEMO_EMBEDDER", "embedder.kind"),
    ("MNEMO_MODEL_DIR", "embedder.model_dir"),
    ("MNEMO_EMBEDDER_BASE_URL", "embedder.openai_base_url"),
    ("MNEMO_EMBEDDER_MODEL", "embedder.openai_model"),
    ("MNEMO_EMBEDDER_API_KEY", "embedder.openai_api_key"),
    ("MNEMO_EXTRACTOR", "extractor"),
    ("MNEMO_MEMORY_SCOPE", "memory_scope"),
    ("MNEMO_PROXY_UPSTREAM_URL", "proxy.upstream_url"),
    ("MNEMO_PROXY_UPSTREAM_KEY", "proxy.upstream_key"),
];

impl Config {
    /// The tuning numbers as one struct, for the pure rules.
    pub fn tuning(&self) -> Tuning {
        Tuning {
            ingest: self.ingest.clone(),
            gate: self.gate.clone(),
            ranking: self.ranking.clone(),
            decay: self.decay.clone(),
            lifecycle: self.lifecycle.clone(),
            assembly: self.assembly.clone(),
            limits: self.limits.clone(),
            documents: self.documents.clone(),
            sessions: self.sessions.clone(),
        }
    }

    /// True when a chat model is configured for LLM work: the LLM extractor is selected, or
    /// the `[llm]` table names a server (memos and summaries then run beside the heuristic).
    pub fn llm_enabled(&self) -> bool {
        self.extractor == ExtractorKind::Llm || self.llm.base_url != LlmSettings::default().base_url
    }

    /// The store file.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("mnemo.db")
    }

    /// Loads defaults, then the file (`path`, else `$MNEMO_CONFIG`, else `./mnemo.toml` if it
    /// exists), then the process environment.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Self::load_from(Self::file_to_load(path).as_deref(), &env)
    }

    /// Like [`Config::load`] with an explicit file and environment (testable).
    pub fn load_from(file: Option<&Path>, env: &[(String, String)]) -> Result<Self> {
        Self::read(file, env, false)
    }

    /// [`Config::load`] for commands that only read memory (list, show, recall, context,
    /// export, trace): reading never calls the chat model, so its settings (`extractor`,
    /// `[llm]`, `MNEMO_LLM_*`) are neither read nor checked, and a reader works where the
    /// model is not configured. The result has no chat model; do not write with it.
    pub fn load_for_reading(path: Option<&Path>) -> Result<Self> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Self::read(Self::file_to_load(path).as_deref(), &env, true)
    }

    /// Like [`Config::load_for_reading`] with an explicit file and environment (testable).
    pub fn load_from_for_reading(file: Option<&Path>, env: &[(String, String)]) -> Result<Self> {
        Self::read(file, env, true)
    }

    /// `path`, else `$MNEMO_CONFIG`, else `./mnemo.toml` if it exists.
    fn file_to_load(path: Option<&Path>) -> Option<PathBuf> {
        path.map(Path::to_path_buf).or_else(|| std::env::var_os("MNEMO_CONFIG").map(PathBuf::from)).or_else(|| {
            let p = PathBuf::from("mnemo.toml");
            p.exists().then_some(p)
        })
    }

    /// Defaults, the file, the environment; with `reading`, the model's settings left out.
    fn read(file: Option<&Path>, env: &[(String, String)], reading: bool) -> Result<Self> {
        let is_model = |path: &[String]| path.first().is_some_and(|p| p == "llm" || p == "extractor");
        let mut value = toml::Value::try_from(Config::default()).expect("defaults serialise");
        // Where the LLM server came from, if anywhere: the LLM extractor needs one on purpose,
        // never OpenAI's address by default.
        let mut base_url_source = None;
        if let Some(path) = file {
            let text =
                std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
            let mut overlay: toml::Value = toml::from_str(&text)
                .map_err(|e| Error::Config { source_name: path.display().to_string(), reason: e.to_string() })?;
            if let (true, Some(table)) = (reading, overlay.as_table_mut()) {
                table.remove("llm");
                table.remove("extractor");
            }
            if overlay.get("llm").and_then(|l| l.get("base_url")).is_some() {
                base_url_source = Some(path.display().to_string());
            }
            merge(&mut value, overlay);
            check(&value, &path.display().to_string())?;
        }
        for (name, raw) in env {
            let Some(path) = env_path(name) else { continue };
            if reading && is_model(&path) {
                continue;
            }
            if raw.trim().is_empty() && path.first().is_some_and(|p| p == "llm") {
                continue;
            }
            if path == ["llm", "base_url"] {
                base_url_source = Some(name.clone());
            }
            let existing = lookup(&value, &path).cloned();
            let mut typed = typed(raw, existing.as_ref());
            let mut overlay = toml::Value::Table(Default::default());
            set_path(&mut overlay, &path, typed.clone());
            let mut next = value.clone();
            merge(&mut next, overlay);
            if check(&next, name).is_err() && !typed.is_str() {
                // A key or a model name may be all digits: read it as the text it is.
                typed = toml::Value::String(raw.to_string());
                let mut overlay = toml::Value::Table(Default::default());
                set_path(&mut overlay, &path, typed);
                next = value.clone();
                merge(&mut next, overlay);
            }
            check(&next, name)?;
            value = next;
        }
        let config: Config = value.try_into().map_err(|e: toml::de::Error| Error::Config {
            source_name: "configuration".into(),
            reason: e.to_string(),
        })?;
        config
            .tuning()
            .validate()
            .map_err(|e| Error::Config { source_name: "configuration".into(), reason: e.to_string() })?;
        config.proxy.validate()?;
        if config.extractor == ExtractorKind::Llm {
            if base_url_source.is_none() {
                return Err(Error::Config {
                    source_name: "MNEMO_EXTRACTOR".into(),
                    reason: "the llm extractor needs the chat model's server: set MNEMO_LLM_BASE_URL (or base_url in \
                             the [llm] table of mnemo.toml), e.g. http://127.0.0.1:8000/v1"
                        .into(),
                });
            }
            config.llm.validate().map_err(|e| Error::Config { source_name: "[llm]".into(), reason: e.to_string() })?;
        }
        Ok(config)
    }
}

impl Config {
    /// The sections of `mnemo.toml` that tune behaviour (thresholds, periods, weights) rather
    /// than name a deployment (paths, databases, models, servers).
    pub const TUNING_SECTIONS: &'static [&'static str] = &[
        "ingest",
        "gate",
        "ranking",
        "decay",
        "lifecycle",
        "assembly",
        "limits",
        "consolidation",
        "retention",
        "documents",
        "sessions",
    ];

    /// This configuration with `overlay` (tables shaped like `mnemo.toml`'s tuning sections)
    /// laid over it, validated as a whole: how an evaluation or a test changes one threshold
    /// (a scenario's `[tuning]`) without a file. `source_name` names the overlay in errors.
    pub fn with_tuning(&self, overlay: &toml::Table, source_name: &str) -> Result<Config> {
        if let Some(key) = overlay.keys().find(|k| !Self::TUNING_SECTIONS.contains(&k.as_str())) {
            return Err(Error::Config {
                source_name: source_name.to_string(),
                reason: format!(
                    "{key:?} is not a tuning section; tuning sections are {}",
                    Self::TUNING_SECTIONS.join(", ")
                ),
            });
        }
        let mut value = toml::Value::try_from(self.clone()).expect("a config serialises");
        merge(&mut value, toml::Value::Table(overlay.clone()));
        check(&value, source_name)?;
        let config: Config = value.try_into().map_err(|e: toml::de::Error| Error::Config {
            source_name: source_name.to_string(),
            reason: e.to_string(),
        })?;
        config
            .tuning()
            .validate()
            .map_err(|e| Error::Config { source_name: source_name.to_string(), reason: e.to_string() })?;
        Ok(config)
    }
}

/// Maps an environment variable to a config path: an alias, an `MNEMO_LLM_*` setting, or
/// `MNEMO_SECTION__FIELD`.
fn env_path(name: &str) -> Option<Vec<String>> {
    if let Some((_, path)) = ALIASES.iter().find(|(n, _)| *n == name) {
        return Some(path.split('.').map(str::to_string).collect());
    }
    if let Some((_, field)) = LLM_ENV_VARS.iter().find(|(n, _)| *n == name) {
        return Some(vec!["llm".to_string(), field.to_string()]);
    }
    let rest = name.strip_prefix("MNEMO_")?;
    rest.contains("__").then(|| rest.split("__").map(str::to_lowercase).collect())
}

/// The value at a config path, if the tree has one there.
fn lookup<'a>(root: &'a toml::Value, path: &[String]) -> Option<&'a toml::Value> {
    path.iter().try_fold(root, |cur, key| cur.get(key))
}

/// Reads an environment value as the type of the setting it overrides: text stays text even
/// when it looks like a number (an all-digit API key), numbers and booleans are parsed.
fn typed(raw: &str, existing: Option<&toml::Value>) -> toml::Value {
    match existing {
        Some(toml::Value::String(_)) => toml::Value::String(raw.to_string()),
        Some(toml::Value::Float(_)) => raw.parse::<f64>().map_or_else(|_| guess(raw), toml::Value::Float),
        _ => guess(raw),
    }
}

/// Reads an environment value as the most specific TOML scalar it can be.
fn guess(raw: &str) -> toml::Value {
    if let Ok(i) = raw.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = raw.parse::<f64>() {
        return toml::Value::Float(f);
    }
    match raw {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(raw.to_string()),
    }
}

fn set_path(root: &mut toml::Value, path: &[String], v: toml::Value) {
    let mut cur = root;
    for (i, key) in path.iter().enumerate() {
        let table = cur.as_table_mut().expect("tables all the way down");
        if i == path.len() - 1 {
            table.insert(key.clone(), v);
            return;
        }
        cur = table.entry(key.clone()).or_insert_with(|| toml::Value::Table(Default::default()));
    }
}

fn merge(base: &mut toml::Value, overlay: toml::Value) {
    match (base, overlay) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) if existing.is_table() && v.is_table() => merge(existing, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// Deserialises to catch unknown keys and wrong types at the source that introduced them.
fn check(value: &toml::Value, source_name: &str) -> Result<()> {
    value
        .clone()
        .try_into::<Config>()
        .map(|_| ())
        .map_err(|e| Error::Config { source_name: source_name.to_string(), reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_models::EmbedderKind;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_tuning_overlay_changes_only_what_it_names_and_refuses_the_rest() {
        let base = Config::default();
        let overlay: toml::Table = toml::from_str("[lifecycle]\nmax_active_per_user = 3\n").unwrap();
        let c = base.with_tuning(&overlay, "test").unwrap();
        assert_eq!(c.lifecycle.max_active_per_user, 3);
        assert_eq!(c.lifecycle.stale_archive_days, base.lifecycle.stale_archive_days);
        assert_eq!(c.data_dir, base.data_dir);

        let deployment: toml::Table = toml::from_str("database_url = \"postgres://x\"\n").unwrap();
        let e = base.with_tuning(&deployment, "test").unwrap_err().to_string();
        assert!(e.contains("not a tuning section"), "{e}");
        let typo: toml::Table = toml::from_str("[lifecycle]\nmax_active = 3\n").unwrap();
        let e = base.with_tuning(&typo, "test").unwrap_err().to_string();
        assert!(e.contains("max_active"), "{e}");
    }

    #[test]
    fn the_proxy_upstream_comes_from_the_environment_and_a_digit_key_stays_text() {
        let c = Config::load_from(
            None,
            &env(&[
                ("MNEMO_EMBEDDER", "hash"),
                ("MNEMO_PROXY_UPSTREAM_URL", "http://127.0.0.1:8000/v1"),
                ("MNEMO_PROXY_UPSTREAM_KEY", "12345678"),
            ]),
        )
        .unwrap();
        assert_eq!(c.proxy.upstream_url, "http://127.0.0.1:8000/v1");
        assert_eq!(c.proxy.upstream_key, "12345678");
        assert_eq!(c.proxy.timeout_secs, 600);
        assert!(Config::default().proxy.upstream_url.is_empty(), "no upstream unless one is set");
    }

    #[test]
    fn proxy_caps_and_timeouts_must_be_positive_and_a_tenants_cap_within_the_total() {
        let c = Config::load_from(None, &env(&[("MNEMO_EMBEDDER", "hash")])).unwrap();
        assert_eq!((c.proxy.connect_timeout_secs, c.proxy.idle_timeout_secs), (10, 120));
        assert_eq!((c.proxy.max_concurrent_per_tenant, c.proxy.max_concurrent), (16, 256));
        let e =
            Config::load_from(None, &env(&[("MNEMO_PROXY__MAX_CONCURRENT_PER_TENANT", "0")])).unwrap_err().to_string();
        assert!(e.contains("proxy.max_concurrent_per_tenant") && e.contains("at least 1"), "{e}");
        let e = Config::load_from(None, &env(&[("MNEMO_PROXY__MAX_CONCURRENT", "8")])).unwrap_err().to_string();
        assert!(e.contains("proxy.max_concurrent_per_tenant") && e.contains("above proxy.max_concurrent 8"), "{e}");
    }

    #[test]
    fn cache_budgets_come_in_mib_from_the_file_or_the_environment() {
        let c = Config::load_from(None, &env(&[("MNEMO_EMBEDDER", "hash")])).unwrap();
        assert_eq!(c.cache.budgets(), mnemo_store::CacheBudgets::default());
        assert_eq!(c.cache.memory_vectors_mib, 16);
        let c = Config::load_from(None, &env(&[("MNEMO_CACHE__MEMORY_VECTORS_MIB", "16")])).unwrap();
        assert_eq!(c.cache.budgets().memory_vectors, 16 << 20);
        assert_eq!(c.cache.budgets().message_vectors, mnemo_store::CacheBudgets::default().message_vectors);
        assert_eq!(c.cache.sqlite_heap_mib, 8);
        let c = Config::load_from(None, &env(&[("MNEMO_CACHE__SQLITE_HEAP_MIB", "64")])).unwrap();
        assert_eq!(c.cache.budgets().sqlite_heap, 64 << 20);
        let e = Config::load_from(None, &env(&[("MNEMO_CACHE__VECTORS_MIB", "16")])).unwrap_err().to_string();
        assert!(e.contains("vectors_mib"), "{e}");
    }

    #[test]
    fn file_then_environment_override_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mnemo.toml");
        std::fs::write(&file, "data_dir = \"/srv/mnemo\"\n[gate]\nmin_confidence = 0.5\n[ranking]\ntier_high = 0.8\n")
            .unwrap();
        let c = Config::load_from(
            Some(&file),
            &env(&[("MNEMO_EMBEDDER", "hash"), ("MNEMO_GATE__MIN_CONFIDENCE", "0.6"), ("MNEMO_UNRELATED", "x")]),
        )
        .unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/srv/mnemo"));
        assert_eq!(c.embedder.kind, EmbedderKind::Hash);
        assert_eq!(c.gate.min_confidence, 0.6);
        assert_eq!(c.ranking.tier_high, 0.8);
        assert_eq!(c.gate.min_salience, 0.2, "untouched defaults stay");
    }

    #[test]
    fn the_llm_extractor_needs_a_server_and_text_stays_text() {
        let e = Config::load_from(None, &env(&[("MNEMO_EXTRACTOR", "llm")])).unwrap_err().to_string();
        assert!(e.contains("MNEMO_LLM_BASE_URL"), "{e}");
        let c = Config::load_from(
            None,
            &env(&[
                ("MNEMO_EXTRACTOR", "llm"),
                ("MNEMO_LLM_BASE_URL", "http://127.0.0.1:8000/v1"),
                ("MNEMO_LLM_API_KEY", "12345678"),
                ("MNEMO_LLM_MODEL", "7"),
                ("MNEMO_LLM_TIMEOUT_SECS", "30"),
                ("MNEMO_LLM_MAX_RETRIES", "4"),
                ("MNEMO_BACKGROUND__BATCH_MESSAGES", "4"),
            ]),
        )
        .unwrap();
        assert_eq!(c.extractor, ExtractorKind::Llm);
        assert!(c.llm_enabled());
        assert_eq!(c.llm.api_key.as_deref(), Some("12345678"), "an all-digit key is a key, not a number");
        assert_eq!((c.llm.model.as_str(), c.llm.timeout_secs, c.llm.max_retries), ("7", 30.0, 4));
        assert_eq!(c.background.batch_messages, 4);
        let heuristic = Config::load_from(None, &[]).unwrap();
        assert!(!heuristic.llm_enabled());
        assert_eq!(heuristic.llm.model, DEFAULT_LLM_MODEL);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mnemo.toml");
        std::fs::write(
            &file,
            "extractor = \"llm\"\n[llm]\nbase_url = \"http://127.0.0.1:11434\"\nmodel = \"qwen2.5:7b\"\n",
        )
        .unwrap();
        let c = Config::load_from(Some(&file), &[]).unwrap();
        assert_eq!((c.llm.base_url.as_str(), c.llm.model.as_str()), ("http://127.0.0.1:11434", "qwen2.5:7b"));
        std::fs::write(&file, "extractor = \"llm\"\n[llm]\nbase_url = \"localhost\"\n").unwrap();
        let e = Config::load_from(Some(&file), &[]).unwrap_err().to_string();
        assert!(e.contains("base_url"), "{e}");
    }

    #[test]
    fn reading_needs_no_model_settings() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mnemo.toml");
        std::fs::write(&file, "extractor = \"llm\"\n[llm]\nbase_url = \"localhost\"\n[gate]\nmin_confidence = 0.7\n")
            .unwrap();
        let broken = env(&[("MNEMO_EXTRACTOR", "llm"), ("MNEMO_LLM_TIMEOUT_SECS", "soon"), ("MNEMO_EMBEDDER", "hash")]);
        assert!(Config::load_from(Some(&file), &broken).is_err(), "a writer still needs them");
        let c = Config::load_from_for_reading(Some(&file), &broken).unwrap();
        assert_eq!((c.extractor, c.llm_enabled()), (ExtractorKind::Heuristic, false), "no chat model");
        assert_eq!((c.gate.min_confidence, c.embedder.kind), (0.7, EmbedderKind::Hash), "the rest is read");
        let e = Config::load_from_for_reading(None, &env(&[("MNEMO_EMBEDDER", "gpt")])).unwrap_err().to_string();
        assert!(e.contains("MNEMO_EMBEDDER"), "other settings are still checked: {e}");
    }

    #[test]
    fn typos_and_bad_values_name_their_source() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mnemo.toml");
        std::fs::write(&file, "[gate]\nmin_confidense = 0.5\n").unwrap();
        let e = Config::load_from(Some(&file), &[]).unwrap_err().to_string();
        assert!(e.contains("mnemo.toml") && e.contains("min_confidense"), "{e}");
        let e = Config::load_from(None, &env(&[("MNEMO_EMBEDDER", "gpt")])).unwrap_err().to_string();
        assert!(e.contains("MNEMO_EMBEDDER"), "{e}");
        let e = Config::load_from(None, &env(&[("MNEMO_GATE__MIN_CONFIDENCE", "7")])).unwrap_err().to_string();
        assert!(e.contains("gate.min_confidence"), "{e}");
    }
}
