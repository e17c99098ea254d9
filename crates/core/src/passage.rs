//! The passages of a message that are searched on their own.
//!
//! A sentence embedding of a whole chat turn averages everything the turn says: "Thanks, Mel!
//! Last Friday I went to a support group, it was so powerful." sits between thanks and the
//! support group, and a question about the group finds it farther away than a turn that only
//! talks about groups. Each sentence of a longer message therefore gets a vector of its own
//! beside the whole message's, and archival recall scores a message by its closest one (see
//! `Messages::nearest_messages` in the store). Short sentences ("Wow!", "Thanks Mel!") carry no
//! topic and are left out; a message with fewer than two topical sentences keeps one vector.

use crate::text::split_speaker;

/// Fewest words a sentence needs to be searched on its own.
pub const MIN_WORDS: usize = 3;

/// The texts to embed beside the whole of `content`, at most `max` (below 2: none, since one
/// passage of everything would only repeat the whole message's vector): its topical
/// sentences, each with the speaker label the message starts with, so a passage still says
/// who spoke. Beyond `max` sentences, neighbours are joined into `max` passages of about the
/// same number of sentences, so a long message costs a bounded number of vectors.
pub fn passages(content: &str, max: usize) -> Vec<String> {
    if max < 2 {
        return Vec::new();
    }
    let (label, body) = split_speaker(content);
    let topical: Vec<&str> =
        crate::extract::sentences(body).into_iter().filter(|s| s.split_whitespace().count() >= MIN_WORDS).collect();
    if topical.len() < 2 {
        return Vec::new();
    }
    let groups = topical.len().min(max);
    (0..groups)
        .map(|g| {
            // Group g holds sentences [g·n/groups, (g+1)·n/groups): sizes differ by at most one.
            let (from, to) = (g * topical.len() / groups, (g + 1) * topical.len() / groups);
            format!("{label}{}", topical[from..to].join(" "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_topical_sentence_is_a_passage_with_the_speaker_label() {
        let p = passages("Caroline: Thanks, Mel! Last Friday I went to a support group. It was so powerful for me.", 8);
        assert_eq!(p, ["Caroline: Last Friday I went to a support group.", "Caroline: It was so powerful for me."]);
    }

    #[test]
    fn a_message_with_one_topical_sentence_keeps_its_single_vector() {
        assert!(passages("Wow! I adopted a puppy named Biscuit.", 8).is_empty());
        assert!(passages("ok", 8).is_empty());
        assert!(passages("", 8).is_empty());
    }

    #[test]
    fn zero_turns_passages_off() {
        assert!(passages("I moved to Lisbon last spring. My sister visits every month.", 0).is_empty());
    }

    #[test]
    fn many_sentences_are_joined_into_at_most_max_passages_in_order() {
        let text = (1..=7).map(|i| format!("Sentence number {i} is here.")).collect::<Vec<_>>().join(" ");
        let p = passages(&text, 3);
        assert_eq!(p.len(), 3);
        assert_eq!(p.join(" "), text);
    }

    proptest! {
        /// Whatever the text: never more than `max` passages, never one, every passage taken from
        /// the message in order, and every topical sentence in exactly one passage.
        #[test]
        fn passages_cover_the_topical_sentences_once(
            sentences in proptest::collection::vec("[a-z]{1,6}( [a-z]{1,6}){0,6}[.!?]", 0..20),
            max in 0usize..10,
        ) {
            // A sentence whose last word is an abbreviation ("vs.", "dr.") runs on into the
            // next one by design; the oracle below cuts at every stop, so such texts are left out.
            prop_assume!(sentences.iter().all(|s| {
                let body = &s[..s.len() - 1];
                !crate::extract::abbreviation_goes_on(body, " a") && !crate::extract::abbreviation_goes_on(body, " A")
            }));
            let text = sentences.join(" ");
            let p = passages(&text, max);
            prop_assert!(p.len() <= max);
            prop_assert!(p.len() != 1);
            let topical: Vec<&String> =
                sentences.iter().filter(|s| s.split_whitespace().count() >= MIN_WORDS).collect();
            if !p.is_empty() {
                let joined = p.join(" ");
                let expected = topical.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
                prop_assert_eq!(joined, expected);
            }
        }
    }
}
