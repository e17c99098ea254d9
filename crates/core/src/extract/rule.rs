//! The shape every rule family shares: a sentence in context, a rule, and what a rule found.

use chrono::{DateTime, Utc};
use regex::{Captures, Regex};

use super::lex::expand;
use crate::op::{Action, Draft};

/// One sentence of a user message, with what the driver worked out about it once.
#[derive(Debug)]
pub(super) struct Sentence<'a> {
    /// The sentence, apostrophes and common contractions normalised.
    pub(super) text: &'a str,
    /// `text` lower-cased (for cheap trigger checks only; offsets may differ).
    pub(super) lower: String,
    /// The previous sentence of the same message, for pronouns ("we call him ...").
    pub(super) prev: Option<&'a str>,
    /// When the message was sent: the clock dates are resolved against.
    pub(super) at: DateTime<Utc>,
    /// Statements must end at or before this byte: a trailing question ("..., do you?") is not
    /// a statement, and a sentence that is a question from the start has 0 here.
    pub(super) statement_end: usize,
    /// Hypothetical, reported or doubted ("if I were", "she thinks I", "I don't think I"):
    /// no statement about the user can be read from it.
    pub(super) blocked: bool,
    /// Hedged ("maybe", "I think", "probably"): lower confidence.
    pub(super) hedged: bool,
    /// Corrects or switches something said before ("actually", "switched to", "now").
    pub(super) correction: bool,
    /// The user writes without capitals, so capitalisation cannot mark a name.
    pub(super) lowercase: bool,
}

impl Sentence<'_> {
    /// Whether the clause before byte `pos` negates what follows ("no bullet points", "please
    /// don't use emojis"): looks back to the previous comma or the sentence start.
    pub(super) fn negated_before(&self, pos: usize) -> bool {
        let before = &self.text[..pos];
        let clause = before.rfind([',', ';', ':']).map_or(before, |i| &before[i + 1..]).to_lowercase();
        let window: String = clause.chars().rev().take(48).collect::<Vec<_>>().into_iter().rev().collect();
        window.split(|c: char| !(c.is_alphanumeric() || c == '\'')).any(|w| {
            matches!(
                w,
                "no" | "not"
                    | "never"
                    | "without"
                    | "don't"
                    | "dont"
                    | "stop"
                    | "avoid"
                    | "hate"
                    | "dislike"
                    | "less"
                    | "fewer"
                    | "skip"
                    | "ditch"
                    | "lose"
                    | "instead"
                    | "can't"
                    | "cannot"
                    | "quit"
                    | "enough"
            )
        })
    }
}

/// Lead-in words before a request still addressed to the assistant ("ok, please ...").
pub(super) const LEADS: &[&str] = &[
    "actually", "ahead", "alright", "also", "and", "anyway", "btw", "can", "could", "fine", "go", "hey", "hmm", "i",
    "i'd", "just", "like", "may", "need", "no", "now", "oh", "oh,", "ok", "okay", "please", "pls", "plz", "should",
    "so", "sorry", "then", "to", "um", "wait", "want", "well", "will", "would", "yes", "you",
];

impl Sentence<'_> {
    /// Whether a request at byte `start` is addressed to the assistant: at the sentence start or
    /// after a short lead-in ("ok,", "and please", "can you"), not at the end of a clause of its
    /// own ("I can relax, forget my troubles").
    pub(super) fn addressed(&self, start: usize) -> bool {
        let before = self.text[..start].trim_end().trim_end_matches([',', ';', ':']);
        let clause = before.rsplit([',', ';', ':', '.', '!']).next().unwrap_or_default();
        let words: Vec<String> = clause.split_whitespace().map(str::to_lowercase).collect();
        words.len() <= 4 && words.iter().all(|w| LEADS.contains(&w.as_str()))
    }
}

/// When a rule may fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// A statement about the user: never in questions, hypotheticals or reported speech.
    Statement,
    /// A request to the assistant ("keep answers short", "forget ...", "remind me"): may be
    /// phrased as a question ("can you ...?").
    Request,
    /// A plan: not in questions; hypotheticals only lower its confidence.
    Plan,
}

/// What a rule found: an op (sources are added by the driver).
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// What to do.
    pub(super) action: Action,
    /// The memory proposed or described.
    pub(super) draft: Draft,
    /// A "no longer" op, dropped when the same sentence states the replacement.
    pub(super) retractable: bool,
    /// Words naming the value this statement replaces ("not engineering", "from Vim").
    pub(super) replaces: Option<String>,
    /// Where the rule's words end in the sentence (bytes): a clause after them is free for
    /// episodic capture ("I work as a nurse, and last week I passed my driving test").
    pub(super) end: usize,
    /// Where the rule's words start in the sentence (bytes): a clause before them with its own
    /// subject is news too ("I have gastritis, I take omeprazole 20 mg").
    pub(super) start: usize,
}

impl Found {
    /// An add of `draft`.
    pub(super) fn add(draft: Draft) -> Self {
        Self { action: Action::Add, draft, retractable: false, replaces: None, end: 0, start: 0 }
    }

    /// An op with an explicit action.
    pub(super) fn with(action: Action, draft: Draft) -> Self {
        Self { action, draft, retractable: false, replaces: None, end: 0, start: 0 }
    }
}

/// Builds what a match means; an empty result leaves the span unclaimed.
pub(super) type Build = fn(&Captures<'_>, &Sentence<'_>) -> Vec<Found>;

/// One regular expression over a sentence and the code that reads its captures.
pub(super) struct Rule {
    /// Name, for tests and debugging.
    pub(super) name: &'static str,
    /// Lower-case words of which at least one must occur for the rule to be tried (empty: always).
    pub(super) triggers: &'static [&'static str],
    /// The pattern (case-insensitive).
    pub(super) re: Regex,
    /// When it may fire.
    pub(super) mode: Mode,
    /// What a match means.
    pub(super) build: Build,
}

impl Rule {
    /// A rule from a pattern with `<PLACEHOLDER>`s.
    pub(super) fn new(
        name: &'static str,
        mode: Mode,
        triggers: &'static [&'static str],
        p: &str,
        build: Build,
    ) -> Self {
        Self { name, triggers, re: expand(p), mode, build }
    }

    /// Whether the sentence contains one of the trigger words.
    pub(super) fn triggered(&self, lower: &str) -> bool {
        self.triggers.is_empty() || self.triggers.iter().any(|t| lower.contains(t))
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("name", &self.name).field("mode", &self.mode).finish()
    }
}

/// A capture as text, if present.
pub(super) fn cap<'a>(c: &'a Captures<'_>, name: &str) -> Option<&'a str> {
    c.name(name).map(|m| m.as_str())
}
