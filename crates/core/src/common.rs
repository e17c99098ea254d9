//! Words most of a user's messages share, which the query's vector weighs down.
//!
//! A sentence embedding weighs every word of a short query alike. When a word stands in most of
//! the user's messages (a speaker label in a transcript, "Caroline: …"; the name of the person a
//! whole conversation is with), it pulls the query toward every one of them alike and the words
//! that tell the messages apart count for less: "What does Melanie do to destress?" finds
//! Melanie's turns about anything before her turn about running to de-stress. BM25 already
//! weighs such a word down by its document frequency; this gives the dense half the same sense.
//! The query's vector is the mean of its vector as asked and its vector without the common
//! words (the embedder's `embed_weighing_down`: one forward pass for the local model), so a
//! common word still counts (a question about one speaker still leans toward that speaker's
//! turns) but no longer outweighs the rest. Nothing changes for a user whose messages share no
//! such word, which is the usual chat with an assistant.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::config::Tuning;

/// How widely a query's terms are spread over a user's messages: of the messages looked at
/// (the latest [`SAMPLE`] at most), how many contain each term. The store counts; what counts
/// as common is decided here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermSpread {
    /// Messages looked at.
    pub messages: usize,
    /// Per term, in the order asked, the messages among those that contain it.
    pub containing: Vec<usize>,
}

/// Messages a spread looks at most: the user's latest. Counting is bounded by this however
/// large the user, and a word that most messages share does so in any long enough stretch.
pub const SAMPLE: usize = 2_000;

/// The terms (of `terms`, in order) that at least `ranking.common_term_share` of the messages
/// contain, when at least `ranking.common_term_min_messages` were looked at: with fewer, a
/// share says nothing (two messages of five mentioning a dog is a topic, not a label).
pub fn common_terms<'a>(terms: &'a [String], spread: &TermSpread, t: &Tuning) -> Vec<&'a String> {
    let r = &t.ranking;
    if r.common_term_share <= 0.0 || spread.messages < r.common_term_min_messages.max(1) {
        return Vec::new();
    }
    terms
        .iter()
        .zip(&spread.containing)
        .filter(|(_, n)| **n as f32 >= r.common_term_share * spread.messages as f32)
        .map(|(term, _)| term)
        .collect()
}

/// The byte ranges of `query`'s whole words that `common` names (any case, a trailing "'s"
/// too), for the embedder to weigh down; empty when there are none, or when they are all the
/// query says (nothing else would be left to weigh).
pub fn common_spans(query: &str, common: &[&String]) -> Vec<Range<usize>> {
    if common.is_empty() {
        return Vec::new();
    }
    let mut spans = Vec::new();
    let mut rest = false;
    let mut words = query.char_indices().peekable();
    while let Some((start, c)) = words.next() {
        if !c.is_alphanumeric() {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, c)) = words.peek() {
            let apostrophe_s = (c == '\'' || c == '\u{2019}') && query[i + c.len_utf8()..].starts_with('s');
            if !(c.is_alphanumeric() || apostrophe_s) {
                break;
            }
            end = i + c.len_utf8();
            words.next();
        }
        let word = &query[start..end];
        let bare = word.strip_suffix("'s").or_else(|| word.strip_suffix("\u{2019}s")).unwrap_or(word).to_lowercase();
        if common.iter().any(|c| **c == bare) {
            spans.push(start..end);
        } else {
            rest = true;
        }
    }
    if rest { spans } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_word_most_messages_share_is_common_and_a_topic_is_not() {
        let t = Tuning::default();
        let q = terms(&["melanie", "destress"]);
        let spread = TermSpread { messages: 419, containing: vec![264, 2] };
        assert_eq!(common_terms(&q, &spread, &t), vec!["melanie"]);
        // The name an assistant calls the user by, in one reply of seven, is common too.
        let spread = TermSpread { messages: 629, containing: vec![93, 2] };
        assert_eq!(common_terms(&q, &spread, &t), vec!["melanie"]);
        // A topic of one message in twenty stays.
        let spread = TermSpread { messages: 419, containing: vec![21, 2] };
        assert!(common_terms(&q, &spread, &t).is_empty());
        // Too few messages to tell a label from a topic.
        let spread = TermSpread { messages: 5, containing: vec![5, 2] };
        assert!(common_terms(&q, &spread, &t).is_empty());
        // Off.
        let mut off = Tuning::default();
        off.ranking.common_term_share = 0.0;
        let spread = TermSpread { messages: 419, containing: vec![419, 419] };
        assert!(common_terms(&q, &spread, &off).is_empty());
    }

    #[test]
    fn common_words_are_found_whole_with_their_possessive() {
        let m = "melanie".to_string();
        let c = vec![&m];
        let spans = |q: &str| common_spans(q, &c).into_iter().map(|r| q[r].to_string()).collect::<Vec<_>>();
        assert_eq!(spans("What does Melanie do to destress?"), ["Melanie"]);
        assert_eq!(spans("What are Melanie's kids like, MELANIE?"), ["Melanie's", "MELANIE"]);
        assert_eq!(spans("Is Melanie\u{2019}s dog well?"), ["Melanie\u{2019}s"]);
        // A longer word that starts the same stays; a query of nothing else has nothing to weigh.
        assert!(spans("Did Melanies come?").is_empty());
        assert!(spans("Melanie?").is_empty());
        assert!(common_spans("anything", &[]).is_empty());
    }

    proptest! {
        #[test]
        fn only_the_querys_common_words_are_spanned(
            words in proptest::collection::vec("[a-zA-Z]{1,8}", 1..12),
            pick in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let common: Vec<String> =
                words.iter().zip(&pick).filter(|(_, p)| **p).map(|(w, _)| w.to_lowercase()).collect();
            let refs: Vec<&String> = common.iter().collect();
            let query = words.join(" ");
            let spans = common_spans(&query, &refs);
            let is_common = |w: &String| common.contains(&w.to_lowercase());
            let expected = if words.iter().all(is_common) { 0 } else { words.iter().filter(|w| is_common(w)).count() };
            prop_assert_eq!(spans.len(), expected);
            for r in spans {
                prop_assert!(common.contains(&query[r].to_lowercase()));
            }
        }
    }
}
