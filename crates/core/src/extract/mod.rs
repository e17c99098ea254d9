//! Extraction: turning messages into proposed ops. Loose by design; the gate is strict.
//!
//! The heuristic extractor is split by what it reads, one file per rule family: identity (name,
//! job, home, family, pets), style (keyed reply preferences), tool (tools and switches),
//! preference (tastes), correction, boundary, decision (conventions), forget, plan (open loops, dated by [`when`]),
//! resolution (closing them), mood, lore and fact; what no family claims, `episodic` keeps when
//! it is a statement about the user's life. `heuristic` runs the families in priority
//! order and turns what they find into ops; `rule` and `lex` hold what they share.

mod attribution;
mod boundary;
mod cases;
mod correction;
mod decision;
mod dictation;
mod episodic;
mod fact;
mod forget;
mod heuristic;
mod identity;
mod lex;
pub mod llm;
mod lore;
mod medication;
mod mood;
mod plan;
mod preference;
mod readable;
mod resolution;
mod respell;
mod rule;
mod spelling;
mod style;
mod tool;
pub mod when;

pub use heuristic::HeuristicExtractor;
pub(crate) use readable::quoted_words;

/// The rule name episodic capture records: the catch-all that keeps any other first-person
/// statement in the third person. Such a memory restates its turn rather than typing a fact, so
/// readers treat it as context (assembly lets the turn itself stand in for it).
pub const CAPTURE_RULE: &str = episodic::RULE;

/// The rule name of a take-back that only sets one day against another ("my brother says the
/// party is the 13th, not the 6th"), no word owning a slip or a change: the memory it amends
/// must hold the old day and share another word with the sentence (the thing, or the month),
/// so "I work the 13th, not the 6th" moves no party that happens to be on the 6th.
pub const DAY_FOR_DAY_RULE: &str = "correction.day-for-day";

/// The speaker a pasted transcript's line names ("Pat: it's now Saturday 8 August" → "Pat"),
/// `None` for the user's own words. What the engine needs to let a speaker's take-back find
/// what that speaker said, never what someone else did.
pub fn speaker(text: &str) -> Option<&str> {
    attribution::split_speaker(text).map(|(speaker, _)| speaker)
}

use crate::message::Message;
use crate::op::ProposedOp;

/// Something that proposes memory operations from a batch of messages.
///
/// Implementations never write: they propose, the gate decides, the store applies.
pub trait Extractor: Send + Sync {
    /// Name recorded in provenance, e.g. "heuristic".
    fn name(&self) -> &'static str;
    /// Version recorded in provenance, bumped whenever behaviour changes.
    fn version(&self) -> &'static str;
    /// Proposes ops for a batch of messages (oldest first).
    fn extract(&self, batch: &[Message]) -> Vec<ProposedOp>;
}

/// Splits text into sentences on terminal punctuation and line breaks; good enough for chat.
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = match c {
            '.' | '!' | '?' => {
                // Keep "e.g." and decimals together: split only before whitespace or the end.
                let next = bytes.get(i + 1).copied();
                (next.is_none() || next.is_some_and(|b| b.is_ascii_whitespace()))
                    && !(c == '.' && abbreviation_goes_on(&text[..i], &text[i + 1..]))
            }
            '\n' | ';' => true,
            _ => false,
        };
        if end {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + c.len_utf8();
        }
    }
    let tail = text[start..].trim();
    if !tail.is_empty() {
        out.push(tail);
    }
    out
}

/// Titles and place words that a name follows ("St. John's", "Dr. Patel", "Mt. Cook"): their
/// full stop ends no sentence when a capital or a number comes next.
const TITLES: &[&str] = &[
    "mr", "mrs", "ms", "mx", "dr", "prof", "st", "ste", "mt", "ft", "sgt", "capt", "lt", "col", "gen", "rev", "fr",
    "jr", "sr",
];

/// "No." before a number ("flat No. 4"); before anything else it is the word "no".
const NUMBERED: &[&str] = &["no", "nos"];

/// Abbreviations that run on into the sentence ("at 7 a.m. before work", "e.g. the bus"):
/// their full stop ends no sentence when a lower-case word or a number comes next.
const RUN_ON: &[&str] = &["a.m", "p.m", "e.g", "i.e", "approx", "vs", "etc", "incl", "esp"];

/// Whether the full stop between `before` and `after` closes an abbreviation that the
/// sentence goes on past, rather than the sentence itself.
pub(crate) fn abbreviation_goes_on(before: &str, after: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    let Some(next) = after.trim_start().chars().next() else { return false };
    let is = |list: &[&str]| list.iter().any(|w| w.eq_ignore_ascii_case(word));
    (is(TITLES) && (next.is_uppercase() || next.is_ascii_digit()))
        || (is(RUN_ON) && (next.is_lowercase() || next.is_ascii_digit()))
        || (is(NUMBERED) && next.is_ascii_digit())
}

/// The entries of a word list kept as data (`words/*.txt`): one per line, blank lines and
/// `#` comments left out.
fn word_list(text: &'static str) -> impl Iterator<Item = &'static str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sentences_split_on_punctuation_but_not_inside_numbers() {
        assert_eq!(
            super::sentences("I'm Dana. I earn 3.5k! Do you?\nok"),
            vec!["I'm Dana.", "I earn 3.5k!", "Do you?", "ok"]
        );
    }

    #[test]
    fn a_title_or_a_running_abbreviation_ends_no_sentence() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Me and the missus are off to St. John's next week.",
                &["Me and the missus are off to St. John's next week."],
            ),
            (
                "Saw Dr. Okafor at 9 a.m. today, e.g. the new one. Fine now",
                &["Saw Dr. Okafor at 9 a.m. today, e.g. the new one.", "Fine now"],
            ),
            ("We live on Elm St. it is quiet", &["We live on Elm St.", "it is quiet"]),
            ("I start at 7 a.m. Tomorrow is off.", &["I start at 7 a.m.", "Tomorrow is off."]),
            ("Flat No. 4 is ours", &["Flat No. 4 is ours"]),
            ("Said no. Then left", &["Said no.", "Then left"]),
        ];
        for (text, want) in cases {
            assert_eq!(super::sentences(text), *want, "{text}");
        }
    }
}
