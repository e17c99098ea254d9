//! The encoder of a BERT-family model (all-MiniLM-L6-v2 by default), run on the CPU in plain
//! Rust: token, position and segment embeddings, then self-attention and feed-forward layers.
//!
//! Why not a tensor library: a query is about ten tokens, and a general matrix multiply packs
//! every weight matrix into its own layout on every call, which was two thirds of the time a
//! query took. Here the weights are packed once, at load, the way the products read them
//! (panels of outputs, input by input, for a tile of rows held in registers); the texts of a
//! batch are laid end to end, never padded to the longest, and attention stays within each
//! text; the products run in a copy of the code compiled for AVX-512 or AVX2 and FMA when the
//! CPU has them (chosen at run time by `pulp`, so the binary still runs anywhere).

use std::ops::Range;

use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

/// What the encoder needs from the model's `config.json` (Hugging Face's BERT configuration).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    vocab_size: usize,
    pub(crate) hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    #[serde(default = "default_act")]
    hidden_act: String,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    type_vocab_size: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    model_type: Option<String>,
    #[serde(default)]
    position_embedding_type: Option<String>,
}

fn default_act() -> String {
    "gelu".to_owned()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

/// The feed-forward layer's nonlinearity, by the names Hugging Face configurations use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activation {
    /// `gelu`: the exact form, with the error function (BERT, MiniLM).
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`, `gelu_approximate`: the tanh approximation.
    GeluTanh,
    /// `relu`.
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Result<Self, String> {
        match name {
            "gelu" => Ok(Self::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_approximate" | "gelu_fast" => Ok(Self::GeluTanh),
            "relu" => Ok(Self::Relu),
            other => Err(format!("hidden_act {other:?} is not supported (gelu, gelu_new, gelu_pytorch_tanh or relu)")),
        }
    }
}

/// A dense layer, its weights packed at load for the product's register tile.
///
/// `packed` holds the outputs in panels of `panel` (two of the CPU's vectors): for each panel,
/// input by input, the panel's weights of that input side by side, zero past the last output.
/// The product then reads each weight once per tile of rows, as whole vectors, and never sums
/// across a vector's lanes.
struct Linear {
    packed: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    panel: usize,
}

impl Linear {
    /// Packs `weight` (one row of `inputs` values per output, as checkpoints store it) for the
    /// vectors of `arch`.
    fn new(arch: Arch, weight: &[f32], bias: Vec<f32>, inputs: usize) -> Self {
        let panel = 2 * arch.dispatch(Lanes);
        let n = bias.len();
        debug_assert_eq!(weight.len(), n * inputs);
        let mut packed = vec![0.0; n.next_multiple_of(panel) * inputs];
        for (p, block) in packed.chunks_exact_mut(panel * inputs).enumerate() {
            for (i, at) in block.chunks_exact_mut(panel).enumerate() {
                for (j, w) in at.iter_mut().enumerate().take(n.saturating_sub(p * panel)) {
                    *w = weight[(p * panel + j) * inputs + i];
                }
            }
        }
        Self { packed, bias, inputs, panel }
    }

    fn outputs(&self) -> usize {
        self.bias.len()
    }

    /// `x` (rows of `inputs`) times the weights, plus the bias: rows of `outputs()`.
    ///
    /// Spread over the CPU's threads when there is enough work: a batch by blocks of rows, a
    /// query (a few rows) by the panels of outputs, each thread reading only its own weights.
    fn forward(&self, arch: Arch, x: &[f32]) -> Vec<f32> {
        let (k, n, panel) = (self.inputs, self.outputs(), self.panel);
        let rows = x.len() / k;
        let mut out = vec![0.0; rows * n];
        let threads = rayon::current_num_threads();
        if threads < 2 || rows * n * k < PARALLEL_WORK {
            self.product(arch, x, 0..n, &mut out);
        } else if rows >= 2 * BLOCK {
            out.par_chunks_mut(BLOCK * n).zip(x.par_chunks(BLOCK * k)).for_each(|(out, x)| {
                self.product(arch, x, 0..n, out);
            });
        } else {
            let per = n.div_ceil(panel).div_ceil(threads) * panel;
            let parts: Vec<(usize, Vec<f32>)> = (0..n)
                .step_by(per)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|c0| {
                    let c1 = (c0 + per).min(n);
                    let mut part = vec![0.0; rows * (c1 - c0)];
                    self.product(arch, x, c0..c1, &mut part);
                    (c0, part)
                })
                .collect();
            for (c0, part) in parts {
                let width = part.len() / rows;
                for (row, src) in out.chunks_exact_mut(n).zip(part.chunks_exact(width)) {
                    row[c0..c0 + width].copy_from_slice(src);
                }
            }
        }
        out
    }

    /// The outputs `cols` (starting on a panel) of `x`'s rows, into `out`.
    fn product(&self, arch: Arch, x: &[f32], cols: Range<usize>, out: &mut [f32]) {
        let (k, panel) = (self.inputs, self.panel);
        let packed = &self.packed[cols.start * k..cols.end.next_multiple_of(panel) * k];
        arch.dispatch(Product { x, packed, bias: &self.bias[cols], k, panel, out });
    }
}

/// Layer normalisation's scale and shift.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Norm {
    /// Normalises every row of `x` in place.
    fn apply(&self, x: &mut [f32], eps: f32) {
        let n = self.weight.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

/// One transformer layer; query, key and value share one product (their rows end to end).
struct Layer {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// A loaded encoder.
pub(crate) struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    activation: Activation,
    eps: f32,
    arch: Arch,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert")
            .field("hidden", &self.hidden)
            .field("layers", &self.layers.len())
            .field("heads", &self.heads)
            .field("activation", &self.activation)
            .finish_non_exhaustive()
    }
}

/// One text to encode: its token ids and segment (token type) ids, of equal length.
pub(crate) struct Tokens<'a> {
    pub(crate) ids: &'a [u32],
    pub(crate) types: &'a [u32],
}

impl Bert {
    /// Reads the weights a BERT checkpoint names (with or without the `bert.` prefix, layer
    /// norms as `weight`/`bias` or `gamma`/`beta`, in f32, f16 or bf16) and lays them out.
    pub(crate) fn load(config: &Config, weights: &[u8]) -> Result<Self, String> {
        let activation = Activation::parse(&config.hidden_act)?;
        if let Some(kind) = config.position_embedding_type.as_deref().filter(|k| *k != "absolute") {
            return Err(format!("position_embedding_type {kind:?} is not supported (absolute only)"));
        }
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || hidden % heads != 0 {
            return Err(format!("hidden_size {hidden} is not a multiple of num_attention_heads {heads}"));
        }
        let st = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
        let t = Weights::new(&st, config.model_type.as_deref())?;
        let intermediate = config.intermediate_size;
        let arch = Arch::new();
        let linear = |name: &str, outputs: usize, inputs: usize| -> Result<Linear, String> {
            let weight = t.get(&format!("{name}.weight"), &[outputs, inputs])?;
            Ok(Linear::new(arch, &weight, t.get(&format!("{name}.bias"), &[outputs])?, inputs))
        };
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                let part = |name: &str| -> Result<(Vec<f32>, Vec<f32>), String> {
                    let name = format!("{p}.attention.self.{name}");
                    Ok((
                        t.get(&format!("{name}.weight"), &[hidden, hidden])?,
                        t.get(&format!("{name}.bias"), &[hidden])?,
                    ))
                };
                let [(qw, qb), (kw, kb), (vw, vb)] = [part("query")?, part("key")?, part("value")?];
                let qkv = Linear::new(arch, &[qw, kw, vw].concat(), [qb, kb, vb].concat(), hidden);
                Ok(Layer {
                    qkv,
                    attention_out: linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
                    attention_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), hidden)?,
                    intermediate: linear(&format!("{p}.intermediate.dense"), intermediate, hidden)?,
                    output: linear(&format!("{p}.output.dense"), hidden, intermediate)?,
                    output_norm: t.norm(&format!("{p}.output.LayerNorm"), hidden)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            word: t.get("embeddings.word_embeddings.weight", &[config.vocab_size, hidden])?,
            position: t.get("embeddings.position_embeddings.weight", &[config.max_position_embeddings, hidden])?,
            token_type: t.get("embeddings.token_type_embeddings.weight", &[config.type_vocab_size, hidden])?,
            embedding_norm: t.norm("embeddings.LayerNorm", hidden)?,
            layers,
            hidden,
            heads,
            activation,
            #[allow(clippy::cast_possible_truncation)]
            eps: config.layer_norm_eps as f32,
            arch,
        })
    }

    /// The mean of each text's last hidden states (every token, [CLS] and [SEP] included, as
    /// sentence-transformers pools), not yet normalised.
    pub(crate) fn pooled(&self, texts: &[Tokens<'_>]) -> Result<Vec<Vec<f32>>, String> {
        // The whole pass goes to the thread pool at once: its parallel steps (some thirty per
        // pass) then fork from a worker, where the other worker steals half, instead of each
        // waking the pool from outside and waiting for it, which cost a tenth of a query's time.
        rayon::scope(|_| self.encode(texts))
    }

    fn encode(&self, texts: &[Tokens<'_>]) -> Result<Vec<Vec<f32>>, String> {
        let h = self.hidden;
        // The tables' sizes, from the tables themselves (their shapes were checked at load).
        let (positions, vocab, types) = (self.position.len() / h, self.word.len() / h, self.token_type.len() / h);
        let mut spans = Vec::with_capacity(texts.len());
        let mut x = Vec::new();
        for t in texts {
            if t.ids.len() != t.types.len() || t.ids.len() > positions {
                return Err(format!("{} tokens for {positions} positions", t.ids.len()));
            }
            let start = x.len() / h;
            for (pos, (&id, &ty)) in t.ids.iter().zip(t.types).enumerate() {
                let (id, ty) = (id as usize, ty as usize);
                if id >= vocab || ty >= types {
                    return Err(format!("token {id} (type {ty}) is outside the model's vocabulary"));
                }
                let word = &self.word[id * h..][..h];
                let position = &self.position[pos * h..][..h];
                let segment = &self.token_type[ty * h..][..h];
                x.extend(word.iter().zip(position).zip(segment).map(|((a, b), c)| a + b + c));
            }
            spans.push(start..x.len() / h);
        }
        self.embedding_norm.apply(&mut x, self.eps);
        for layer in &self.layers {
            x = self.layer(layer, &x, &spans);
        }
        Ok(spans
            .iter()
            .map(|span| {
                let mut sum = vec![0.0f32; h];
                for row in x[span.start * h..span.end * h].chunks_exact(h) {
                    sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
                }
                let n = span.len().max(1) as f32;
                sum.iter_mut().for_each(|s| *s /= n);
                sum
            })
            .collect())
    }

    fn layer(&self, layer: &Layer, x: &[f32], spans: &[Range<usize>]) -> Vec<f32> {
        let qkv = layer.qkv.forward(self.arch, x);
        let mut context = vec![0.0; x.len()];
        // Each text attends to itself only, so texts go to threads whole.
        let mut rest = context.as_mut_slice();
        let mut outs = Vec::with_capacity(spans.len());
        for span in spans {
            let (head, tail) = rest.split_at_mut(span.len() * self.hidden);
            outs.push((span.start, head));
            rest = tail;
        }
        let (arch, hidden, heads) = (self.arch, self.hidden, self.heads);
        outs.into_par_iter().for_each(|(start, out)| {
            arch.dispatch(Attention { qkv: &qkv[start * 3 * hidden..], hidden, heads, rows: out.len() / hidden, out });
        });
        let mut attended = layer.attention_out.forward(self.arch, &context);
        attended.iter_mut().zip(x).for_each(|(a, r)| *a += r);
        layer.attention_norm.apply(&mut attended, self.eps);
        let mut inner = layer.intermediate.forward(self.arch, &attended);
        let activation = self.activation;
        inner.par_chunks_mut(BLOCK * self.hidden).for_each(|values| arch.dispatch(Activate { activation, values }));
        let mut out = layer.output.forward(self.arch, &inner);
        out.iter_mut().zip(&attended).for_each(|(o, r)| *o += r);
        layer.output_norm.apply(&mut out, self.eps);
        out
    }
}

/// Named tensors of a checkpoint, with the prefix its names carry.
struct Weights<'a> {
    st: &'a SafeTensors<'a>,
    prefix: String,
}

impl<'a> Weights<'a> {
    fn new(st: &'a SafeTensors<'a>, model_type: Option<&str>) -> Result<Self, String> {
        let probe = "embeddings.word_embeddings.weight";
        let mut prefixes = vec![String::new()];
        prefixes.extend(model_type.map(|m| format!("{m}.")));
        prefixes.push("bert.".to_owned());
        prefixes
            .into_iter()
            .find(|p| st.tensor(&format!("{p}{probe}")).is_ok())
            .map(|prefix| Self { st, prefix })
            .ok_or_else(|| format!("no tensor named {probe} (with or without a model prefix): not a BERT checkpoint"))
    }

    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let view = self.st.tensor(&full).map_err(|_| format!("tensor {full} is missing"))?;
        if view.shape() != shape {
            return Err(format!("tensor {full} has shape {:?}, expected {shape:?}", view.shape()));
        }
        let bytes = view.data();
        Ok(match view.dtype() {
            Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => bytes.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            other => return Err(format!("tensor {full} is {other:?}; f32, f16 or bf16 expected")),
        })
    }

    fn norm(&self, name: &str, n: usize) -> Result<Norm, String> {
        let pair = |w: &str, b: &str| -> Result<Norm, String> {
            Ok(Norm { weight: self.get(&format!("{name}.{w}"), &[n])?, bias: self.get(&format!("{name}.{b}"), &[n])? })
        };
        pair("weight", "bias").or_else(|e| pair("gamma", "beta").map_err(|_| e))
    }
}

/// IEEE half precision to single (exact: every f16 is an f32).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    match exp {
        0 => {
            let v = man as f32 * (1.0 / 16_777_216.0); // subnormal: man × 2^-24
            if sign == 0 { v } else { -v }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
    }
}

/// Multiply-adds of a product below which one thread does it all (waking others costs more).
const PARALLEL_WORK: usize = 1 << 20;
/// Rows per block, so that a block's inputs stay in the L2 cache while every panel of weights
/// passes over them.
const BLOCK: usize = 64;

/// The CPU's f32 lanes per vector, which sets the width of the packed panels.
struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) -> usize {
        S::F32_LANES
    }
}

/// `out = x · W + bias`, `x` rows of `k`, `packed` the panels of W (see [`Linear`]) for the
/// outputs `bias` covers.
struct Product<'a> {
    x: &'a [f32],
    packed: &'a [f32],
    bias: &'a [f32],
    k: usize,
    panel: usize,
    out: &'a mut [f32],
}

impl WithSimd for Product<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { x, packed, bias, k, panel, out } = self;
        debug_assert_eq!(panel, 2 * S::F32_LANES);
        let n = bias.len();
        let rows = x.len() / k;
        // Rows per tile: the tile's 2 × rows accumulators and the panel's two vectors fit in
        // the registers (32 with AVX-512, 16 with AVX2); the rows are cut into tiles of equal
        // size, so that no tile is left with a row or two.
        let most = match S::F32_LANES {
            16.. => 12,
            8 => 6,
            _ => 4,
        };
        let tiles = rows.div_ceil(most);
        // Each tile's inputs, input by input (its rows side by side), read as broadcasts.
        let mut bounds = Vec::with_capacity(tiles + 1);
        let mut inputs = vec![0.0; rows * k];
        let mut r0 = 0;
        bounds.push(0);
        for t in 0..tiles {
            let r1 = r0 + rows / tiles + usize::from(t < rows % tiles);
            let size = r1 - r0;
            for (i, at) in inputs[r0 * k..r1 * k].chunks_exact_mut(size).enumerate() {
                for (j, v) in at.iter_mut().enumerate() {
                    *v = x[(r0 + j) * k + i];
                }
            }
            bounds.push(r1);
            r0 = r1;
        }
        for (p, weights) in packed.chunks_exact(panel * k).enumerate() {
            let (weights, _) = S::as_simd_f32s(weights);
            let c0 = p * panel;
            let width = panel.min(n - c0);
            for pair in bounds.windows(2) {
                let (r0, r1) = (pair[0], pair[1]);
                let tile = Tile {
                    inputs: &inputs[r0 * k..r1 * k],
                    weights,
                    bias: &bias[c0..c0 + width],
                    n,
                    c0,
                    r0,
                    out: &mut *out,
                };
                match r1 - r0 {
                    1 => tile.run::<1>(simd),
                    2 => tile.run::<2>(simd),
                    3 => tile.run::<3>(simd),
                    4 => tile.run::<4>(simd),
                    5 => tile.run::<5>(simd),
                    6 => tile.run::<6>(simd),
                    7 => tile.run::<7>(simd),
                    8 => tile.run::<8>(simd),
                    9 => tile.run::<9>(simd),
                    10 => tile.run::<10>(simd),
                    11 => tile.run::<11>(simd),
                    _ => tile.run::<12>(simd),
                }
            }
        }
    }
}

/// One tile of a product: a few rows against one panel of outputs.
struct Tile<'a, 'o, S: Simd> {
    /// The tile's rows, input by input.
    inputs: &'a [f32],
    /// The panel: two vectors per input.
    weights: &'a [S::f32s],
    /// The panel's outputs' biases (fewer than the panel's width in the last panel).
    bias: &'a [f32],
    /// Outputs per row of `out`, and the panel's first.
    n: usize,
    c0: usize,
    /// The tile's first row.
    r0: usize,
    out: &'o mut [f32],
}

impl<S: Simd> Tile<'_, '_, S> {
    /// `R` rows times the panel: every input's weights are loaded once and multiplied into
    /// every row's accumulators, which stay in registers to the end.
    #[inline(always)]
    fn run<const R: usize>(self, simd: S) {
        let Self { inputs, weights, bias, n, c0, r0, out } = self;
        let (inputs, _) = pulp::as_arrays::<R, f32>(inputs);
        let mut acc = [[simd.splat_f32s(0.0); 2]; R];
        for (x, w) in inputs.iter().zip(weights.chunks_exact(2)) {
            let (w0, w1) = (w[0], w[1]);
            for (a, &xi) in acc.iter_mut().zip(x) {
                let xi = simd.splat_f32s(xi);
                a[0] = simd.mul_add_f32s(xi, w0, a[0]);
                a[1] = simd.mul_add_f32s(xi, w1, a[1]);
            }
        }
        // Vector stores (masked at the panel's end), never the accumulators' addresses: an
        // address taken makes the compiler keep them in memory, a store per multiply-add.
        let lanes = S::F32_LANES.min(bias.len());
        let (b0, b1) = (simd.partial_load_f32s(&bias[..lanes]), simd.partial_load_f32s(&bias[lanes..]));
        for (i, a) in acc.into_iter().enumerate() {
            let row = &mut out[(r0 + i) * n + c0..][..bias.len()];
            let (first, second) = row.split_at_mut(lanes);
            simd.partial_store_f32s(first, simd.add_f32s(a[0], b0));
            simd.partial_store_f32s(second, simd.add_f32s(a[1], b1));
        }
    }
}

/// Self-attention within one text of `rows` tokens: `qkv` holds each token's query, key and
/// value (each `hidden` wide, `heads` heads of `hidden / heads`); `out` gets each token's
/// context.
struct Attention<'a> {
    qkv: &'a [f32],
    hidden: usize,
    heads: usize,
    rows: usize,
    out: &'a mut [f32],
}

impl WithSimd for Attention<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { qkv, hidden, heads, rows, out } = self;
        let d = hidden / heads;
        #[allow(clippy::cast_precision_loss)]
        let scale = 1.0 / (d as f32).sqrt();
        // Plain loops, no closures: a closure would be compiled without the CPU's features.
        let width = 3 * hidden;
        let mut scores = vec![0.0; rows];
        for head in 0..heads {
            let (q0, k0, v0) = (head * d, hidden + head * d, 2 * hidden + head * d);
            for i in 0..rows {
                let q = &qkv[i * width + q0..][..d];
                for (j, score) in scores.iter_mut().enumerate() {
                    *score = dot(simd, q, &qkv[j * width + k0..][..d]) * scale;
                }
                softmax(&mut scores);
                let ctx = &mut out[i * hidden + head * d..][..d];
                for (j, p) in scores.iter().enumerate() {
                    for (c, v) in ctx.iter_mut().zip(&qkv[j * width + v0..][..d]) {
                        *c += p * v;
                    }
                }
            }
        }
    }
}

#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let (ah, at) = S::as_simd_f32s(a);
    let (bh, bt) = S::as_simd_f32s(b);
    let mut acc = simd.splat_f32s(0.0);
    for (x, y) in ah.iter().zip(bh) {
        acc = simd.mul_add_f32s(*x, *y, acc);
    }
    let mut tail = 0.0;
    for (x, y) in at.iter().zip(bt) {
        tail += x * y;
    }
    simd.reduce_sum_f32s(acc) + tail
}

#[inline(always)]
fn softmax(v: &mut [f32]) {
    let mut max = f32::NEG_INFINITY;
    for x in v.iter() {
        max = max.max(*x);
    }
    let mut sum = 0.0;
    for x in v.iter_mut() {
        *x = exp(*x - max);
        sum += *x;
    }
    for x in v.iter_mut() {
        *x /= sum;
    }
}

/// The feed-forward nonlinearity over a buffer; branch-free, so it vectorises in the
/// dispatched copy. (Plain loops: a closure would be compiled without the CPU's features.)
struct Activate<'a> {
    activation: Activation,
    values: &'a mut [f32],
}

impl WithSimd for Activate<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        match self.activation {
            Activation::Gelu => {
                for x in self.values {
                    *x = gelu(*x);
                }
            }
            Activation::GeluTanh => {
                for x in self.values {
                    *x = gelu_tanh(*x);
                }
            }
            Activation::Relu => {
                for x in self.values {
                    *x = x.max(0.0);
                }
            }
        }
    }
}

/// `x · Φ(x)`, with Φ through the complementary error function (Numerical Recipes' `erfcc`,
/// fractional error below 1.2e-7).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let z = (x * std::f32::consts::FRAC_1_SQRT_2).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204 + t * (1.488_515_9 + t * (-0.822_152_2 + t * 0.170_872_77))))))));
    let erfc = t * exp(-z * z + poly);
    // erfc(-a) = 2 - erfc(a); Φ(x) = 1 - erfc(x/√2)/2 for x ≥ 0.
    let half = 0.5 * erfc;
    let phi = if x >= 0.0 { 1.0 - half } else { half };
    x * phi
}

#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    let u = 0.797_884_6 * (x + 0.044_715 * x * x * x);
    // tanh(u) = 1 - 2 / (e^{2u} + 1)
    let tanh = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
    0.5 * x * (1.0 + tanh)
}

/// e^x without a library call, so loops over it vectorise: 2^n · e^r with r in [-ln2/2, ln2/2]
/// and a degree-6 polynomial (Cephes' `expf`, relative error about 1e-7).
///
/// n is rounded, and 2^n built, by adding 1.5 · 2^23: the sum's last mantissa bits are then n
/// (ties to even), with no conversion from float to integer. Rust's `as i32` saturates, and that
/// conversion has no vector instruction: the compiler did it lane by lane, five instructions
/// each, which made the whole loop several times slower.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const SHIFTER: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + SHIFTER;
    let n = shifted - SHIFTER;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 5e-1;
    let e = p * r * r + r + 1.0;
    // n + 127 in the exponent's place: the integer difference of the two sums' bits is n.
    let scale = shifted.to_bits().wrapping_sub(SHIFTER.to_bits()).wrapping_add(127) << 23;
    e * f32::from_bits(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_library_across_the_range() {
        for i in -870..=880 {
            let x = i as f32 / 10.0;
            let (ours, std) = (exp(x), x.exp());
            assert!(((ours - std) / std).abs() < 3e-7, "exp({x}): {ours} vs {std}");
        }
    }

    #[test]
    fn gelu_matches_its_definition() {
        // Φ from a high-precision erf (f64 series), against the f32 approximation.
        fn erf(x: f64) -> f64 {
            let mut sum = 0.0;
            let mut term = x;
            for n in 0..200 {
                sum += term / f64::from(2 * n + 1);
                term *= -x * x / f64::from(n + 1);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        }
        for i in -60..=60 {
            let x = f64::from(i) / 10.0;
            let want = 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2));
            let got = f64::from(gelu(x as f32));
            assert!((got - want).abs() < 2e-6 * (1.0 + x.abs()), "gelu({x}): {got} vs {want}");
        }
    }

    #[test]
    fn half_precision_converts_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8000), -0.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn the_product_matches_a_plain_loop_for_every_shape() {
        let arch = Arch::new();
        // Every tile height from 1 to 12 rows, panels cut short, and both ways of sharing the
        // work between threads (by panels for a query's rows, by blocks of rows for a batch).
        let shapes = (1..=25).map(|rows| (rows, 16, 40)).chain([
            (3, 5, 3),
            (7, 37, 5),
            (9, 64, 130),
            (70, 24, 66),
            (15, 384, 384),
            (140, 64, 130),
        ]);
        for (rows, k, n) in shapes {
            let x: Vec<f32> = (0..rows * k).map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0).collect();
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0).collect();
            let bias: Vec<f32> = (0..n).map(|i| i as f32 / 10.0).collect();
            let layer = Linear::new(arch, &w, bias.clone(), k);
            let got = layer.forward(arch, &x);
            for r in 0..rows {
                for o in 0..n {
                    let want: f32 = (0..k).map(|i| x[r * k + i] * w[o * k + i]).sum::<f32>() + bias[o];
                    let g = got[r * n + o];
                    assert!((g - want).abs() < 1e-4, "{rows}x{k}x{n} at ({r},{o}): {g} vs {want}");
                }
            }
        }
    }

    #[test]
    fn attention_stays_within_each_text() {
        // Two texts of two tokens, one head of width 2: a token's context mixes only its own
        // text's values, weighted by the softmax of its scores.
        let hidden = 2;
        let mut qkv = Vec::new();
        for t in 0..4 {
            let v = t as f32;
            qkv.extend([1.0, 0.0]); // query
            qkv.extend([v, 0.0]); // key
            qkv.extend([v * 10.0, 1.0]); // value
        }
        let mut out = vec![0.0; 4 * hidden];
        let (first, second) = out.split_at_mut(2 * hidden);
        Arch::new().dispatch(Attention { qkv: &qkv, hidden, heads: 1, rows: 2, out: first });
        Arch::new().dispatch(Attention { qkv: &qkv[2 * 3 * hidden..], hidden, heads: 1, rows: 2, out: second });
        let scale = 1.0 / 2f32.sqrt();
        for (span, keys) in [(0..2usize, [0.0f32, 1.0]), (2..4, [2.0, 3.0])] {
            let e: Vec<f32> = keys.iter().map(|k| (k * scale).exp()).collect();
            let s: f32 = e.iter().sum();
            let want = (e[0] * keys[0] * 10.0 + e[1] * keys[1] * 10.0) / s;
            for i in span {
                assert!((out[i * hidden] - want).abs() < 1e-4, "token {i}: {} vs {want}", out[i * hidden]);
                assert!((out[i * hidden + 1] - 1.0).abs() < 1e-5);
            }
        }
    }
}
