//! The baselines mnemo's block is compared with, on equal terms: a conversation's turns ranked
//! three ways (BM25 over their words, cosine with the run's own embedding model, and the
//! reciprocal-rank fusion of the two), each ranking packed best first as whole turns into the
//! same cl100k budget and rendered as a block of the same shape as mnemo's, so the same text
//! metrics read both and the header's tokens are paid by both.

use std::collections::HashMap;

use mnemo::models::{Embedder, cosine};
use mnemo_core::tokens;

/// The first line of every block, as mnemo's assembly writes it.
const HEADER: &str = "=== USER MEMORY ===";
/// The one section heading of a baseline's block.
const HEADING: &str = "RELEVANT MESSAGES:";

/// Reciprocal-rank fusion's constant (Cormack et al. 2009): a turn at rank r of a ranking
/// scores 1 / (RRF_K + r), so the head of each ranking counts without drowning the other.
pub const RRF_K: f64 = 60.0;

/// Texts per call when a conversation's turns are embedded for the dense baseline.
pub const EMBED_BATCH: usize = 32;

/// The fixed cost of a packed block: a header line and one section heading, as mnemo's block
/// pays, so both systems spend the same budget on the same kind of prompt.
pub(crate) fn block_overhead() -> usize {
    tokens::line_cost(HEADER) + tokens::line_cost(HEADING) + 1
}

/// What one turn costs in a block: its rendered line.
pub(crate) fn line_cost(text: &str) -> usize {
    tokens::line_cost(&format!("- {text}"))
}

/// Greedy packing in rank order: whole lines only; a line that does not fit is skipped and the
/// next one tried, as mnemo's assembly does. Returns the chosen documents and the tokens spent.
pub(crate) fn pack(ranked: &[(usize, f64)], costs: &[usize], budget: usize) -> (Vec<usize>, usize) {
    let mut used = block_overhead();
    if ranked.is_empty() || used > budget {
        return (Vec::new(), 0);
    }
    let mut chosen = Vec::new();
    for &(doc, _) in ranked {
        if used + costs[doc] <= budget {
            used += costs[doc];
            chosen.push(doc);
        }
    }
    if chosen.is_empty() { (chosen, 0) } else { (chosen, used) }
}

/// The block a baseline hands the model: mnemo's header, one heading, a "- " line per chosen
/// turn in the order chosen (best first), laid out as mnemo renders its blocks; empty when
/// nothing was chosen (as mnemo's block is when it has nothing to say).
pub(crate) fn block_text<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = format!("{HEADER}\n\n{HEADING}\n");
    let start = out.len();
    for line in lines {
        out.push_str("- ");
        out.push_str(line);
        out.push('\n');
    }
    if out.len() == start { String::new() } else { out }
}

/// Every document by its cosine with `query`, best first (ties in document order): the dense
/// baseline's ranking. Unlike BM25 it ranks every turn, as a vector search would.
pub(crate) fn dense_rank(query: &[f32], docs: &[Vec<f32>]) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> =
        docs.iter().enumerate().map(|(i, d)| (i, f64::from(cosine(query, d)))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// Reciprocal-rank fusion of best-first rankings: each document scores the sum over the
/// rankings that list it of 1 / (`k` + its 1-based rank there); best first, ties in document
/// order.
pub(crate) fn rrf(rankings: &[&[(usize, f64)]], k: f64) -> Vec<(usize, f64)> {
    let mut scores: HashMap<usize, f64> = HashMap::new();
    for ranking in rankings {
        for (rank, &(doc, _)) in ranking.iter().enumerate() {
            *scores.entry(doc).or_default() += 1.0 / (k + (rank + 1) as f64);
        }
    }
    let mut fused: Vec<(usize, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// Embeds `texts` with the model, `batch` texts per call, in order.
pub(crate) fn embed_in_batches(
    embedder: &dyn Embedder,
    texts: &[String],
    batch: usize,
) -> mnemo::models::Result<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch.max(1)) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(embedder.embed(&refs)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use mnemo::models::HashEmbedder;

    use super::*;

    #[test]
    fn packing_never_exceeds_the_budget_and_skips_what_does_not_fit() {
        let ranked = [(0, 3.0), (1, 2.0), (2, 1.0)];
        let costs = [50, 500, 40];
        let (chosen, used) = pack(&ranked, &costs, 100 + block_overhead());
        assert_eq!(chosen, vec![0, 2]);
        assert_eq!(used, 90 + block_overhead());
        assert_eq!(pack(&ranked, &costs, 5), (vec![], 0));
    }

    #[test]
    fn a_baseline_block_is_laid_out_like_mnemos_and_its_tokens_are_what_packing_paid() {
        let lines = ["Ann: I adopted two cats.", "Bo: Nice!"];
        let text = block_text(lines);
        assert_eq!(text, "=== USER MEMORY ===\n\nRELEVANT MESSAGES:\n- Ann: I adopted two cats.\n- Bo: Nice!\n");
        let paid = block_overhead() + lines.iter().map(|l| line_cost(l)).sum::<usize>();
        assert!(tokens::count(&text) <= paid, "{} > {paid}", tokens::count(&text));
        assert_eq!(block_text([]), "");
    }

    #[test]
    fn dense_ranks_every_document_by_cosine() {
        let docs = vec![vec![0.0, 1.0], vec![1.0, 0.0], vec![1.0, 1.0], vec![0.0, 0.0]];
        let r: Vec<usize> = dense_rank(&[1.0, 0.1], &docs).into_iter().map(|(d, _)| d).collect();
        assert_eq!(r, vec![1, 2, 0, 3]);
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn fusion_rewards_agreement_and_keeps_what_one_ranking_alone_lists() {
        let a = [(0, 9.0), (1, 5.0), (2, 1.0)];
        let b = [(1, 0.9), (3, 0.8), (0, 0.1)];
        let fused = rrf(&[&a, &b], RRF_K);
        let order: Vec<usize> = fused.iter().map(|&(d, _)| d).collect();
        assert_eq!(order, vec![1, 0, 3, 2], "1 is 2nd and 1st; 0 is 1st and 3rd");
        assert!((fused[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!(rrf(&[], RRF_K).is_empty());
    }

    #[test]
    fn batches_embed_in_order() {
        let e = HashEmbedder::new(16);
        let texts: Vec<String> = (0..5).map(|i| format!("text {i}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(embed_in_batches(&e, &texts, 2).unwrap(), e.embed(&refs).unwrap());
    }
}
