//! The `Embedder` trait every backend implements, plus the vector helpers that make its
//! "unit length, so dot product = cosine" promise cheap to keep and to rely on.

use std::ops::Range;

use crate::error::Result;

/// Turns text into fixed-size vectors so the store can rank memories by meaning.
///
/// Implementations are shared across threads behind an `Arc<dyn Embedder>`, hence the
/// `Send + Sync` bound.
pub trait Embedder: Send + Sync {
    /// Stable identifier stored beside every vector so a store knows when it must re-embed,
    /// e.g. "local:all-MiniLM-L6-v2", "hash:384", "openai:text-embedding-3-small".
    fn id(&self) -> &str;
    /// Output dimension.
    fn dim(&self) -> usize;
    /// Embeds a batch; every returned vector is L2-normalised (so dot product = cosine).
    /// An empty batch returns an empty Vec.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// [`Embedder::embed`] for texts a reader is waiting on (a query): an embedder that queues
    /// work ([`crate::BatchingEmbedder`]) lets them pass bulk work instead of waiting behind it.
    fn embed_query(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed(texts)
    }
    /// Whether keeping recent vectors ([`crate::CachedEmbedder`]) saves time: true for a model,
    /// false where embedding costs less than looking a text up (feature hashing).
    fn worth_caching(&self) -> bool {
        true
    }
}

/// `text` without the byte ranges `spans` (a range out of bounds or off a character boundary is
/// left in), with the spaces around a removed word made one.
pub fn cut(text: &str, spans: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    let mut spans: Vec<&Range<usize>> = spans
        .iter()
        .filter(|r| r.start < r.end && r.end <= text.len())
        .filter(|r| text.is_char_boundary(r.start) && text.is_char_boundary(r.end))
        .collect();
    spans.sort_by_key(|r| r.start);
    for r in spans {
        if r.start < from {
            continue;
        }
        out.push_str(&text[from..r.start]);
        from = r.end;
    }
    out.push_str(&text[from..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Scales `v` to unit L2 length in place so later similarity is a plain dot product.
///
/// A zero (or non-finite-norm) vector is left untouched: there is no direction to keep.
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        let inv = 1.0 / norm;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// `own` leaning toward `context` by `weight` (`own + weight·context`), at unit length.
///
/// Why a sum of vectors rather than one embedding of both texts: it costs no second model run
/// for text already embedded, and the own words stay dominant whatever the context's length.
/// Vectors of different lengths are a caller bug; the common prefix is blended.
pub fn blend(own: &[f32], context: &[f32], weight: f32) -> Vec<f32> {
    debug_assert_eq!(own.len(), context.len(), "blending vectors of different dimensions");
    let mut v = own.to_vec();
    v.iter_mut().zip(context).for_each(|(a, b)| *a += weight * b);
    normalize(&mut v);
    v
}

/// Cosine similarity that tolerates unnormalised input, so callers need not trust the source.
///
/// Returns 0.0 when either vector is all zeros. Only the common prefix is compared if the
/// lengths differ (a caller bug, flagged in debug builds).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len(), "cosine of vectors with different lengths");
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_takes_the_ranges_out_and_tidies_the_spaces() {
        let text = "What does Melanie do, Melanie's way?";
        assert_eq!(cut(text, &[10..17, 22..31]), "What does do, way?");
        // Unordered, overlapping, out of bounds or off a boundary: what can be cut is.
        assert_eq!(cut(text, &[22..31, 10..17, 12..14, 30..99]), "What does do, way?");
        assert_eq!(cut("né à Paris", std::slice::from_ref(&(1..2))), "né à Paris");
        assert_eq!(cut("anything", &[]), "anything");
    }

    #[test]
    fn normalize_makes_unit_length() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn normalize_leaves_zero_vector() {
        let mut v = vec![0.0; 4];
        normalize(&mut v);
        assert_eq!(v, vec![0.0; 4]);
    }

    #[test]
    fn blend_leans_toward_the_context_and_stays_unit_length() {
        let own = [1.0, 0.0];
        let context = [0.0, 1.0];
        assert_eq!(blend(&own, &context, 0.0), vec![1.0, 0.0]);
        let half = blend(&own, &context, 0.5);
        assert!((half.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(cosine(&half, &own) > cosine(&half, &context), "own words stay dominant below weight 1");
        let even = blend(&own, &context, 1.0);
        assert!((cosine(&even, &own) - cosine(&even, &context)).abs() < 1e-6);
    }

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 5.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
