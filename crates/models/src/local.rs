//! In-process sentence embeddings with a BERT-family model (all-MiniLM-L6-v2 by default) on
//! the CPU via candle, so mnemo works offline with no server to run.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

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
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
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
        let device = Device::Cpu;

        let config_path = dir.join("config.json");
        let config_text = std::fs::read_to_string(&config_path).map_err(|e| ModelError::io(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| ModelError::Load { path: config_path.clone(), reason: e.to_string() })?;

        let weights_path = dir.join("model.safetensors");
        let load_err = |reason: String| ModelError::Load { path: weights_path.clone(), reason };
        let tensors = candle_core::safetensors::load(&weights_path, &device).map_err(|e| load_err(e.to_string()))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = BertModel::load(vb, &config).map_err(|e| load_err(e.to_string()))?;

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
            device,
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

    /// Encoder forward pass plus mean pooling over real (unpadded) tokens.
    fn forward_pooled(
        &self,
        batch: usize,
        seq: usize,
        ids: Vec<u32>,
        types: Vec<u32>,
        mask: Option<Vec<u32>>,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let ids = Tensor::from_vec(ids, (batch, seq), &self.device)?;
        let types = Tensor::from_vec(types, (batch, seq), &self.device)?;
        let mask = mask.map(|m| Tensor::from_vec(m, (batch, seq), &self.device)).transpose()?;
        let hidden = self.model.forward(&ids, &types, mask.as_ref())?; // (batch, seq, dim)
        let pooled = match &mask {
            None => hidden.mean(1)?,
            Some(mask) => {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, seq, 1)
                let summed = hidden.broadcast_mul(&m)?.sum(1)?; // (batch, dim)
                let counts = m.sum(1)?.clamp(1f32, f32::MAX)?; // (batch, 1); never 0 with [CLS]
                summed.broadcast_div(&counts)?
            }
        };
        pooled.to_vec2::<f32>()
    }

    /// Runs one forward pass over texts that are already grouped for similar lengths.
    fn embed_chunk(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = if let [text] = texts {
            // A lone text needs no padding and skips the batch machinery.
            vec![self.tokenizer.encode(*text, true).map_err(tok_err)?]
        } else {
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(tok_err)?
        };
        let batch = encodings.len();
        let seq = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(batch * seq);
        let mut types = Vec::with_capacity(batch * seq);
        let mut mask = Vec::with_capacity(batch * seq);
        for e in &encodings {
            // BatchLongest padding makes every encoding `seq` long; guard anyway.
            if e.len() != seq {
                return Err(ModelError::Inference(format!("ragged batch: {} vs {seq} tokens", e.len())));
            }
            ids.extend_from_slice(e.get_ids());
            types.extend_from_slice(e.get_type_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let padded = mask.contains(&0);
        let mut rows = self.forward_pooled(batch, seq, ids, types, padded.then_some(mask)).map_err(inf_err)?;
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
        if texts.len() <= 1 {
            return if texts.is_empty() { Ok(Vec::new()) } else { self.embed_chunk(texts) };
        }
        // Batch texts of similar length together so short ones are not padded to the longest
        // of the whole input; a cheap byte-length proxy is good enough for grouping.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for group in order.chunks(self.batch_size) {
            let chunk: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            for (&i, v) in group.iter().zip(self.embed_chunk(&chunk)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// Loads the tokenizer and replaces its shipped padding/truncation: all-MiniLM's file pads
/// every input to 128 tokens, which wastes most of the compute on short queries.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let load_err = |reason: String| ModelError::Load { path: path.to_path_buf(), reason };
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| load_err(e.to_string()))?;
    let padding = PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..tokenizer.get_padding().cloned().unwrap_or_default()
    };
    tokenizer.with_padding(Some(padding));
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

// Both helpers take the error by value because they are used as `map_err` callbacks.
#[allow(clippy::needless_pass_by_value)]
fn inf_err(e: candle_core::Error) -> ModelError {
    ModelError::Inference(e.to_string())
}

#[allow(clippy::needless_pass_by_value)]
fn tok_err(e: tokenizers::Error) -> ModelError {
    ModelError::Inference(format!("tokenizer: {e}"))
}
