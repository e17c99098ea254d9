//! In-process sentence embeddings with a BERT-family model (all-MiniLM-L6-v2 by default) on
//! the CPU (the encoder is [`crate::bert`]), so mnemo works offline with no server to run.

use std::path::{Path, PathBuf};

use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, Config, Tokens};
use crate::embedder::{Embedder, normalize};
use crate::error::{ModelError, Result};
use crate::fetch::model_present;

/// Token budget per text when the model directory does not say otherwise; sentence-transformers
/// trained all-MiniLM-L6-v2 with 256, and longer inputs only dilute the mean.
const DEFAULT_MAX_TOKENS: usize = 256;
/// Texts per forward pass: big enough to amortise overhead, small enough to bound memory.
const DEFAULT_BATCH: usize = 32;

/// A BERT-family encoder with mean pooling, matching how sentence-transformers models are
/// meant to be used.
pub struct LocalEmbedder {
    model: Bert,
    tokenizer: Tokenizer,
    id: String,
    dim: usize,
    batch_size: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("id", &self.id)
            .field("dim", &self.dim)
            .field("batch_size", &self.batch_size)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    /// Loads `config.json`, `model.safetensors` and `tokenizer.json` from `dir`.
    ///
    /// Fails with [`ModelError::ModelNotFound`] when any file is missing, so the caller can
    /// point the user at `mnemo model fetch`.
    pub fn open(dir: &Path) -> Result<Self> {
        if !model_present(dir) {
            return Err(ModelError::ModelNotFound { dir: dir.to_path_buf() });
        }
        let config_path = dir.join("config.json");
        let config_text = std::fs::read_to_string(&config_path).map_err(|e| ModelError::io(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| ModelError::Load { path: config_path.clone(), reason: e.to_string() })?;

        let weights_path = dir.join("model.safetensors");
        let load_err = |reason: String| ModelError::Load { path: weights_path.clone(), reason };
        let weights = std::fs::read(&weights_path).map_err(|e| ModelError::io(&weights_path, e))?;
        let model = Bert::load(&config, &weights).map_err(load_err)?;

        let max_tokens = max_seq_length(dir).unwrap_or(DEFAULT_MAX_TOKENS).min(config.max_position_embeddings);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), max_tokens)?;

        let name = dir
            .canonicalize()
            .ok()
            .as_deref()
            .unwrap_or(dir)
            .file_name()
            .map_or_else(|| "model".to_owned(), |n| n.to_string_lossy().into_owned());
        Ok(Self {
            model,
            tokenizer,
            id: format!("local:{name}"),
            dim: config.hidden_size,
            batch_size: DEFAULT_BATCH,
            dir: dir.to_path_buf(),
        })
    }

    /// Changes how many texts share one forward pass (minimum 1); larger trades memory for
    /// throughput on long batches.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Directory the model was loaded from, for diagnostics.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs one forward pass over `texts`, laid end to end (no padding).
    fn embed_chunk(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = if let [text] = texts {
            vec![self.tokenizer.encode(*text, true).map_err(tok_err)?]
        } else {
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(tok_err)?
        };
        let tokens: Vec<Tokens<'_>> =
            encodings.iter().map(|e| Tokens { ids: e.get_ids(), types: e.get_type_ids() }).collect();
        let mut rows = self.model.pooled(&tokens).map_err(ModelError::Inference)?;
        for r in &mut rows {
            if r.len() != self.dim {
                return Err(ModelError::DimensionMismatch { expected: self.dim, got: r.len() });
            }
            normalize(r);
        }
        Ok(rows)
    }
}

impl Embedder for LocalEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match bulk_pool() {
            Some(pool) => pool.install(|| self.embed_here(texts)),
            None => self.embed_here(texts),
        }
    }

    fn embed_query(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_here(texts)
    }
}

/// How much nicer than the process the threads of bulk embedding run: at +10, Linux gives a
/// thread at the default priority about nine times the CPU share of one of them.
const BULK_NICENESS: i32 = 10;

/// The threads bulk embedding (ingest, documents) runs its passes on, at a lower CPU priority
/// than the process: a query's pass ([`Embedder::embed_query`]) runs on rayon's global pool at
/// the process's own, so on a machine whose cores an import keeps busy the query still gets
/// them at once, instead of queueing its pass behind the import's work in one shared pool.
/// None where the pool cannot be built (bulk then shares the global pool).
fn bulk_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("mnemo-embed-bulk-{i}"))
            .start_handler(|_| crate::lower_thread_priority(BULK_NICENESS))
            .build()
            .ok()
    })
    .as_ref()
}

impl LocalEmbedder {
    /// Embeds `texts` on the current thread pool, in chunks of `batch_size`.
    fn embed_here(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.len() <= 1 {
            return if texts.is_empty() { Ok(Vec::new()) } else { self.embed_chunk(texts) };
        }
        // Texts are never padded, so a chunk only bounds the memory of one pass.
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch_size) {
            out.extend(self.embed_chunk(chunk)?);
        }
        Ok(out)
    }
}

/// Loads the tokenizer and removes its shipped padding: all-MiniLM's file pads every input to
/// 128 tokens, and the encoder takes each text at its own length.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let load_err = |reason: String| ModelError::Load { path: path.to_path_buf(), reason };
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| load_err(e.to_string()))?;
    tokenizer.with_padding(None);
    let truncation =
        TruncationParams { max_length: max_tokens, ..tokenizer.get_truncation().cloned().unwrap_or_default() };
    tokenizer.with_truncation(Some(truncation)).map_err(|e| load_err(e.to_string()))?;
    Ok(tokenizer)
}

/// Reads `max_seq_length` from sentence-transformers' `sentence_bert_config.json`, if shipped.
fn max_seq_length(dir: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join("sentence_bert_config.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("max_seq_length")?.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|&n| n > 0)
}

// Taken by value because it is a `map_err` callback.
#[allow(clippy::needless_pass_by_value)]
fn tok_err(e: tokenizers::Error) -> ModelError {
    ModelError::Inference(format!("tokenizer: {e}"))
}
