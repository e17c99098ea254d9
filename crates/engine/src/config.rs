//! Configuration: defaults, then `mnemo.toml`, then `MNEMO_*` environment variables.
//!
//! Every number of the architecture lives in [`mnemo_core::Tuning`]; this module adds where
//! data lives and which models run, and does the loading. Unknown keys are errors, so a typo
//! never silently falls back to a default.

use std::path::{Path, PathBuf};

use mnemo_core::Tuning;
use mnemo_core::config::{AssemblyTuning, DecayTuning, GateTuning, IngestTuning, LifecycleTuning, RankingTuning};
use mnemo_models::EmbedderSettings;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which extractor proposes memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ExtractorKind {
    /// Rules, no model: the offline default.
    #[default]
    Heuristic,
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
}

impl Default for Config {
    fn default() -> Self {
        let t = Tuning::default();
        Self {
            data_dir: default_data_dir(),
            database_url: None,
            embedder: EmbedderSettings::default(),
            extractor: ExtractorKind::default(),
            memory_scope: MemoryScope::default(),
            share_across_agents: false,
            ingest: t.ingest,
            gate: t.gate,
            ranking: t.ranking,
            decay: t.decay,
            lifecycle: t.lifecycle,
            assembly: t.assembly,
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
        }
    }

    /// The store file.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("mnemo.db")
    }

    /// Loads defaults, then the file (`path`, else `$MNEMO_CONFIG`, else `./mnemo.toml` if it
    /// exists), then the process environment.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let file =
            path.map(Path::to_path_buf).or_else(|| std::env::var_os("MNEMO_CONFIG").map(PathBuf::from)).or_else(|| {
                let p = PathBuf::from("mnemo.toml");
                p.exists().then_some(p)
            });
        Self::load_from(file.as_deref(), &env)
    }

    /// Like [`Config::load`] with an explicit file and environment (testable).
    pub fn load_from(file: Option<&Path>, env: &[(String, String)]) -> Result<Self> {
        let mut value = toml::Value::try_from(Config::default()).expect("defaults serialise");
        if let Some(path) = file {
            let text =
                std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
            let overlay: toml::Value = toml::from_str(&text)
                .map_err(|e| Error::Config { source_name: path.display().to_string(), reason: e.to_string() })?;
            merge(&mut value, overlay);
            check(&value, &path.display().to_string())?;
        }
        for (name, raw) in env {
            let Some(path) = env_path(name) else { continue };
            let mut overlay = toml::Value::Table(Default::default());
            set_path(&mut overlay, &path, guess(raw));
            merge(&mut value, overlay);
            check(&value, name)?;
        }
        let config: Config = value.try_into().map_err(|e: toml::de::Error| Error::Config {
            source_name: "configuration".into(),
            reason: e.to_string(),
        })?;
        config
            .tuning()
            .validate()
            .map_err(|e| Error::Config { source_name: "configuration".into(), reason: e.to_string() })?;
        Ok(config)
    }
}

/// Maps an environment variable to a config path: an alias, or `MNEMO_SECTION__FIELD`.
fn env_path(name: &str) -> Option<Vec<String>> {
    if let Some((_, path)) = ALIASES.iter().find(|(n, _)| *n == name) {
        return Some(path.split('.').map(str::to_string).collect());
    }
    let rest = name.strip_prefix("MNEMO_")?;
    rest.contains("__").then(|| rest.split("__").map(str::to_lowercase).collect())
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
