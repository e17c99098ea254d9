//! Embeddings over HTTP from any OpenAI-compatible server (OpenAI itself, llama.cpp,
//! vLLM, Ollama, text-embeddings-inference...), for users who would rather not run a model
//! in-process. Blocking, via ureq, so the crate stays free of async runtimes.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::embedder::{Embedder, normalize};
use crate::error::{ModelError, Result};

/// Largest reply body accepted; generous because big batches of wide vectors are verbose JSON.
const MAX_REPLY_BYTES: u64 = 512 * 1024 * 1024;
/// How much of an error body to quote in messages: enough to show the server's complaint.
const EXCERPT_CHARS: usize = 300;

/// Connection settings for [`OpenAiEmbedder`], separate from the engine-level
/// [`EmbedderSettings`](crate::EmbedderSettings) so the HTTP client can be used on its own.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// API root such as `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`;
    /// `/embeddings` is appended (a URL already ending in `/embeddings` is used as is).
    pub base_url: String,
    /// Model name sent in every request, and part of the embedder id.
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when present.
    pub api_key: Option<String>,
    /// Expected dimension; `None` learns it from the first reply (or a known model's size).
    pub dim: Option<usize>,
    /// Maximum inputs per request, to stay under server-side batch limits.
    pub batch_size: usize,
    /// Whole-request deadline, so a hung server cannot stall the caller forever.
    pub timeout: Duration,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("dim", &self.dim)
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl OpenAiConfig {
    /// Starts a config with the usual defaults (batch 32, 30 s timeout, no key, learned dim).
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            dim: None,
            batch_size: 32,
            timeout: Duration::from_secs(30),
        }
    }
}

/// Client for `POST {base_url}/embeddings`.
///
/// Validates every reply (count, indices, dimension, finiteness) and normalises vectors, so
/// a misbehaving server produces an error rather than silently corrupt rankings.
pub struct OpenAiEmbedder {
    agent: ureq::Agent,
    url: String,
    model: String,
    auth: Option<String>,
    id: String,
    batch_size: usize,
    /// 0 until known; set once from config, the known-model table or the first reply.
    dim: AtomicUsize,
}

impl fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("auth", &self.auth.as_ref().map(|_| "<redacted>"))
            .field("batch_size", &self.batch_size)
            .field("dim", &self.dim.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// Builds the client without touching the network; settings that can never work are
    /// rejected here rather than on the first embed.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        let base = config.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ModelError::InvalidSettings {
                field: "openai_base_url",
                reason: format!("`{base}` must start with http:// or https://"),
            });
        }
        if config.model.trim().is_empty() {
            return Err(ModelError::InvalidSettings {
                field: "openai_model",
                reason: "must name the embedding model, e.g. text-embedding-3-small".into(),
            });
        }
        if config.batch_size == 0 {
            return Err(ModelError::InvalidSettings { field: "batch_size", reason: "must be at least 1".into() });
        }
        if config.dim == Some(0) {
            return Err(ModelError::InvalidSettings {
                field: "openai_dim",
                reason: "must be positive (or unset to learn it from the server)".into(),
            });
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .new_agent();
        let dim = config.dim.or_else(|| known_dim(&config.model)).unwrap_or(0);
        Ok(Self {
            agent,
            url: embeddings_url(base),
            id: format!("openai:{}", config.model),
            model: config.model,
            auth: config.api_key.filter(|k| !k.is_empty()).map(|k| format!("Bearer {k}")),
            batch_size: config.batch_size,
            dim: AtomicUsize::new(dim),
        })
    }

    /// Full endpoint URL, for logs and error messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the dimension is already known, i.e. whether [`Embedder::dim`] is meaningful.
    pub fn dim_known(&self) -> bool {
        self.dim.load(Ordering::Acquire) != 0
    }

    /// Asks the server for one embedding so the dimension is known before anything is stored;
    /// returns it. Cheap no-op when the dimension is already known.
    pub fn probe_dim(&self) -> Result<usize> {
        if self.dim_known() {
            return Ok(self.dim.load(Ordering::Acquire));
        }
        self.request(&["dimension probe"])?;
        Ok(self.dim.load(Ordering::Acquire))
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let body = serde_json::json!({ "model": self.model, "input": texts });
        let mut req = self.agent.post(&self.url).header("Accept", "application/json");
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth);
        }
        let mut resp = req.send_json(&body).map_err(|e| self.http_err(&e))?;
        let status = resp.status().as_u16();
        let bytes =
            resp.body_mut().with_config().limit(MAX_REPLY_BYTES).read_to_vec().map_err(|e| self.http_err(&e))?;
        if !(200..300).contains(&status) {
            return Err(ModelError::HttpStatus { url: self.url.clone(), status, body_excerpt: excerpt(&bytes) });
        }
        let reply: Reply = serde_json::from_slice(&bytes)
            .map_err(|e| self.bad(format!("not an embeddings JSON object ({e}); body starts: {}", excerpt(&bytes))))?;
        self.validate(reply, texts.len())
    }

    /// Orders, checks and normalises one reply; `expected` is the number of inputs sent.
    fn validate(&self, reply: Reply, expected: usize) -> Result<Vec<Vec<f32>>> {
        if reply.data.len() != expected {
            return Err(self.bad(format!("sent {expected} inputs but got {} embeddings", reply.data.len())));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
        for item in reply.data {
            let slot = slots
                .get_mut(item.index)
                .ok_or_else(|| self.bad(format!("embedding index {} out of range 0..{expected}", item.index)))?;
            if slot.is_some() {
                return Err(self.bad(format!("embedding index {} appears twice", item.index)));
            }
            *slot = Some(item.embedding);
        }
        // Every slot is filled: `expected` distinct in-range indices were seen.
        let mut out: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
        for v in &mut out {
            if v.is_empty() {
                return Err(self.bad("empty embedding vector".into()));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(self.bad("embedding contains NaN or infinity".into()));
            }
            let got = v.len();
            // Learn the dimension from the first reply; afterwards every vector must match.
            let known = match self.dim.compare_exchange(0, got, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => got,
                Err(existing) => existing,
            };
            if got != known {
                return Err(ModelError::DimensionMismatch { expected: known, got });
            }
            normalize(v);
        }
        Ok(out)
    }

    fn http_err(&self, e: &ureq::Error) -> ModelError {
        ModelError::Http { url: self.url.clone(), reason: e.to_string() }
    }

    fn bad(&self, reason: String) -> ModelError {
        ModelError::BadResponse { url: self.url.clone(), reason }
    }
}

impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    /// Configured or learned dimension; 0 until the first reply when neither the settings
    /// nor the model name reveal it (call [`OpenAiEmbedder::probe_dim`] to avoid that).
    fn dim(&self) -> usize {
        self.dim.load(Ordering::Acquire)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch_size) {
            out.extend(self.request(chunk)?);
        }
        Ok(out)
    }
}

#[derive(Deserialize)]
struct Reply {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// Joins the base URL and `/embeddings` without doubling or dropping the slash.
fn embeddings_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/embeddings") { base.to_owned() } else { format!("{base}/embeddings") }
}

/// Native sizes of OpenAI's own models, so `dim()` is right before the first request.
fn known_dim(model: &str) -> Option<usize> {
    match model {
        "text-embedding-3-small" | "text-embedding-ada-002" => Some(1536),
        "text-embedding-3-large" => Some(3072),
        _ => None,
    }
}

/// First few hundred characters of a body, on one line, for error messages.
fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(EXCERPT_CHARS).collect();
    if one_line.chars().count() > EXCERPT_CHARS {
        out.push_str("...");
    }
    if out.is_empty() {
        out.push_str("<empty body>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_join() {
        assert_eq!(embeddings_url("http://h:1/v1"), "http://h:1/v1/embeddings");
        assert_eq!(embeddings_url("http://h:1/v1/"), "http://h:1/v1/embeddings");
        assert_eq!(embeddings_url("http://h:1/v1/embeddings"), "http://h:1/v1/embeddings");
        assert_eq!(embeddings_url("http://h:1"), "http://h:1/embeddings");
    }

    #[test]
    fn excerpt_is_short_and_single_line() {
        let long = "x\n".repeat(1000);
        let e = excerpt(long.as_bytes());
        assert!(e.len() <= EXCERPT_CHARS + 3 && !e.contains('\n'));
        assert_eq!(excerpt(b""), "<empty body>");
    }

    #[test]
    fn rejects_bad_config() {
        assert!(OpenAiEmbedder::new(OpenAiConfig::new("ftp://x", "m")).is_err());
        let mut c = OpenAiConfig::new("http://x", "m");
        c.batch_size = 0;
        assert!(OpenAiEmbedder::new(c).is_err());
    }

    #[test]
    fn debug_redacts_key() {
        let mut c = OpenAiConfig::new("http://x", "m");
        c.api_key = Some("sk-secret".into());
        assert!(!format!("{c:?}").contains("sk-secret"));
        let e = OpenAiEmbedder::new(c).unwrap();
        assert!(!format!("{e:?}").contains("sk-secret"));
    }
}
