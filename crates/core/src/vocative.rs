//! Vocatives: names a message speaks *to* ("Thanks, Mel!", "Hey Caroline, …"), not *of*.
//!
//! In a chat between two people each greets and thanks the other by name, so a question about
//! one of them ("What did Melanie paint?") shares its rarest word with every turn that thanks
//! her, whatever that turn says. A name used only to address someone tells who was listening,
//! not what the turn is about: archival recall counts such a match for nothing
//! ([`crate::archive::rank_excerpts`]).
//!
//! The rules read the shapes people address each other in, in any chat:
//! - after a comma at the end of a clause: "That sounds great, Mel!", "Yep, Caroline.";
//! - after a greeting or thanks opening the sentence: "Hey Mel!", "Thank you Dana, …";
//! - opening the sentence, then "!" or a comma and the rest: "Caroline! So good…", "Mel, you…";
//! - between a short opening and a comma: "Wow, Caroline, you're…".
//!
//! A list ("I met Anna, Mel, and Tom"), a possessive ("Mel's painting") or a speaker label
//! ("Mel: …") is not a vocative.

/// Words that open a greeting, thanks or exclamation a name may follow ("Hey Mel").
const LEAD_INS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "hiya",
    "heya",
    "howdy",
    "yo",
    "dear",
    "thanks",
    "thank",
    "thx",
    "ty",
    "wow",
    "whoa",
    "oh",
    "ohh",
    "aw",
    "aww",
    "awww",
    "yes",
    "yeah",
    "yep",
    "yup",
    "nope",
    "ok",
    "okay",
    "congrats",
    "congratulations",
    "sorry",
    "bye",
    "goodbye",
    "morning",
    "afternoon",
    "evening",
    "night",
    "cheers",
    "haha",
    "hahaha",
    "lol",
    "omg",
    "welcome",
    "ah",
    "ahh",
    "hmm",
    "um",
    // The same openings in the languages people most often mix into chat.
    "hallo",
    "hola",
    "salut",
    "bonjour",
    "coucou",
    "ciao",
    "oi",
    "olá",
    "ola",
    "danke",
    "gracias",
    "merci",
    "grazie",
    "obrigado",
    "obrigada",
    "servus",
    "moin",
];

/// Words that may stand after an opening "Name," when the name is said to someone ("Mel, you
/// should…", "Mel, I…"): a pronoun or a lower-case word. A capital word after it reads as a
/// list ("Anna, Tom and I").
fn continues_clause(rest: &str) -> bool {
    let word: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '\'').collect();
    match word.chars().next() {
        // "Anna, Mel, and Tom": a list goes on with "and".
        Some(c) if c.is_lowercase() => !matches!(word.as_str(), "and" | "or" | "nor"),
        Some(_) => word == "I" || word.starts_with("I'"),
        None => false,
    }
}

/// The names a query asks about: its capitalised words that are not stop words ("What did
/// Melanie paint?" → `melanie`), lower-cased as lexical terms are.
pub fn query_names(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in query.split(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = word.trim_matches('\'');
        let word = word.strip_suffix("'s").unwrap_or(word);
        let mut chars = word.chars();
        let capital = chars.next().is_some_and(char::is_uppercase) && chars.clone().next().is_some();
        // Not shouting: "NASA" and "I" name nobody one greets.
        if !capital || !chars.any(char::is_lowercase) {
            continue;
        }
        let lower = word.to_lowercase();
        if !crate::text::is_stopword(&lower) && !out.contains(&lower) {
            out.push(lower);
        }
    }
    out
}

/// Whether `name` (a lower-cased word) occurs in `text` and every occurrence addresses someone.
pub fn addressed_only(text: &str, name: &str) -> bool {
    let mut found = false;
    for (start, end) in occurrences(text, name) {
        if !is_vocative(text, start, end) {
            return false;
        }
        found = true;
    }
    found
}

/// Byte ranges of `name`'s whole-word, any-case occurrences in `text`.
fn occurrences<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let lower = text.to_lowercase();
    // Lower-casing can change byte lengths outside ASCII; then no occurrence is claimed.
    let same_shape = lower.len() == text.len();
    let mut from = 0;
    std::iter::from_fn(move || {
        if !same_shape || name.is_empty() {
            return None;
        }
        while let Some(i) = lower[from..].find(name) {
            let (start, end) = (from + i, from + i + name.len());
            from = end;
            // Where lower-casing shifted bytes the original's word may sit elsewhere: skip.
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) || text[start..end].to_lowercase() != name {
                continue;
            }
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
                return Some((start, end));
            }
        }
        None
    })
}

/// Whether the word at `start..end` of `text` is said to someone.
fn is_vocative(text: &str, start: usize, end: usize) -> bool {
    let after = &text[end..];
    let next = after.chars().next();
    let ends_clause = matches!(next, None | Some('.' | '!' | '?' | '…' | ')' | '~'));
    let comma_after = next == Some(',');
    if matches!(next, Some('\'' | '’' | ':' | '-')) {
        // "Mel's", "Mel:", "Mel-style": the name as a thing spoken of or a label.
        return false;
    }
    let before = text[..start].trim_end();
    let sentence = sentence_start(before);
    let lead = &before[sentence..];
    if lead.is_empty() {
        // The sentence opens with the name.
        return next == Some('!') || (comma_after && continues_clause(&after[1..]));
    }
    if let Some(clause) = lead.strip_suffix(',') {
        // "Wow, Mel, you…": a one-word or greeting opening, the name, then the clause goes on.
        let opening = !clause.contains(',') && (clause.split_whitespace().count() == 1 || opens_with_lead_in(clause));
        return ends_clause || (comma_after && opening && continues_clause(&after[1..]));
    }
    // "Hey Mel", "Thank you Mel", "Good morning Mel": a greeting that is the whole lead.
    opens_with_lead_in(lead)
        && lead.split_whitespace().count() <= 2
        && (ends_clause || comma_after || next == Some(' '))
}

/// Where the sentence holding the end of `before` starts: after the last ". ", "! ", "? ",
/// line break or speaker label's colon.
fn sentence_start(before: &str) -> usize {
    before
        .char_indices()
        .rev()
        .find(|&(_, c)| matches!(c, '.' | '!' | '?' | '…' | '\n' | ':'))
        .map(|(i, c)| i + c.len_utf8())
        .map_or(0, |i| i + (before[i..].len() - before[i..].trim_start().len()))
}

/// Whether a clause opens with a greeting, thanks or exclamation.
fn opens_with_lead_in(clause: &str) -> bool {
    clause
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .is_some_and(|w| LEAD_INS.contains(&w.to_lowercase().as_str()) || w.eq_ignore_ascii_case("good"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_said_to_someone_are_vocatives() {
        for text in [
            "Hey Mel! Good to see you! How have you been?",
            "Thanks, Mel! That's really sweet. Is this your own painting?",
            "Wow, Mel! The colors really blend nicely.",
            "Totally agree, Mel. Relaxing and expressing ourselves is key.",
            "That charity race sounds great, Mel! Making a difference is rewarding.",
            "Wow, Mel, you're doing an awesome job of inspiring others.",
            "Hey Mel, since we last chatted, I've had a lot of things happening.",
            "Thank you Mel for the help",
            "Good morning Mel!",
            "Mel! So good to hear from you.",
            "Mel, you should totally go.",
            "ok thanks mel",
            "Melanie: Hey Mel, guess what happened?",
            "I did it. Thanks, Mel.",
            "Hola Mel, ¿cómo estás?",
            "Danke, Mel! Das war lieb.",
            "Salut Mel ! Ça va ?",
        ] {
            assert!(addressed_only(text, "mel"), "{text}");
        }
    }

    #[test]
    fn names_spoken_of_are_not() {
        for text in [
            "Mel's painting was in the show.",
            "I went hiking with Mel last weekend.",
            "I met Anna, Mel, and Tom at the fair.",
            "Mel: I painted a sunrise yesterday.",
            "Mel, Tom and I went camping.",
            "Hey Mel! I went hiking with Mel's sister.",
            "No name here at all.",
            "Melanie went to the beach.",
        ] {
            assert!(!addressed_only(text, "mel"), "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_and_name_is_read_without_panicking(text in "\\PC{0,60}", name in "\\PC{1,6}") {
            let name = name.to_lowercase();
            let _ = addressed_only(&text, &name);
            let _ = query_names(&text);
        }

        #[test]
        fn a_name_thanked_at_a_clause_end_is_addressed(name in "[A-Z][a-z]{2,8}", said in "[a-z]{1,8}( [a-z]{1,8}){0,5}") {
            let lower = name.to_lowercase();
            proptest::prop_assume!(!crate::text::is_stopword(&lower) && !said.split(' ').any(|w| w == lower));
            let thanked = format!("That {said} sounds great, {name}!");
            let spoken_of = format!("I {said} with {name} yesterday.");
            proptest::prop_assert!(addressed_only(&thanked, &lower));
            proptest::prop_assert!(!addressed_only(&spoken_of, &lower));
        }
    }

    #[test]
    fn a_query_names_its_capitalised_content_words() {
        assert_eq!(query_names("What did Melanie paint after Caroline's talk?"), vec!["melanie", "caroline"]);
        assert_eq!(query_names("When did I go to NASA?"), Vec::<String>::new());
        assert_eq!(query_names("where does she live"), Vec::<String>::new());
    }
}
