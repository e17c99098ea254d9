//! Punctuation said aloud: "I went to the clinic yesterday full stop they dropped me to two
//! milligrams comma from tonight".
//!
//! Voice typing that does not punctuate by itself writes the marks a dictating user speaks as
//! words. Read as they stand, a sentence never ends, so one memory runs over three thoughts
//! ("In 2 weeks comma they will send a letter full stop oh"), and no rule anchored at a
//! sentence's end matches. The marks are put back before any rule runs, only where a word reads
//! as a dictated mark: not after a word that makes it a noun ("a full stop", "my period", "the
//! Oxford comma"), and "period" only in a message that dictates another mark or ends on it.

use std::borrow::Cow;

/// The spoken marks, longest first so "full stop" wins over a lone "stop", and what each writes.
const MARKS: &[(&[&str], &str)] = &[
    (&["exclamation", "mark"], "!"),
    (&["exclamation", "point"], "!"),
    (&["question", "mark"], "?"),
    (&["new", "paragraph"], "."),
    (&["full", "stop"], "."),
    (&["comma"], ","),
    (&["period"], "."),
];

/// Words after which a mark's word is the noun, not the mark ("came to a full stop", "the
/// Oxford comma", "a big question mark over it").
const NOUN_AFTER: &[&str] =
    &["a", "an", "the", "no", "any", "oxford", "serial", "big", "huge", "same", "first", "last"];

/// Words after which "period" is the noun ("on my period", "a waiting period"): a possessive
/// before the other marks is still the speaker's ("I drive her full stop").
const PERIOD_NOUN_AFTER: &[&str] = &[
    "my",
    "your",
    "her",
    "his",
    "our",
    "their",
    "this",
    "that",
    "one",
    "grace",
    "trial",
    "waiting",
    "cooling",
    "notice",
    "probation",
    "free",
    "time",
    "long",
    "short",
];

/// Words after "period" that make it the noun ("period pain", "a period of time").
const PERIOD_NOUN_BEFORE: &[&str] =
    &["of", "pain", "pains", "cramps", "cramp", "tracker", "app", "products", "is", "was"];

/// `text` with its dictated marks written as punctuation; borrowed unchanged when it dictates
/// none.
pub(super) fn punctuated(text: &str) -> Cow<'_, str> {
    let lower = text.to_lowercase();
    if !["comma", "stop", "mark", "point", "paragraph", "period"].iter().any(|w| lower.contains(w)) {
        return Cow::Borrowed(text);
    }
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let bare: Vec<String> =
        tokens.iter().map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()).collect();
    // Each mark found: (first token, token count, punctuation).
    let mut found: Vec<(usize, usize, &str)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let hit = MARKS.iter().find(|(words, _)| {
            words.len() <= tokens.len() - i
                && words.iter().enumerate().all(|(k, w)| bare[i + k] == *w)
                // The mark is the token itself, not a word inside a longer one.
                && tokens[i + words.len() - 1].trim_end_matches(['.', ',', '!', '?']).to_lowercase().ends_with(words[words.len() - 1])
        });
        match hit {
            Some((words, mark)) => {
                let after_noun_word = i > 0 && NOUN_AFTER.contains(&bare[i - 1].as_str());
                let period_noun = words[0] == "period"
                    && ((i > 0 && PERIOD_NOUN_AFTER.contains(&bare[i - 1].as_str()))
                        || bare.get(i + 1).is_some_and(|next| PERIOD_NOUN_BEFORE.contains(&next.as_str())));
                if !after_noun_word && !period_noun {
                    found.push((i, words.len(), mark));
                }
                i += words.len();
            }
            None => i += 1,
        }
    }
    let spoken = found.iter().filter(|(start, _, _)| bare[*start] != "period").count();
    let ends_on_period = found.last().is_some_and(|(start, n, mark)| *mark == "." && start + n == tokens.len());
    if found.is_empty() || (spoken == 0 && !ends_on_period) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut capital = false;
    let mut next = found.iter().peekable();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(&&(start, n, mark)) = next.peek().filter(|(start, _, _)| *start == i) {
            next.next();
            // A mark after a mark ("full stop full stop") or at the very start is said, not written.
            if !out.is_empty() && !out.ends_with(['.', ',', '!', '?']) {
                out.push_str(mark);
            }
            capital = mark != ",";
            i = start + n;
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        let token = tokens[i];
        if capital {
            let mut chars = token.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(token);
        }
        capital = false;
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::punctuated;

    #[test]
    fn dictated_marks_become_punctuation() {
        assert_eq!(
            punctuated("well comma the bus was late again full stop we missed the start full stop"),
            "well, the bus was late again. We missed the start."
        );
        assert_eq!(
            punctuated("morning comma is the chemist open on Sunday question mark"),
            "morning, is the chemist open on Sunday?"
        );
        assert_eq!(punctuated("thats it for today full stop full stop"), "thats it for today.");
        assert_eq!(
            punctuated("forget that comma it was the Friday full stop I collect him full stop"),
            "forget that, it was the Friday. I collect him."
        );
        assert_eq!(punctuated("it keeps going out new paragraph ring them"), "it keeps going out. Ring them");
    }

    #[test]
    fn a_message_that_ends_on_period_dictated_it() {
        assert_eq!(
            punctuated("The nurse moved my appointment to the 9th period"),
            "The nurse moved my appointment to the 9th."
        );
        assert_eq!(
            punctuated("we need forty chairs comma where do we get them"),
            "we need forty chairs, where do we get them"
        );
    }

    #[test]
    fn the_words_as_nouns_stay() {
        for text in [
            "I'm on my period",
            "my period is late and I have period pain",
            "the car came to a full stop on the hill",
            "there's a big question mark over the job",
            "I never use the Oxford comma",
            "a period of time when I was tired, period of my life",
            "Wait, stop, I meant Tuesday.",
            "the comma and the full stop are the only marks I use.",
        ] {
            assert_eq!(punctuated(text), text, "{text}");
        }
    }
}
