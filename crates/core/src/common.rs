//! Words most of a user's messages share, and the query the dense half embeds without them.
//!
//! A sentence embedding weighs every word of a short query alike. When a word stands in most of
//! the user's messages (a speaker label in a transcript, "Caroline: …"; the name of the person a
//! whole conversation is with), it pulls the query toward every one of them alike and the words
//! that tell the messages apart count for less: "What does Melanie do to destress?" finds
//! Melanie's turns about anything before her turn about running to de-stress. BM25 already
//! weighs such a word down by its document frequency; this gives the dense half the same sense.
//! The query is embedded twice, as asked and without the common words, and the two vectors are
//! averaged, so a common word still counts (a question about one speaker still leans toward
//! that speaker's turns) but no longer outweighs the rest. Nothing changes for a user whose
//! messages share no such word, which is the usual chat with an assistant.

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

/// `query` without the whole words `common` names (any case, a trailing "'s" too), spaces
/// tidied; `None` when nothing was taken out or nothing would be left to embed.
pub fn without_terms(query: &str, common: &[&String]) -> Option<String> {
    if common.is_empty() {
        return None;
    }
    let mut kept = Vec::new();
    let mut dropped = false;
    for word in query.split_whitespace() {
        let core: String = word.chars().skip_while(|c| !c.is_alphanumeric()).collect();
        let core = core.trim_end_matches(|c: char| !c.is_alphanumeric());
        let core = core.strip_suffix("'s").or_else(|| core.strip_suffix("\u{2019}s")).unwrap_or(core).to_lowercase();
        if common.iter().any(|c| **c == core) {
            dropped = true;
            // Keep what closes the sentence ("Melanie?" leaves "?").
            let tail: String = word.chars().rev().take_while(|c| !c.is_alphanumeric()).collect();
            if let Some(last) = kept.last_mut().filter(|_| !tail.is_empty()) {
                let last: &mut String = last;
                last.extend(tail.chars().rev());
            }
        } else {
            kept.push(word.to_string());
        }
    }
    let text = kept.join(" ");
    (dropped && text.chars().any(char::is_alphanumeric)).then_some(text)
}

/// The mean of two unit vectors, made unit again: the query as asked and the query without its
/// common words, weighed alike. `None` for vectors of different lengths or a zero sum.
pub fn blend(a: &[f32], b: &[f32]) -> Option<Vec<f32>> {
    if a.len() != b.len() {
        return None;
    }
    let mut sum: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_normal() {
        return None;
    }
    sum.iter_mut().for_each(|x| *x /= norm);
    Some(sum)
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
        // A topic of a tenth of the messages stays.
        let spread = TermSpread { messages: 419, containing: vec![42, 2] };
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
    fn common_words_leave_the_query_with_their_possessive_and_keep_its_punctuation() {
        let m = "melanie".to_string();
        let c = vec![&m];
        assert_eq!(without_terms("What does Melanie do to destress?", &c).unwrap(), "What does do to destress?");
        assert_eq!(without_terms("What are Melanie's kids like?", &c).unwrap(), "What are kids like?");
        assert_eq!(without_terms("Who painted it, MELANIE?", &c).unwrap(), "Who painted it,?");
        assert_eq!(without_terms("Is Melanie\u{2019}s dog well?", &c).unwrap(), "Is dog well?");
        // A longer word that starts the same stays; nothing taken out, nothing to embed again.
        assert_eq!(without_terms("Did Melanies come?", &c), None);
        assert_eq!(without_terms("Melanie?", &c), None, "nothing would be left");
        assert_eq!(without_terms("anything", &[]), None);
    }

    #[test]
    fn a_blend_is_the_unit_mean() {
        let b = blend(&[1.0, 0.0], &[0.0, 1.0]).unwrap();
        assert!((b[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6 && (b[0] - b[1]).abs() < 1e-6);
        assert_eq!(blend(&[1.0, 0.0], &[-1.0, 0.0]), None);
        assert_eq!(blend(&[1.0], &[1.0, 0.0]), None);
    }

    proptest! {
        #[test]
        fn only_words_of_the_query_that_are_common_are_taken_out(
            words in proptest::collection::vec("[a-zA-Z]{1,8}", 1..12),
            pick in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let common: Vec<String> = words.iter().zip(&pick).filter(|(_, p)| **p).map(|(w, _)| w.to_lowercase()).collect();
            let refs: Vec<&String> = common.iter().collect();
            let query = words.join(" ");
            match without_terms(&query, &refs) {
                Some(out) => {
                    for w in out.split_whitespace() {
                        prop_assert!(!common.contains(&w.to_lowercase()), "{w} is common");
                    }
                    let kept = words.iter().filter(|w| !common.contains(&w.to_lowercase())).count();
                    prop_assert_eq!(out.split_whitespace().count(), kept);
                }
                None => prop_assert!(common.is_empty() || words.iter().all(|w| common.contains(&w.to_lowercase()))),
            }
        }

        #[test]
        fn blends_of_unit_vectors_are_unit(a in proptest::collection::vec(-1.0f32..1.0, 4), b in proptest::collection::vec(-1.0f32..1.0, 4)) {
            let unit = |v: &[f32]| { let n = v.iter().map(|x| x * x).sum::<f32>().sqrt(); v.iter().map(|x| x / n).collect::<Vec<_>>() };
            prop_assume!(a.iter().any(|x| x.abs() > 1e-3) && b.iter().any(|x| x.abs() > 1e-3));
            if let Some(v) = blend(&unit(&a), &unit(&b)) {
                prop_assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
            }
        }
    }
}
