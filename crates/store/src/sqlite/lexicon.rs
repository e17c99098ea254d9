//! The words of the SQLite lexical index, made in Rust: unicode61-like words, stemmed in the
//! text's own language, each glued behind the token of the partition it is indexed under.
//!
//! A text is stemmed with its language's Snowball stemmer ([`mnemo_core::language`] tells it),
//! not stemmed at all in a language Snowball lacks, and stemmed as English when its language
//! cannot be told. A query's terms are looked up under English stems and, when the query reads
//! as another language, under that language's stems too, so "wohnst" finds "wohne".
//!
//! Why not let FTS5 tokenize and stem? Its `bm25()` weighs every phrase by a document frequency
//! read from the phrase's whole doclist. With one shared vocabulary, a user's query walked the
//! doclists of every user of the store (the cost grew with the store, not with the user), and
//! other users' words shifted this user's term weights. A token `<partition><stem>` exists only
//! in its partition, so each doclist bm25 reads is one partition's, and a user's ranking depends
//! on that user's rows only.

use mnemo_core::language::{self, Lang, Language};
use rust_stemmers::{Algorithm, Stemmer};

/// Words longer than this are indexed as they are, unstemmed (FTS5's porter does the same).
const MAX_STEMMED: usize = 64;

/// Lower-cased words of `text`, approximating FTS5's `unicode61` tokenizer: runs of letters and
/// digits (any script) split on everything else, accents of Latin letters removed.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            // Lower-casing may add a combining mark ('İ' → "i\u{307}"): a separator, as in FTS5.
            word.extend(c.to_lowercase().filter(|l| l.is_alphanumeric()).map(fold_diacritic));
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// How a text's words are reduced to stems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stemming {
    /// English Snowball on ASCII words; others stay as they are (the default: most chat is
    /// English, and an English stemmer must not mangle a name in another script).
    English,
    /// A language's Snowball stemmer on every word.
    Snowball(Algorithm),
    /// Words as they are: a language Snowball has no stemmer for.
    Unstemmed,
}

impl Stemming {
    /// The stemming for a text in `language`.
    pub(crate) fn of(language: Language) -> Self {
        let Language::Other(lang) = language else { return Stemming::English };
        let algorithm = match lang {
            Lang::Ara => Algorithm::Arabic,
            Lang::Dan => Algorithm::Danish,
            Lang::Nld => Algorithm::Dutch,
            Lang::Fin => Algorithm::Finnish,
            Lang::Fra => Algorithm::French,
            Lang::Deu => Algorithm::German,
            Lang::Ell => Algorithm::Greek,
            Lang::Hun => Algorithm::Hungarian,
            Lang::Ita => Algorithm::Italian,
            Lang::Nob => Algorithm::Norwegian,
            Lang::Por => Algorithm::Portuguese,
            Lang::Ron => Algorithm::Romanian,
            Lang::Rus => Algorithm::Russian,
            Lang::Spa => Algorithm::Spanish,
            Lang::Swe => Algorithm::Swedish,
            Lang::Tam => Algorithm::Tamil,
            Lang::Tur => Algorithm::Turkish,
            Lang::Eng => return Stemming::English,
            _ => return Stemming::Unstemmed,
        };
        Stemming::Snowball(algorithm)
    }

    /// The stemmings a query's `terms` are looked up under: English, and the language the
    /// terms read as together when it is another one.
    pub(crate) fn for_query(terms: &[String]) -> Vec<Stemming> {
        let other = Stemming::of(language::detect(&terms.join(" ")));
        if other == Stemming::English { vec![Stemming::English] } else { vec![Stemming::English, other] }
    }
}

/// The stems of `text`, in order, in its own language: "Classes started" gives `class`,
/// `start`; "Ich wohne in Hamburg" gives `ich`, `wohn`, `in`, `hamburg`.
pub(crate) fn stems(text: &str) -> Vec<String> {
    stems_as(text, Stemming::of(language::detect(text)))
}

/// The stems of `text` under `stemming`.
fn stems_as(text: &str, stemming: Stemming) -> Vec<String> {
    let (stemmer, ascii_only) = match stemming {
        Stemming::English => (Some(Stemmer::create(Algorithm::English)), true),
        Stemming::Snowball(a) => (Some(Stemmer::create(a)), false),
        Stemming::Unstemmed => (None, false),
    };
    words(text)
        .into_iter()
        .map(|w| match &stemmer {
            Some(st) if w.len() <= MAX_STEMMED && (w.is_ascii() || !ascii_only) => st.stem(&w).into_owned(),
            _ => w,
        })
        .collect()
}

/// One index token: the partition token, then the stem, as a single `unicode61` token.
///
/// The partition token is `zp` and 16 hex digits, a fixed length, so the letter after it keeps
/// every token unambiguous: `x` and the stem itself for an ASCII stem, `y` and the hex of its
/// UTF-8 bytes otherwise. Only ASCII letters and digits reach FTS5, so its tokenizer can never
/// split a token, whatever the script (a combining mark is a letter to Rust and not to FTS5).
fn token(partition: &str, stem: &str) -> String {
    if stem.is_ascii() {
        format!("{partition}x{stem}")
    } else {
        let mut t = format!("{partition}y");
        for b in stem.bytes() {
            t.push_str(&format!("{b:02x}"));
        }
        t
    }
}

/// The body an FTS row is stored with: the stems of `text` under each partition, one contiguous
/// run per partition, so a phrase of one partition's tokens matches adjacent words only.
pub(crate) fn document(partitions: &[&str], text: &str) -> String {
    let stems = stems(text);
    let mut body = String::new();
    for p in partitions {
        for s in &stems {
            if !body.is_empty() {
                body.push(' ');
            }
            body.push_str(&token(p, s));
        }
    }
    body
}

/// The FTS5 MATCH expression finding rows of any of `partitions` that contain any of `terms`:
/// for every partition and term, the quoted phrase of the term's stems under each of
/// `stemmings` (a term of several words, such as "don't", is a phrase), all OR-ed. `None` when
/// no term has a word in it, or no partition is given: nothing can match, and FTS5 would refuse
/// an empty expression. Callers asking about a subset of a query's terms pass the whole
/// query's [`Stemming::for_query`], so every subset reads the terms the same way.
///
/// Tokens are ASCII letters and digits only, so no user text ever reaches FTS5's query syntax.
pub(crate) fn query<P: AsRef<str>>(partitions: &[P], terms: &[String], stemmings: &[Stemming]) -> Option<String> {
    let mut phrases: Vec<Vec<String>> = Vec::new();
    for t in terms {
        for st in stemmings {
            let s = stems_as(t, *st);
            if !s.is_empty() && !phrases.contains(&s) {
                phrases.push(s);
            }
        }
    }
    let mut alternatives = Vec::new();
    for p in partitions {
        for phrase in &phrases {
            let tokens: Vec<String> = phrase.iter().map(|s| token(p.as_ref(), s)).collect();
            alternatives.push(format!("\"{}\"", tokens.join(" ")));
        }
    }
    (!alternatives.is_empty()).then(|| alternatives.join(" OR "))
}

/// Base letters of U+00E0..=U+00FF (lower-case Latin-1 Supplement), one char per code point;
/// a char that is not an accented letter maps to itself.
const LATIN_1: &str = "aaaaaaæceeeeiiiiðnooooo÷ouuuuyþy";

/// Base letters of U+0100..=U+017F (Latin Extended-A), one char per code point.
const LATIN_EXTENDED_A: &str = "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiĳĳjjkkĸllllllllllnnnnnnŉŋŋoooooo\
                                œœrrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzſ";

/// The base letter of an accented Latin letter (`é` → `e`, `ł` → `l`), as `unicode61`'s
/// remove_diacritics does, so "Zurich" finds "Zürich"; any other char unchanged.
fn fold_diacritic(c: char) -> char {
    let code = c as u32;
    let pick = |table: &str, i: u32| table.chars().nth(i as usize).unwrap_or(c);
    match code {
        0xe0..=0xff => pick(LATIN_1, code - 0xe0),
        0x100..=0x17f => pick(LATIN_EXTENDED_A, code - 0x100),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_runs_of_letters_and_digits_in_any_script() {
        assert_eq!(words("Dana's DOG, Biscuit-2 (age 3)!"), ["dana", "s", "dog", "biscuit", "2", "age", "3"]);
        assert_eq!(
            words("Café in Zürich, Øresund, naïve Ångström"),
            ["cafe", "in", "zurich", "oresund", "naive", "angstrom"]
        );
        assert_eq!(words("Łódź and Čapek"), ["lodz", "and", "capek"]);
        assert_eq!(words("東京 に 行きました ΑΘΗΝΑ"), ["東京", "に", "行きました", "αθηνα"]);
        assert!(words("  ...  !? -- ").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn every_latin_letter_folds_to_a_lowercase_letter() {
        assert_eq!(LATIN_1.chars().count(), 0x20);
        assert_eq!(LATIN_EXTENDED_A.chars().count(), 0x80);
        for c in (0xe0..=0x17f_u32).filter_map(char::from_u32).filter(|c| c.is_lowercase()) {
            let f = fold_diacritic(c);
            assert!(f.is_alphabetic(), "{c} folded to {f}");
        }
        assert_eq!(fold_diacritic('÷'), '÷', "a symbol stays as it is");
        assert_eq!(fold_diacritic('ĳ'), 'ĳ', "a ligature stays as it is");
        assert_eq!(fold_diacritic('ŉ'), 'ŉ');
        assert_eq!(fold_diacritic('ő'), 'o');
        assert_eq!(fold_diacritic('ų'), 'u');
        assert_eq!(fold_diacritic('ſ'), 'ſ');
        assert_eq!(words("İstanbul"), ["istanbul"]);
        assert_eq!(fold_diacritic('ÿ'), 'y');
        assert_eq!(fold_diacritic('ž'), 'z');
    }

    #[test]
    fn stems_are_english_snowball_for_ascii_words() {
        assert_eq!(
            stems("Classes started running; adopted greyhounds"),
            ["class", "start", "run", "adopt", "greyhound"]
        );
        assert_eq!(stems("class"), stems("CLASSES"));
        assert_eq!(stems("行きました"), ["行きました"], "other scripts pass through unstemmed");
        let long = "a".repeat(MAX_STEMMED + 1) + "ing";
        assert_eq!(stems(&long), vec![long]);
    }

    #[test]
    fn tokens_are_single_ascii_words_and_never_collide() {
        let p = "zp0123456789abcdef";
        assert_eq!(token(p, "dog"), "zp0123456789abcdefxdog");
        assert_eq!(token(p, "東"), "zp0123456789abcdefye69db1");
        // An ASCII stem that spells a hex encoding is still told apart by its letter.
        assert_ne!(token(p, "e69db1"), token(p, "東"));
        for s in ["dog", "東京", "स्ते", "αθηνα", "2026"] {
            let t = token(p, s);
            assert!(t.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{t}");
        }
    }

    #[test]
    fn a_document_holds_one_contiguous_run_per_partition() {
        let body = document(&["zpaaaaaaaaaaaaaaaa", "zpbbbbbbbbbbbbbbbb"], "Dogs bark");
        assert_eq!(
            body,
            "zpaaaaaaaaaaaaaaaaxdog zpaaaaaaaaaaaaaaaaxbark zpbbbbbbbbbbbbbbbbxdog zpbbbbbbbbbbbbbbbbxbark"
        );
        assert_eq!(document(&["zpaaaaaaaaaaaaaaaa"], "?!"), "");
    }

    #[test]
    fn a_query_is_every_partition_times_every_term_as_phrases() {
        let en = [Stemming::English];
        let q =
            query(&["zpaaaaaaaaaaaaaaaa", "zpbbbbbbbbbbbbbbbb"], &["dogs".into(), "don't".into(), "dog".into()], &en);
        assert_eq!(
            q.as_deref(),
            Some(
                "\"zpaaaaaaaaaaaaaaaaxdog\" OR \"zpaaaaaaaaaaaaaaaaxdon zpaaaaaaaaaaaaaaaaxt\" OR \
                 \"zpbbbbbbbbbbbbbbbbxdog\" OR \"zpbbbbbbbbbbbbbbbbxdon zpbbbbbbbbbbbbbbbbxt\""
            )
        );
    }

    #[test]
    fn a_query_with_no_words_or_no_partitions_is_none() {
        let en = [Stemming::English];
        assert_eq!(query(&["zpaaaaaaaaaaaaaaaa"], &["!".into(), "\"".into(), String::new()], &en), None);
        assert_eq!(query::<&str>(&[], &["dog".into()], &en), None);
        // Quotes, operators and column filters in user text are just separators.
        let q = query(&["zpaaaaaaaaaaaaaaaa"], &["\"a\" OR content: NEAR(b*".into()], &en).unwrap();
        assert_eq!(q.matches('"').count(), 2, "{q}");
    }

    #[test]
    fn each_language_is_stemmed_by_its_own_stemmer() {
        assert_eq!(
            stems("Ich wohne seit zwei Jahren in Hamburg"),
            ["ich", "wohn", "seit", "zwei", "jahr", "in", "hamburg"]
        );
        assert_eq!(stems("Vivo en Valencia con mis hermanas"), ["viv", "en", "valenci", "con", "mis", "herman"]);
        // A German question finds the German statement: its terms are read as German too.
        let terms: Vec<String> = ["wo", "wohnst", "du"].map(String::from).to_vec();
        let stemmings = Stemming::for_query(&terms);
        assert_eq!(stemmings, [Stemming::English, Stemming::Snowball(Algorithm::German)]);
        let q = query(&["zpaaaaaaaaaaaaaaaa"], &terms, &stemmings).unwrap();
        assert!(q.contains("zpaaaaaaaaaaaaaaaaxwohn\""), "{q}");
        // English queries are read as English only.
        assert_eq!(Stemming::for_query(&["where".into(), "do".into(), "i".into(), "live".into()]), [Stemming::English]);
    }
}
