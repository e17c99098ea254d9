//! Token counting with the cl100k_base encoding, so budgets mean what providers bill.
//!
//! The encoding's ranks come from `tiktoken-rs`, but its pieces are split here, by one regex
//! shared by every thread. `tiktoken-rs` keeps 128 copies of its regex and picks one by the
//! calling thread's id; a server whose threads come and go (a blocking pool, a thread per heavy
//! request) reaches every copy, and each grows its own lazy-DFA cache as it meets new text: in
//! an hour of load that was the largest part of the server's growing memory. One regex keeps
//! one pool of caches, as many as threads use it at once.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock};

use fancy_regex::Regex;
use rustc_hash::FxHashMap;

/// cl100k_base's pre-tokenizer: the pattern `tiktoken-rs` builds the encoding with.
const PATTERN: &str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/// Ranks in cl100k_base that are ordinary tokens: 0 to 100,255.
const ORDINARY_RANKS: u32 = 100_256;

/// The encoding: its pre-tokenizer and each token's bytes by rank.
struct Cl100k {
    regex: Regex,
    ranks: FxHashMap<Vec<u8>, tiktoken_rs::Rank>,
}

fn bpe() -> &'static Cl100k {
    static BPE: OnceLock<Cl100k> = OnceLock::new();
    BPE.get_or_init(|| {
        let core = tiktoken_rs::cl100k_base().expect("cl100k_base ships inside tiktoken-rs");
        let ranks = (0..ORDINARY_RANKS)
            .zip(core._decode_native_and_split((0..ORDINARY_RANKS).collect()))
            .map(|(rank, bytes)| (bytes, rank))
            .collect();
        Cl100k { regex: Regex::new(PATTERN).expect("cl100k_base's pattern compiles"), ranks }
    })
}

impl Cl100k {
    /// The byte length of each token of `text`, in order (what `encode_ordinary` would give,
    /// token by token).
    fn token_lengths(&self, text: &str, mut each: impl FnMut(usize)) {
        for piece in self.regex.find_iter(text) {
            // The pattern has no construct that can fail at run time on text it matched before
            // (backtracking is bounded by a piece); a failed match ends the text's pieces.
            let Ok(piece) = piece else { break };
            let bytes = piece.as_str().as_bytes();
            if bytes.len() == 1 || self.ranks.contains_key(bytes) {
                each(bytes.len());
            } else {
                tiktoken_rs::byte_pair_split(bytes, &self.ranks).into_iter().for_each(|t| each(t.len()));
            }
        }
    }

    fn count(&self, text: &str) -> usize {
        let mut n = 0;
        self.token_lengths(text, |_| n += 1);
        n
    }
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
        n if n > MEMO_TEXT_BYTES => bpe().count(text),
        _ => memo(&COUNTS, text.to_owned(), || bpe().count(text)),
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
        total += bpe().count(chunk);
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
    let (mut tokens, mut bytes) = (0, 0);
    bpe().token_lengths(text, |len| {
        if tokens < n {
            bytes += len;
        }
        tokens += 1;
    });
    (tokens, if tokens <= n { text.len() } else { bytes })
}

/// Tokens of one rendered line plus its newline; summing lines bounds the tokens of the block.
pub fn line_cost(line: &str) -> usize {
    count(line) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// tiktoken-rs's own encoder: what the shared-regex one must match token for token.
    fn reference(text: &str) -> Vec<tiktoken_rs::Rank> {
        static CORE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
        CORE.get_or_init(|| tiktoken_rs::cl100k_base().unwrap()).encode_ordinary(text)
    }

    /// The bytes of each of `text`'s first `n` tokens by the reference encoder.
    fn reference_head(text: &str, n: usize) -> (usize, usize) {
        let tokens = reference(text);
        if tokens.len() <= n {
            return (tokens.len(), text.len());
        }
        let core = tiktoken_rs::cl100k_base().unwrap();
        (tokens.len(), core._decode_native_and_split(tokens[..n].to_vec()).map(|b| b.len()).sum())
    }

    #[test]
    fn counts_and_cuts_like_tiktoken_on_every_kind_of_text() {
        for text in [
            "Hello, world! I'm Dana's friend; we'll see.",
            "  leading spaces\n\n\ttabs and\r\nwindows lines   ",
            "Zahlen 1234567 und Straße, naïve café, déjà vu",
            "日本語のテキストと絵文字 🎉🎉🎉 and ümlauts",
            "{{{{((((####))))}}}}",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "e-mail: dana@example.com, tel. +351 912 345 678",
        ] {
            assert_eq!(bpe().count(text), reference(text).len(), "{text}");
            for n in [0, 1, 3, 7, 1000] {
                assert_eq!(encode_head(text, n), reference_head(text, n), "{text} at {n}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_counts_like_tiktoken(text in "\\PC{0,80}", n in 0usize..30) {
            prop_assert_eq!(bpe().count(&text), reference(&text).len());
            prop_assert_eq!(encode_head(&text, n), reference_head(&text, n));
        }
    }

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
        assert_eq!(first, (reference(text).len(), encode_head(text, 5)));
        assert_ne!(head(text, 3), head(text, 5), "the cut is part of the key");
        let long = "word ".repeat(MEMO_TEXT_BYTES);
        assert_eq!(count(&long), reference(&long).len());
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
