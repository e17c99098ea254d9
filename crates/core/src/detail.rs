//! Tiered detail: how much of an item the prompt block carries (L0, L1, L2).
//!
//! L2 is the whole text: the memory as kept, the past message verbatim. L1 is its focus: for a
//! message, the sentence(s) that bear on the query, whole, with "…" where sentences were left
//! out; a memory is already one statement, so its L1 is itself. L0 is a gist of at most
//! [`GIST_TOKENS`] tokens, cut at a word: a label for documents and the context window, never a
//! line of the prompt block, where a cut fragment reads as the whole of what was said. The
//! block packs its best items whole and the next at their focus; the full text stays one
//! `recall` or `GET /v1/memories/{id}` away.
//!
//! Pure text functions: no I/O, no model.

use crate::kind::text_enum;
use crate::text::{split_speaker, words};
use crate::tokens;

text_enum!(
    /// How much of an item a block line carries; ordered from least to most.
    Detail, "detail level" {
        /// L0: a gist of at most [`GIST_TOKENS`] tokens.
        Gist => "l0",
        /// L1: the sentence(s) that bear on the query.
        Focus => "l1",
        /// L2: the whole text.
        Full => "l2",
    }
);

/// Most tokens of a gist's words (a date stamp or a speaker label in front is not counted).
pub const GIST_TOKENS: usize = 12;

/// Most sentences a focus keeps: the point, and at most one more that bears on it as much.
const FOCUS_SENTENCES: usize = 2;

/// Weight of a term found in nearly every competing text: it no longer tells texts apart, but
/// still tells the sentences of one text apart.
const FLOOR_WEIGHT: f32 = 0.25;

/// Fewest words of an opening sentence a gist starts from; shorter openers ("Wow, Caroline!",
/// "Hi!") are skipped so the gist says something.
const GIST_OPENER_WORDS: usize = 4;

/// The query's content words, each weighted by how rare it is among the texts competing for
/// the block: a word most of them share (the speaker's name in every turn, the topic of the
/// whole conversation) says little about which sentence of one of them answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Terms(Vec<(String, f32)>);

impl Terms {
    /// Weights `terms` (as [`crate::text::query_terms`] gives them) by inverse document
    /// frequency over `texts`.
    pub fn weighted<'t>(terms: &[String], texts: impl IntoIterator<Item = &'t str>) -> Self {
        let docs: Vec<Vec<String>> = texts.into_iter().map(|t| words(t).collect()).collect();
        let n = docs.len() as f32;
        Self(
            terms
                .iter()
                .map(|t| {
                    let df = docs.iter().filter(|ws| ws.iter().any(|w| same_root(w, t))).count() as f32;
                    (t.clone(), ((n + 1.0) / (df + 0.5)).ln().max(FLOOR_WEIGHT))
                })
                .collect(),
        )
    }

    /// The weight of the distinct terms `sentence` shares.
    fn score(&self, sentence: &str) -> f32 {
        let ws: Vec<String> = words(sentence).collect();
        self.0.iter().filter(|(t, _)| ws.iter().any(|w| same_root(w, t))).map(|(_, w)| w).sum()
    }
}

/// The sentences of `text` that bear most on the query, whole and in their order, with "…"
/// wherever sentences were left out;
/// `None` when no sentence does or when they are the whole text, so there is nothing to shed.
///
/// A sentence bears on the query by the weight of the distinct terms it shares with it (a word
/// matches a term when one is the other with an ending: "adopt" and "adopted", "paint" and
/// "painting"); an opener shorter than [`GIST_OPENER_WORDS`] words ("Wow, Caroline!") is never
/// the focus. The best are kept, at most [`FOCUS_SENTENCES`]; a speaker label in front
/// ("Caroline: ") stays, so the focus still says who spoke.
pub fn focus(text: &str, terms: &Terms) -> Option<String> {
    let (label, body) = split_speaker(text);
    let sentences = crate::extract::sentences(body);
    if sentences.len() < 2 {
        return None;
    }
    let scores: Vec<f32> = sentences
        .iter()
        .map(|s| if s.split_whitespace().count() < GIST_OPENER_WORDS { 0.0 } else { terms.score(s) })
        .collect();
    let best = scores.iter().copied().fold(0.0f32, f32::max);
    if best <= 0.0 {
        return None;
    }
    let kept: Vec<usize> = (0..sentences.len()).filter(|&i| scores[i] >= best - 1e-6).take(FOCUS_SENTENCES).collect();
    if kept.len() == sentences.len() {
        return None;
    }
    // Whole sentences only, and an ellipsis wherever something was left out (before, between,
    // after), so the model never reads a cut as the whole of what was said.
    let mut out = String::from(label);
    let mut next = 0;
    for &i in &kept {
        if i > next {
            out.push_str(if next == 0 { "… " } else { " … " });
        } else if i > 0 {
            out.push(' ');
        }
        out.push_str(sentences[i]);
        next = i + 1;
    }
    if next < sentences.len() {
        out.push_str(" …");
    }
    Some(out)
}

/// The first [`GIST_TOKENS`] tokens' worth of whole words of `text`, with "…" when cut; the
/// text itself when it is short enough. A speaker label in front is kept and not counted.
pub fn gist(text: &str) -> String {
    let (label, body) = split_speaker(text);
    let body = skip_openers(body.trim());
    let (total, fits) = tokens::head(body, GIST_TOKENS - 1);
    if total <= GIST_TOKENS {
        return format!("{label}{body}");
    }
    // Whole words within the first GIST_TOKENS - 1 tokens (the mark takes the last one): cut
    // at the last space at or before where those tokens end, else inside the one long word.
    let fits = (0..=fits).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
    let end = match body[fits..].starts_with(char::is_whitespace) {
        true => fits,
        false => body[..fits].rfind(char::is_whitespace).unwrap_or(fits),
    };
    let cut = body[..end].trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-'));
    format!("{label}{cut}…")
}

/// `body` from its first sentence of at least [`GIST_OPENER_WORDS`] words (all of it when none
/// is that long).
fn skip_openers(body: &str) -> &str {
    let sentences = crate::extract::sentences(body);
    match sentences.iter().find(|s| s.split_whitespace().count() >= GIST_OPENER_WORDS) {
        Some(s) => {
            // Sentences are trimmed slices of `body`, so the offset is exact.
            let at = s.as_ptr() as usize - body.as_ptr() as usize;
            &body[at..]
        }
        None => body,
    }
}

/// Whether two lower-cased words are one word with different endings: equal, or one a prefix
/// of the other at least four letters long, or sharing their first five letters.
fn same_root(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() >= 4 && long.starts_with(short) {
        return true;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    common >= 5
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::query_terms;
    use proptest::prelude::*;

    fn terms(q: &str) -> Terms {
        Terms::weighted(&query_terms(q), [])
    }

    #[test]
    fn focus_keeps_the_sentences_that_bear_on_the_query() {
        let text = "Caroline: Hey! So good to see you. I went to an LGBTQ support group yesterday and it was powerful. \
                    Anyway, how are the kids?";
        let f = focus(text, &terms("When did Caroline go to the LGBTQ support group?")).unwrap();
        // Whole sentences, and an ellipsis where something was left out.
        assert_eq!(f, "Caroline: … I went to an LGBTQ support group yesterday and it was powerful. …");
        // Endings do not hide a match.
        let f = focus("Long week. We adopted a puppy on Sunday! Work is fine.", &terms("adopt dog puppies")).unwrap();
        assert_eq!(f, "… We adopted a puppy on Sunday! …");
    }

    #[test]
    fn nothing_to_focus_on_gives_none() {
        assert_eq!(focus("One sentence about pottery.", &terms("pottery")), None);
        assert_eq!(focus("Pottery class. Pottery kiln.", &terms("pottery")), None, "every sentence bears on it");
        assert_eq!(focus("Nice day. Went out.", &terms("pottery")), None, "no sentence does");
        assert_eq!(focus("Nice day. Went out.", &Terms::default()), None);
    }

    #[test]
    fn a_term_every_text_shares_does_not_choose_the_focus() {
        let texts = ["Melanie: Wow, Caroline! I painted a horse last week.", "Melanie: Hi Caroline.", "Melanie: Bye."];
        let t = Terms::weighted(&query_terms("What did Melanie paint?"), texts);
        assert_eq!(focus(texts[0], &t).unwrap(), "Melanie: … I painted a horse last week.");
        // Only the shared word matches: no focus.
        let t = Terms::weighted(&query_terms("Where is Caroline?"), texts);
        assert_eq!(focus("Melanie: Hi Caroline. Long day today.", &t), None);
    }

    #[test]
    fn at_most_two_sentences_are_kept() {
        let f = focus("We paint a barn. We paint a boat. We paint a bus. Other things too.", &terms("paint")).unwrap();
        assert_eq!(f, "We paint a barn. We paint a boat. …");
        let f = focus("We paint a barn. Other things. We paint a boat. More.", &terms("paint")).unwrap();
        assert_eq!(f, "We paint a barn. … We paint a boat. …", "a gap between kept sentences is marked");
    }

    #[test]
    fn a_gist_is_short_keeps_the_label_and_marks_the_cut() {
        let g = gist("Melanie: I finally finished the painting of the sunset over the lake that I started last summer");
        assert!(g.starts_with("Melanie: I finally finished"), "{g}");
        assert!(g.ends_with('…'), "{g}");
        assert!(tokens::count(g.trim_start_matches("Melanie: ")) <= GIST_TOKENS + 1, "{g}");
        assert_eq!(gist("User adopted a dog"), "User adopted a dog");
        // A short opener is skipped so the gist says something.
        assert_eq!(gist("Caroline: Wow, Mel! We adopted a dog."), "Caroline: We adopted a dog.");
        assert_eq!(gist("Hi! Yes!"), "Hi! Yes!");
        let long_word = "x".repeat(200);
        assert!(tokens::count(&gist(&long_word)) <= GIST_TOKENS + 1);
    }

    #[test]
    fn roots() {
        assert!(same_root("adopted", "adopt"));
        assert!(same_root("painting", "paints"));
        assert!(!same_root("cat", "category"));
        assert!(!same_root("care", "cart"));
    }

    proptest! {
        #[test]
        fn levels_never_grow_and_never_panic(text in "\\PC{0,300}", q in "[a-z ]{0,40}") {
            let t = terms(&q);
            if let Some(f) = focus(&text, &t) {
                prop_assert!(tokens::count(&f) <= tokens::count(&text) + 4);
            }
            let g = gist(&text);
            let (_, body) = split_speaker(&g);
            prop_assert!(tokens::count(body) <= GIST_TOKENS + 1, "{:?}", g);
        }

        /// A focus is never a fragment: each of its parts between ellipses is a run of whole
        /// sentences of the text, in the text's order.
        #[test]
        fn a_focus_is_whole_sentences(
            parts in proptest::collection::vec("[A-Za-z]{1,8}( [a-z]{1,8}){0,6}[.!?]", 2..8),
            q in "[a-z]{3,8}( [a-z]{3,8}){0,3}",
        ) {
            let text = parts.join(" ");
            if let Some(f) = focus(&text, &terms(&q)) {
                let sentences = crate::extract::sentences(&text);
                let mut from = 0;
                for run in f.split('…').map(str::trim).filter(|r| !r.is_empty()) {
                    let at = text[from..].find(run).map(|i| i + from);
                    prop_assert!(at.is_some(), "{run:?} is not whole text of {text:?} in order ({f:?})");
                    let at = at.unwrap();
                    prop_assert!(sentences.iter().any(|s| text[at..].starts_with(s)), "{run:?} starts mid-sentence in {text:?}");
                    prop_assert!(sentences.iter().any(|s| text[..at + run.len()].ends_with(s)), "{run:?} ends mid-sentence in {text:?}");
                    from = at + run.len();
                }
            }
        }
    }
}
