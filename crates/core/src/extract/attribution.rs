//! Whose statement a memory is: the user's own, or a named speaker's in a transcript.
//!
//! The rules read first-person sentences and write them about "User". That is right for the
//! user's own messages only. A transcript line labelled with a speaker ("Melanie: I adopted a
//! puppy") is Melanie speaking, whoever sends the transcript, so what it says is about Melanie:
//! the memory names her, is keyed under her (her home never replaces the user's), and is never
//! a rule for the assistant (a request in a transcript was said to someone else). Targets found
//! by matching text are dropped, since a match could land on another person's memory.

use std::sync::OnceLock;

use regex::Regex;

use crate::kind::{Kind, Surface};
use crate::op::{Action, ProposedOp, Target};

/// The speaker a transcript line names and the words after the label ("Caroline: I went ..."
/// gives `Caroline` and "I went ..."); `None` for a line with no speaker label. Only a name
/// counts: one or two capitalised words ("Caroline", "Mary Ann"), never "ID" or "Note to self".
pub(super) fn split_speaker(text: &str) -> Option<(&str, &str)> {
    let (label, rest) = text.split_once(": ")?;
    let words: Vec<&str> = label.split_whitespace().collect();
    let is_name = (1..=2).contains(&words.len())
        && label.len() <= 30
        && words.iter().all(|w| {
            w.starts_with(char::is_uppercase)
                && w.chars().count() >= 2
                && w.chars().skip(1).all(|c| c.is_lowercase() || c == '\'' || c == '-')
        });
    let heading = NOT_NAMES.contains(&label.trim().to_lowercase().as_str());
    (is_name && !heading && !rest.trim().is_empty()).then_some((label.trim(), rest))
}

/// Words that open a line with a colon and are no speaker: "Correction: I live in Porto" is the
/// user's own correction.
const NOT_NAMES: &[&str] = &[
    "correction",
    "update",
    "note",
    "edit",
    "reminder",
    "question",
    "answer",
    "summary",
    "fyi",
    "ps",
    "important",
    "warning",
    "context",
    "background",
    "goal",
    "problem",
    "issue",
    "result",
    "status",
    "re",
    "subject",
    "title",
    "topic",
    "example",
    "actually",
    "also",
    "btw",
    "ok",
    "okay",
    "well",
    "so",
    "todo",
    "done",
    "news",
    "quick question",
    "user",
    "me",
    "myself",
    "assistant",
    "bot",
    "ai",
    "system",
];

/// `op`, proposed from a line `speaker` said, made about that speaker; `None` when it cannot be
/// (a request to the assistant, a target found by matching).
pub(super) fn about_speaker(mut op: ProposedOp, speaker: &str, line: &str) -> Option<ProposedOp> {
    let key_of = |k: &str| format!("person:{}:{k}", speaker.to_lowercase());
    op.action = match op.action {
        Action::Add | Action::Update(Target::Matching(_)) => Action::Add,
        Action::Update(Target::Key(k)) => Action::Update(Target::Key(key_of(&k))),
        // "I meant Thursdays not Wednesdays": the speaker's own slip, corrected beside what
        // they said ("On … Marcus corrected: …"), never beside what another speaker said.
        Action::Amend(Target::Matching(detail)) => Action::Amend(Target::Matching(format!("{detail} {speaker}"))),
        // "Pat: Correction, it's now Saturday 8 August": the engine looks for what Pat said last
        // with a date in it (the line's label travels with its message).
        Action::Amend(Target::Latest(shape)) => Action::Amend(Target::Latest(shape)),
        _ => return None,
    };
    // A boundary, or a wish about the replies ("more detail, please"), was said to someone else:
    // it is no rule for this assistant's answers to the user.
    if op.draft.kind == Kind::Protocol || op.draft.rule.as_deref().is_some_and(|r| r.starts_with("style.")) {
        return None;
    }
    op.draft.key = op.draft.key.as_deref().map(key_of);
    // "Mum: Nan says no presents": a family title said without "my" is the family's name for
    // someone ("Nan"), not the speaker's own relative ("Mum's nan").
    op.draft.content = titled()
        .replace_all(&op.draft.content, |c: &regex::Captures<'_>| {
            let title = &c[1];
            let said = line.to_lowercase();
            let owned = ["my ", "our "].iter().any(|p| said.contains(&format!("{p}{}", title.to_lowercase())));
            if owned { c[0].to_string() } else { super::lex::title(title) }
        })
        .into_owned();
    op.draft.content = user_word().replace_all(&op.draft.content, speaker).into_owned();
    if op.draft.effective_surface() == Surface::FactCheck {
        // "Do not contradict" is for what the user says of themselves.
        op.draft.surface = Some(Surface::Adapt);
        op.draft.surface_by =
            Some(format!("attribution: {speaker}'s words, not the user's, are never do-not-contradict"));
    }
    Some(op)
}

/// "User's nan", "User's grandad": a relative a family calls by a title.
fn titled() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\bUser's\s+(nan|nana|nanna|gran|granny|grandma|grandad|granddad|grandpa|mum|mam|mom|dad|auntie|aunty|uncle)\b")
            .expect("titled regex")
    })
}

/// "User" as the subject or possessor the rules write ("User's", "User lives").
fn user_word() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\bUser\b").expect("user regex"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::heuristic::tests::run;

    #[test]
    fn a_speaker_label_is_a_name_and_nothing_else() {
        assert_eq!(split_speaker("Caroline: I live in Lisbon"), Some(("Caroline", "I live in Lisbon")));
        assert_eq!(split_speaker("Mary Ann: hi"), Some(("Mary Ann", "hi")));
        for t in [
            "Note to self: buy milk",
            "I said: no",
            "Account ID: ZX-9921",
            "Caroline:",
            "no label here",
            "Correction: I live in Porto",
            "Update: I moved",
        ] {
            assert_eq!(split_speaker(t), None, "{t:?}");
        }
    }

    #[test]
    fn a_labelled_line_is_about_its_speaker() {
        let ops = run("Melanie: I live in Boston and I have a dog named Luna.");
        assert!(!ops.is_empty());
        for op in &ops {
            assert!(!op.draft.content.contains("User"), "{op:?}");
            assert!(op.draft.content.contains("Melanie"), "{op:?}");
            assert!(op.draft.key.as_deref().is_none_or(|k| k.starts_with("person:melanie:")), "{op:?}");
            assert_ne!(op.draft.effective_surface(), Surface::FactCheck, "{op:?}");
        }
    }

    #[test]
    fn a_wish_about_replies_said_by_another_speaker_sets_no_style() {
        let style =
            |ops: &[ProposedOp]| ops.iter().any(|o| o.draft.rule.as_deref().is_some_and(|r| r.starts_with("style.")));
        for t in ["I prefer detailed answers.", "Please use bullet points", "Reply in German please"] {
            assert!(style(&run(t)), "the user's own wish sets the style: {t}");
            let said = format!("Calvin: {t}");
            assert!(!style(&run(&said)), "{said}: {:?}", run(&said));
        }
    }

    #[test]
    fn a_labelled_request_is_no_rule_for_the_assistant() {
        for t in ["Tom: please never mention my divorce again.", "Tom: forget that I live in Leeds."] {
            let ops = run(t);
            assert!(
                ops.iter().all(|o| o.draft.kind != Kind::Protocol && !matches!(o.action, Action::Forget(_))),
                "{t}: {ops:?}"
            );
        }
    }

    #[test]
    fn a_family_title_said_without_my_is_the_familys_name_for_them() {
        let got: Vec<String> =
            run("Mum: Nan says no presents, she wants everyone to write a memory of her on a card instead")
                .into_iter()
                .map(|o| o.draft.content)
                .collect();
        assert!(got.iter().all(|c| !c.contains("Mum's nan")), "{got:?}");
        let got: Vec<String> = run("Mum: my nan is 101 next week").into_iter().map(|o| o.draft.content).collect();
        assert!(got.iter().all(|c| !c.contains("User")), "{got:?}");
    }

    #[test]
    fn an_unlabelled_line_stays_the_users() {
        let ops = run("I live in Boston.");
        assert!(ops.iter().any(|o| o.draft.content.starts_with("User")), "{ops:?}");
    }
}
