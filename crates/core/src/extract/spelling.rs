//! Common misspellings of the words that matter most: the safety path's vocabulary.
//!
//! The rule families match exact words, so "alergic to penicilin" read as nothing in particular
//! and missed what "allergic to penicillin" gets: an allergy that reaches every food and
//! medication request. A word one edit away from a listed word (two for long words: a letter
//! dropped, doubled, swapped or wrong) is read as the listed word before any rule runs. The list
//! is data (`words/safety.txt`, and the longer names of `words/medicines.txt`), short words are never corrected, and a word that is itself in
//! the list stays as it is.

use std::borrow::Cow;
use std::sync::OnceLock;

/// The listed words, lower case, and the words near them that are words of their own
/// (`!glutes`), never corrected.
fn vocabulary() -> &'static (Vec<&'static str>, Vec<&'static str>) {
    static WORDS: OnceLock<(Vec<&'static str>, Vec<&'static str>)> = OnceLock::new();
    WORDS.get_or_init(|| {
        // Medicine names of seven letters or more too ("ramiprill", "metforman"): the shorter
        // ones sit too near everyday words.
        let medicines = super::word_list(include_str!("words/medicines.txt")).filter(|m| m.len() >= 7);
        let lines = super::word_list(include_str!("words/safety.txt")).chain(medicines);
        let (kept, listed): (Vec<&str>, Vec<&str>) = lines.partition(|l| l.starts_with('!'));
        (listed, kept.into_iter().map(|k| &k[1..]).collect())
    })
}

/// Shortest word corrected: below this a single slip often spells another word.
const MIN_LEN: usize = 5;

/// `text` with each misspelt listed word replaced by the listed word (in the word's case: lower,
/// or capitalised when it was).
pub(super) fn corrected(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut last = 0;
    for (start, word) in word_spans(text) {
        let Some(fixed) = correction(word) else { continue };
        let buf = out.get_or_insert_with(|| String::with_capacity(text.len() + 8));
        buf.push_str(&text[last..start]);
        if word.starts_with(char::is_uppercase) {
            buf.push_str(&super::lex::title(fixed));
        } else {
            buf.push_str(fixed);
        }
        last = start + word.len();
    }
    match out {
        Some(mut buf) => {
            buf.push_str(&text[last..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

/// The listed word `word` misspells, if any.
fn correction(word: &str) -> Option<&'static str> {
    let n = word.chars().count();
    if n < MIN_LEN || !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let (words, kept) = vocabulary();
    if words.contains(&lower.as_str()) || kept.contains(&lower.as_str()) {
        return None;
    }
    let allowed = if n >= 9 { 2 } else { 1 };
    // A slip seldom hits a word's first letter, and a word that differs there is most often
    // another word ("education" is not "medication"), unless it sounds the same ("seliac").
    let near = words
        .iter()
        .filter(|w| w.len().abs_diff(lower.len()) <= allowed && same_start(&lower, w))
        .map(|w| (distance(&lower, w), *w))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, w)| w);
    // Spelt by ear ("alergick", "alurgic", "epilepsee"): two slips, but the word sounds the same.
    near.or_else(|| {
        let key = sound(&lower);
        words
            .iter()
            .filter(|w| n >= 6 && w.starts_with(&lower[..1]) && distance(&lower, w) <= 3 && sound(w) == key)
            .min_by_key(|w| distance(&lower, w))
            .copied()
    })
}

/// How a word sounds, roughly: doubled letters single, "ck", "c" (hard) and "k" alike, "ph" as
/// "f", and the vowels between consonants all one.
fn sound(word: &str) -> String {
    let w = word.replace("ph", "f").replace("ck", "k").replace("ee", "i").replace("ea", "i");
    let mut out = String::with_capacity(w.len());
    let bytes = w.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let c = match b {
            b'c' if !matches!(bytes.get(i + 1), Some(b'e' | b'i' | b'y')) => 'k',
            b'c' => 's',
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y' => 'a',
            _ => b as char,
        };
        if !out.ends_with(c) {
            out.push(c);
        }
    }
    out
}

/// Whether two words start alike: the same letter, or letters spelling the same sound, as a
/// writer going by ear swaps them (a soft "c" and "s": "seliac"; a hard "c" and "k").
pub(super) fn same_start(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let soft = |w: &[u8]| w[0] == b'c' && matches!(w.get(1), Some(b'e' | b'i' | b'y'));
    a[0] == b[0]
        || (soft(a) && b[0] == b's')
        || (soft(b) && a[0] == b's')
        || (matches!((a[0], b[0]), (b'c', b'k') | (b'k', b'c')) && !soft(a) && !soft(b))
}

/// Runs of ASCII letters in `text`, with their byte offsets.
fn word_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    letter_runs(text, |c| c.is_ascii_alphabetic()).into_iter()
}

/// Runs of the characters `letter` accepts in `text`, with their byte offsets.
pub(super) fn letter_runs(text: &str, letter: impl Fn(char) -> bool) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (letter(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, &text[s..]));
    }
    spans
}

/// Edits (insertions, deletions, substitutions, adjacent swaps) between two ASCII words: the
/// optimal string alignment distance.
pub(super) fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_slips_read_as_the_listed_word() {
        assert_eq!(corrected("alergic to penicilin lol"), "allergic to penicillin lol");
        assert_eq!(corrected("I'm alergic to peanuts"), "I'm allergic to peanuts");
        assert_eq!(corrected("i have astma and diabetis"), "i have asthma and diabetes");
        assert_eq!(corrected("Alergies: shelfish"), "Allergies: shellfish");
        assert_eq!(corrected("allergic to ibuprophen"), "allergic to ibuprofen");
        // Medicines as people type them.
        assert_eq!(corrected("put me on colchasine"), "put me on colchicine");
        assert_eq!(corrected("come back for alopurinol after"), "come back for allopurinol after");
        assert_eq!(corrected("im on roacutane for my skin"), "im on roaccutane for my skin");
        assert_eq!(corrected("I take simvastatine"), "I take simvastatin");
        assert_eq!(corrected("my warfarine dose"), "my warfarin dose");
        // A first letter written by ear.
        assert_eq!(corrected("cant eat bread, am seliac"), "cant eat bread, am celiac");
        assert_eq!(corrected("on sitalopram since may"), "on citalopram since may");
        // Spelt by ear: two slips, the same sound.
        assert_eq!(corrected("im alergick to codine"), "im allergic to codeine");
        assert_eq!(corrected("alurgic to latex"), "allergic to latex");
    }

    #[test]
    fn other_words_and_short_words_stay() {
        for t in ["I began the vegan diet", "allergic to cats", "I'm diabetic", "medical", "my glutes hurt", "a peanut"]
        {
            assert_eq!(corrected(t), t, "{t:?}");
        }
        assert_eq!(corrected("allergy allergies"), "allergy allergies");
        for t in ["rode the Ferris wheel", "I was furious"] {
            assert_eq!(corrected(t), t, "{t:?}");
        }
        assert_eq!(corrected("no gloten please"), "no gluten please");
    }

    /// Real words near a listed one are never read as it: a wrong correction writes a false
    /// fact ("Improving medication and infrastructure" from "education").
    #[test]
    fn real_words_near_a_listed_word_stay() {
        for t in [
            "improving education and infrastructure",
            "I do meditation every morning",
            "the mediation went well",
            "my pregnancy was easy",
            "the automatic gearbox",
            "lush vegetation",
            "an aspiring writer",
            "a dedication to her",
            "the job description",
            "zero tolerance",
            "a migraine",
            "an antibiotic",
        ] {
            assert_eq!(corrected(t), t, "{t:?}");
        }
        for w in &vocabulary().1 {
            assert_eq!(corrected(w), *w, "a word kept as it is was corrected");
        }
    }

    #[test]
    fn a_misspelt_medicine_name_is_read_as_the_medicine() {
        assert_eq!(corrected("I take ramiprill 5mg"), "I take ramipril 5mg");
        assert_eq!(corrected("on metforman twice a day"), "on metformin twice a day");
        // A real word near one stays, and so do the short names.
        assert_eq!(
            corrected("wayfaring strangers, digitoxin and morphing"),
            "wayfaring strangers, digitoxin and morphing"
        );
    }

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(distance("alergic", "allergic"), 1);
        assert_eq!(distance("allregic", "allergic"), 1);
        assert_eq!(distance("penicilin", "penicillin"), 1);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("", "abc"), 3);
    }
}
