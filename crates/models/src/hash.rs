//! A deterministic bag-of-words embedder: no model files, no network, identical output on
//! every platform, so tests and demos get meaningful-ish similarity for free.

use crate::embedder::{Embedder, normalize};
use crate::error::Result;

/// Dimension used when nothing else is configured; matches all-MiniLM-L6-v2 so stores sized
/// for the local model also fit hash vectors.
pub const DEFAULT_HASH_DIM: usize = 384;

/// Weight of a word pair relative to a single word: pairs add word-order signal without
/// letting two shared words swamp the rest of the sentence.
const BIGRAM_WEIGHT: f32 = 0.5;

/// Words so common that sharing them says nothing about topic.
const STOPWORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does",
    "for", "from", "had", "has", "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "me", "my",
    "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "they",
    "this", "to", "was", "we", "were", "what", "which", "who", "will", "with", "would", "you", "your",
];

/// Feature-hashing embedder for tests and offline use where a real model is overkill.
///
/// Texts that share (stemmed, non-stopword) words and word pairs get high cosine; unrelated
/// texts land near zero. It knows nothing about synonyms.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
    id: String,
}

impl HashEmbedder {
    /// Creates an embedder producing `dim`-dimensional vectors.
    ///
    /// # Panics
    /// If `dim` is zero, since no unit vector exists in zero dimensions.
    pub fn new(dim: usize) -> Self {
        assert!(dim > 0, "HashEmbedder dimension must be positive");
        Self { dim, id: format!("hash:{dim}") }
    }

    /// Embeds a single text; the building block of [`Embedder::embed`].
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let lowered = text.to_lowercase();
        let raw: Vec<&str> = lowered.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let mut words: Vec<&str> = raw.iter().copied().filter(|w| !STOPWORDS.contains(w)).map(stem).collect();
        if words.is_empty() {
            // Only stopwords: better to match on them than to return a direction-less vector.
            words = raw.iter().copied().map(stem).collect();
        }
        if words.is_empty() {
            // No words at all: a fixed unit vector keeps the "always normalised" promise.
            v[self.bucket(fnv1a(b"")).0] = 1.0;
            return v;
        }
        for w in &words {
            self.add(&mut v, fnv1a(w.as_bytes()), 1.0);
        }
        for pair in words.windows(2) {
            let mut key = Vec::with_capacity(pair[0].len() + pair[1].len() + 1);
            key.extend_from_slice(pair[0].as_bytes());
            key.push(0x1f); // never produced by the tokenizer, so pairs cannot alias words
            key.extend_from_slice(pair[1].as_bytes());
            self.add(&mut v, fnv1a(&key), BIGRAM_WEIGHT);
        }
        normalize(&mut v);
        v
    }

    fn bucket(&self, h: u64) -> (usize, f32) {
        let m = mix(h);
        // `dim` fits in u64 on every supported platform and the remainder fits back in usize.
        let idx = (m % self.dim as u64) as usize;
        let sign = if m >> 63 == 0 { 1.0 } else { -1.0 };
        (idx, sign)
    }

    fn add(&self, v: &mut [f32], h: u64, weight: f32) {
        let (idx, sign) = self.bucket(h);
        v[idx] += sign * weight;
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new(DEFAULT_HASH_DIM)
    }
}

impl Embedder for HashEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn worth_caching(&self) -> bool {
        false // hashing a text is cheaper than finding it in a cache
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// Crude suffix stripping so "dogs"/"dog" and "walking"/"walked"/"walk" share a feature.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "s"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            if stem.chars().count() >= 3 && !(suffix == "s" && stem.ends_with('s')) {
                return stem;
            }
        }
    }
    word
}

/// FNV-1a 64: tiny, fixed and platform-independent, unlike std's randomly seeded hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 finaliser: spreads FNV's weak high bits so bucket and sign are independent.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems() {
        assert_eq!(stem("dogs"), "dog");
        assert_eq!(stem("walking"), "walk");
        assert_eq!(stem("walked"), "walk");
        assert_eq!(stem("bus"), "bus");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("red"), "red");
    }

    #[test]
    fn fnv_known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
