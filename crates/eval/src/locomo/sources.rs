//! From what mnemo returned to the dialog turns behind it: the one place that maps a context
//! block's items and a recall result's ranked items to source message ids (= LoCoMo dia_ids).
//!
//! A raw message line carries its message id as its id; every memory carries the ids of the
//! messages it was extracted from (or reinforced by) in its provenance. When recall learns to
//! return new kinds of hits, this file is the only one that has to learn them.

use mnemo::RecallResult;
use mnemo_core::assemble::{BlockItem, ContextBlock};
use mnemo_core::memory::Provenance;

/// The source message ids of every item placed in a block, in rendering order.
pub fn block_sources(block: &ContextBlock) -> Vec<Vec<String>> {
    block.sections.iter().flat_map(|s| &s.items).map(item_sources).collect()
}

/// The source message ids of a recall's ranked results, best first: memories (path B) and
/// archival excerpts merged into one ranking by their fused query relevance (the same 0..=1
/// signal on both sides), each list keeping its own order. One entry per rank, so a prefix of
/// the list is the top k.
pub fn recall_sources(r: &RecallResult) -> Vec<Vec<String>> {
    let memories: Vec<(f32, Vec<String>)> = r
        .items
        .iter()
        .map(|i| (i.score.map_or(0.0, |s| s.relevance), provenance_ids(Some(&i.memory.provenance))))
        .collect();
    let excerpts: Vec<(f32, Vec<String>)> =
        r.excerpts.iter().map(|e| (e.relevance, vec![e.message.id.as_str().to_string()])).collect();
    merge_by_relevance(memories, excerpts)
}

/// Merges two best-first lists by relevance; on a tie the first list's head goes first.
fn merge_by_relevance(a: Vec<(f32, Vec<String>)>, b: Vec<(f32, Vec<String>)>) -> Vec<Vec<String>> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0 >= y.0,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_a { a.next() } else { b.next() };
        out.extend(next.map(|(_, ids)| ids));
    }
    out
}

fn item_sources(item: &BlockItem) -> Vec<String> {
    let mut ids = provenance_ids(item.provenance.as_ref());
    if item.kind == "message" && !ids.contains(&item.id) {
        ids.insert(0, item.id.clone());
    }
    ids
}

fn provenance_ids(p: Option<&Provenance>) -> Vec<String> {
    p.map(|p| p.sources.iter().map(|s| s.as_str().to_string()).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(r: f32, id: &str) -> (f32, Vec<String>) {
        (r, vec![id.to_string()])
    }

    #[test]
    fn merging_keeps_each_list_in_order_and_interleaves_by_relevance() {
        let a = vec![entry(0.9, "m1"), entry(0.5, "m2"), entry(0.8, "m3")];
        let b = vec![entry(0.7, "e1"), entry(0.6, "e2")];
        let got: Vec<String> = merge_by_relevance(a, b).into_iter().flatten().collect();
        assert_eq!(got, vec!["m1", "e1", "e2", "m2", "m3"]);
    }
}
