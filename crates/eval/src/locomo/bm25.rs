//! The lexical baseline: Okapi BM25 over a conversation's raw turns, the classic retrieval a
//! memory layer has to beat to be worth its complexity. Deliberately plain (lowercase words, a
//! short stopword list, k1 = 1.2, b = 0.75) and independent of the product's own lexical index.
//! How its ranking becomes a block is in [`super::baselines`].

use std::collections::HashMap;

/// BM25's term-frequency saturation.
pub(crate) const K1: f64 = 1.2;
/// BM25's length normalisation.
pub(crate) const B: f64 = 0.75;

/// Words too common to say anything about which turn is meant (the text metrics leave them out
/// of content words too).
pub(crate) const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "that", "the", "their",
    "them", "they", "this", "to", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your",
];

/// Lowercase alphanumeric words minus stopwords; an apostrophe's tail ("caroline's") is dropped.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter_map(|w| {
            let w = w.split('\'').next().unwrap_or_default().to_lowercase();
            (!w.is_empty() && !STOPWORDS.contains(&w.as_str())).then_some(w)
        })
        .collect()
}

/// A BM25 index over a fixed list of documents.
#[derive(Debug, Clone)]
pub struct Bm25 {
    docs: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25 {
    /// Indexes `docs`; their positions are the ids [`Bm25::rank`] returns.
    pub fn new<S: AsRef<str>>(docs: &[S]) -> Self {
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut tfs = Vec::with_capacity(docs.len());
        let mut lengths = Vec::with_capacity(docs.len());
        for d in docs {
            let words = tokenize(d.as_ref());
            lengths.push(words.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for w in words {
                *tf.entry(w).or_default() += 1;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1;
            }
            tfs.push(tf);
        }
        let avg_len = if lengths.is_empty() { 0.0 } else { lengths.iter().sum::<f64>() / lengths.len() as f64 };
        Self { docs: tfs, lengths, df, avg_len }
    }

    /// Documents with a positive score for `query`, best first (ties in document order).
    pub fn rank(&self, query: &str) -> Vec<(usize, f64)> {
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let n = self.docs.len() as f64;
        let idf: Vec<(String, f64)> = terms
            .into_iter()
            .filter_map(|t| {
                let df = f64::from(*self.df.get(&t)?);
                Some((t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, tf)| {
                let norm = K1 * (1.0 - B + B * self.lengths[i] / self.avg_len.max(1e-9));
                let s: f64 = idf
                    .iter()
                    .filter_map(|(t, idf)| {
                        let f = f64::from(*tf.get(t)?);
                        Some(idf * f * (K1 + 1.0) / (f + norm))
                    })
                    .sum();
                (s > 0.0).then_some((i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_lowercase_words_without_stopwords() {
        assert_eq!(
            tokenize("When did Caroline's DOG, Max, visit the vet?"),
            vec!["caroline", "dog", "max", "visit", "vet"]
        );
    }

    #[test]
    fn the_exact_match_ranks_first_and_rare_words_weigh_more() {
        let docs = [
            "we talked about the weather today",
            "my dog Biscuit loves the beach",
            "the beach was crowded today",
            "nothing in common here",
        ];
        let idx = Bm25::new(&docs);
        let r = idx.rank("where does Biscuit like to go, the beach?");
        assert_eq!(r[0].0, 1);
        assert_eq!(r.len(), 2, "only documents sharing a term score: {r:?}");
        assert!(idx.rank("zebra").is_empty());
    }
}
