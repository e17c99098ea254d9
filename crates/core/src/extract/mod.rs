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

/// The rule name episodic capture records: the catch-all that keeps any other first-person
/// statement in the third person. Such a memory restates its turn rather than typing a fact, so
/// readers treat it as context (assembly lets the turn itself stand in for it).
pub const CAPTURE_RULE: &str = episodic::RULE;

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
                next.is_none() || next.is_some_and(|b| b.is_ascii_whitespace())
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
}
