//! Which language a text is in, so that English rules read English only and the lexical index
//! stems each language with its own stemmer.
//!
//! Chat is short and informal, and statistical detectors guess badly on it: "I'm allergic to
//! penicillin" reads as Italian to trigram statistics, "Caroline: I went to a support group" as
//! Portuguese. Function words settle it far better: every sentence of any length has some, and
//! each language has its own. So the languages mnemo has word lists for (English, German,
//! Spanish, French, Italian, Portuguese, Dutch, Polish, Czech, Swedish, Danish, Norwegian,
//! Romanian; the lists are data, in this folder) are told
//! apart by counting them, and `whatlang`'s trigram statistics break ties and name any other
//! language, only when they are sure of it. What cannot be told is [`Language::Unknown`], which
//! callers treat as English: a text with no function word of any list carries no English rule's
//! trigger either.

use std::collections::HashMap;
use std::sync::OnceLock;

pub use whatlang::Lang;

/// A text's language, as far as it can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// English: the language the rule-based extractor reads.
    English,
    /// Any other language, named.
    Other(Lang),
    /// Too short or too mixed to tell (callers read it as English).
    Unknown,
}

impl Language {
    /// Whether English rules may read the text: English, or no sign of another language.
    pub fn reads_as_english(self) -> bool {
        !matches!(self, Language::Other(_))
    }

    /// The ISO 639-3 code ("eng", "deu"), `None` when unknown: what traces and listings show.
    pub fn code(self) -> Option<&'static str> {
        match self {
            Language::English => Some("eng"),
            Language::Other(l) => Some(l.code()),
            Language::Unknown => None,
        }
    }
}

/// The word lists: (language, its function words), one file each.
fn lists() -> &'static [(Lang, Vec<&'static str>)] {
    static LISTS: OnceLock<Vec<(Lang, Vec<&'static str>)>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let files = [
            (Lang::Eng, include_str!("en.txt")),
            (Lang::Deu, include_str!("de.txt")),
            (Lang::Spa, include_str!("es.txt")),
            (Lang::Fra, include_str!("fr.txt")),
            (Lang::Ita, include_str!("it.txt")),
            (Lang::Por, include_str!("pt.txt")),
            (Lang::Nld, include_str!("nl.txt")),
            (Lang::Pol, include_str!("pl.txt")),
            (Lang::Ces, include_str!("cs.txt")),
            (Lang::Swe, include_str!("sv.txt")),
            (Lang::Dan, include_str!("da.txt")),
            (Lang::Nob, include_str!("nb.txt")),
            (Lang::Ron, include_str!("ro.txt")),
        ];
        files
            .into_iter()
            .map(|(lang, text)| {
                let words =
                    text.lines().filter(|l| !l.trim_start().starts_with('#')).flat_map(str::split_whitespace).collect();
                (lang, words)
            })
            .collect()
    })
}

/// Each function word and the languages whose list has it.
fn index() -> &'static HashMap<&'static str, Vec<Lang>> {
    static INDEX: OnceLock<HashMap<&'static str, Vec<Lang>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index: HashMap<&'static str, Vec<Lang>> = HashMap::new();
        for (lang, words) in lists() {
            for w in words {
                let langs = index.entry(*w).or_default();
                if !langs.contains(lang) {
                    langs.push(*lang);
                }
            }
        }
        index
    })
}

/// Lower-cased words of `text` with their apostrophes ("j'habite", "don't"), and for a word
/// with an apostrophe also its elided head ("j'"), which French lists name.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}')) {
        let w = raw.trim_matches(|c| c == '\'' || c == '\u{2019}').to_lowercase().replace('\u{2019}', "'");
        if w.is_empty() {
            continue;
        }
        if let Some(i) = w.find('\'') {
            out.push(w[..=i].to_string());
        }
        out.push(w);
    }
    out
}

/// How strongly `text`'s words point to each listed language, and how many letters it has.
/// A word counts 1 split among the languages whose list has it: "der" is German alone, "in"
/// is English, German, Dutch and Italian alike, so "Jetzt mag i Gesangsstunden nehmen, a Stund
/// in der Woch" is German although it has more words of the English list ("i", "a", "in") than
/// of the German one ("jetzt", "in", "der").
fn counts(text: &str) -> (HashMap<Lang, f32>, usize) {
    let index = index();
    let mut hits: HashMap<Lang, f32> = HashMap::new();
    for w in words(text) {
        let langs = index.get(w.as_str()).map_or(&[][..], Vec::as_slice);
        for lang in langs {
            *hits.entry(*lang).or_default() += 1.0 / langs.len() as f32;
        }
    }
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    (hits, letters)
}

/// The language of `text` (see the module header for how it is told).
pub fn detect(text: &str) -> Language {
    detect_within(text, Language::Unknown)
}

/// The language of `text`, a sentence of a message whose own language is `around`. Where the
/// sentence's function words tie between languages and `around` is one of them, the message
/// settles it: "Gamberi, scampi, aragosta, niente, me gonfio tutto." has only "me", which six
/// lists share, and English would win the tie, but its message ("Ah, e so' allergico ai
/// crostacei. …") is Italian. A sentence whose words point to one language keeps it, so an
/// English sentence quoted in a Spanish message is still English.
pub fn detect_within(text: &str, around: Language) -> Language {
    let (hits, letters) = counts(text);
    if letters == 0 {
        return Language::Unknown;
    }
    let latin = text.chars().filter(|c| c.is_alphabetic() && is_latin(*c)).count();
    // The statistics are consulted only where the words cannot settle it.
    let guess = || whatlang::detect(text);
    if latin * 2 < letters {
        // Another script: no listed language; trust the script detector's language.
        return guess().map_or(Language::Unknown, |g| named(g.lang()));
    }
    let best = hits.values().copied().fold(0.0, f32::max);
    if best == 0.0 {
        return match guess() {
            Some(g) if g.is_reliable() => named(g.lang()),
            _ => Language::Unknown,
        };
    }
    let leaders: Vec<Lang> = {
        // Within rounding of the best: sums of the same shares in another order tie.
        let mut l: Vec<Lang> = hits.iter().filter(|(_, n)| best - **n < 1e-4).map(|(l, _)| *l).collect();
        l.sort_by_key(|l| l.code());
        l
    };
    let lang = match leaders.as_slice() {
        [one] => *one,
        tied => match (around, guess()) {
            (Language::Other(l), _) if tied.contains(&l) => l,
            // A tie ("I live in Porto" has as many Italian words): English, the language the
            // rules were written for, unless the statistics are sure of another tied one;
            // among other languages, their best guess.
            (_, Some(g)) if tied.contains(&g.lang()) && (g.is_reliable() || !tied.contains(&Lang::Eng)) => g.lang(),
            _ if tied.contains(&Lang::Eng) => Lang::Eng,
            _ => return Language::Unknown,
        },
    };
    // Inside a message in another language, English words that language shares or borrows
    // ("no", "i", "to" are Polish words too) make a sentence English only when they outweigh
    // the message's own language twice over ("I am allergic to prawns." in Italian).
    if let (Lang::Eng, Language::Other(l)) = (lang, around) {
        let (english, theirs) = (hits.get(&Lang::Eng).copied().unwrap_or(0.0), hits.get(&l).copied().unwrap_or(0.0));
        if theirs * 2.0 >= english {
            return Language::Other(l);
        }
    }
    named(lang)
}

fn named(lang: Lang) -> Language {
    if lang == Lang::Eng { Language::English } else { Language::Other(lang) }
}

/// Latin letters: ASCII ones and the Latin blocks up to Latin Extended Additional.
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(text: &str) -> Language {
        detect(text)
    }

    #[test]
    fn short_informal_english_is_english() {
        for t in [
            "I live in Leeds",
            "alergic to penicilin lol",
            "my dog biscuit ate my sat plans omg",
            "I am living in Porto since 3 years",
            "my husband he works like doctor",
            "need 2 call mum sat",
            "pls dont suggest mushrooms",
            "I'm allergic to penicillin",
            "aye, ah've been tae the doc an he says ah cannae drink wi these pills",
            "naw, the wean's no well, ah'm stayin in wi her the day",
            "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
            "Yeah, it's great! Dogs are always there for us.",
            // "ya" is Spanish too, and alone it outweighed nothing English.
            "See ya, Calvin! Stay awesome. Catch ya later.",
            "i am in a choir",
            // Words other lists also have ("i", "u", "a", "er", "min", "my").
            "My rent is 900 pounds per month.",
            "be there in 5 min",
            "er I think I left my keys at work",
            "u coming to the gym later or not",
            "i do yoga on sundays",
        ] {
            assert_eq!(lang(t), Language::English, "{t:?}");
        }
    }

    #[test]
    fn other_languages_are_named() {
        let cases = [
            ("Me llamo Lucía y vivo en Valencia", Lang::Spa),
            // Spanish "a", "esta", "cerca" were no list's words: English's "a" and "me" won.
            ("Ahorita voy a un taller cerca de la casa, a ver si esta tarde", Lang::Spa),
            ("Le dije a mi jefe que este mes no puedo", Lang::Spa),
            ("El mes que viene me mudo a Madrid con mi novio", Lang::Spa),
            ("ya no vivo en Leeds jaja", Lang::Spa),
            ("Ich wohne seit zwei Jahren in Hamburg und arbeite als Krankenpfleger.", Lang::Deu),
            ("Mein Hund heißt Bello", Lang::Deu),
            ("Wir sind letzte Woche nach York gezogen", Lang::Deu),
            // Swiss German, whose "i" and "am" are English words too.
            ("Nächscht Wuche han i Kompensation, am Zischtig frei", Lang::Deu),
            ("i bi hüt so müed, han Nachtdienscht gha", Lang::Deu),
            // Swabian: "I be" is "ich bin", and "i", "be", "in", "an" are English words too.
            (
                "I be d'Gerda, 61, aus Metzinga, i schaff seit 24 Johr in dr Metzgerei Heinzelmann an dr Theke.",
                Lang::Deu,
            ),
            ("Mia ham heit koa Zeit ned, i muass no in d'Arbeit.", Lang::Deu),
            // Dialect: more words of the English list ("i", "a", "in", "is"), but each of them
            // belongs to several lists, and "jetzt", "der" to German alone.
            ("Jetzt mag i Gesangsstunden nehmen, a Stund in der Woch, wenn's net z'teuer is.", Lang::Deu),
            ("Je suis allergique aux arachides", Lang::Fra),
            ("Tout va bien, on a fini à midi", Lang::Fra),
            ("J'habite à Lyon depuis 2019", Lang::Fra),
            ("Moro em Lisboa com a minha irmã", Lang::Por),
            ("Sono vegetariana da quando ero bambina", Lang::Ita),
            ("Ik woon sinds vorig jaar in Utrecht", Lang::Nld),
            // Polish and Czech "a" and "u" and Swedish "i" are English words too.
            ("I jeszcze coś: od marca mieszkam w Krakowie z siostrą", Lang::Pol),
            ("Wczoraj byłam u lekarza i dostałam nowe leki", Lang::Pol),
            ("Včera jsem byl u doktora a mám nové prášky", Lang::Ces),
            ("Jag har ont i ryggen sedan i helgen", Lang::Swe),
            ("Ieri am fost la medic și mi-a dat alte pastile", Lang::Ron),
            ("私は東京に住んでいます", Lang::Jpn),
        ];
        for (t, want) in cases {
            assert_eq!(lang(t), Language::Other(want), "{t:?}");
            assert!(!lang(t).reads_as_english());
        }
        // Another script is never English, whichever of its languages a short sentence reads as.
        assert!(matches!(lang("Я живу в Москве и работаю учителем"), Language::Other(_)));
    }

    #[test]
    fn a_sentence_tied_between_languages_takes_its_messages_language() {
        let message = "Ah, e so' allergico ai crostacei. Gamberi, scampi, aragosta, niente, me gonfio tutto.";
        let around = detect(message);
        assert_eq!(around, Language::Other(Lang::Ita));
        assert_eq!(detect_within("Gamberi, scampi, aragosta, me gonfio.", around), Language::Other(Lang::Ita));
        // Alone, the same tie goes to English; and words that point one way keep it.
        assert_eq!(detect("Gamberi, scampi, aragosta, me gonfio."), Language::English);
        assert_eq!(detect_within("I am allergic to prawns.", around), Language::English);
    }

    #[test]
    fn a_tie_among_other_languages_is_not_english() {
        // Danish and Norwegian share these words; neither is English.
        assert!(matches!(detect("Jeg har en hund, og hun er tre år"), Language::Other(Lang::Dan | Lang::Nob)));
        // "i" is an English, Italian and Swedish word: inside a Swedish message it is Swedish.
        let around = detect("Jag har ont i ryggen sedan i helgen. Värk i knät.");
        assert_eq!(around, Language::Other(Lang::Swe));
        assert_eq!(detect_within("Värk i knät.", around), Language::Other(Lang::Swe));
        // Polish "no", "i" and "to" are on the English list alone; the message outweighs them.
        let around = detect("Tak, jestem na diecie, więc bez cukru. No i to jest dla mnie ważne, nie zapomnij.");
        assert_eq!(around, Language::Other(Lang::Pol));
        assert_eq!(detect_within("No i to jest dla mnie ważne, nie zapomnij.", around), Language::Other(Lang::Pol));
    }

    #[test]
    fn nothing_to_tell_by_is_unknown_and_read_as_english() {
        // Nor is "Nice one" or "ty bestie" read as another language: "one" and "ty" are on no list.
        for t in ["", "ok", "Berlin", "thx!!", "12:30", "🙂", "Hey Tom, good news!", "Nice one, Sam!", "ty bestie"] {
            let l = lang(t);
            assert!(l.reads_as_english(), "{t:?}: {l:?}");
        }
    }
}
