//! A word typed again to fix how it came out: "Doctor put me on met for min" then "*metformin",
//! "allergic to penny sillin. Penicillin.", "trials at Landover. LLANDOVERY.".
//!
//! Phones split and "correct" words people type, and people fix them the way chat does: the
//! word again, alone, often with an asterisk. Read as they stand, the slip stays in a memory
//! ("User is allergic to penny sillin", no safety rule matching it) and the fix becomes a memory
//! of its own. So before any rule runs, the word said alone replaces the span of the sentence
//! before it (or, led by "*", of the user's message before it) that it respells, and is itself
//! dropped. Only a span that spells nearly the same letters is replaced: one to three words
//! whose letters, run together, are at most one edit in three from the word's (one in four
//! for a single word), and never a word said alone for its own sake ("Thanks!").

use std::borrow::Cow;

use crate::message::{Message, Role};

/// Shortest word read as a respelling: shorter ones are more often a reply ("Yes.", "Sat.").
const MIN_LEN: usize = 5;

/// `batch` with each respelling applied to what it respells and taken out of its own message.
/// Borrowed unchanged when there is none.
pub(super) fn respelled(batch: &[Message]) -> Cow<'_, [Message]> {
    let mut out: Option<Vec<Message>> = None;
    for i in 0..batch.len() {
        if batch[i].role != Role::User {
            continue;
        }
        let msgs = out.as_deref().unwrap_or(batch);
        // Within the message: a sentence that is one word fixes the sentence before it.
        let within = within_message(&msgs[i].content);
        // Led by "*": it fixes the user's message before it.
        let current = within.as_deref().unwrap_or(&msgs[i].content);
        let across = starred(current).and_then(|(word, rest)| {
            let before = (0..i).rev().find(|&j| msgs[j].role == Role::User)?;
            let fixed = respell(&msgs[before].content, &word)?;
            Some((before, fixed, rest))
        });
        if within.is_none() && across.is_none() {
            continue;
        }
        let msgs = out.get_or_insert_with(|| batch.to_vec());
        if let Some(text) = within {
            msgs[i].content = text;
        }
        if let Some((before, fixed, rest)) = across {
            msgs[before].content = fixed;
            msgs[i].content = rest;
        }
    }
    match out {
        Some(v) => Cow::Owned(v),
        None => Cow::Borrowed(batch),
    }
}

/// `text` with each one-word sentence that respells part of the sentence before it applied
/// there and dropped; `None` when there is none.
fn within_message(text: &str) -> Option<String> {
    let sentences = split(text);
    let mut kept: Vec<String> = Vec::new();
    let mut changed = false;
    for s in sentences {
        let word = alone(&s);
        let fixed = word.as_deref().and_then(|w| kept.last().and_then(|before| respell(before, w)));
        match fixed {
            Some(f) => {
                *kept.last_mut().expect("respelled a sentence") = f;
                changed = true;
            }
            None => kept.push(s),
        }
    }
    changed.then(|| kept.join(" "))
}

/// Sentences of `text`, each with its end mark and the space after it trimmed.
fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let end_mark = matches!(c, '.' | '!' | '?');
        let next_is_space = chars.get(k + 1).is_none_or(|&(_, n)| n.is_whitespace());
        if end_mark && next_is_space {
            let s = text[start..i + c.len_utf8()].trim();
            if !s.is_empty() {
                out.push(s.to_string());
            }
            start = i + c.len_utf8();
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

/// The word a sentence is, when it is one word of letters (an asterisk before it allowed) and
/// no word said alone for its own sake ("Thanks!", "Exactly.").
fn alone(sentence: &str) -> Option<String> {
    let w = sentence.trim().trim_start_matches('*').trim_end_matches(['.', '!', '?', ',']);
    let said_alone = SAID_ALONE.contains(&w.to_lowercase().as_str());
    (w.chars().count() >= MIN_LEN && w.chars().all(char::is_alphabetic) && !said_alone).then(|| w.to_string())
}

/// Words people say as a sentence of their own, which respell nothing.
const SAID_ALONE: &[&str] = &[
    "absolutely",
    "agreed",
    "alright",
    "amazing",
    "anyway",
    "anyways",
    "awesome",
    "bless",
    "brilliant",
    "cheers",
    "congrats",
    "correct",
    "definitely",
    "exactly",
    "fantastic",
    "finally",
    "great",
    "hello",
    "honestly",
    "indeed",
    "lovely",
    "nevermind",
    "perfect",
    "please",
    "right",
    "seriously",
    "sorry",
    "sounds",
    "sure",
    "thanks",
    "thank",
    "totally",
    "welcome",
    "whatever",
    "wonderful",
    "yeah",
    "yikes",
];

/// A message opening on "*word": the word and what the message says after it.
fn starred(text: &str) -> Option<(String, String)> {
    let t = text.trim_start();
    let rest = t.strip_prefix('*')?;
    let end = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
    let word = &rest[..end];
    if word.chars().count() < MIN_LEN {
        return None;
    }
    let after = rest[end..].trim_start_matches(['.', '!', ',', ' ']).to_string();
    Some((word.to_string(), after))
}

/// `text` with the span of one to three words it respells replaced by `word`; `None` when no
/// span spells nearly the same letters, or one already spells them.
fn respell(text: &str, word: &str) -> Option<String> {
    let target: String = word.to_lowercase();
    let spans = words(text);
    // A word split by the phone ("met for min", "penny sillin") may be further off than one
    // mistyped whole ("Landover" for "Llandovery").
    let allowed = |n: usize| (target.chars().count() / if n == 1 { 4 } else { 3 }).max(1);
    let mut best: Option<(usize, usize, usize)> = None; // (distance, from, to) in bytes
    for i in 0..spans.len() {
        for n in 1..=3.min(spans.len() - i) {
            let (from, to) = (spans[i].0, spans[i + n - 1].1);
            let letters: String =
                text[from..to].chars().filter(|c| c.is_alphabetic()).collect::<String>().to_lowercase();
            if letters == target {
                if n == 1 {
                    return None;
                }
            } else if !super::spelling::same_start(&letters, &target) {
                continue;
            }
            let d = super::spelling::distance(&letters, &target);
            if d <= allowed(n) && best.is_none_or(|(bd, _, _)| d < bd) {
                best = Some((d, from, to));
            }
        }
    }
    let (_, from, to) = best?;
    let shown =
        if word.chars().all(char::is_uppercase) { super::lex::title(&word.to_lowercase()) } else { word.to_string() };
    Some(format!("{}{}{}", &text[..from], shown, &text[to..]))
}

/// Byte spans of the words (letters) of `text`.
fn words(text: &str) -> Vec<(usize, usize)> {
    super::spelling::letter_runs(text, char::is_alphabetic).into_iter().map(|(s, w)| (s, s + w.len())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::heuristic::tests::message;

    #[test]
    fn a_word_said_again_alone_replaces_what_it_respells() {
        assert_eq!(
            within_message("Should say I am allergic to penny sillin. Penicillin. Came up in a rash").as_deref(),
            Some("Should say I am allergic to Penicillin. Came up in a rash")
        );
        assert_eq!(
            within_message("Meeting at Landover. LLANDOVERY. On the 8th").as_deref(),
            Some("Meeting at Llandovery. On the 8th")
        );
        // A sentence of one word that respells nothing is a sentence.
        assert_eq!(within_message("We went hiking. Amazing. Back on Monday"), None);
        assert_eq!(within_message("I love Paris. Paris!"), None);
        assert_eq!(within_message("I think I'll give those a try with my pups. Thanks!"), None);
        assert_eq!(
            within_message("I'm training for the marathon. Trainers."),
            None,
            "one word: one edit in four at most"
        );
    }

    #[test]
    fn a_starred_word_fixes_the_users_message_before_it() {
        let mut q = message("m2", "How are you finding it?");
        q.role = Role::Assistant;
        let batch = vec![
            message("m1", "doctor put me on met for min last month"),
            q,
            message("m3", "*metformin. phone thinks it knows better"),
        ];
        let fixed = respelled(&batch);
        assert_eq!(fixed[0].content, "doctor put me on metformin last month");
        assert_eq!(fixed[2].content, "phone thinks it knows better");
        // Nothing it respells: the batch is as it was.
        let batch = vec![message("m1", "I live in Leeds"), message("m2", "*sigh* long day")];
        assert!(matches!(respelled(&batch), Cow::Borrowed(_)));
    }
}
