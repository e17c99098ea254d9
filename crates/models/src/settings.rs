//! Embedder settings as they appear in mnemo's config file, and the one factory that turns
//! them into a ready embedder, so the engine never has to know about individual backends.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::embedder::Embedder;
use crate::error::{ModelError, Result};
use crate::hash::{DEFAULT_HASH_DIM, HashEmbedder};
use crate::openai::{OpenAiConfig, OpenAiEmbedder};

/// Directory name of the default model inside the cache; also what `id()` reports.
pub const DEFAULT_MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Which backend produces vectors; chosen per deployment (offline, hosted, tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    /// In-process BERT model (needs the `local` feature and fetched model files).
    Local,
    /// Any OpenAI-compatible HTTP embeddings endpoint.
    Openai,
    /// Deterministic feature hashing: no model, for tests and constrained setups.
    Hash,
}

impl EmbedderKind {
    /// Every accepted spelling, for help texts and error messages.
    pub const CHOICES: [&'static str; 3] = ["local", "openai", "hash"];

    /// The config-file spelling, so `Display` and `FromStr` round-trip.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Openai => "openai",
            Self::Hash => "hash",
        }
    }
}

impl fmt::Display for EmbedderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EmbedderKind {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "local" => Ok(Self::Local),
            "openai" => Ok(Self::Openai),
            "hash" => Ok(Self::Hash),
            other => Err(ModelError::InvalidSettings {
                field: "kind",
                reason: format!("unknown embedder kind `{other}`; expected one of: {}", Self::CHOICES.join(", ")),
            }),
        }
    }
}

/// The `[embedder]` section of mnemo's config; every field has a default so an empty
/// section means "local all-MiniLM-L6-v2 from the cache".
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedderSettings {
    /// Backend to use.
    pub kind: EmbedderKind,
    /// Local model directory; `None` means [`default_model_dir()`].
    pub model_dir: Option<PathBuf>,
    /// API root of the OpenAI-compatible server.
    pub openai_base_url: String,
    /// Embedding model name sent to the server.
    pub openai_model: String,
    /// Bearer token; when unset and the base URL is api.openai.com, `OPENAI_API_KEY` is used.
    pub openai_api_key: Option<String>,
    /// Expected dimension of remote vectors; `None` learns it (probing the server at open if
    /// the model is not one of OpenAI's well-known ones).
    pub openai_dim: Option<usize>,
    /// Dimension of hash vectors.
    pub hash_dim: usize,
    /// Texts per forward pass (local) or per HTTP request (openai).
    pub batch_size: usize,
    /// HTTP request deadline in seconds.
    pub timeout_secs: u64,
}

impl Default for EmbedderSettings {
    fn default() -> Self {
        Self {
            kind: EmbedderKind::Local,
            model_dir: None,
            openai_base_url: "https://api.openai.com/v1".into(),
            openai_model: "text-embedding-3-small".into(),
            openai_api_key: None,
            openai_dim: None,
            hash_dim: DEFAULT_HASH_DIM,
            batch_size: 32,
            timeout_secs: 30,
        }
    }
}

/// Hand-written so an API key never reaches logs through `{:?}`.
impl fmt::Debug for EmbedderSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbedderSettings")
            .field("kind", &self.kind)
            .field("model_dir", &self.model_dir)
            .field("openai_base_url", &self.openai_base_url)
            .field("openai_model", &self.openai_model)
            .field("openai_api_key", &self.openai_api_key.as_ref().map(|_| "<redacted>"))
            .field("openai_dim", &self.openai_dim)
            .field("hash_dim", &self.hash_dim)
            .field("batch_size", &self.batch_size)
            .field("timeout_secs", &self.timeout_secs)
            .finish()
    }
}

impl EmbedderSettings {
    /// The directory the local model is read from: the configured one or the default cache.
    pub fn resolved_model_dir(&self) -> PathBuf {
        self.model_dir.clone().unwrap_or_else(default_model_dir)
    }

    /// HTTP client settings derived from these settings, with the `OPENAI_API_KEY` fallback
    /// applied only for OpenAI's own endpoint so the key never leaks to third-party servers.
    pub fn openai_config(&self) -> OpenAiConfig {
        let api_key = self.openai_api_key.clone().or_else(|| {
            let official = self.openai_base_url.trim().starts_with("https://api.openai.com/");
            official.then(|| std::env::var("OPENAI_API_KEY").ok()).flatten().filter(|k| !k.is_empty())
        });
        OpenAiConfig {
            base_url: self.openai_base_url.clone(),
            model: self.openai_model.clone(),
            api_key,
            dim: self.openai_dim,
            batch_size: self.batch_size,
            timeout: Duration::from_secs(self.timeout_secs),
        }
    }
}

/// Where the local model lives when the config does not say: `$MNEMO_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/mnemo/models/all-MiniLM-L6-v2`, else `$HOME/.cache/mnemo/models/...`.
///
/// Shared by the loader, `mnemo model fetch` and scripts/fetch-model.sh so all three agree.
pub fn default_model_dir() -> PathBuf {
    model_dir_from_env(|name| std::env::var_os(name))
}

/// [`default_model_dir`] with the environment passed in, so the precedence is testable
/// without mutating the process environment.
fn model_dir_from_env(get: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let env = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = env("MNEMO_MODEL_DIR") {
        return dir;
    }
    let cache =
        env("XDG_CACHE_HOME").unwrap_or_else(|| env("HOME").unwrap_or_else(|| PathBuf::from(".")).join(".cache"));
    cache.join("mnemo").join("models").join(DEFAULT_MODEL_NAME)
}

/// Builds the embedder the settings describe, failing early (missing model, disabled
/// feature, nonsensical numbers, unreachable server when the dimension must be probed)
/// instead of on the first write.
pub fn open_embedder(s: &EmbedderSettings) -> Result<Arc<dyn Embedder>> {
    if s.batch_size == 0 {
        return Err(ModelError::InvalidSettings { field: "batch_size", reason: "must be at least 1".into() });
    }
    match s.kind {
        EmbedderKind::Hash => {
            if s.hash_dim == 0 {
                return Err(ModelError::InvalidSettings { field: "hash_dim", reason: "must be at least 1".into() });
            }
            Ok(Arc::new(HashEmbedder::new(s.hash_dim)))
        }
        EmbedderKind::Openai => {
            if s.timeout_secs == 0 {
                return Err(ModelError::InvalidSettings {
                    field: "timeout_secs",
                    reason: "must be at least 1 second".into(),
                });
            }
            let e = OpenAiEmbedder::new(s.openai_config())?;
            e.probe_dim()?;
            Ok(Arc::new(e))
        }
        EmbedderKind::Local => open_local(s),
    }
}

#[cfg(feature = "local")]
fn open_local(s: &EmbedderSettings) -> Result<Arc<dyn Embedder>> {
    let e = crate::local::LocalEmbedder::open(&s.resolved_model_dir())?.with_batch_size(s.batch_size);
    Ok(Arc::new(e))
}

#[cfg(not(feature = "local"))]
fn open_local(_s: &EmbedderSettings) -> Result<Arc<dyn Embedder>> {
    Err(ModelError::FeatureDisabled("local"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(vars: &[(&str, &str)]) -> PathBuf {
        model_dir_from_env(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).into()))
    }

    #[test]
    fn model_dir_precedence() {
        let all = [("MNEMO_MODEL_DIR", "/m"), ("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")];
        assert_eq!(dir_with(&all), PathBuf::from("/m"));
        assert_eq!(dir_with(&all[1..]), PathBuf::from("/xdg/mnemo/models/all-MiniLM-L6-v2"));
        assert_eq!(dir_with(&all[2..]), PathBuf::from("/home/u/.cache/mnemo/models/all-MiniLM-L6-v2"));
        // Empty values count as unset, as in most shells' `${VAR:-default}`.
        assert_eq!(
            dir_with(&[("MNEMO_MODEL_DIR", ""), ("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/mnemo/models/all-MiniLM-L6-v2")
        );
    }
}
