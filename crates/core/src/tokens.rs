//! Token counting with the cl100k_base encoding, so budgets mean what providers bill.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock};

use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k_base ships inside tiktoken-rs"))
}

/// Texts (or text and cut) whose encodings [`count`] and [`head`] remember: assembly costs the
/// same memories and excerpts turn after turn, at three levels of detail each, and encoding was
/// most of its time. A full memo is cleared rather than aged (cheap, and one turn refills it).
const MEMO_ENTRIES: usize = 16_384;

/// Longer texts are encoded every time, so a few of them cannot hold most of the memo's memory.
const MEMO_TEXT_BYTES: usize = 4_096;

type Memo<K, V> = OnceLock<Mutex<HashMap<K, V>>>;

/// `compute()`, or what it returned for `key` before.
fn memo<K: Hash + Eq, V: Copy>(memo: &Memo<K, V>, key: K, compute: impl FnOnce() -> V) -> V {
    let map = memo.get_or_init(Mutex::default);
    if let Some(v) = map.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
        return *v;
    }
    let v = compute();
    let mut map = map.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if map.len() >= MEMO_ENTRIES {
        map.clear();
    }
    map.insert(key, v);
    v
}

/// Tokens in `text` under cl100k_base.
pub fn count(text: &str) -> usize {
    static COUNTS: Memo<String, usize> = OnceLock::new();
    match text.len() {
        0 => 0,
        n if n > MEMO_TEXT_BYTES => bpe().encode_ordinary(text).len(),
        _ => memo(&COUNTS, text.to_owned(), || bpe().encode_ordinary(text).len()),
    }
}

/// Tokens in `text` when there are at most `limit`, else `None`, at a cost bounded by the
/// limit: the text is encoded a chunk at a time (byte-pair encoding of one long unbroken run,
/// such as CJK text or emoji, costs quadratic time in its length), stopping once past the limit.
/// Chunk edges may split a token, so the count is an upper bound, off by at most one token per
/// chunk of [`CHUNK_CHARS`].
pub fn count_at_most(text: &str, limit: usize) -> Option<usize> {
    let mut total = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.char_indices().nth(CHUNK_CHARS).map_or(rest.len(), |(i, _)| i);
        let (chunk, tail) = rest.split_at(cut);
        total += bpe().encode_ordinary(chunk).len();
        if total > limit {
            return None;
        }
        rest = tail;
    }
    Some(total)
}

/// Characters encoded at a time by [`count_at_most`].
pub const CHUNK_CHARS: usize = 256;

/// Tokens in `text` and how many of its bytes the first `n` tokens cover (all of them when
/// the text has no more than `n`): one encoding, for cutting text to a token budget. The byte
/// count may fall inside a character; callers cut at a boundary at or before it.
pub fn head(text: &str, n: usize) -> (usize, usize) {
    static HEADS: Memo<(String, usize), (usize, usize)> = OnceLock::new();
    match text.len() > MEMO_TEXT_BYTES {
        true => encode_head(text, n),
        false => memo(&HEADS, (text.to_owned(), n), || encode_head(text, n)),
    }
}

fn encode_head(text: &str, n: usize) -> (usize, usize) {
    let tokens = bpe().encode_ordinary(text);
    if tokens.len() <= n {
        return (tokens.len(), text.len());
    }
    let bytes = bpe()._decode_native_and_split(tokens[..n].to_vec()).map(|b| b.len()).sum();
    (tokens.len(), bytes)
}

/// Tokens of one rendered line plus its newline; summing lines bounds the tokens of the block.
pub fn line_cost(line: &str) -> usize {
    count(line) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_cl100k() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        let lines = ["=== USER MEMORY ===", "- User's name is Dana.", "- User prefers short answers."];
        let joined = lines.join("\n") + "\n";
        assert!(count(&joined) <= lines.iter().map(|l| line_cost(l)).sum::<usize>());
    }

    #[test]
    fn remembered_counts_are_the_counts() {
        let text = "Caroline: I went to an LGBTQ support group yesterday and it was powerful.";
        let first = (count(text), head(text, 5));
        assert_eq!((count(text), head(text, 5)), first);
        assert_eq!(first, (bpe().encode_ordinary(text).len(), encode_head(text, 5)));
        assert_ne!(head(text, 3), head(text, 5), "the cut is part of the key");
        let long = "word ".repeat(MEMO_TEXT_BYTES);
        assert_eq!(count(&long), bpe().encode_ordinary(&long).len());
    }

    #[test]
    fn head_measures_a_prefix_in_one_encoding() {
        assert_eq!(head("hello world", 5), (2, 11));
        assert_eq!(head("hello world", 1), (2, 5));
        let text = "naïve café, déjà vu — über straße";
        let (total, bytes) = head(text, 4);
        assert_eq!(total, count(text));
        let cut = (0..=bytes).rev().find(|&i| text.is_char_boundary(i)).unwrap();
        assert!(count(&text[..cut]) <= 4);
    }
}
