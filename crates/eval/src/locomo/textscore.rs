//! The text metrics: what the application actually receives (the block's text), judged by its
//! words against the question's gold answer and the words of its evidence turns. Provenance can
//! name a turn whose words never reached the prompt (a memory extracted from it, a summary
//! that mentions it); these measures cannot be fooled that way, and they score a baseline's
//! block of whole turns on exactly the same terms as mnemo's block.
//!
//! Pure functions over strings; every definition is spelled out, with a worked example checked
//! by a test below, in `docs/locomo-metrics.md`.

use std::collections::HashSet;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use serde::Serialize;

use super::bm25::STOPWORDS;

/// The share of an evidence turn's content words a block must hold for the turn to count as
/// there whole (`evidence_whole`): 90%, so one stray word (a greeting, an interjection) does
/// not make a turn that is otherwise all there count as missing.
pub const WHOLE_TURN_SHARE: f64 = 0.9;

/// Words left out of content words beyond the BM25 baseline's stopwords: the fragments
/// [`normalise`] splits off contractions ("it's" → "it s", "didn't" → "didn t") and the
/// remaining English function words (NLTK's list, less what BM25's list already has). Numbers
/// are never stopwords: a year or a count is often the whole answer.
const MORE_STOPWORDS: &[&str] = &[
    "s",
    "t",
    "d",
    "ll",
    "m",
    "re",
    "ve",
    "y",
    "o",
    "ain",
    "aren",
    "couldn",
    "didn",
    "doesn",
    "don",
    "hadn",
    "hasn",
    "haven",
    "isn",
    "mightn",
    "mustn",
    "needn",
    "shan",
    "shouldn",
    "wasn",
    "weren",
    "won",
    "wouldn",
    "above",
    "again",
    "against",
    "because",
    "before",
    "being",
    "below",
    "between",
    "both",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "further",
    "having",
    "here",
    "hers",
    "herself",
    "himself",
    "itself",
    "just",
    "more",
    "most",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "off",
    "once",
    "only",
    "other",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "should",
    "some",
    "such",
    "than",
    "then",
    "there",
    "these",
    "those",
    "through",
    "too",
    "under",
    "until",
    "up",
    "very",
    "while",
    "whom",
    "yours",
    "yourself",
    "yourselves",
    "themselves",
    "theirs",
];

/// Lower case, every character that is not a letter or digit turned into a space, whitespace
/// collapsed to single spaces, trimmed: "Luna & Milo's bowl!" → "luna milo s bowl". The one
/// form every text comparison here is made in, so punctuation and case never decide a match.
pub fn normalise(text: &str) -> String {
    let spaced: String =
        text.chars().flat_map(char::to_lowercase).map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the normalised `phrase` occurs in the normalised `text` as whole words (both padded
/// with a space, so "4 years" is not found in "14 years" nor "cat" in "cats"). An empty phrase
/// is never found: it would be in everything.
pub fn contains_words(text: &str, phrase: &str) -> bool {
    !phrase.is_empty() && format!(" {text} ").contains(&format!(" {phrase} "))
}

/// One word's stem (Snowball English, the Porter2 stemmer): "cats" and "cat", "adopted" and
/// "adopt", "painting" and "paint" meet, on both sides of every comparison alike.
fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)).stem(word).into_owned()
}

fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word) || MORE_STOPWORDS.contains(&word)
}

/// The content words of `text`, as a set of stems: its normalised words less stopwords, each
/// stemmed. What "the same words" means for the word-level metrics.
pub fn content_words(text: &str) -> HashSet<String> {
    normalise(text).split(' ').filter(|w| !w.is_empty() && !is_stopword(w)).map(stem).collect()
}

/// `found / total` of the words of `words` that are in `among`; `None` for an empty set.
fn share_found(words: &HashSet<String>, among: &HashSet<String>) -> Option<(usize, usize)> {
    (!words.is_empty()).then(|| (words.iter().filter(|w| among.contains(*w)).count(), words.len()))
}

/// A block as the metrics read it, prepared once and scored against every question asked of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockWords {
    /// The block's text, normalised.
    normalised: String,
    /// Its content words.
    words: HashSet<String>,
}

impl BlockWords {
    /// Reads a block's text (header and headings included: they are words the model reads too).
    pub fn new(text: &str) -> Self {
        Self { normalised: normalise(text), words: content_words(text) }
    }
}

/// What a question is judged against: its gold answer and the words said in its evidence turns,
/// prepared once and scored against each system's block at each budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The gold answer, normalised.
    answer: String,
    /// Whether the normalised answer occurs in at least one evidence turn's normalised text:
    /// only then can a block of the conversation's words be asked to hold it verbatim.
    answer_in_evidence: bool,
    /// The answer's content words.
    answer_words: HashSet<String>,
    /// Each evidence turn's content words, for the turns that have any.
    evidence_words: Vec<HashSet<String>>,
}

impl Reference {
    /// Prepares `answer` and the words said in each evidence turn (without the speaker's name,
    /// caption included when captions are ingested).
    pub fn new<S: AsRef<str>>(answer: &str, evidence: &[S]) -> Self {
        let answer_norm = normalise(answer);
        let answer_in_evidence = evidence.iter().any(|e| contains_words(&normalise(e.as_ref()), &answer_norm));
        Self {
            answer: answer_norm,
            answer_in_evidence,
            answer_words: content_words(answer),
            evidence_words: evidence.iter().map(|e| content_words(e.as_ref())).filter(|w| !w.is_empty()).collect(),
        }
    }

    /// The four text metrics of `block` for this question (see [`TextScore`]).
    pub fn score(&self, block: &BlockWords) -> TextScore {
        let turns: Vec<(usize, usize)> =
            self.evidence_words.iter().filter_map(|w| share_found(w, &block.words)).collect();
        let n = turns.len() as f64;
        let (coverage, whole) = if turns.is_empty() {
            (None, None)
        } else {
            let coverage = turns.iter().map(|&(f, t)| f as f64 / t as f64).sum::<f64>() / n;
            let whole = turns.iter().filter(|&&(f, t)| is_whole(f, t)).count() as f64 / n;
            (Some(coverage), Some(whole))
        };
        TextScore {
            answer_in_block: self.answer_in_evidence.then(|| contains_words(&block.normalised, &self.answer)),
            answer_word_recall: share_found(&self.answer_words, &block.words).map(|(f, t)| f as f64 / t as f64),
            evidence_text_coverage: coverage,
            evidence_whole: whole,
        }
    }
}

/// `found` of `total` content words is at least [`WHOLE_TURN_SHARE`] of them (compared in
/// integers, so exactly 90% counts).
fn is_whole(found: usize, total: usize) -> bool {
    10 * found >= 9 * total
}

/// One question's text metrics for one block; `None` where the question does not take part in
/// a metric (so means are over the questions that do, and say how many those were).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TextScore {
    /// The normalised gold answer occurs in the normalised block as whole words (DPR's top-k
    /// accuracy at a token budget); `None` unless the answer occurs so in an evidence turn.
    pub answer_in_block: Option<bool>,
    /// Share of the answer's content words among the block's; `None` when it has none.
    pub answer_word_recall: Option<f64>,
    /// Mean over evidence turns of the share of the turn's content words among the block's;
    /// `None` when no evidence turn has content words.
    pub evidence_text_coverage: Option<f64>,
    /// Share of evidence turns with at least [`WHOLE_TURN_SHARE`] of their content words in the
    /// block; `None` as for `evidence_text_coverage`.
    pub evidence_whole: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::super::metrics::{Hit, referenced_count};
    use super::*;

    #[test]
    fn normalising_keeps_letters_and_digits_only() {
        assert_eq!(normalise("  Luna & Milo's BOWL!\n(4 years) "), "luna milo s bowl 4 years");
        assert_eq!(normalise("Café—déjà vu"), "café déjà vu");
        assert_eq!(normalise("?!"), "");
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(contains_words("she has lived here 4 years now", "4 years"));
        assert!(!contains_words("she has lived here 14 years now", "4 years"));
        assert!(!contains_words("two cats", "cat"));
        assert!(contains_words("cat", "cat"));
        assert!(!contains_words("anything", ""));
    }

    #[test]
    fn content_words_drop_stopwords_keep_numbers_and_stem_both_sides_alike() {
        let w = content_words("I didn't adopt the cats in 2022; we're adopting more!");
        let mut got: Vec<&str> = w.iter().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(got, vec!["2022", "adopt", "cat"]);
        assert_eq!(content_words("painting"), content_words("paints"));
        assert!(content_words("the a of").is_empty());
    }

    #[test]
    fn a_question_whose_answer_no_evidence_turn_says_is_not_asked_for_it() {
        let r = Reference::new("7 May 2023", &["I went to the support group yesterday."]);
        let s = r.score(&BlockWords::new("yesterday 7 May 2023 support group"));
        assert_eq!(s.answer_in_block, None, "the turn says 'yesterday', not the date");
        assert_eq!(s.answer_word_recall, Some(1.0));
        let none = Reference::new("?", &["It is, isn't it?"]);
        let s = none.score(&BlockWords::new("anything"));
        assert_eq!((s.answer_word_recall, s.evidence_text_coverage, s.evidence_whole), (None, None, None));
    }

    #[test]
    fn a_turn_is_whole_from_ninety_percent_of_its_words() {
        assert!(is_whole(9, 10) && is_whole(1, 1) && is_whole(18, 20) && is_whole(27, 30));
        assert!(!is_whole(8, 10) && !is_whole(17, 19) && !is_whole(0, 1));
        assert_eq!(WHOLE_TURN_SHARE, 0.9, "is_whole compares 10 * found with 9 * total");
    }

    /// The worked example of docs/locomo-metrics.md, computed; the doc must show these numbers.
    #[test]
    fn the_documented_worked_example() {
        const DOC: &str = include_str!("../../../../docs/locomo-metrics.md");
        let evidence = ["I adopted two rescue cats last spring, Luna and Milo.", "Luna and Milo, my two cats."];
        let block = "=== USER MEMORY ===\n\nABOUT THE USER:\n- Ann has two cats, Luna and Milo.\n";
        for text in evidence.iter().chain([&block.lines().last().unwrap()]) {
            assert!(DOC.contains(text), "the doc shows {text:?}");
        }
        let sorted = |s: &str| {
            let mut w: Vec<String> = content_words(s).into_iter().collect();
            w.sort_unstable();
            w.join(", ")
        };
        assert_eq!(sorted(evidence[0]), "adopt, cat, last, luna, milo, rescu, spring, two");
        assert_eq!(sorted(evidence[1]), "cat, luna, milo, two");
        assert_eq!(sorted("two rescue cats"), "cat, rescu, two");
        assert_eq!(sorted(block), "ann, cat, luna, memori, milo, two, user");
        for words in ["adopt, cat, last, luna, milo, rescu, spring, two", "ann, cat, luna, memori, milo, two, user"] {
            assert!(DOC.contains(words), "the doc lists {words}");
        }

        let s = Reference::new("two rescue cats", &evidence).score(&BlockWords::new(block));
        assert_eq!(s.answer_in_block, Some(false));
        assert_eq!(s.answer_word_recall, Some(2.0 / 3.0));
        assert_eq!(s.evidence_text_coverage, Some(0.75));
        assert_eq!(s.evidence_whole, Some(0.5));
        let ids = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let named = Hit { referenced: referenced_count(&ids(&["D1:3", "D1:5"]), &ids(&["D1:3"])), of: 2 };
        assert_eq!(named.fraction(), 0.5, "the memory's provenance names D1:3 only");
        for line in [
            "answer_in_block = 0",
            "answer_word_recall = 2/3 = 0.667",
            "evidence_text_coverage = (4/8 + 4/4) / 2 = 0.750",
            "evidence_whole = 1/2 = 0.500",
            "evidence_referenced = 1/2 = 0.500",
        ] {
            assert!(DOC.contains(line), "the doc says {line:?}");
        }
    }
}
