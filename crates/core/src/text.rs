//! Text normalisation shared by dedup, lexical search and extraction.

use sha2::{Digest, Sha256};

/// Words that carry no retrieval signal; dropped from lexical queries so "what is my dog's
/// name" matches on "dog" and "name", not on "what" and "is".
const STOPWORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how", "i", "i'm", "if", "in", "into",
    "is", "it", "its", "it's", "me", "my", "of", "on", "or", "our", "she", "so", "some", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "to", "us", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "you", "your", "user", "user's", "s", "t", "just", "tell", "know",
    "remember", "again", "any", "all", "should", "ll", "ve", "re", "d",
];

/// Whether a lower-cased word is a stopword.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Lower-cased words of a text (letters, digits, apostrophes inside words).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
}

/// Whether two words are the same, a number read by its digits ("22nd" is "22", "100mcg" is
/// "100"): what a correction names is matched against what was said that way.
pub fn same_word(a: &str, b: &str) -> bool {
    let digits = |w: &str| -> Option<String> {
        w.starts_with(|c: char| c.is_ascii_digit()).then(|| w.chars().take_while(char::is_ascii_digit).collect())
    };
    a == b
        || matches!((digits(a), digits(b)), (Some(x), Some(y)) if x == y)
        || EVENT_WORDS.iter().any(|family| family.contains(&a) && family.contains(&b))
}

/// An occasion said as a noun or as what people do at it: "the wedding is shifted to 18
/// July" moves "my brother is marrying on 11 July".
const EVENT_WORDS: &[&[&str]] = &[
    &["wedding", "weddings", "marry", "marries", "marrying", "married", "marriage"],
    &["graduation", "graduate", "graduates", "graduating", "grad"],
    &["birthday", "birthdays", "bday"],
    &["christening", "christened", "baptism", "baptised", "baptized"],
    &["surgery", "operation", "op"],
    &["appointment", "appt"],
];

/// The content words of a query, deduplicated in order: what lexical search looks for.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        let w = w.strip_suffix("'s").map(str::to_string).unwrap_or(w);
        if w.len() < 2 && !w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if is_stopword(&w) || out.contains(&w) {
            continue;
        }
        out.push(w);
    }
    out
}

/// Words that answer a question about where the user lives or what they do for work without
/// repeating its word: "Where do I live now?" is answered by "found a 1 bed flat in Acomb" or
/// "we shifted last week", "What is my job?" by "got hired as a welder". Each pair: the
/// question's words, then the answers' words added to its lexical search.
const ANSWERED_BY: &[(&[&str], &[&str])] = &[
    (&["live", "living", "lives"], &["moved", "flat", "house", "apartment", "shifted", "address"]),
    (
        &["job", "work", "working", "works"],
        &[
            "job", "work", "working", "hired", "employer", "transfer", "joined", "quit", "resigned", "company", "firm",
            "startup", "promoted",
        ],
    ),
];

/// What lexical search looks for, for a query: its content words ([`query_terms`]) and, for the
/// user's own question about where they live or work ("Where do I live now?"), the words such
/// answers are said with ([`ANSWERED_BY`]). Asked about someone by name ("Where does Jon
/// work?"), the question stays as asked: widened, it would bring every speaker's moves and jobs.
pub fn search_terms(query: &str) -> Vec<String> {
    let mut terms = query_terms(query);
    let own = words(query).any(|w| matches!(w.as_str(), "i" | "i'm" | "my" | "me" | "im"));
    if !ends_asking(query) || !own {
        return terms;
    }
    for (asked, answered) in ANSWERED_BY {
        if terms.iter().any(|t| asked.contains(&t.as_str())) {
            for w in *answered {
                if !terms.iter().any(|t| t == w) {
                    terms.push((*w).to_string());
                }
            }
        }
    }
    terms
}

/// Whether a turn ends by asking something: its last sentence is a question, read past a
/// bracketed note at its end ("[shares a photo: …]"), closing quotes and emoji. In any script
/// whose question mark is `?`, `？` or `؟`. What follows such a turn in its chat is most likely
/// its answer.
pub fn ends_asking(text: &str) -> bool {
    let mut rest = text.trim_end();
    while let Some(open) = rest.strip_suffix(']').and_then(|r| r.rfind('[')) {
        rest = rest[..open].trim_end();
    }
    let last = rest
        .chars()
        .rev()
        .find(|c| c.is_alphanumeric() || matches!(c, '.' | '!' | '?' | '？' | '؟' | '。' | '！' | '…'));
    matches!(last, Some('?' | '？' | '؟'))
}

/// The query as memories read it: the user's own name (and "Name's") becomes "User", since a
/// memory says "User lives in Porto", not "Dana lives in Porto". Agents, support staff and
/// benchmarks ask about users by name ("Where does Dana live?"). Whole words only, any case.
pub fn as_user_query(query: &str, names: &[String]) -> String {
    let mut out = query.to_string();
    for name in names.iter().map(|n| n.trim()).filter(|n| n.chars().count() >= 2) {
        out = replace_word(&out, name, "User");
    }
    out
}

/// `text` with every whole-word, any-case occurrence of `word` replaced. Written by hand
/// because it runs on every recall: compiling a regex per name per query cost more than the
/// rest of query preparation.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let same = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
    let pattern: Vec<char> = word.chars().collect();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let (first, last) = (pattern.first().copied(), pattern.last().copied());
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i + pattern.len() <= chars.len() {
        let before = i.checked_sub(1).map(|j| chars[j].1);
        let after = chars.get(i + pattern.len()).map(|&(_, c)| c);
        let matches = pattern.iter().zip(&chars[i..]).all(|(&p, &(_, c))| same(p, c))
            && is_word(before) != is_word(first)
            && is_word(after) != is_word(last);
        if matches {
            let start = chars[i].0;
            let end = chars.get(i + pattern.len()).map_or(text.len(), |&(b, _)| b);
            out.push_str(&text[copied..start]);
            out.push_str(with);
            copied = end;
            i += pattern.len();
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// A leading speaker label ("Caroline: ", "Dr. Lee: ") and the rest; an empty label when there
/// is none. A label is at most three words before the first colon, in the first 32 bytes.
///
/// Transcripts where several people speak through one user (a group chat, a shared
/// conversation log) label each turn this way; detail levels keep the label.
pub fn split_speaker(text: &str) -> (&str, &str) {
    if let Some(i) = text.find(": ").filter(|&i| i > 0 && i <= 32) {
        let name = &text[..i];
        let parts = name.split_whitespace().count();
        if (1..=3).contains(&parts) && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '\'' | '-'))
        {
            return (&text[..i + 2], &text[i + 2..]);
        }
    }
    ("", text)
}

/// Canonical form for exact dedup: case, punctuation and spacing do not make a new memory.
pub fn normalize(text: &str) -> String {
    words(text).collect::<Vec<_>>().join(" ")
}

/// Hash of the normalised content: the exact half of the dedup key (scope is the other half).
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(normalize(text).as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Words a key stands for, so a question can find a keyed memory without sharing its wording:
/// "what do you do for a living" should reach `job = product design`.
fn key_words(key: &str) -> String {
    let (head, tail) = key.split_once(':').unwrap_or((key, ""));
    let head_words = match head {
        "name" => "name called",
        "job" => "job occupation profession work career living",
        "employer" => "employer company workplace work job",
        "home" => "home city town lives location",
        "family" => "family relative",
        "pet" => "pet animal",
        "answer_length" => "answer length response style",
        "format" => "answer format response style",
        "language" => "language reply",
        "tool" => "tool uses",
        "diet" => "diet food eats",
        other => other,
    };
    let mut words = head_words.replace('_', " ");
    if !tail.is_empty() {
        words.push(' ');
        words.push_str(&tail.replace(['_', '-'], " "));
    }
    words
}

/// The text a memory is indexed and embedded by: its content, plus the words its key stands for.
///
/// The content stays the truth shown to people and models; this is only a search projection,
/// computed here so every backend and embedder index exactly the same text.
pub fn search_text(content: &str, key: Option<&str>) -> String {
    match key {
        Some(k) if !k.is_empty() => format!("{content} ({})", key_words(k)),
        _ => content.to_string(),
    }
}

/// Collapses runs of whitespace and trims, for storing content as people wrote it.
pub fn tidy(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_occasion_is_the_same_as_what_is_done_at_it() {
        assert!(same_word("wedding", "marrying"));
        assert!(same_word("22nd", "22"));
        assert!(!same_word("wedding", "birthday"));
        assert!(!same_word("op", "opening"));
    }

    #[test]
    fn a_turn_asks_when_its_last_sentence_is_a_question() {
        for asks in [
            "Loved it. What did you paint?",
            "how was the trip??",
            "Any plans for the weekend? 😊",
            "Did she say \"yes?\"",
            "Got any hobbies to help you relax? [shares a photo: a car with its hood open]",
            "¿Dónde vives ahora?",
            "你去哪儿了？",
            "هل أنت بخير؟",
        ] {
            assert!(ends_asking(asks), "{asks}");
        }
        for tells in [
            "What a day. I finally finished the mural!",
            "Is it weird? I don't think so.",
            "I asked her where it was [laughs]. No idea.",
            "",
            "[shares a photo: what is this?]",
            "Yes, 4 years!",
        ] {
            assert!(!ends_asking(tells), "{tells}");
        }
    }

    #[test]
    fn labels_are_short_names_before_a_colon() {
        assert_eq!(split_speaker("Caroline: hi"), ("Caroline: ", "hi"));
        assert_eq!(split_speaker("Dr. Lee: hi"), ("Dr. Lee: ", "hi"));
        assert_eq!(split_speaker("Note that the reason is this: hi"), ("", "Note that the reason is this: hi"));
        assert_eq!(split_speaker("Time: 10:30, see you"), ("Time: ", "10:30, see you"));
        assert_eq!(split_speaker("no label"), ("", "no label"));
    }

    #[test]
    fn hash_ignores_case_spacing_and_punctuation() {
        assert_eq!(content_hash("User likes  Tea!"), content_hash("user likes tea"));
        assert_ne!(content_hash("user likes tea"), content_hash("user likes coffee"));
        assert_eq!(content_hash("x").len(), 32);
    }

    #[test]
    fn query_terms_drop_stopwords_and_possessives() {
        assert_eq!(query_terms("What is my dog's name?"), vec!["dog", "name"]);
        assert_eq!(query_terms("the THE the"), Vec::<String>::new());
        assert_eq!(query_terms("born in 1990, 1990"), vec!["born", "1990"]);
        // A question about where the user lives also looks for how a move is told.
        assert_eq!(search_terms("Where do I live now?")[..3], ["live", "now", "moved"]);
        assert_eq!(search_terms("I live in Leeds"), vec!["live", "leeds"]);
        assert_eq!(search_terms("Where does Jon live?"), vec!["jon", "live"]);
    }

    #[test]
    fn search_text_adds_the_words_a_key_stands_for() {
        assert_eq!(search_text("User lives in Lisbon", None), "User lives in Lisbon");
        let s = search_text("User works in product design", Some("job"));
        assert!(s.starts_with("User works in product design (") && s.contains("occupation"));
        assert!(search_text("User's sister is named Mia", Some("family:sister")).contains("family relative sister"));
        assert!(search_text("x", Some("tool:code_editor")).ends_with("(tool uses code editor)"));
    }

    #[test]
    fn tidy_collapses_whitespace() {
        assert_eq!(tidy("  a \n b\tc "), "a b c");
    }

    proptest::proptest! {
        #[test]
        fn replacing_a_name_agrees_with_a_whole_word_regex(
            text in "[aAbB_ .'İé-]{0,24}",
            word in "[aAbBé_.'-]{1,4}",
        ) {
            let re = regex::Regex::new(&format!(r"(?i)\b{}\b", regex::escape(&word))).unwrap();
            proptest::prop_assert_eq!(replace_word(&text, &word, "U"), re.replace_all(&text, "U").into_owned());
        }
    }

    #[test]
    fn the_users_name_in_a_query_means_the_user() {
        let names = vec!["Dana".to_string()];
        assert_eq!(as_user_query("Where does Dana live?", &names), "Where does User live?");
        assert_eq!(as_user_query("what is dana's job", &names), "what is User's job");
        assert_eq!(as_user_query("Is Danae here?", &names), "Is Danae here?");
        assert_eq!(as_user_query("Where does Dana live?", &[]), "Where does Dana live?");
        assert_eq!(as_user_query("İ Dana", &names), "İ User");
        assert_eq!(as_user_query("DANA, dana and Dana_x", &names), "User, User and Dana_x");
        assert_eq!(as_user_query("Dana", &names), "User");
        let two = vec!["Dana".to_string(), "Li Wei".to_string()];
        assert_eq!(as_user_query("did li wei meet dana?", &two), "did User meet User?");
    }
}
