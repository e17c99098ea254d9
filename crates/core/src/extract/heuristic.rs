//! The heuristic extractor: rule families over first-person sentences, no model, microseconds
//! a message.
//!
//! Per user message: normalise (apostrophes, "im", "dont"; code blocks and quotes dropped), split
//! into sentences, work out once what each sentence is (a question? hypothetical? hedged? a
//! correction?), split it into clauses where a conjunction opens a new subject ("... and I work
//! as a nurse"), then try every rule family in priority order on each clause. A rule's match
//! claims its words; later rules cannot read the same words again, so "I prefer detailed answers"
//! is an answer length and not also a generic preference. Finally the sentence's findings are turned into
//! ops: corrections become updates, "no longer" statements forget only when nothing replaces
//! them, hedged statements lose confidence, and anything resembling a secret is dropped.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

use super::correction::TakeBack;
use super::rule::{Found, Mode, Rule, Sentence};
use super::{
    Extractor, attribution, boundary, correction, decision, episodic, fact, forget, identity, lore, medication, mood,
    plan, preference, resolution,
};
use super::{dictation, lex, readable, sentences, spelling, style, tool};
use crate::kind::Kind;
use crate::language::{self, Language};
use crate::message::{Message, Role};
use crate::op::{Action, Draft, ProposedOp, Target};
use crate::shape::ValueShape;

/// Rule-based extractor: the offline default.
#[derive(Debug, Default, Clone, Copy)]
pub struct HeuristicExtractor;

/// Every rule, in priority order: requests the user makes of the assistant first (forget,
/// boundaries, reminders, reply style), then statements from the most to the least specific.
pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let families: [fn() -> Vec<Rule>; 14] = [
            forget::rules,
            boundary::rules,
            decision::rules,
            plan::rules,
            style::rules,
            tool::rules,
            fact::rules,
            lore::rules,
            medication::rules,
            identity::rules,
            mood::rules,
            resolution::rules,
            preference::rules,
            correction::rules,
        ];
        families.iter().flat_map(|f| f()).collect()
    })
}

/// The text after a transcript's speaker label ("Caroline: I went ..."): the label is not part
/// of what was said (who said it is [`attribution`]'s business).
fn without_speaker(text: &str) -> &str {
    attribution::split_speaker(text).map_or(text, |(_, rest)| rest)
}

/// What a dialect's "me" stands before when it means "my" ("me blood pressure", "me van", "me
/// own"): the body, health, home, work and belongings people speak of; relatives, pets and
/// medicines are known elsewhere.
const OWNED_THINGS: &[&str] = &[
    "arm",
    "arms",
    "back",
    "bag",
    "bairns",
    "bed",
    "belly",
    "bike",
    "birthday",
    "blood",
    "boss",
    "bp",
    "car",
    "chest",
    "coat",
    "dinner",
    "ears",
    "eye",
    "eyes",
    "feet",
    "fella",
    "foot",
    "hair",
    "hand",
    "hands",
    "head",
    "heart",
    "hip",
    "hips",
    "house",
    "inhaler",
    "invoices",
    "job",
    "keys",
    "knee",
    "knees",
    "lad",
    "lass",
    "leg",
    "legs",
    "mam",
    "mates",
    "meds",
    "missus",
    "money",
    "neck",
    "own",
    "pals",
    "pay",
    "phone",
    "pills",
    "prescription",
    "pressure",
    "reading",
    "room",
    "shop",
    "shoulder",
    "stomach",
    "sugar",
    "tablets",
    "tea",
    "teeth",
    "tooth",
    "truck",
    "ute",
    "van",
    "wages",
    "weans",
    "wedding",
    "work",
];

/// `text` with the parts after a name the user introduced themselves by ("I'm Seamus, retired
/// postman from Athlone, 68 this year") said as sentences of their own ("I'm Seamus. I'm a
/// retired postman from Athlone. I'm 68 this year."); `None` when there are none. Only parts
/// that open the way a self-description does (an age, "from", "a", "retired", "mum of") are
/// taken: "I'm Jo, nice to meet you" is left as it is.
fn introduced(text: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)(?:\b(?:i'm|i\s+am|my\s+name\s+is|name's)\s+(?:(?P<name>(?-i:[A-Z][a-z]+))|(?P<lower>(?-i:[a-z][a-z'-]+)))|(?:^|[.!]\s+)(?P<here>[a-z][a-z'-]+\s+here)|(?:^|[.!]\s+)(?P<me>me)\s+(?-i:[A-Z][a-z]+))(?P<parts>(?:\s*,\s*[^,.;!?]+)+)",
        )
        .expect("introduction regex")
    });
    // Only a name with a capital: "I'm tired, 20 hours awake" names no one, and "im thabo, 20,
    // 2nd yr bcom at wits" is kept whole by capture, which a split would cut after the age. A
    // texter's "clodagh here, 34, hairdresser …" introduces in any case.
    let c = re.captures(text)?;
    let parts = c.name("parts")?;
    let first_part = parts.as_str().split(',').map(str::trim).find(|p| !p.is_empty()).unwrap_or_default();
    let aged = first_part.len() == 2 && first_part.chars().all(|c| c.is_ascii_digit()) && !first_part.starts_with('0');
    // "chale good evening. me Kwabena, 29, i dey run MoMo kiosk": a pidgin or a learner's "me"
    // before a name and an age is "I'm".
    let opening = match c.name("me") {
        Some(me) if aged => format!("{}I'm{}", &text[..me.start()], &text[me.end()..parts.start()]),
        Some(_) => return None,
        None => text[..parts.start()].to_string(),
    };
    // Without its capital a word after "im" is a name only with the age straight after it, as
    // people introduce themselves ("hey im colt, 27, work on a rig"): never "im tired, 20 hours
    // awake", nor a feeling or a doing ("im knackered, 40 and …", "im working, 12 …").
    if let Some(word) = c.name("lower").map(|w| w.as_str()) {
        if !aged
            || crate::text::is_stopword(word)
            || word.ends_with("ing")
            || word.ends_with("ed")
            || lex::is_mood_word(word)
        {
            return None;
        }
    }
    // A message typed all in lower case stays so: the rules read its names by that.
    let lower_case = !text.chars().any(char::is_uppercase);
    let im = |s: &str| if lower_case { s.replace("I'm", "i'm").replace(". I ", ". i ") } else { s.to_string() };
    let mut said = String::new();
    // Parts taken as descriptions, and whether the last part looked at was one.
    let (mut taken, mut describing, mut placed) = (0, true, false);
    for part in parts.as_str().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let lower = part.to_lowercase();
        let first = lower.split_whitespace().next().unwrap_or_default();
        // Only names ("Kurdistan", "Greater Manchester") say where, never who: after a place
        // ("from Sulaymaniyah, Kurdistan") they go on naming it, and elsewhere the rest is left
        // as it was said.
        let names_only = part.split_whitespace().all(|w| w.starts_with(char::is_uppercase));
        // "from Jagraon side, Ludhiana district": a name with the kind of place it is goes on
        // naming the place too.
        let place_kind = placed
            && part.starts_with(char::is_uppercase)
            && part.split_whitespace().count() <= 3
            && part.split_whitespace().skip(1).all(|w| {
                w.starts_with(char::is_uppercase)
                    || matches!(
                        w,
                        "district"
                            | "side"
                            | "area"
                            | "region"
                            | "county"
                            | "state"
                            | "province"
                            | "city"
                            | "town"
                            | "village"
                    )
            });
        // "toftwood just outside dereham": where, said with no verb; no "I'm" before it.
        let whereabouts = lower.split_whitespace().any(|w| matches!(w, "outside" | "near" | "nr"))
            && !lower.split_whitespace().next().is_some_and(|w| matches!(w, "from" | "living" | "born" | "originally"));
        if whereabouts {
            describing = false;
        }
        if names_only || place_kind {
            said.push_str(", ");
            said.push_str(part);
            describing &= placed;
            continue;
        }
        placed = matches!(first, "from" | "originally" | "born" | "living");
        // An age is the number alone or with its years ("34", "68 this year", "52 years"), never
        // a count of something else ("12 hour shift").
        let age = first.chars().all(|c| c.is_ascii_digit())
            && (1..=3).contains(&first.len())
            && lower
                .split_whitespace()
                .skip(1)
                .all(|w| matches!(w, "this" | "next" | "year" | "years" | "yrs" | "yo" | "old" | "y/o"));
        let described = age
            || matches!(
                first,
                "from"
                    | "a"
                    | "an"
                    | "originally"
                    | "born"
                    | "living"
                    | "married"
                    | "single"
                    | "divorced"
                    | "widowed"
                    | "mum"
                    | "mom"
                    | "dad"
                    | "mother"
                    | "father"
                    | "grandad"
                    | "grandma"
                    | "nan"
                    | "aged"
                    | "age"
                    | "working"
            );
        let retired = matches!(first, "retired" | "former" | "semi-retired") && lower.split_whitespace().count() >= 2;
        // "retired from Royal Mail last year" says when, not what: "I retired from …".
        let retired_from = retired
            && lower.split_whitespace().nth(1).is_some_and(|w| matches!(w, "from" | "in" | "last" | "this" | "since"));
        // "RN at Mt Hope, ward 6": a part ending on a number (no age) goes on with the one before.
        let numbered = !age && lower.split_whitespace().count() >= 2 && lower.ends_with(|c: char| c.is_ascii_digit());
        if describing && (described || retired) && !numbered {
            said.push_str(&im(match (retired, retired_from) {
                (true, true) => ". I ",
                (true, false) => ". I'm a ",
                _ => ". I'm ",
            }));
            said.push_str(part);
            taken += 1;
            continue;
        }
        // "410 ewes on the hill this year": a count of something, no age, goes on likewise.
        let counted = !age && first.chars().next().is_some_and(|c| c.is_ascii_digit());
        if (numbered || counted) && taken > 0 {
            said.push_str(", ");
            said.push_str(part);
            continue;
        }
        // After a description, a clause of the user's own is a sentence of its own ("…, 52
        // years, I have a bakery in Tooting"), and so is a part without a subject, said of the
        // user ("…, 58, watch manager at a fire station, retiring in June" → "I'm watch manager
        // at a fire station. I'm retiring in June"). Past anything else ("…, nice to meet you"),
        // the rest is left as it was said.
        let own = matches!(first, "i" | "i'm" | "i've" | "i'd" | "my" | "we" | "we're" | "we've");
        let opener = own
            || crate::text::is_stopword(first)
            || matches!(
                first,
                "nice" | "thanks" | "thank" | "cheers" | "hope" | "please" | "pls" | "sorry" | "just" | "can" | "could"
            );
        // "got a hill farm above tregaron": a part opening on a verb has dropped its "I".
        let verb = matches!(
            first,
            "got"
                | "have"
                | "run"
                | "work"
                | "live"
                | "do"
                | "did"
                | "love"
                | "like"
                | "need"
                | "want"
                | "own"
                | "keep"
        ) || (first.len() > 4 && first.ends_with("ed"));
        // "lambing starts proper next week" has a subject and verb of its own: no "I'm".
        let own_verb = lower.split_whitespace().skip(1).any(|w| {
            matches!(
                w,
                "is" | "are"
                    | "was"
                    | "were"
                    | "starts"
                    | "begins"
                    | "ends"
                    | "opens"
                    | "closes"
                    | "comes"
                    | "goes"
                    | "has"
                    | "had"
                    | "will"
                    | "won't"
                    | "isn't"
            )
        });
        if describing && taken > 0 && !opener && verb {
            said.push_str(&im(". I "));
        } else if describing && taken > 0 && !opener && !own_verb {
            said.push_str(&im(". I'm "));
        } else {
            said.push_str(if own && describing && taken > 0 { ". " } else { ", " });
            describing = false;
        }
        said.push_str(part);
    }
    // Without a capital, the name keeps its age beside it: that is what shows it is a name.
    let aged_name = c.name("lower").map_or(String::new(), |_| format!(", {first_part}"));
    (taken > 0).then(|| format!("{opening}{aged_name}{said}{}", &text[parts.end()..]))
}

/// `s` with every match of `re` replaced by what `f` makes of it; untouched (and not copied)
/// when nothing matches. The rewrites of [`normalise`] each go through here.
fn rewrite_all(s: &mut Cow<'_, str>, re: &Regex, f: impl FnMut(&regex::Captures<'_>) -> String) {
    if re.is_match(s) {
        let fixed = re.replace_all(s, f).into_owned();
        *s = Cow::Owned(fixed);
    }
}

/// Whether the text before a word ends on a word of the same clause that is no function word
/// ("doro" in "doro wat"), so the word is part of a name rather than texting's "what".
fn names_part(before: &str) -> bool {
    let Some(last) = before.trim_end().rsplit(char::is_whitespace).next() else { return false };
    let last = last.to_lowercase();
    !last.is_empty()
        && last.chars().all(char::is_alphabetic)
        && !crate::text::is_stopword(&last)
        && !matches!(
            last.as_str(),
            "idk"
                | "dunno"
                | "know"
                | "guess"
                | "lol"
                | "ok"
                | "okay"
                | "so"
                | "and"
                | "but"
                | "or"
                | "see"
                | "say"
                | "said"
                | "hear"
                | "heard"
                | "ask"
                | "asked"
                | "tell"
                | "told"
                | "mean"
                | "wonder"
                | "matter"
                | "thats"
                | "care"
                | "like"
                | "exactly"
                | "no"
                | "yeah"
                | "ya"
                | "hey"
                | "omg"
                | "tho"
                | "cuz"
                | "cos"
                | "coz"
                | "bout"
                | "abt"
                | "4"
                | "2"
        )
}

/// Rewrites what people type so one pattern covers it: curly quotes, "im", "dont", "cant", "wat".
///
/// `english`: whether the message reads as English; only then are "im" and "dont" expanded (in
/// German "im" is "in the").
fn normalise(text: &str, english: bool) -> Cow<'_, str> {
    let text = without_speaker(text);
    let dictated = if english { dictation::punctuated(text) } else { Cow::Borrowed(text) };
    let mut s: Cow<'_, str> = match dictated {
        Cow::Borrowed(text) => spelling::corrected(text),
        Cow::Owned(text) => Cow::Owned(spelling::corrected(&text).into_owned()),
    };
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)\b(?:im|ive|dont|cant|wont|didnt|doesnt|isnt|havent|hasnt|wasnt|couldnt|shouldnt|wouldnt|arent|werent|youre|youve|thats|thass|whats|theyre|theyve|weve|shes|hes|wat|wut|wot)\b")
            .expect("contraction regex")
    });
    if s.contains("tl;dr") || s.contains("TL;DR") {
        s = Cow::Owned(s.replace("tl;dr", "tldr").replace("TL;DR", "TLDR"));
    }
    if s.contains(['\u{2019}', '\u{2018}', '\u{201c}', '\u{201d}']) {
        s = Cow::Owned(s.replace(['\u{2019}', '\u{2018}'], "'").replace(['\u{201c}', '\u{201d}'], "\""));
    }
    if s.contains("```") {
        // Pasted code says nothing about the user.
        let mut out = String::with_capacity(s.len());
        for (i, part) in s.split("```").enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
                out.push('\n');
            }
        }
        s = Cow::Owned(out);
    }
    if s.lines().any(|l| l.trim_start().starts_with('>')) {
        s = Cow::Owned(s.lines().filter(|l| !l.trim_start().starts_with('>')).collect::<Vec<_>>().join("\n"));
    }
    if english && re.is_match(&s) {
        let replaced = re.replace_all(&s, |c: &regex::Captures<'_>| {
            let w = &c[0];
            let lower = w.to_lowercase();
            let fixed = match lower.as_str() {
                "im" => "i'm",
                "ive" => "i've",
                "dont" => "don't",
                "cant" => "can't",
                "wont" => "won't",
                "didnt" => "didn't",
                "doesnt" => "doesn't",
                "isnt" => "isn't",
                "havent" => "haven't",
                "hasnt" => "hasn't",
                "wasnt" => "wasn't",
                "couldnt" => "couldn't",
                "shouldnt" => "shouldn't",
                "wouldnt" => "wouldn't",
                "arent" => "aren't",
                "werent" => "weren't",
                "youre" => "you're",
                "youve" => "you've",
                "theyve" => "they've",
                "weve" => "we've",
                "shes" => "she's",
                "hes" => "he's",
                // Norfolk's "thass" too ("thass wrong, she say its the 22nd").
                "thats" | "thass" => "that's",
                "whats" => "what's",
                "theyre" => "they're",
                // Texting's "what": "wat do i get my nan" is a question, never a statement.
                // After a word of its own clause that is no function word it is a name's part
                // ("doro wat", "visited Wat Arun"): kept.
                "wat" | "wut" | "wot" if !names_part(&s[..c.get(0).map_or(0, |m| m.start())]) => "what",
                _ => return w.to_string(),
            };
            if w.starts_with(char::is_uppercase) { lex::title(fixed) } else { fixed.to_string() }
        });
        s = Cow::Owned(replaced.into_owned());
    }
    // "the doctor he said me my tension is high": a learner's "said me" is "told me" (so is
    // "say me", whose tense a memory can spare); "i spose" is "I suppose".
    static SAID_ME: OnceLock<Regex> = OnceLock::new();
    let said_me = SAID_ME.get_or_init(|| {
        Regex::new(r"\b(?i:(said|says|say|saying)\s+me|(s'?pose))\b(\s+(?i:and|n|&|i)\b)?").expect("said-me regex")
    });
    if english && said_me.is_match(&s) {
        rewrite_all(&mut s, said_me, |c| {
            // "she said me and Tom should come": "me" is a subject there; "she say me I must
            // practise" is kept as said, its first clause the user's own
            if c.get(3).is_some() {
                return c[0].to_string();
            }
            let told = match c.get(1).map(|m| m.as_str().to_lowercase()).as_deref() {
                // "she say me I must practise", "clinic say me all is clear": "tell me" would
                // read as a request to the assistant.
                Some("said" | "say") => "told me",
                Some("says") => "tells me",
                Some(_) => "telling me",
                None => "suppose",
            };
            told.to_string()
        });
    }
    // "i lef de hotel": a past with its last "t" left off, as Caribbean English says it.
    static CLIPPED: OnceLock<Regex> = OnceLock::new();
    let clipped =
        CLIPPED.get_or_init(|| Regex::new(r"\b((?i:i|we|he|she|they)\s+)(lef|kep|slep)\b").expect("clipped regex"));
    if english && clipped.is_match(&s) {
        rewrite_all(&mut s, clipped, |c| format!("{}{}t", &c[1], &c[2]));
    }
    // "hey im jodie 23 from walton": an introduction typed without its commas reads as one
    // with them ("jodie, 23, from walton"), the name, the age and the place each read.
    static INTRO: OnceLock<Regex> = OnceLock::new();
    let intro = INTRO.get_or_init(|| {
        Regex::new(r"(?m)^((?:(?i:hey|hi|hiya|hello|yo|heya)[\s,!.]+)?(?i:im|i'm|i\s+am)\s+([a-z][a-z'-]+))\s+([1-9]\d)\s+((?i:from|n|and)\s)")
            .expect("intro regex")
    });
    if english && intro.is_match(&s) {
        rewrite_all(&mut s, intro, |c| {
            // "i'm on 20 from monday", "i'm off 10 n back at 3": no name there
            let word = &c[2];
            if crate::text::is_stopword(word) || matches!(word, "off" | "due" | "like" | "back" | "down" | "up") {
                c[0].to_string()
            } else {
                format!("{}, {}, {}", &c[1], &c[3], &c[4])
            }
        });
    }
    // "i is shanice, 31": Caribbean English's "I is" is "I'm" (no English "I" takes "is").
    static I_IS: OnceLock<Regex> = OnceLock::new();
    let i_is = I_IS.get_or_init(|| Regex::new(r"\b([Ii]) is\b").expect("i-is regex"));
    if english && i_is.is_match(&s) {
        rewrite_all(&mut s, i_is, |c| format!("{}'m", &c[1]));
    }
    // "alergic 2 penuts", "i hav 2 bring my pens": texting's "2" for "to", where "to" is
    // the only reading ("have 2 kids" counts them).
    static TWO: OnceLock<Regex> = OnceLock::new();
    let two = TWO.get_or_init(|| {
        Regex::new(
            r"\b((?i:allergic|intolerant|sensitive|reaction|need|needs|hav|have|has|got|going|gonna|want|wants|used|able|go|goes|went|come|came|back|due|listen|talk|try|trying|ready|nice))\s+2\s+([A-Za-z]+)",
        )
        .expect("texted to regex")
    });
    if english {
        rewrite_all(&mut s, two, |c| {
            let before = c[1].to_lowercase();
            let next = c[2].to_lowercase();
            let to = if ["allergic", "intolerant", "sensitive", "reaction"].contains(&before.as_str()) {
                // After an allergy word it is always "to".
                true
            } else if ["have", "has", "hav", "got"].contains(&before.as_str()) {
                // "have 2 kids", "got 2 new puppies" count; "hav 2 bring" is a duty.
                TEXTED_TO_VERBS.contains(&next.as_str())
            } else {
                // "need 2 learn", "going 2 the gym"; "need 2 more days", "went 2 times" count.
                let plural = next.len() > 3 && next.ends_with('s') && !next.ends_with("ss");
                !plural && !COUNTED_AFTER.contains(&next.as_str())
            };
            if to { format!("{} to {}", &c[1], &c[2]) } else { c[0].to_string() }
        });
    }
    // "Ill ask my mum", "ya ill ask": "ill" opening a clause before a verb is "I'll" typed
    // without its apostrophe ("ill" elsewhere is being unwell). Only a reply word may stand
    // before it: after "so", "and" or "but" it is more often the adjective ("so ill just
    // lying here", "tired and ill still"), save before "be" or a duty, which no adjective
    // takes ("so ill be doin the dinners", "and ill have to ring them").
    static ILL: OnceLock<Regex> = OnceLock::new();
    let ill = ILL.get_or_init(|| {
        Regex::new(
            r"(?m)(^|[.!?,]\s+|\b(?i:ya|yeah|yep|yes|ok|okay|k|sure|fine|cool|lol|then|maybe)\s+)(?i:ill)(\s+(?i:be|ask|do|go|get|have|try|call|text|send|see|let|check|take|make|bring|need|come|tell|pick|wait|look|just|probably|prob|definitely|def|never|always|still|also|sort|book|grab|message|ring|email|write|pay|buy|start|keep)\b)",
        )
        .expect("ill regex")
    });
    static ILL_JOINED: OnceLock<Regex> = OnceLock::new();
    let ill_joined = ILL_JOINED.get_or_init(|| {
        Regex::new(r"\b((?i:so|and|but|cos|coz|then|n)\s+)(?i:ill)(\s+(?i:be|have\s+to|need\s+to|hav\s+to)\b)")
            .expect("joined ill regex")
    });
    for re in [ill, ill_joined] {
        if english && re.is_match(&s) {
            s = Cow::Owned(re.replace_all(&s, "${1}I'll${2}").into_owned());
        }
    }
    // "Now 4 year I am in Birmingham", "Already 7 years I live in Vilnius": a learner puts how
    // long first; said the English way ("I've been in Birmingham for 4 years") the rules for
    // where the user lives and works read it, and no memory opens on "4 year".
    static SPAN_FIRST: OnceLock<Regex> = OnceLock::new();
    let span_first = SPAN_FIRST.get_or_init(|| {
        Regex::new(
            r"(?m)(^\s*|[.!?]\s+)(?:(?i:now|already)\s+)?(\d+|(?i:a\s+few|two|three|four|five|six|seven|eight|nine|ten|many))\s+((?i:year|month|week)s?)\s+(?:(?i:now|already)\s+)?[Ii]\s+(am\s+[a-z]+ing|am|live|work|stay)\s+((?i:in|at|on|as|for|with)\s+[^.!?]+)",
        )
        .expect("span-first regex")
    });
    if english {
        rewrite_all(&mut s, span_first, |c| {
            let (lead, count, unit, verb, place) = (&c[1], &c[2], c[3].to_lowercase(), &c[4], &c[5]);
            let unit = if count == "1" || unit.ends_with('s') { unit } else { format!("{unit}s") };
            let done = match verb {
                "am" => "been".to_string(),
                "live" => "lived".to_string(),
                "work" => "worked".to_string(),
                "stay" => "stayed".to_string(),
                // "I am working on reception" → "I've been working on reception".
                _ => verb.replacen("am", "been", 1),
            };
            // The place runs to the comma, or past it when only a name follows ("in
            // Birmingham, Small Heath").
            let (place, after) = match place.find(',') {
                Some(i) => {
                    let next = place[i + 1..].find(',').map_or(place.len(), |j| i + 1 + j);
                    let named = place[i + 1..next].split_whitespace().count() <= 3
                        && place[i + 1..next].split_whitespace().all(|w| w.starts_with(char::is_uppercase));
                    if named { place.split_at(next) } else { place.split_at(i) }
                }
                None => (place, ""),
            };
            format!("{lead}I've {done} {} for {} {unit}{after}", place.trim_end(), count.to_lowercase())
        });
    }
    // "am 15 so …", "cannae dae pizza, am seliac": a clause opening on "am" has dropped its
    // "I" ("9 am" follows a number, never a clause's start).
    static AM: OnceLock<Regex> = OnceLock::new();
    let am = AM.get_or_init(|| {
        Regex::new(r"(?m)(^\s*|[.!?,;]\s+|\b(?i:so|and|but|cos|coz|cause|because)\s+)(?i:am)(\s+)([\w']+)")
            .expect("dropped-I regex")
    });
    if english {
        // "so am I" keeps its I where it is.
        rewrite_all(&mut s, am, |c| {
            if c[3].eq_ignore_ascii_case("i") { c[0].to_string() } else { format!("{}I am{}{}", &c[1], &c[2], &c[3]) }
        });
    }
    // "Keep meaning to get a red torch", "been meaning to ring the surgery": an intention with
    // its "I" left out opening the sentence, read as the plans family reads it with one.
    static MEANING: OnceLock<Regex> = OnceLock::new();
    let meaning = MEANING.get_or_init(|| {
        Regex::new(r"(?m)(^\s*|[.!?]\s+)((?i:keep\s+meaning\s+to|been\s+meaning\s+to|really\s+need\s+to)\s+[a-z])")
            .expect("dropped-I intention regex")
    });
    if english {
        rewrite_all(&mut s, meaning, |c| {
            let said = &c[2];
            let lowered = if said.to_lowercase().starts_with("been") {
                format!("I've {}", said.to_lowercase())
            } else {
                format!("I {}", said.to_lowercase())
            };
            format!("{}{lowered}", &c[1])
        });
    }
    // "the missus", "the hubby", "the other half": the speaker's own, said as "my" so the rules
    // for the user's people read them ("me and the missus are off to Lanzarote"); "the wife of
    // my friend" is someone else's.
    static THE_SPOUSE: OnceLock<Regex> = OnceLock::new();
    let spouse = THE_SPOUSE.get_or_init(|| {
        Regex::new(
            r"\b([Tt]he)(\s+(?i:missus|missis|mrs|wife|wifey|hubby|husband|other\s+half|better\s+half)\b)(\s+of\b)?",
        )
        .expect("the-spouse regex")
    });
    if english {
        rewrite_all(&mut s, spouse, |c| {
            if c.get(3).is_some() {
                c[0].to_string()
            } else {
                format!("{}{}", if &c[1] == "The" { "My" } else { "my" }, &c[2])
            }
        });
    }
    // "Passport also I have to renew": the thing said first, as a learner puts the topic, is
    // the object of the verb that ends the clause ("I also have to renew my passport").
    static TOPIC_FIRST: OnceLock<Regex> = OnceLock::new();
    let topic_first = TOPIC_FIRST.get_or_init(|| {
        Regex::new(
            r"(?m)(^\s*|[.!?]\s+)([A-Za-z][a-z]{2,})\s+(?:also|too)\s+([Ii])\s+(have\s+to|need\s+to|must|should|want\s+to)\s+([a-z]{3,})(\s*[,.;!?]|\s*$)",
        )
        .expect("topic-first regex")
    });
    if english {
        rewrite_all(&mut s, topic_first, |c| {
            format!("{}{} also {} {} my {}{}", &c[1], &c[3], &c[4], &c[5], c[2].to_lowercase(), &c[6])
        });
    }
    // "our kid Josh": in the North of England a brother or sister, not a child of the user's.
    static OUR_KID: OnceLock<Regex> = OnceLock::new();
    let our_kid = OUR_KID.get_or_init(|| Regex::new(r"\b([Oo]ur)(\s+)kid(\s+[A-Z][a-z]+)\b").expect("our-kid regex"));
    // Which one, the pronoun after it says ("our kid Josh has his test").
    if english && our_kid.is_match(&s) {
        let text = s.to_string();
        rewrite_all(&mut s, our_kid, |c| {
            let end = c.get(0).map_or(0, |m| m.end());
            let rest = &text[end..];
            let clause = rest[..rest.find(['.', '!', '?', ';']).unwrap_or(rest.len())].to_lowercase();
            let said = |ws: &[&str]| clause.split(|ch: char| !ch.is_alphanumeric()).any(|w| ws.contains(&w));
            let who = match (said(&["he", "his", "him"]), said(&["she", "her", "hers"])) {
                (true, false) => "brother",
                (false, true) => "sister",
                _ => "sibling",
            };
            format!("{}{}{who}{}", if &c[1] == "Our" { "My" } else { "my" }, &c[2], &c[3])
        });
    }
    // "for me blood pressure", "upped me amlodipine": in Geordie, Scouse, Irish and Australian
    // English "me" before a noun is "my". Read so only where the object "me" cannot be meant:
    // after a preposition, or before a medicine after any verb that does not give ("the doctor
    // gave me amlodipine" is given to the user).
    static DIALECT_MY: OnceLock<Regex> = OnceLock::new();
    let dialect_my = DIALECT_MY.get_or_init(|| {
        Regex::new(r"\b([A-Za-z']+)(\s+)([Mm]e)(\s+)([A-Za-z][a-z'-]+)(\s+[a-z]+)?").expect("me-my regex")
    });
    if english {
        rewrite_all(&mut s, dialect_my, |c| {
            let (before, next) = (c[1].to_lowercase(), c[5].to_lowercase());
            const AFTER: &[&str] = &["for", "with", "on", "in", "at", "from", "about", "of", "into", "off", "to"];
            const GIVING: &[&str] = &[
                "gave",
                "give",
                "given",
                "gives",
                "giving",
                "prescribed",
                "prescribe",
                "sent",
                "send",
                "got",
                "get",
                "offered",
                "offer",
                "handed",
                "brought",
                "bring",
                "bought",
                "buy",
                "told",
                "tell",
                "showed",
                "show",
            ];
            // Only a thing people have follows: "for me right now", "to me than anything" and
            // "with me while I write" keep their object.
            let thing = next.trim_end_matches("'s");
            let owned = thing.len() > 1
                && (OWNED_THINGS.contains(&thing)
                    || lex::is_relation_word(thing)
                    || lex::is_pet_word(thing)
                    || super::medication::medicine(thing, false));
            // "had me bp done", "got me hair cut": something of the user's had done.
            let after = c.get(6).map_or(String::new(), |w| w.as_str().trim().to_string());
            let had_done = matches!(before.as_str(), "had" | "have" | "got" | "get" | "getting" | "having")
                && matches!(
                    after.as_str(),
                    "done"
                        | "checked"
                        | "seen"
                        | "cut"
                        | "fixed"
                        | "tested"
                        | "sorted"
                        | "looked"
                        | "taken"
                        | "removed"
                );
            let possessive = owned
                && (AFTER.contains(&before.as_str())
                    || had_done
                    || (!GIVING.contains(&before.as_str()) && super::medication::medicine(&next, false)));
            if possessive {
                let my = if &c[3] == "Me" { "My" } else { "my" };
                format!("{}{}{my}{}{}{}", &c[1], &c[2], &c[4], &c[5], c.get(6).map_or("", |w| w.as_str()))
            } else {
                c[0].to_string()
            }
        });
    }
    // "an av packed in working for dennis": Geordie and Scots "av" is "I've" before what was
    // done (and "an" before it "and").
    static AV: OnceLock<Regex> = OnceLock::new();
    let av = AV.get_or_init(|| Regex::new(r"\b(?:([Aa]n)\s+)?([Aa]v)\s+([a-z]+)\b").expect("av regex"));
    if english {
        rewrite_all(&mut s, av, |c| {
            let next = &c[3];
            let done = (next.len() > 3 && next.ends_with("ed"))
                || matches!(
                    next,
                    "got"
                        | "been"
                        | "had"
                        | "done"
                        | "gone"
                        | "seen"
                        | "given"
                        | "taken"
                        | "made"
                        | "told"
                        | "left"
                        | "just"
                        | "never"
                        | "always"
                        | "finally"
                );
            if !done {
                return c[0].to_string();
            }
            let and = c.get(1).map(|a| if a.as_str().starts_with('A') { "And " } else { "and " }).unwrap_or_default();
            format!("{and}I've {next}")
        });
    }
    // "movin depots", "lookin at buyin": texting's "-in" for "-ing", where it is a verb's.
    static DROPPED_G: OnceLock<Regex> = OnceLock::new();
    let dropped =
        DROPPED_G.get_or_init(|| Regex::new(r"\b[A-Za-z][a-z]{2,}in'?(?:\s|$|[,.!?;])").expect("dropped-g regex"));
    if english {
        rewrite_all(&mut s, dropped, |c| {
            let m = &c[0];
            let word = m.trim_end_matches(|ch: char| ch.is_whitespace() || ",.!?;".contains(ch));
            match lex::dropped_g(&word.to_lowercase()) {
                Some(full) if word.starts_with(char::is_uppercase) => {
                    format!("{}{}", lex::title(&full), &m[word.len()..])
                }
                Some(full) => format!("{full}{}", &m[word.len()..]),
                None => m.to_string(),
            }
        });
    }
    // "im Seamus, retired postman from Athlone, 68 this year": what follows a name introduced
    // with commas is said of the user too, each part a sentence of its own.
    if english {
        if let Some(fixed) = introduced(&s) {
            s = Cow::Owned(fixed);
        }
    }
    // "Cant stand the cold anymore": a dislike opening a sentence has dropped its "I".
    static STAND: OnceLock<Regex> = OnceLock::new();
    let stand = STAND.get_or_init(|| {
        Regex::new(r"(?m)(^\s*|[.!?;]\s+)((?i:can't|cant|cannot)\s+(?i:stand|bear)\b)")
            .expect("dropped-I dislike regex")
    });
    if english && stand.is_match(&s) {
        s = Cow::Owned(stand.replace_all(&s, "${1}I ${2}").into_owned());
    }
    // "I'm from Lagos originally but been in Manchester 10 years": a clause on "been" after
    // "but", "and" or "so" has dropped its "I've", when the sentence it goes on opened on "I".
    static BEEN: OnceLock<Regex> = OnceLock::new();
    let been = BEEN.get_or_init(|| Regex::new(r"(\b(?i:but|and|so)\s+)(?i:been)(\s+)").expect("dropped-I've regex"));
    if english && been.is_match(&s) {
        let text = s.to_string();
        let fixed = been.replace_all(&text, |c: &regex::Captures<'_>| {
            let start = c.get(0).map_or(0, |m| m.start());
            let opened = text[..start].rsplit(['.', '!', '?', '\n']).next().unwrap_or("").trim_start();
            let first = opened.split_whitespace().next().unwrap_or("").to_lowercase();
            if matches!(first.as_str(), "i" | "i'm" | "i've" | "i'd" | "im" | "ive") {
                format!("{}I've been{}", &c[1], &c[2])
            } else {
                c[0].to_string()
            }
        });
        s = Cow::Owned(fixed.into_owned());
    }
    // "My father he went back to Iran", "my sister Mai she is the cook": the subject said twice,
    // as many languages do, is said once ("my father went back …").
    static AGAIN: OnceLock<Regex> = OnceLock::new();
    let again = AGAIN.get_or_init(|| {
        Regex::new(
            r"(?m)((?:^|[.!?,;:]\s*|\b(?i:and|but|so|because|cos|coz|also|then|now)\s+)(?i:my|our)\s+(?:(?i:little|big|older|younger|elder|old|new|best|late)\s+)?)([A-Za-z]+(?:-[A-Za-z]+)*)((?:\s+[A-Z][a-z]+)?)\s+(?i:he|she)\s+",
        )
        .expect("subject-again regex")
    });
    if english && again.is_match(&s) {
        let fixed = again.replace_all(&s, |c: &regex::Captures<'_>| {
            if lex::is_relation_word(&c[2]) { format!("{}{}{} ", &c[1], &c[2], &c[3]) } else { c[0].to_string() }
        });
        s = Cow::Owned(fixed.into_owned());
    }
    // "My sister Selam wedding is Ginbot 16", "my brother Dev graduation is next friday": the
    // possessive "'s" left out between a named relative and their occasion is put back, so
    // the occasion is theirs ("my sister Selam's wedding").
    static WHOSE: OnceLock<Regex> = OnceLock::new();
    let whose = WHOSE.get_or_init(|| {
        Regex::new(&format!(r"\b((?i:my|our)\s+(?:{})\s+)(\p{{Lu}}\p{{Ll}}+)\s+((?i:{OCCASIONS})\b)", lex::RELATIONS))
            .expect("left-out possessive regex")
    });
    if english && whose.is_match(&s) {
        let fixed = whose.replace_all(&s, |c: &regex::Captures<'_>| {
            if lex::NOT_NAMES.contains(&c[2].to_lowercase().as_str()) {
                c[0].to_string()
            } else {
                format!("{}{}'s {}", &c[1], &c[2], &c[3])
            }
        });
        s = Cow::Owned(fixed.into_owned());
    }
    // Shouting ("WE CAME 3RD!!") is said in capitals, not written in them: three words or more
    // in capitals, one of them a function word, are lowered (acronyms alone stay as typed).
    if english {
        s = Cow::Owned(unshouted(&s));
    }
    s
}

/// A person's occasions, which a learner may name without the "'s" of whose they are ("my
/// sister Selam wedding").
const OCCASIONS: &str = "wedding|birthday|graduation|funeral|party|christening|baptism|engagement|anniversary|\
retirement|surgery|operation|exams?|interview|concert|recital|match|appointment|flight|visa|due date|baby shower|\
housewarming|naming ceremony|hen do|stag do";

/// Verbs that after "have 2" or "got 2" make the "2" a "to" ("hav 2 bring my pens"): a duty,
/// where anything else after it is counted ("have 2 children").
const TEXTED_TO_VERBS: &[&str] = &[
    "ask", "be", "book", "bring", "buy", "call", "carry", "change", "check", "clean", "cook", "do", "drive", "eat",
    "fill", "find", "finish", "fix", "get", "give", "go", "help", "keep", "leave", "learn", "look", "make", "move",
    "pay", "pick", "put", "ring", "say", "see", "send", "sign", "sort", "start", "stay", "stop", "study", "take",
    "tell", "text", "use", "wait", "walk", "wear", "work", "write",
];

/// Words after "2" that say it counts ("need 2 more days", "got 2 new ones"), besides plurals
/// in "-s".
const COUNTED_AFTER: &[&str] = &[
    "more",
    "new",
    "extra",
    "other",
    "different",
    "whole",
    "big",
    "small",
    "little",
    "old",
    "young",
    "older",
    "younger",
    "children",
    "people",
    "men",
    "women",
    "kids",
    "times",
    "hours",
    "days",
    "weeks",
    "months",
    "years",
];

/// `text` with each run of three or more words in capitals lowered, where a function word
/// ("WE", "THE", "IS") shows it is shouting rather than a string of acronyms ("NHS GP ICU").
fn unshouted(text: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"\b[A-Z0-9][A-Z0-9']*[A-Z][A-Z0-9']*(?:[\s,]+[A-Z0-9][A-Z0-9']*){2,}\b").expect("shouting regex")
    });
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let run = &c[0];
        let lowered = run.to_lowercase();
        let shouted = lowered.split(|ch: char| !ch.is_alphanumeric() && ch != '\'').any(crate::text::is_stopword);
        if shouted { lowered } else { run.to_string() }
    })
    .into_owned()
}

fn question_start() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)^(?:
                    # lead-ins: so, ok, btw, quick question:
                    (?:
                        so | and | but | ok | okay | hey | also | well | oh | btw | um | hmm
                        | quick\s+question | question
                    )
                    [,:]?\s+
                )*
                # a question word, or an auxiliary that opens a yes/no question
                (?:
                    what | what's | whats | who | who's | where | where's | when | why | how | how's
                    | which | whose | do | does | did | is | are | am | was | were | can | could
                    | would | will | should | shall | have | has | had | may | might | any | isn't
                    | aren't | don't | doesn't | didn't | won't | wouldn't | can't | couldn't
                    | shouldn't | right | no | yeah | ok | okay | correct | huh | eh | remember
                    | know
                )
                \b
            ",
        )
        .expect("question regex")
    })
}

fn wh_start() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^(?:(?:so|and|but|ok|okay|hey|yo|also|well|oh|btw|um|hmm|abeg|pls|plz|please|anyway|anyways|quick\s+question|quick\s+q|qq|another\s+question|one\s+more\s+question|question)[,:]?\s+)*(?:what|what's|who|who's|where|where's|why|how|how's|which|whose|(?:should|shld|shud|shd|can|could|cld|cud|do|does|am)\s+(?:i|we)\b)\b")
            .expect("wh regex")
    })
}

/// Where the statement part of a sentence ends: 0 for a question, the start of a trailing
/// question clause ("I live in Lisbon, any tips?"), the end otherwise.
fn statement_end(text: &str) -> usize {
    if wh_start().is_match(text) {
        return 0;
    }
    if !text.trim_end().ends_with('?') {
        return unmarked_question(text).unwrap_or(text.len());
    }
    if question_start().is_match(text) {
        return 0;
    }
    // The last clause that opens like a question is the question; what precedes it stands.
    let mut end = 0;
    for (i, _) in text.match_indices([',', ';', ':', '-']) {
        let rest = text[i + 1..].trim_start();
        let rest = ["and ", "but ", "so "].iter().fold(rest, |acc, p| acc.strip_prefix(p).unwrap_or(acc));
        if question_start().is_match(rest) || rest.to_ascii_lowercase().starts_with("you ") {
            end = i;
        }
    }
    for sep in [" and ", " but ", " so "] {
        if let Some(i) = text.to_ascii_lowercase().rfind(sep) {
            if question_start().is_match(&text[i + sep.len()..]) && i > end {
                end = i;
            }
        }
    }
    end
}

/// Where a question typed without its mark ends a statement ("im starting at the bakery
/// monday, do i need to bring my own apron", "come up in hives, wot can i take"): the last
/// clause, when it opens with a question word or an auxiliary before its subject.
fn unmarked_question(text: &str) -> Option<usize> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?xi)
                (?:[,;:]|\s-|\s(?:so|and|but))\s+(?:(?:so|and|but|ok|also|just|then)\s+)*
                (?:
                    (?:what|wot|wat|how|where|why|which)\s+(?:can|could|should|do|does|would|will|is|are|am|did)\s+(?:i|we|you|u|they|he|she|it)\b
                    | (?:do|does|did|should|shld|can|could|will|would|is|are|am|have|has|need)\s+(?:i|we|you|u|they|he|she|it|my|our)\b
                )
                [^,;:]*$
            ",
        )
        .expect("unmarked question regex")
    });
    re.find(text).map(|m| m.start())
}

/// Whether `before` ends at a clause break: a comma, a semicolon, a dash, or "so", "but", "and"
/// before what comes next.
fn after_a_break(before: &str) -> bool {
    let t = before.trim_end();
    t.ends_with([',', ';', '-', '\u{2013}', '\u{2014}'])
        || t.rsplit(char::is_whitespace)
            .next()
            .is_some_and(|w| matches!(w.to_lowercase().as_str(), "so" | "but" | "and"))
}

/// What only holds on a condition said after it ("I'll quit if they cut my hours", "I'd move
/// if I could"): a clause before an "if" that says this stays held back with it.
fn conditional_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b(?:will|won't|would|wouldn't|could|might|may|should|gonna|going\s+to|\w+'ll|\w+'d)\b|^\s*(?:only|unless|even)\b")
            .expect("conditional regex")
    })
}

/// A clause that is the user's allergy, said in the present ("im allergic to azithromycin").
fn own_allergy_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\W*(?:(?:but|and|so|cos|coz|because)\s+)?(?:i'm|im|i\s+am)\s+(?:\w+\s+){0,2}?allergic\s+to\b")
            .expect("own allergy regex")
    })
}

fn blocked_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)\b(?:
                    # hypotheticals and wishes
                    if\s+(?:i|we|my)
                    # in Scots and fast typing, a is I: if a ever win, if ah get
                    | if\s+ah?\s+(?:ever|win|won|get|got|had|could|wis|was)
                    # a condition on something else: if it goes badly, if the weather holds
                    | if\s+(?:it|this|that|things|everything|all|the\s+\w+)(?:\s+one)?\s+(?:goes|go|went|turns?|ends?|fails?|works?|holds?|is|isn't|was|gets?|doesn't|don't|falls?)\b
                    # a condition on someone else: if she sleeps through the night before I'm 40
                    | if\s+(?:she|he|they)\b
                    # someone else's conditional: my husband said if this one is a boy ...
                    | (?:said|says|reckons|thinks|told\s+me)\s+(?:that\s+)?if\b
                    | what\s+if
                    | suppose
                    | supposing
                    | imagine
                    | pretend
                    | hypothetically
                    | in\s+a\s+world\s+where
                    | i\s+wish
                    | wish\s+i
                    | i\s+would\s+be
                    | i'd\s+be
                    | let's\s+say
                    | assuming
                    # reported speech: someone else's word about the user
                    | (?:he|she|they|people|everyone|everybody|someone|mom|mum|dad|(?:my|the|his|her|their|our)\s+\w+(?:\s+\w+){0,2})\s+(?:(?:also|always|even|still|keeps|kept|really|honestly|actually|genuinely)\s+){0,3}(?:said|says|say|saying|think|thinks|thought|reckons?|tells?\s+me|told\s+me|claims?|believes?|assumes?|insists?|swears?)\s+(?:that\s+)?(?:i\b|ill\s+(?:be|have|need|get|never)\b)
                    # the one who said it named in the sentence before: Says I'm the best on fish
                    | ^\s*(?:says|reckons|thinks|reckoned|thought)\s+(?:that\s+)?i\b
                    # doubt about oneself, or denial of having said it
                    | i\s+(?:don't|do\s+not|didn't)\s+(?:think|believe)\s+i\b
                    | (?:don't|do\s+not|didn't)\s+know\s+(?:if|whether)
                    | not\s+sure\s+(?:if|whether)
                    | never\s+said
                    | didn't\s+say
                    # jokes, dreams and role-play
                    | just\s+kidding
                    | jk
                    | joking
                    | (?:it's|its|is|it\s+is)\s+(?:a\s+|just\s+a\s+|only\s+a\s+)?joke
                    | in\s+my\s+dreams
                    | over\s+my\s+dead\s+body
                    | pretending
                    | role-?play
                    | in\s+the\s+story
                    | my\s+character
                )
                \b
            ",
        )
        .expect("blocked regex")
    })
}

/// A figure of speech about oneself ("basically I'm Tyson Fury now", "I'm literally the next
/// Beckham"): a comparison with someone famous, not who the user is. Read on the sentence as
/// typed, since only the capital tells a name from a word ("I'm basically done").
fn figurative_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)\b(?i:
                (?:basically|literally|practically|pretty\s+much)\s*,?\s+(?:i'm|i’m|im|i\s+am)\s+(?:like\s+)?
                | (?:i'm|i’m|im|i\s+am)\s+(?:basically|literally|practically|pretty\s+much|like)\s+
                | (?:i'm|i’m|im|i\s+am)\s+the\s+(?:next|new)\s+
            )(?i:the\s+(?:next|new)\s+)?\p{Lu}",
        )
        .expect("figurative regex")
    })
}

/// A sentence that opens by owning a joke ("Joking.", "lol jk", "No, is joke, I stay"): the
/// sentence before it was not meant.
fn joke_after() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)^\s*(?:(?:lol|haha\w*|no|nah|ok|but)[,!.]?\s+)*
                (?:jk|j/k|just\s+kidding|kidding|(?:only\s+|just\s+)?joking|(?:it's|its|is|it\s+is)\s+(?:a\s+|just\s+a\s+)?joke)\b",
        )
        .expect("joke regex")
    })
}

/// A conditional's consequence ("would", "'d", Scots "wid"): after a hypothetical it is part of
/// it ("Rhodri would have my head", "ma maw wid kill me").
fn would_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\b(?:would|wid|wud|'d)\b").expect("would regex"))
}

/// A reply to someone else's joke about the user, going along with it ("I've told her I'm getting
/// a leather onesie", "Sure I'm booking the boat"): after a reported or hypothetical sentence
/// it is part of the joke.
fn plays_along_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\W*(?:(?:and|so|lol|haha)\W+)?(?:i(?:'ve|\s+have)?\s+(?:told|said\s+to)\s+(?:her|him|them)\b|sure,?\s+i(?:'m|\s+am|'ll|\s+will)\b)")
            .expect("plays-along regex")
    })
}

/// Doubt ("maybe", "I think", "probably"): the sentence asserts nothing for sure.
fn doubt_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(?:i\s+think|i\s+guess|i\s+suppose|maybe|probably|perhaps|might|not\s+sure|i\s+believe|possibly|i\s+may|could\s+be|i\s+reckon|not\s+certain)\b",
        )
        .expect("doubt regex")
    })
}

/// Hedged: doubted, or an intention still being weighed ("thinking about", "considering"),
/// which is true of the user's mind but not yet of their life.
fn hedged(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    doubt_re().is_match(lower)
        || RE
            .get_or_init(|| {
                Regex::new(r"(?i)\b(?:kinda\s+thinking|thinking\s+about|considering)\b").expect("intent regex")
            })
            .is_match(lower)
}

/// Whether a sentence is doubted (see [`doubt_re`]), for readers that keep a weighed intention.
pub(super) fn doubted(lower: &str) -> bool {
    doubt_re().is_match(lower)
}

/// Splits a sentence where a conjunction opens a clause with its own subject ("I live in Lisbon
/// and I work as a nurse"), so each clause's rule reads only its own words. Returns byte ranges.
fn clauses(text: &str) -> Vec<(usize, usize)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?xi)
                # the conjunction, with the comma before it if any
                ,?\s+(?:and|but|so|because|cause|though|although|while|whereas|plus)\s+
                (?:also\s+|then\s+|now\s+)?
                # a subject of its own: without one the words still belong to the clause before
                (?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|he|she|they|he's|she's|they're)\b
            ",
        )
        .expect("clause regex")
    });
    let mut out = Vec::new();
    let mut start = 0;
    for m in re.find_iter(text) {
        out.push((start, m.start()));
        // The next clause starts at its subject.
        let subj = m.as_str().rfind(char::is_whitespace).map_or(m.start(), |i| m.start() + i + 1);
        start = subj;
    }
    out.push((start, text.len()));
    out
}

/// Whether `asked`, the assistant's turn before a user's message, asks about one of the user's
/// people ("what's your nan into these days?", "what does she enjoy doing?"): the answer
/// ("gardening n bingo") is about them.
fn asks_about_someone(asked: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?i)(?:\byour\s+(?:{})\b|\b(?:does|did|is|was|has|had|would|will|can|could)\s+(?:she|he)\b)[^?]*\?",
            lex::RELATIONS
        ))
        .expect("asks-about regex")
    });
    re.is_match(asked)
}

/// Whether a rule's capture says nothing true on its own: cut before its object ("User is
/// feeling proud of"), or its object stood in the turn before ("User enjoys the taste of
/// these"). Boundaries and safety keep theirs: "don't bring it up again" is the user's word on
/// the chat itself.
fn says_nothing(f: &Found) -> bool {
    use crate::kind::Kind;
    matches!(f.action, Action::Add | Action::Update(_))
        && (readable::unfinished(&f.draft.content)
            || (matches!(f.draft.kind, Kind::Preference | Kind::Fact | Kind::Event | Kind::Ephemeral | Kind::OpenLoop)
                && readable::dangles(&f.draft.content)))
}

/// Whether a sentence speaks of the user in the first person, so it is about them whatever it
/// answers.
fn first_person(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|us)\b").expect("first-person regex")
    });
    re.is_match(lower)
}

/// Whether a finding only names someone ("User's sister is named Lucia", a pet's name): the
/// rest of the sentence may still tell what happened to them.
fn names_someone(f: &Found) -> bool {
    f.action == Action::Add && keys_a_name(f.draft.key.as_deref())
}

/// Whether a slot key is one of the user's people or pets by name.
fn keys_a_name(key: Option<&str>) -> bool {
    key.is_some_and(|k| k.starts_with("family:") || k.starts_with("pet:"))
}

/// Whether a captured statement says nothing beyond naming `names`: once the names and the
/// words of naming ("has", "a", "dog", "named", "called") are taken out, no content word is
/// left ("Tom is vegetarian" keeps "vegetarian").
fn only_names(content: &str, names: &[String]) -> bool {
    if names.is_empty() {
        return false;
    }
    let naming = ["named", "called", "name", "is", "are", "has", "have", "and", "others", "user", "user's", "their"];
    let left = content
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase())
        .map(|w| w.strip_suffix("'s").map(str::to_string).unwrap_or(w))
        .filter(|w| !w.is_empty())
        .filter(|w| !names.iter().any(|n| n.to_lowercase().split_whitespace().any(|p| p == w)))
        .filter(|w| {
            !naming.contains(&w.as_str())
                && !crate::text::is_stopword(w)
                && !lex::is_pet_word(w)
                && !lex::is_relation_word(w)
        })
        .count();
    left == 0
}

/// What a key's slot is about, for a textual target ("pet:dog:biscuit" → "dog").
fn slot_word(key: &str) -> &str {
    key.split(':').nth(1).unwrap_or(key)
}

/// Runs every rule over one sentence and returns what they found, each with its rule's mode.
fn find(s: &Sentence<'_>) -> Vec<(Found, Mode)> {
    let text = s.text;
    let mut claimed: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for rule in rules() {
        match rule.mode {
            Mode::Statement if s.blocked || s.statement_end == 0 => continue,
            Mode::Plan if s.statement_end == 0 => continue,
            _ => {}
        }
        if !rule.triggered(&s.lower) {
            continue;
        }
        let mut pos = 0;
        while pos <= text.len() {
            let Some(c) = rule.re.captures_at(text, pos) else { break };
            let m = c.get(0).expect("whole match");
            let retry = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
            // A rule owns the words up to its last capture; a trailing terminator ("... but")
            // stays free for the next clause's rule.
            let end = c.iter().skip(1).flatten().map(|g| g.end()).max().unwrap_or(m.end()).max(m.start() + 1);
            let in_statement = rule.mode == Mode::Request || end <= s.statement_end + 1;
            if !in_statement || claimed.iter().any(|&(a, b)| m.start() < b && a < end) {
                pos = retry;
                continue;
            }
            let mut found = (rule.build)(&c, s);
            if found.is_empty() {
                pos = retry;
                continue;
            }
            claimed.push((m.start(), end));
            // Why it was remembered: the rule's name travels with the draft into provenance.
            for f in &mut found {
                f.draft.rule = Some(rule.name.to_string());
                f.end = end;
                f.start = m.start();
            }
            out.extend(found.into_iter().map(|f| (f, rule.mode)));
            pos = m.end().max(retry);
        }
    }
    out
}

/// Whether a sentence states something a take-back could be of: a statement of three words
/// or more, not a question, thanks or a greeting.
fn states(text: &str) -> bool {
    statement_end(text) == text.len() && text.split_whitespace().count() >= 3 && !readable::only_greets(text)
}

/// Whether an assistant turn asks the user about their medicines or allergies ("Are you taking
/// anything else?", "Any allergies I should know about?").
fn asks_about_health(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    text.contains('?')
        && RE
            .get_or_init(|| {
                Regex::new(r"(?i)\b(?:medications?|medicines?|meds|tablets|pills|prescri\w*|allergi\w*|allergy|taking\s+anything|on\s+anything)\b")
                    .expect("health question regex")
            })
            .is_match(text)
}

/// The words of what the reply "no, not anymore, …" says no longer holds, when it answers an
/// assistant turn that said something of the user ("You're driving Granny from Athlone" →
/// "driving granny athlone"). `None` for any other reply.
fn no_longer_so(asked: &str, reply: &str) -> Option<String> {
    static LEAD: OnceLock<Regex> = OnceLock::new();
    static SAID: OnceLock<Regex> = OnceLock::new();
    let lead = LEAD.get_or_init(|| {
        Regex::new(r"(?i)^\s*(?:(?:no|nope|nah|actually)[,.!]?\s+)+(?:not\s+any\s*more|no\s+longer)\b[,.!]?\s*")
            .expect("no-longer reply regex")
    });
    let said = SAID.get_or_init(|| {
        Regex::new(r"(?im)(?:^|[.!?:,]\s+|^\s*[-*•]\s*)you(?:'re|\s+are)\s+([^.\n!?]+)").expect("restatement regex")
    });
    lead.find(reply)?;
    let what = said.captures_iter(asked).last()?.get(1)?.as_str();
    let words = crate::text::query_terms(what);
    (words.len() >= 2).then(|| words.join(" "))
}

/// A sentence of the message being read, and where the ops and episodes it left begin.
struct SaidBefore<'a> {
    text: &'a str,
    ops: usize,
    episodes: usize,
}

/// The user's correcting words from `m` as a dated quote, `action` saying what they correct:
/// "User corrected" for a slip, "User said" for news that changes it (`news`).
fn correcting(action: Action, said: &str, m: &Message, news: bool) -> ProposedOp {
    let content = if news { readable::quote(said, m.at) } else { readable::corrected(said, m.at) };
    let mut draft = Draft::new(Kind::Fact, content, 0.9, 0.6);
    // The user's words, kept as said: context for the model, never a fact to enforce.
    draft.surface = Some(crate::kind::Surface::Adapt);
    draft.valid_from = Some(m.at);
    draft.rule = Some("correction.detail".into());
    ProposedOp { action, draft, sources: vec![m.id.clone()] }
}

/// What a message told and what it replaces: its statements replace the memory of what it
/// called off ("Hyderabad transfer is cancelled. Now they are sending me to Dallas") or switched
/// from (`left`: "I'm changing from layers to kienyeji chickens"); a message that only calls a
/// plan off is kept as the user's dated words. `None` when it told nothing.
fn replacing(
    told: Option<Draft>,
    called_off: &[(String, &str)],
    left: &[String],
    at: chrono::DateTime<chrono::Utc>,
) -> Option<(Draft, Option<String>)> {
    let old: Vec<&str> = called_off.iter().map(|(p, _)| p.as_str()).chain(left.iter().map(String::as_str)).collect();
    let plan = (!old.is_empty()).then(|| old.join(" "));
    let draft = match (told, called_off) {
        (Some(draft), _) => draft,
        (None, []) => return None,
        (None, sentences) => {
            let said: Vec<&str> = sentences.iter().map(|(_, s)| s.trim()).collect();
            let mut draft = Draft::new(Kind::Event, readable::quote(&said.join(" "), at), 0.85, 0.6);
            draft.valid_from = Some(at);
            draft.rule = Some("correction.called-off".into());
            draft
        }
    };
    Some((draft, plan))
}

/// Slots that sit beside a job or an employer rather than replace them: a new team or shift.
const BESIDE_WORK: &[&str] = &["team", "shift"];

/// Turns one sentence's findings into ops: corrections, replacements, hedging, privacy.
fn settle(s: &Sentence<'_>, found: Vec<(Found, Mode)>) -> Vec<Found> {
    // A move within work ("I moved to the QA team") fills a slot of its own: what the sentence
    // says was left ("not anymore at the support") is let go by its own forget.
    let stated = found.iter().any(|(f, _)| {
        !f.retractable
            && matches!(f.action, Action::Add | Action::Update(_))
            && !f.draft.key.as_deref().is_some_and(|k| BESIDE_WORK.contains(&k))
    });
    // "not X anymore" with a replacement in the same sentence names the old value; alone, it forgets.
    let mut old: Option<String> = None;
    let mut kept = Vec::new();
    for (f, mode) in found {
        if f.retractable && stated {
            if let Action::Forget(Target::Matching(t)) = &f.action {
                old.get_or_insert_with(|| t.clone());
            }
            continue;
        }
        kept.push((f, mode));
    }
    let named_old = old.or_else(|| {
        if s.correction || s.lower.contains("not ") || s.lower.contains("instead") || s.lower.contains("rather than") {
            correction::replaced_value(s.text).map(|v| lex::key_words(&v).join(" "))
        } else {
            None
        }
    });
    let mut out = Vec::new();
    for (mut f, mode) in kept {
        let replaces = f.replaces.take().map(|r| lex::key_words(&r).join(" ")).filter(|r| !r.is_empty());
        if f.action == Action::Add {
            match f.draft.key.clone() {
                // One of several (a second dog is no correction of the first): only a named old
                // value ("not Biscuit") makes it a replacement, of the best match for both.
                Some(key) if key.matches(':').count() >= 2 => {
                    if let Some(o) = replaces.clone().or_else(|| named_old.clone()) {
                        f.draft.confidence = f.draft.confidence.max(0.9);
                        f.action = Action::Update(Target::Matching(format!("{} {o}", slot_word(&key))));
                    }
                }
                Some(key) if s.correction || replaces.is_some() || named_old.is_some() => {
                    f.draft.confidence = f.draft.confidence.max(0.9);
                    f.action = Action::Update(Target::Key(key));
                }
                None => {
                    if let Some(o) = replaces.or_else(|| if s.correction { named_old.clone() } else { None }) {
                        f.draft.confidence = f.draft.confidence.max(0.9);
                        f.action = Action::Update(Target::Matching(o));
                    }
                }
                Some(_) => {}
            }
        }
        if s.hedged {
            f.draft.confidence *= 0.6;
        }
        if mode == Mode::Plan && s.blocked {
            f.draft.confidence *= 0.6;
        }
        if !crate::pii::detect(&f.draft.content).is_empty() {
            continue;
        }
        out.push(f);
    }
    out
}

impl Extractor for HeuristicExtractor {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    fn version(&self) -> &'static str {
        "2"
    }

    fn extract(&self, batch: &[Message]) -> Vec<ProposedOp> {
        let mut ops: Vec<ProposedOp> = Vec::new();
        // "met for min" … "*metformin": what a word typed again fixes is read fixed.
        let batch = &*super::respell::respelled(batch);
        for (i, m) in batch.iter().enumerate().filter(|(_, m)| m.role == Role::User) {
            // An answer to "what's your nan into?" without "I" or "my" is about the nan: no
            // sentence of it becomes a memory about the user.
            // The other speaker's turn just before, when there is one: what the reply answers.
            let asked = i.checked_sub(1).map(|p| &batch[p]).filter(|q| q.role == Role::Assistant);
            let answers_for_someone = asked.is_some_and(|q| asks_about_someone(&q.content));
            // The rules are English: another language's sentences are archived, never read by
            // them ("Me llamo Lucía" is no "call me" request). A sentence too short to tell
            // takes its message's language, told from what the user typed.
            let message_language = language::detect(without_speaker(&m.content));
            let text = normalise(&m.content, message_language.reads_as_english());
            // "You're driving Granny from Athlone" … "no, not anymore, Ciarán's taking Granny
            // now": the reply says, of what the assistant said of the user, that it no longer
            // holds. It amends the memory holding those words, as news: what was said stays,
            // with the reply after it.
            if let Some(detail) = asked
                .filter(|_| message_language.reads_as_english())
                .filter(|_| attribution::split_speaker(&m.content).is_none())
                .and_then(|q| no_longer_so(&q.content, &text))
            {
                ops.push(correcting(Action::Amend(Target::Matching(detail)), &text, m, true));
            }
            let lowercase = !text.chars().any(char::is_uppercase);
            // What the other speaker asked just before: a reply leaning on it ("They offer yoga
            // and kickboxing") is kept with the question.
            let asked_before = asked.filter(|_| message_language.reads_as_english()).map(|q| q.content.as_str());
            let first = ops.len();
            let mut prev: Option<&str> = None;
            let mut episodes = Vec::new();
            // Whether the sentence before left an episode: a quote leaning on it ("It helps me
            // relax") is then merged with it, and carries its own antecedent otherwise.
            let mut prev_told = false;
            // Plans the message calls off, with the sentence that does: what the message says
            // now replaces the memory that held each.
            let mut called_off: Vec<(String, &str)> = Vec::new();
            let mut left: Vec<String> = Vec::new();
            // Whether the sentence before only owned a slip ("Sorry, I say wrong before."):
            // this one then corrects, as its own rules read it.
            let mut slipped = false;
            // Where a take-back that named only the wrong detail ("Not Tuesday.") was kept, and
            // what it said: the sentence after names the value that holds.
            let mut awaiting_value: Option<(usize, String, bool)> = None;
            // Whether a sentence of the message amended something said before, and whether the
            // sentence before did.
            let mut amending = false;
            // The take-back whose correction goes on in the sentences after it: its op and words.
            let mut continuing: Option<(usize, String)> = None;
            let mut last_amended = false;
            // The sentence before in this message, with where its ops and episodes begin: a
            // take-back of it drops what it left.
            let mut said_before: Option<SaidBefore<'_>> = None;
            // Whether the sentence before was a hypothetical, a joke or someone else's word.
            let mut hypothetical = false;
            for sent in sentences(&text) {
                let sent = super::lex::without_closing_particles(sent);
                let (ops_before, episodes_before) = (ops.len(), episodes.len());
                let sentence_language = match language::detect_within(sent, message_language) {
                    Language::Unknown => message_language,
                    known => known,
                };
                let lower = sent.to_lowercase();
                // "Not Tuesday. It is Wednesday evening, 7 o'clock.": the value a bare take-back
                // left for later is part of it.
                if let Some((at, said, news)) = awaiting_value.take() {
                    if correction::names_a_value(&lower) && !correction::retracts(&lower) {
                        let action = ops[at].action.clone();
                        ops[at] = correcting(action, &format!("{said} {}", sent.trim()), m, news);
                        prev = Some(sent);
                        said_before = None;
                        continue;
                    }
                }
                if sent.contains("[redacted")
                    || !sentence_language.reads_as_english()
                    || (answers_for_someone && !first_person(&lower))
                {
                    prev = Some(sent);
                    prev_told = false;
                    last_amended = false;
                    said_before = None;
                    hypothetical = false;
                    continue;
                }
                // "I'm quitting tomorrow. Joking.": what the sentence before said was not meant.
                if joke_after().is_match(&lower) {
                    if let Some(before) = said_before.take() {
                        ops.truncate(before.ops);
                        episodes.truncate(before.episodes);
                    }
                }
                // "If I make them cry I'll give every guest a lamb. Rhodri would have my head":
                // what would follow goes on with the hypothetical before it.
                let hypothetical_before =
                    hypothetical && (would_re().is_match(&lower) || plays_along_re().is_match(&lower));
                let blocked = blocked_re().is_match(&lower) || figurative_re().is_match(sent) || hypothetical_before;
                hypothetical = blocked;
                let s = Sentence {
                    text: sent,
                    prev,
                    at: m.at,
                    statement_end: statement_end(sent),
                    blocked,
                    hedged: hedged(&lower),
                    correction: slipped || correction::is_correction(&lower),
                    lowercase,
                    lower,
                };
                let mut found = Vec::new();
                let mut before: Option<&str> = prev;
                // "I'm allergic to codeine, so if I hurt my back what can I take": the condition
                // holds back what comes after it, not the fact told before it.
                // Only after a break ("People are telling me if it is registered …" tells what
                // the condition is), and only what holds anyway ("I'll quit, if …" does not).
                let told_before = if s.blocked && !figurative_re().is_match(sent) && !hypothetical_before {
                    blocked_re()
                        .find(sent)
                        .filter(|m| m.as_str().to_lowercase().starts_with("if"))
                        .map(|m| m.start())
                        // "…, 2 puffs morning n night, pro air only if i need um": the clause the
                        // condition sits in goes with it; the clauses before it are told.
                        .and_then(|at| {
                            if after_a_break(&sent[..at]) {
                                Some(at)
                            } else {
                                sent[..at].rfind([',', ';']).map(|c| c + 1)
                            }
                        })
                        .filter(|&at| {
                            sent[..at].split_whitespace().count() >= 3 && !conditional_re().is_match(&sent[..at])
                        })
                } else {
                    None
                };
                // "dont recommend me no z pack if i ever ask bout a cold, im allergic to
                // azithromycin": an allergy said in a clause of its own holds whatever the
                // condition beside it (never one someone else reports).
                let conditional = s.blocked
                    && blocked_re().find(sent).is_some_and(|m| {
                        let said = ["say", "said", "reckon", "think", "thought", "told", "tell"];
                        m.as_str().to_lowercase().starts_with("if")
                            && !crate::text::words(&sent[..m.start()].to_lowercase())
                                .any(|w| said.iter().any(|v| w.starts_with(v)))
                    });
                let allergy_at = conditional
                    .then(|| {
                        sent.match_indices(',')
                            .map(|(i, _)| i + 1)
                            .find(|&i| own_allergy_re().is_match(&sent[i..].to_lowercase()))
                    })
                    .flatten();
                let mut spans = clauses(sent);
                if let Some(at) = allergy_at {
                    spans = spans
                        .into_iter()
                        .flat_map(|(a, b)| if a < at && at < b { vec![(a, at), (at, b)] } else { vec![(a, b)] })
                        .collect();
                }
                for (a, b) in spans {
                    let text = &sent[a..b];
                    // A clause that starts before the condition states what it says up to it.
                    let before_condition = told_before.is_some_and(|at| at > a) || allergy_at == Some(a);
                    let mut statement_end = s.statement_end.saturating_sub(a).min(text.len());
                    if let Some(at) = told_before.filter(|_| before_condition) {
                        statement_end = statement_end.min(at - a);
                    }
                    let clause = Sentence {
                        text,
                        lower: text.to_lowercase(),
                        prev: before,
                        statement_end,
                        blocked: s.blocked && !before_condition,
                        ..s
                    };
                    found.extend(find(&clause).into_iter().map(|(mut f, mode)| {
                        f.end += a;
                        f.start += a;
                        (f, mode)
                    }));
                    before = Some(text);
                }
                // A capture that says nothing on its own is dropped before the sentence's own
                // episode is weighed: "I got this video card last week - so excited to jump
                // into it!" is the card, not "User is feeling excited to jump into it".
                let mut settled: Vec<Found> = settle(&s, found).into_iter().filter(|f| !says_nothing(f)).collect();
                // "wait actually its not tues its wed": a detail of something said before, kept
                // beside it. Typed statements of the sentence are corrections of their own.
                // A hypothetical takes nothing back ("if I win I will not sail anymore").
                let take_back = if s.blocked { None } else { correction::take_back(sent, &s.lower, slipped) };
                let after_slip = slipped;
                slipped = take_back == Some(TakeBack::Bare);
                // "I counted wrong" closes nothing: the slip is what was done. A slip owned
                // alone ("Sorry, I check website again.") says nothing of its own either.
                if slipped || (take_back.is_some() && settled.iter().all(|f| matches!(f.action, Action::CloseLoop(_))))
                {
                    settled.clear();
                }
                // "Race day is 17 October. Ah sorry, I check website, is 18 October": the slip
                // is the sentence before, in the same message. Neither is read alone; the two
                // are kept together, as said.
                let slip_before = match (&take_back, &said_before) {
                    (Some(TakeBack::Unnamed { .. }), Some(_)) => true,
                    // Only a statement is taken back ("Thanks so much! Sorry, one more thing").
                    (None, Some(b)) => {
                        correction::retracts(&s.lower) && correction::names_a_value(&s.lower) && states(b.text)
                    }
                    (Some(TakeBack::Detail { detail, news: false, .. }), Some(b)) => {
                        let have: Vec<String> = crate::text::words(&b.text.to_lowercase()).collect();
                        crate::text::words(detail).all(|w| have.iter().any(|h| crate::text::same_word(h, &w)))
                    }
                    _ => false,
                };
                let took_back = take_back.is_some();
                let amended = match take_back {
                    // A second take-back in the message says more of the same one ("I mixed
                    // numbers, with me this happens when I am tired").
                    Some(TakeBack::Detail { .. } | TakeBack::Unnamed { .. }) if amending => true,
                    // "No, I write wrong. 18 July is birthday of his bride. Wedding is 11 July,
                    // Saturday.": a value said after the correction goes on correcting.
                    None if continuing.is_some()
                        && ValueShape::of(sent).is_some()
                        && settled.iter().all(|f| f.draft.key.is_none()) =>
                    {
                        let (at, said) = continuing.as_mut().expect("checked above");
                        said.push(' ');
                        said.push_str(sent.trim());
                        let action = ops[*at].action.clone();
                        ops[*at] = correcting(action, said, m, false);
                        settled.clear();
                        true
                    }
                    _ if slip_before => {
                        let before = said_before.take().expect("checked above");
                        ops.truncate(before.ops);
                        episodes.truncate(before.episodes);
                        // "I live in Leeds. No wait, I live in York now": a typed statement
                        // says what holds; otherwise the two sentences are kept as said.
                        settled.retain(|f| f.draft.key.is_some());
                        if settled.is_empty() {
                            amending = true;
                            let both = format!("{} {}", before.text.trim(), sent.trim());
                            ops.push(correcting(Action::Add, &both, m, true));
                        }
                        settled.is_empty()
                    }
                    // "my workshop is now Saturday 20 June instead": a day moved, said as a
                    // statement no slot holds, is the amendment, not a second plan.
                    // Someone named on the way ("My brother Pieter says the party is the 13th,
                    // not the 6th") stays named; why the day moved ("the hall was booked") is
                    // no plan done.
                    Some(TakeBack::Detail { detail, said, news, unowned })
                        if settled.is_empty()
                            || (ValueShape::of(&said) == Some(ValueShape::Date)
                                && settled.iter().all(|f| {
                                    // after a slip owned alone the sentence's statement is
                                    // a correction of its own ("I mixed it. Birthday party
                                    // is 20 June, not 13."): the day is still what moves
                                    (f.draft.key.is_none()
                                        && (f.action == Action::Add
                                            || (after_slip && matches!(f.action, Action::Update(_)))))
                                        || keys_a_name(f.draft.key.as_deref())
                                        || matches!(f.action, Action::CloseLoop(_))
                                })) =>
                    {
                        amending = true;
                        // The name is news of its own, no correction of another name.
                        settled.retain(|f| keys_a_name(f.draft.key.as_deref()));
                        for f in &mut settled {
                            f.action = Action::Add;
                        }
                        if correction::names_only_the_detail(&said, &detail) {
                            awaiting_value = Some((ops.len(), said.clone(), news));
                        }
                        let mut op = correcting(Action::Amend(Target::Matching(detail)), &said, m, news);
                        if unowned {
                            op.draft.rule = Some(super::DAY_FOR_DAY_RULE.into());
                        }
                        ops.push(op);
                        true
                    }
                    // "No sorry its the 10th": the old value is in what was said a moment
                    // before, in another message; the memory naming a value of the same shape
                    // gets the correction beside it. A statement of the sentence that fills no
                    // slot ("The wedding is 19 September") is the correction, not news.
                    Some(TakeBack::Unnamed { said })
                        if settled.is_empty()
                            || (ValueShape::of(&said).is_some() && settled.iter().all(|f| f.draft.key.is_none())) =>
                    {
                        amending = true;
                        settled.clear();
                        // A speaker's line in a pasted transcript corrects that speaker, not
                        // whatever the user said last: the engine matches the line's label.
                        let action = match ValueShape::of(&said) {
                            Some(shape) => Action::Amend(Target::Latest(shape)),
                            None => Action::Add,
                        };
                        continuing = Some((ops.len(), said.clone()));
                        ops.push(correcting(action, &said, m, false));
                        true
                    }
                    _ => false,
                };
                let prev_amended = std::mem::replace(&mut last_amended, amended);
                if let Some(plan) = correction::cancelled(sent, lowercase) {
                    called_off.push((plan, sent));
                } else if !amended && settled.is_empty() {
                    // A switch no rule read ("changing from layers to kienyeji chickens"): what
                    // the message tells replaces what it names as left. Only a "from … to" says
                    // what was left: "not in any online groups right now" leaves nothing.
                    left.extend(correction::switched_from(sent));
                }
                // "We explored nature ..." may also close a loop, "my sister Lucia is getting
                // married in June" names a sister, and "I'm not at reception anymore, I moved to
                // billing" lets something go: what happened is kept either way.
                let lets_go = !settled.is_empty() && settled.iter().all(|f| matches!(f.action, Action::Forget(_)));
                if !amended
                    && !slipped
                    && (lets_go || settled.iter().all(|f| matches!(f.action, Action::CloseLoop(_)) || names_someone(f)))
                {
                    // Unless it only says the name again ("I have a dog named Biscuit").
                    let named: Vec<String> =
                        settled.iter().filter(|f| names_someone(f)).filter_map(|f| f.draft.value.clone()).collect();
                    // What was let go is the forget's; only a clause after it is news.
                    // Told before a condition: what it says up to the condition.
                    let told = told_before.map(|cut| Sentence {
                        text: s.text,
                        lower: s.lower.clone(),
                        statement_end: s.statement_end.min(cut),
                        blocked: false,
                        ..s
                    });
                    let s = told.as_ref().unwrap_or(&s);
                    // A habit or a place left behind ("I gave up drinking in 2021", "I quit my
                    // job at the mill") is news as well as a letting go: the sentence is kept.
                    let left_behind =
                        lets_go && settled.iter().all(|f| f.draft.rule.as_deref() == Some("correction.stopped"));
                    let episode =
                        if lets_go && !left_behind { episodic::later_clause(s) } else { episodic::capture(s) };
                    let episode = episode.filter(|e| !only_names(&e.content, &named));
                    // Leaning on a take-back ("… not 3, I counted wrong. started it the week
                    // before my birthday"), it would quote the correction again.
                    let episode = match (prev_told, prev_amended) {
                        (true, _) => episode,
                        (false, true) => episode.filter(|e| e.leaning.is_none()),
                        (false, false) => episode.and_then(|e| e.with_antecedent(prev, asked_before, m.at)),
                    };
                    prev_told = episode.is_some();
                    episodes.extend(episode);
                } else {
                    // A typed statement claims its own words; a clause before or after them
                    // with its own subject is news of its own ("I have gastritis, I take
                    // omeprazole 20 mg", "I work as a nurse, and last week I passed my driving
                    // test"), unless it leans on what the statement said ("…, it gives me hives").
                    let typed = |f: &Found| matches!(f.action, Action::Add | Action::Update(_)) && !names_someone(f);
                    let stated = settled.iter().all(|f| typed(f) || matches!(f.action, Action::CloseLoop(_)));
                    if stated && !amended && !slipped && told_before.is_none() {
                        let typed_at = |at: fn(&Found) -> usize| settled.iter().filter(|f| typed(f)).map(at);
                        let head = typed_at(|f| f.start).min().and_then(|start| episodic::clause_before(&s, start));
                        let tail = typed_at(|f| f.end).max().and_then(|end| episodic::clause_after(&s, end));
                        episodes.extend([head, tail].into_iter().flatten().filter(|e| e.leaning.is_none()));
                    }
                    prev_told = false;
                }
                for mut f in settled {
                    let dup = ops[first..].iter().any(|o| o.action == f.action && o.draft.content == f.draft.content);
                    // What is asserted holds at least from when it was said.
                    if matches!(f.action, Action::Add | Action::Update(_) | Action::Contradict(_)) {
                        f.draft.valid_from = f.draft.valid_from.or(Some(m.at));
                    }
                    if !dup {
                        ops.push(ProposedOp { action: f.action, draft: f.draft, sources: vec![m.id.clone()] });
                    }
                }
                prev = Some(sent);
                // A take-back is no statement a later one could take back in turn.
                said_before = (!took_back && !amended).then_some(SaidBefore {
                    text: sent,
                    ops: ops_before,
                    episodes: episodes_before,
                });
            }
            // A take-back the message also restates as a typed statement ("I meant Cambridge,
            // not Boston. I live in Cambridge.") is that statement's correction (its slot or the
            // value it names), not an amendment besides.
            if ops[first..].iter().any(|o| {
                matches!(o.action, Action::Update(_))
                    || (o.action == Action::Add && o.draft.key.is_some() && !keys_a_name(o.draft.key.as_deref()))
            }) {
                let said: Vec<ProposedOp> = ops.drain(first..).collect();
                ops.extend(said.into_iter().filter(|o| !matches!(o.action, Action::Amend(_))));
            }
            let said_nothing = ops.len() == first && episodes.is_empty();
            let told = episodic::merge(std::mem::take(&mut episodes));
            if let Some((draft, plan)) = replacing(told, &called_off, &left, m.at) {
                let action = match plan {
                    Some(plan) => Action::Update(Target::Matching(plan)),
                    None => Action::Add,
                };
                ops.push(ProposedOp { action, draft, sources: vec![m.id.clone()] });
            }
            // "What's your favorite pizza?" … "Pepperoni of course!": the favourite is named
            // by the question, once, unless the reply said it in full itself.
            if let Some(mut draft) = asked
                .filter(|_| message_language.reads_as_english())
                .and_then(|q| preference::answered_favorite(&q.content, &text))
                .filter(|d| ops[first..].iter().all(|o| o.draft.key != d.key))
            {
                draft.valid_from = Some(m.at);
                ops.push(ProposedOp { action: Action::Add, draft, sources: vec![m.id.clone()] });
            }
            // "Are you taking anything else?" … "just the statin for cholesterol. simvastatin i
            // think": an answer naming a medicine says what the user takes, though no sentence
            // of it has a subject. Kept as said, for the safety path to find.
            if said_nothing
                && message_language.reads_as_english()
                && asked.is_some_and(|q| asks_about_health(&q.content))
                && statement_end(&text) > 0
                && crate::safety::constraint_domains(&text).iter().any(|d| d == crate::safety::Domain::Medication)
            {
                let mut draft = Draft::new(Kind::Fact, readable::quote(&text, m.at), 0.8, 0.6);
                draft.surface = Some(crate::kind::Surface::Adapt);
                draft.valid_from = Some(m.at);
                draft.rule = Some("safety.answer".into());
                ops.push(ProposedOp { action: Action::Add, draft, sources: vec![m.id.clone()] });
            }
            if let Some((speaker, line)) = attribution::split_speaker(&m.content) {
                let said: Vec<ProposedOp> = ops.drain(first..).collect();
                ops.extend(said.into_iter().filter_map(|op| attribution::about_speaker(op, speaker, line)));
            }
        }
        ops
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::GateTuning;
    use crate::gate::{Decision, GateContext, judge};
    use crate::id::MessageId;
    use crate::kind::{Kind, Surface};
    use crate::scope::{Layer, Scope};

    /// The test clock: Monday 2 March 2026, 09:00 UTC.
    pub(crate) fn message(id: &str, text: &str) -> Message {
        Message {
            id: MessageId::new(id).unwrap(),
            scope: Scope::parse("t", None, Some("u"), Some("c")).unwrap(),
            role: Role::User,
            content: text.into(),
            at: "2026-03-02T09:00:00Z".parse().unwrap(),
        }
    }

    /// The ops for one user message.
    pub(crate) fn run(text: &str) -> Vec<ProposedOp> {
        HeuristicExtractor.extract(&[message("m1", text)])
    }

    /// The contents of the ops for a user's answer to the assistant's `asked`.
    fn answering(asked: &str, text: &str) -> Vec<String> {
        let mut q = message("m0", asked);
        q.role = Role::Assistant;
        HeuristicExtractor.extract(&[q, message("m1", text)]).into_iter().map(|o| o.draft.content).collect()
    }

    #[test]
    fn a_slip_someone_else_saw_leaves_the_next_sentence_to_correct() {
        let ops = HeuristicExtractor.extract(&[
            message("m0", "My mother has 70 years birthday on 13 June."),
            message("m1", "Wait. Kadri says I mixed it. Birthday party is 20 June, not 13."),
        ]);
        let amend = ops.iter().find(|o| matches!(o.action, Action::Amend(_))).expect("an amendment");
        assert!(amend.draft.content.contains("20 June, not 13"), "{}", amend.draft.content);
        assert!(ops.iter().all(|o| !o.draft.content.contains("Kadri says")), "{}", amend.draft.content);
    }

    #[test]
    fn a_past_said_without_its_t_is_past() {
        let found = contents("i lef de hotel, i is a check in agent at de airport now");
        assert!(found.iter().all(|m| !m.contains("lefs")), "{found:?}");
        assert!(found.iter().any(|m| m.contains("check in agent")), "{found:?}");
        let found = contents("I lef my phone on the bus yesterday");
        assert!(found.iter().any(|m| m.starts_with("User left their phone")), "{found:?}");
    }

    #[test]
    fn an_introduction_without_its_commas_is_read_whole() {
        let found = contents("hey im jodie 23 from walton, work in a nursery");
        for said in ["User's name is Jodie", "User is 23 years old", "User is from Walton"] {
            assert!(found.contains(&said.to_string()), "{found:?}");
        }
        assert!(contents("im on 20 from monday").iter().all(|m| !m.contains("years old")));
    }

    #[test]
    fn a_learners_said_me_is_told_me() {
        let found = contents("The doctor he said me my tension is high, I take amlodipine 5 every morning.");
        assert!(found.iter().all(|m| !m.contains("said User")), "{found:?}");
        assert!(contents("no nurofen neither i spose").iter().all(|m| !m.contains("sposes")));
        let found = contents("My daughter Nadège she is nurse, she say me I must to practice the skills every night.");
        assert!(found.iter().any(|m| m.contains("Nadège")), "{found:?}");
    }

    #[test]
    fn caribbean_i_is_introduces() {
        let found = contents("i is shanice, 31, from oistins");
        assert!(found.contains(&"User's name is Shanice".to_string()), "{found:?}");
        assert!(found.contains(&"User is 31 years old".to_string()), "{found:?}");
    }

    #[test]
    fn a_day_set_against_another_takes_the_old_one_back_whoever_said_it() {
        for (said, old) in [
            ("My brother Pieter says the party is the 13th, not the 6th, the hall was booked for a wedding.", "6th"),
            ("My daughter she tell me the wedding is Saturday 18 July not the 11th.", "11th"),
            ("ei wait, family meeting change am. the funeral now be 21st march not 14th", "14th"),
            ("ach wait, mam's just phoned, dey've moved dad ta da 16th no da 9th, da surgeon's aff", "9th"),
        ] {
            let ops = run(said);
            assert!(ops.iter().any(|o| o.action == Action::Amend(Target::Matching(old.into()))), "{said}: {ops:?}");
            assert!(!ops.iter().any(|o| matches!(o.action, Action::CloseLoop(_))), "{said}: {ops:?}");
        }
        // Owned by no word, it must name the thing it moves (the engine checks): its rule says so.
        let ops = run("I work the 13th, not the 6th.");
        assert!(ops.iter().any(|o| o.draft.rule.as_deref() == Some(super::super::DAY_FOR_DAY_RULE)), "{ops:?}");
        // A name kept on the way stays; a number that is no day takes nothing back this way.
        assert!(
            run("My brother Pieter says the party is the 13th, not the 6th.")
                .iter()
                .any(|o| o.draft.content == "User's brother is named Pieter")
        );
        assert!(super::super::correction::day_for_day("i need 13, not 6 chairs").is_none());
    }

    #[test]
    fn no_longer_said_to_what_the_assistant_said_of_the_user_amends_it() {
        let mut q =
            message("m0", "Got it, so the plan:\n- Dinner at 7\n- You're bringing the dessert from Carluccio's");
        q.role = Role::Assistant;
        let ops =
            HeuristicExtractor.extract(&[q.clone(), message("m1", "no, not anymore, my sister is doing dessert")]);
        assert!(
            ops.iter().any(|o| o.action == Action::Amend(Target::Matching("bringing dessert carluccio".into()))
                && o.draft.content == "On 2026-03-02 User said: \"No, not anymore, my sister is doing dessert\""),
            "{ops:?}"
        );
        // Any other reply, or no restatement to reply to: nothing amended.
        for (asked, reply) in [
            (q.content.as_str(), "no, my sister is doing dessert"),
            ("Any plans for the weekend?", "no, not anymore, the trip fell through"),
        ] {
            let mut a = message("m0", asked);
            a.role = Role::Assistant;
            let ops = HeuristicExtractor.extract(&[a, message("m1", reply)]);
            assert!(ops.iter().all(|o| !matches!(o.action, Action::Amend(_))), "{reply}: {ops:?}");
        }
    }

    #[test]
    fn an_answer_naming_a_medicine_is_kept_as_said() {
        assert_eq!(
            answering("Are you on any other medication at the moment?", "only the blood thinner. warfarin i think"),
            vec!["On 2026-03-02 User said: \"Only the blood thinner. warfarin i think\""]
        );
        // Asked about something else, or naming no medicine: nothing.
        assert!(answering("What did you have for lunch?", "just the statin with a sandwich lol").is_empty());
        assert!(answering("Are you taking anything for it?", "nah just rest").is_empty());
    }

    #[test]
    fn jokes_owned_and_what_would_follow_a_hypothetical_are_not_kept() {
        for text in [
            "I'm selling the house and moving to Bali. Joking.",
            "im dropping out to be a tiktoker lol jk",
            "If I get the promotion I'll buy a boat. My wife would kill me.",
            "if a ever win the lottery am buyin a yacht",
            "No, is joke, I stay.",
            "lol my wife said if this one is a girl she is calling her Beyonce. over my dead body",
            "my flatmate Priya reckons I'll be doing the Isle of Man TT next year. I've told her I'm getting a leather onesie",
        ] {
            let ops = run(text);
            assert!(ops.is_empty(), "{text:?} kept {ops:?}");
        }
        // Going along with it ("Sure I'm …") is part of the joke too.
        let ops = run("my flatmate Priya reckons I'll be on Strictly next year. Sure I'm buying the sequins already");
        assert!(ops.iter().all(|o| !o.draft.content.contains("sequins")), "{ops:?}");
        // A comparison with someone famous is a figure of speech; a plain word after the same
        // adverb is meant.
        for text in [
            "basically I'm Tyson Fury now",
            "I'm literally the next Beckham lol",
            "Im like Gordon Ramsay in the kitchen now",
        ] {
            let ops = run(text);
            assert!(ops.is_empty(), "{text:?} kept {ops:?}");
        }
        assert!(!run("basically I'm vegan now").is_empty());
        // What is said after the joke is meant.
        let ops = run("I'm running off to join the circus. Joking. I start at the bank on Monday.");
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert!(ops[0].draft.content.contains("bank"), "{ops:?}");
    }

    #[test]
    fn held_out_voices_read_as_meant() {
        // "No more" is what the sentence says, not an interjection to drop.
        let got = contents("I started walking every morning at 5. And no more sugar in my tea at all");
        assert!(got.iter().any(|c| c.contains("No more sugar in User's tea")), "{got:?}");
        // Drawn-out interjections lead in like short ones.
        let got = contents("Broooo we went 2-1 at the lan in Dallas");
        assert!(got.iter().any(|c| c.starts_with("User and others went 2-1")), "{got:?}");
        // Questions typed without a question mark.
        assert!(run("shld i double up").is_empty());
        assert!(run("quick q how do i stop tilting in ranked").is_empty());
        assert!(run("yo quick q how do i stop tilting in ranked").is_empty());
        // A condition on someone else asserts nothing.
        assert!(run("if she sleeps thru the nite before im 40 ill get it tattooed on my forehead").is_empty());
        // After a relative of the user's, the user is named, not "them".
        let got = contents("My doctor has me on Lisinopril 10 milligrams since March");
        assert!(got.iter().any(|c| c == "User takes lisinopril 10 milligrams since March"), "{got:?}");
        // Dictated punctuation ends the sentence where it was said; "right," only leads in.
        let got = contents("right comma I went to the allotment yesterday full stop the onions are in comma finally");
        assert!(got.iter().any(|c| c.starts_with("User went to the allotment yesterday")), "{got:?}");
        assert!(got.iter().all(|c| !c.contains("comma") && !c.contains("full stop")), "{got:?}");
        // Lead-ins of a new topic or a polite opening are no part of what is said.
        for (said, starts) in [
            ("Another thing, I got posted to the Lagos office last week.", "User got posted"),
            ("Please I need help to write a speech for my brother wedding.", "User needs help"),
            ("one more thing, the nurse put me on iron tablets for my anaemia.", "The nurse put User on"),
            ("No ma'am me and my brother are keeping the old farm", "User and their brother are keeping"),
            // A state with its "I'm" left out.
            ("Stoked about the new flat in Hove, it has a garden.", "User is stoked about"),
        ] {
            let got = contents(said);
            assert!(got.iter().any(|c| c.starts_with(starts)), "{said}: {got:?}");
        }
        // A message to pass on is no statement about anyone.
        assert!(run("Priya: tell him the keys are under the mat").is_empty());
        assert!(run("Priya: give her my love and say congrats from all of us").is_empty());
        // A number is no place to live: the bus driver moved to route 9.
        let got = contents("moved to the 14 now, earlier starts but done by two");
        assert!(got.iter().all(|c| !c.contains("lives in")), "{got:?}");
        let got = contents("right now I work nights at the depot");
        assert!(got.iter().any(|c| c.to_lowercase().contains("right now")), "'right now' says when: {got:?}");
    }

    #[test]
    fn texting_that_drops_its_i_shouts_or_asks_without_a_question_mark_reads_as_meant() {
        assert_eq!(contents("cant eat bread, am coeliac"), vec!["User is coeliac"]);
        assert_eq!(contents("am 15 so my mum has to sign"), vec!["User is 15 years old"]);
        assert_eq!(contents("I start at 9 am on Mondays"), vec!["User starts at 9 am on Mondays"]);
        assert_eq!(normalise("so am i lol", true), "so am i lol");
        assert_eq!(
            normalise("Now 4 year I am in Birmingham, Small Heath. I am chef.", true),
            "I've been in Birmingham, Small Heath for 4 years. I am chef."
        );
        assert_eq!(
            normalise("Already 7 years I live in Vilnius, my wife is from here", true),
            "I've lived in Vilnius for 7 years, my wife is from here"
        );
        assert_eq!(normalise("2 weeks I am off work", true), "2 weeks I am off work");
        assert_eq!(
            normalise("Keep meaning to get a red torch, the white one wrecks my night vision.", true),
            "I keep meaning to get a red torch, the white one wrecks my night vision."
        );
        assert_eq!(normalise("been meaning to ring the surgery", true), "I've been meaning to ring the surgery");
        assert_eq!(
            normalise("Four years I am working on reception in one hotel in Killarney.", true),
            "I've been working on reception in one hotel in Killarney for four years."
        );
        assert!(
            contents("WE WON THE LEAGUE!!").iter().all(|c| c.contains("won the league")),
            "{:?}",
            contents("WE WON THE LEAGUE!!")
        );
        // Acronyms alone are not shouting.
        assert!(normalise("my GP at the NHS ICU", true).contains("GP at the NHS ICU"));
        // A learner's job without its article is read alone; with more said, the whole is kept.
        assert!(contents("In Gdańsk I am ship engineer in a shipyard.").iter().any(|c| c.contains("a ship engineer")));
        assert!(
            contents("I am piano teacher, I have twelve pupils in my flat in Lyon.")
                .iter()
                .any(|c| c.contains("twelve pupils")),
            "{:?}",
            contents("I am piano teacher, I have twelve pupils in my flat in Lyon.")
        );
        // Texting's "2" is "to" where nothing is counted.
        assert_eq!(
            normalise("ya im alergic 2 kiwis n hav 2 carry my 2 pens", true),
            "ya i'm allergic to kiwis n hav to carry my 2 pens"
        );
        assert_eq!(normalise("got 2 tickets, need 2 book the train", true), "got 2 tickets, need to book the train");
        assert_eq!(
            normalise("i have 2 children n got 2 new puppies, need 2 more days", true),
            "i have 2 children n got 2 new puppies, need 2 more days"
        );
        assert!(contents("tbh im alergic 2 penuts so no satay").iter().any(|c| c.contains("allergic to peanuts")));
        for text in ["abeg how do i get my baby to sleep at night", "pls how do i stop my cat scratching the sofa"] {
            assert!(run(text).is_empty(), "{text:?}: {:?}", run(text));
        }
    }

    #[test]
    fn a_favourite_given_as_the_answer_to_the_question_is_kept() {
        assert_eq!(
            answering(
                "What's your favorite pizza?",
                "Pepperoni of course! An amazing combination of spicy salami and cheese."
            ),
            vec!["User's favorite pizza is Pepperoni"]
        );
        assert!(
            answering("So what's your favourite cuisine?", "Thai, definitely")
                .contains(&"User's favorite cuisine is Thai".to_string())
        );
        assert!(
            answering("Love that! What are your favorite bands?", "Oh, Radiohead and Portishead")
                .contains(&"User's favorite bands are Radiohead and Portishead".to_string())
        );
        // No answer, or one that says it in full already: nothing read against the question.
        for reply in
            ["Hard to pick just one!", "Not sure, what's yours?", "I don't really have one", "Too many to count lol"]
        {
            assert!(answering("What's your favorite movie?", reply).iter().all(|c| !c.contains("favorite")), "{reply}");
        }
        assert_eq!(
            answering("What's your favorite movie?", "My favorite movie is Alien.")
                .iter()
                .filter(|c| c.contains("favorite"))
                .count(),
            1
        );
        // Asked of someone else's favourite, or not as the turn's last question: no answer of the user's.
        assert!(answering("What's your mum's favorite flower?", "Tulips!").iter().all(|c| !c.contains("favorite")));
        assert!(
            answering("What's your favorite movie? Mine is Alien, by the way.", "Jaws!")
                .iter()
                .all(|c| !c.contains("favorite"))
        );
    }

    #[test]
    fn a_rule_capture_whose_object_stood_in_the_turn_before_is_not_kept() {
        // "these" were in the photo the other speaker saw; "it" in the turn before.
        for text in ["I enjoy the taste of these.", "I'm so excited to give it a try!", "I love going there."] {
            let ops = run(text);
            assert!(ops.iter().all(|o| !o.draft.content.starts_with("User")), "{text:?} kept {ops:?}");
        }
        // Named, the same capture stays.
        assert!(run("I enjoy the taste of ginger snaps.").iter().any(|o| o.draft.content.contains("ginger snaps")));
    }

    #[test]
    fn a_texted_question_is_no_statement() {
        assert_eq!(contents("wat do i get my nan for her 80th shes impossible to buy for"), Vec::<String>::new());
        assert_eq!(contents("wut should i cook tonight"), Vec::<String>::new());
    }

    #[test]
    fn an_answer_about_someone_else_is_no_memory_about_the_user() {
        let asked = "aw that's lovely. what's your nan into these days?";
        assert_eq!(answering(asked, "gardening n bingo n shouting at the telly"), Vec::<String>::new());
        let asked = "A 90th is a big one! What does she like doing?";
        assert_eq!(answering(asked, "baking n crosswords mostly"), Vec::<String>::new());
        // Said in the first person, it is about the user whatever it answers.
        assert!(!answering(asked, "No idea, I haven't seen her since I moved to Leeds.").is_empty());
        // A question about the user's own weekend leaves the answer theirs.
        let mine = answering("How was your weekend?", "Went hiking in the Peak District with the kids.");
        assert!(!mine.is_empty());
        assert_eq!(mine, contents("Went hiking in the Peak District with the kids."));
    }

    /// The contents of the ops for one user message.
    pub(crate) fn contents(text: &str) -> Vec<String> {
        run(text).into_iter().map(|o| o.draft.content).collect()
    }

    /// The value proposed for `key`, if any op carries it.
    pub(crate) fn keyed(text: &str, key: &str) -> Option<String> {
        run(text).into_iter().find(|o| o.draft.key.as_deref() == Some(key)).and_then(|o| o.draft.value)
    }

    /// Asserts that the message yields no op at all.
    pub(crate) fn none(text: &str) {
        let ops = run(text);
        assert!(ops.is_empty(), "{text:?} should yield nothing, got {ops:#?}");
    }

    /// Asserts that no rule family reads anything into the message: at most episodic capture
    /// keeps it as what the user said ("I forgot my keys again" is no forget request).
    pub(crate) fn only_episodes(text: &str) {
        for op in run(text) {
            let episodic = op.action == Action::Add
                && matches!(op.draft.kind, Kind::Event | Kind::Fact)
                && op.draft.confidence == crate::extract::episodic::CONFIDENCE;
            assert!(episodic, "{text:?}: no rule should read it, got {op:#?}");
        }
    }

    /// Asserts that whatever the message yields, the gate writes none of it.
    pub(crate) fn nothing_written(text: &str) {
        let ctx = GateContext { owner_layer: Some(Layer::User), ..Default::default() };
        for op in run(text) {
            let d = judge(&op, &ctx, &GateTuning::default());
            assert!(!matches!(d, Decision::Write { .. }), "{text:?}: {op:?} would be written");
        }
    }

    #[test]
    fn every_op_carries_kind_scores_surface_and_sources() {
        let ops = HeuristicExtractor.extract(&[
            message("m1", "Hi! My name is Dana. I'm a backend engineer at a fintech startup."),
            Message { role: Role::Assistant, ..message("a1", "My name is Bot and I live in the cloud.") },
            message("m2", "I have a dog named Biscuit. I need to call my mom this weekend."),
            message("m3", "Called my mom last night! I'm exhausted today."),
        ]);
        let got: Vec<(&str, &str)> = ops.iter().map(|o| (o.sources[0].as_str(), o.draft.content.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("m1", "User's name is Dana"),
                ("m1", "User is a backend engineer at a fintech startup"),
                ("m2", "User has a dog named Biscuit"),
                ("m2", "User needs to call mom this weekend"),
                ("m3", "User called mom"),
                ("m3", "User is feeling exhausted today"),
                // The call closes the loop and is also kept as what happened, dated.
                ("m3", "User called mom last night"),
            ]
        );
        for op in &ops {
            assert!(op.draft.confidence > 0.0 && op.draft.salience > 0.0, "{op:?}");
            assert!(Surface::ALL.contains(&op.draft.effective_surface()));
            assert_eq!(op.sources.len(), 1);
        }
        assert_eq!(ops[4].action, Action::CloseLoop(Target::Matching("call mom mum mother".into())));
        assert_eq!(ops[5].draft.kind, Kind::Ephemeral);
    }

    #[test]
    fn everything_the_gate_would_see_passes_its_floors() {
        let ctx = GateContext { owner_layer: Some(Layer::User), ..Default::default() };
        for text in [
            "My name is Dana.",
            "I'm a backend engineer at a fintech startup.",
            "I have a dog named Biscuit.",
            "Please keep your answers short.",
            "Never mention my ex-husband.",
            "I need to call my mom this weekend.",
            "I'm exhausted today.",
            "My account id is ACME-4471.",
            "Our prod database is Postgres 16 in us-east-1.",
            "we call him Captain Fluff",
            "I love hiking in the mountains.",
        ] {
            let ops = run(text);
            assert!(!ops.is_empty(), "{text}");
            for op in ops {
                let d = judge(&op, &ctx, &GateTuning::default());
                assert!(matches!(d, Decision::Write { .. }), "{text}: {op:?} → {d:?}");
            }
        }
    }

    #[test]
    fn questions_hypotheticals_and_others_are_not_statements() {
        for s in [
            "do you like hiking?",
            "what's my name?",
            "What is my name",
            "Where do I live?",
            "If I were a teacher I'd be stricter",
            "if it goes badly I'm faking my own death and moving to Reykjavik",
            "If the weather holds we're having a barbecue on Saturday",
            "Imagine I lived in Paris",
            "I don't live in Paris",
            "My friend thinks I'm a designer",
            "hi there, how are you?",
            "ok thanks",
            "lol",
            "Can you explain how closures work?",
            "```\nI live in Lisbon\n```",
            "> I love hiking",
        ] {
            none(s);
        }
        // Someone else's taste is theirs, never the user's.
        assert_eq!(contents("my sister loves jazz"), vec!["User's sister loves jazz"]);
        // A statement followed by a question keeps the statement.
        assert_eq!(contents("I live in Lisbon, any tips for cafés?"), vec!["User lives in Lisbon"]);
    }

    #[test]
    fn me_for_my_in_british_and_irish_speech() {
        assert_eq!(contents("me sister got engaged at the weekend"), vec!["User's sister got engaged at the weekend"]);
        let got = contents("the cold on the site gets into me hands something rotten");
        assert!(got.iter().all(|c| !c.contains("them hands")), "{got:?}");
        // "me" that is the user, not theirs, stays the user.
        let got = contents("Dee: they're putting me back on days from May");
        assert!(got.iter().all(|c| !c.contains("Dee's back")), "{got:?}");
        let got = contents("Me, I prefer the night shift at the depot");
        assert!(got.iter().all(|c| !c.contains("User's")), "{got:?}");
        let got = contents("the foreman gave me a lift to the depot");
        assert!(got.iter().all(|c| !c.contains("User's a")), "{got:?}");
        // A pair's verb stays the pair's.
        let got = contents("Marek and I are doing the Edinburgh marathon in May");
        assert!(got.iter().all(|c| !c.contains(" ares ") && !c.contains("User are")), "{got:?}");
        // What opened the word stays before it.
        let got = contents("Biscuit (my dog) is 9 and on joint tablets from the vet");
        assert!(got.iter().any(|c| c.contains("(User's dog)")), "{got:?}");
        // "and I" later on opens a clause of its own: the verb agrees with the user.
        let got = contents("the physio says two more weeks and I go back to full training");
        assert!(got.iter().all(|c| !c.contains("User go ")), "{got:?}");
    }

    #[test]
    fn a_question_typed_without_its_mark_is_no_part_of_the_statement() {
        let got = contents("started at the chippy on friday, do i need my own whites");
        assert!(got.iter().any(|c| c.contains("chippy")) && got.iter().all(|c| !c.contains("whites")), "{got:?}");
        let got = contents("my lad's got his first tooth through, is he early");
        assert!(got.iter().all(|c| !c.contains("early")), "{got:?}");
        // A statement that goes on past "and" is still one.
        let got = contents("I repainted the hallway and it looks great");
        assert!(got.iter().any(|c| c.contains("looks great")), "{got:?}");
    }

    #[test]
    fn an_allergy_in_a_clause_of_its_own_holds_beside_a_condition() {
        let got = contents(
            "also dont recommend me no z pack if i ever ask bout a cold, im allergic to azithromycin, hives all over",
        );
        assert!(got.iter().any(|c| c.contains("allergic to azithromycin")), "{got:?}");
        // Reported, it is still someone else's word.
        nothing_written("my sister keeps saying if I eat prawns I'm allergic to them");
        nothing_written("my sister says if I eat prawns, I'm allergic to them");
    }

    #[test]
    fn a_fact_told_before_a_condition_is_kept_and_what_hangs_on_it_is_not() {
        // The condition is about what comes after it; the allergy before it is the user's.
        let got = contents("I'm allergic to sulfa drugs, so if my chest gets bad again what can I take");
        assert!(got.iter().any(|c| c.contains("allergic to sulfa")), "{got:?}");
        let got = contents(
            "I've been on nights at the depot for six years, if they change the rota will I lose my allowance",
        );
        assert!(got.iter().any(|c| c.contains("nights at the depot")), "{got:?}");
        // What comes before an "if" with no break is what the condition belongs to.
        let got = contents("The neighbours keep telling me if the roof is done I can claim it back.");
        assert!(got.iter().all(|c| !c.contains("telling")), "{got:?}");
        // What only holds on the condition stays held back with it, whichever comes first.
        for said in [
            "I'll hand my notice in if they move me to nights again",
            "I would sell the van if I could get a decent price",
            "If I pass my driving test, I'm getting a motorbike",
            "if we win the raffle, we're off to Lanzarote",
        ] {
            none(said);
        }
    }

    #[test]
    fn a_transcript_speaker_label_is_not_part_of_the_message_but_says_whom_it_is_about() {
        assert_eq!(without_speaker("Caroline: I live in Lisbon"), "I live in Lisbon");
        assert_eq!(without_speaker("Note to self: buy milk"), "Note to self: buy milk");
        assert_eq!(contents("Caroline: I live in Lisbon"), vec!["Caroline lives in Lisbon"]);
    }

    #[test]
    fn naming_someone_keeps_what_the_sentence_says_of_them() {
        let got = contents("my sister Lucia is getting married in June");
        assert!(got.contains(&"User's sister is named Lucia".to_string()), "{got:?}");
        // What happens is theirs: the memory opens on them.
        assert!(got.contains(&"Lucia (User's sister) is getting married in June".to_string()), "{got:?}");
        // Texting's names for relatives are written out.
        let got = contents("my sis is getting the same tattoo for her 18th");
        assert_eq!(got, vec!["User's sister is getting the same tattoo for her 18th"]);
        let got = contents("my cuz has his senior heat at golden shears on 5 march, hes stoked");
        assert!(got.iter().any(|c| c.starts_with("User's cousin has his senior heat")), "{got:?}");
        // "cuz" after anything but "my" is because.
        let got = contents("my mum always rings me cuz she worries about the drive");
        assert!(got.iter().all(|c| !c.contains("cousin")), "{got:?}");
        let got = contents("my hubby Dev starts at the fire station monday");
        assert!(got.iter().any(|c| c.starts_with("Dev (User's husband) starts")), "{got:?}");
        let got = contents("My partner Tom is vegetarian.");
        assert!(got.iter().any(|c| c.contains("Tom (User's partner) is vegetarian")), "{got:?}");
        // Their thing, not them: the sentence stays as it is.
        assert!(contents("My brother Sam's band played at the fair.").iter().all(|c| !c.contains("(brother)")));
        // "God rest his soul" names nobody.
        let got = contents("My father, God rest his soul, was a carpenter.");
        assert!(!got.iter().any(|c| c.contains("named God")), "{got:?}");
        // A name alone is one memory, not two.
        assert_eq!(contents("I have a dog named Biscuit."), vec!["User has a dog named Biscuit"]);
    }

    #[test]
    fn a_misspelt_allergy_takes_the_safety_path() {
        assert_eq!(keyed("im alergic to penicilin lol", "allergy:penicillin").as_deref(), Some("penicillin"));
    }

    #[test]
    fn health_said_in_fragments_typos_or_a_learners_words_takes_the_safety_path() {
        for (text, key, value) in [
            ("cant do dairy. lactose intolrant", "health:lactose_intolerant", "lactose intolerant"),
            ("cant do dairy. lactose intolrant", "diet:no_dairy", "no"),
            ("Unfortunately, I cannot have gluten, so no pizza for me.", "diet:no_gluten", "no"),
            ("In clinic I can use only nitrile gloves, I am allergic on latex.", "allergy:latex", "latex"),
            ("nothing w crazy rgb tbh i got epilepsey so flashy lights r a no go", "health:epilepsy", "epilepsy"),
            ("doctor says i have diabetis type 2 now", "health:type_2_diabetes", "type 2 diabetes"),
            ("I'm type 1 diabetic", "health:type_1_diabetes", "type 1 diabetes"),
            ("I've been diagnosed with coeliac disease", "health:coeliac", "coeliac disease"),
            ("nuts r fine. peanuts NOT. carry an epipen", "health:epipen", "yes"),
            ("coeliac btw", "health:coeliac", "coeliac"),
            ("Also i have high pressure since two years", "health:high_blood_pressure", "high blood pressure"),
            ("I've got a heart condition, nothing too strenuous please", "health:heart_condition", "heart condition"),
            ("i was diagnosed with crohns in 2019", "health:crohns", "Crohn's"),
            ("i got chrones, on humira shots every other week", "health:crohns", "Crohn's"),
            ("my excema is peak rn on my hands", "health:eczema", "eczema"),
            ("Also I have hepatitis B, from Mongolia", "health:hepatitis_b", "hepatitis B"),
            ("also im properly asthmatic, dust sets me off", "health:asthma", "asthma"),
            (
                "I am having diabetes type 2, taking metformin 500 two times daily",
                "health:type_2_diabetes",
                "type 2 diabetes",
            ),
            ("im suffering from asthma since i was small", "health:asthma", "asthma"),
            ("I have sugar, so no sweets please", "health:diabetes", "diabetes"),
            ("I am having sugar, type 2 diabetes, since 2019", "health:type_2_diabetes", "type 2 diabetes"),
            ("I can't eat gluten, coeliac", "health:coeliac", "coeliac"),
            ("i have adhd, on aderall xr 10mg but it wears off by like 3", "health:adhd", "adhd"),
            ("important. me allergy plaster, sticky one. skin go red, blister.", "allergy:plaster", "plaster"),
            ("I've got glaucoma in my left eye", "health:glaucoma", "glaucoma"),
            ("I am having gastritis from long time", "health:gastritis", "gastritis"),
            ("i was diagnosed with sleep apnea last year", "health:sleep_apnea", "sleep apnea"),
        ] {
            assert_eq!(keyed(text, key).as_deref(), Some(value), "{text:?}");
        }
        // The state named, but not as the user's: no health memory.
        for text in [
            "Coeliac disease runs in my family",
            "my sister keeps saying I am lactose intolerant",
            "is it true that asthmatic kids grow out of it?",
            "If I were diabetic I would know",
            "my dad has high blood pressure",
            "I have high hopes for the heart of the team",
            "I'm having a baby in March",
            "I have sugar in my tea",
            "I'm having sugar-free jelly",
            "My friend Sam, coeliac and proud of it, bakes with rice flour",
        ] {
            assert!(
                run(text).iter().all(|o| !o.draft.key.as_deref().unwrap_or_default().starts_with("health:")),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_clause_after_a_typed_statement_is_news_of_its_own() {
        let said = |text: &str| run(text).into_iter().map(|o| o.draft.content).collect::<Vec<_>>();
        let ops = said("I teach maths at a school in Preston, and last month I ran the Manchester marathon.");
        assert!(ops.iter().any(|c| c.contains("maths at a school in Preston")), "{ops:?}");
        assert!(ops.iter().any(|c| c.starts_with("User ran the Manchester marathon")), "{ops:?}");
        let ops = said("I have an old shoulder injury from rugby, so I take naproxen 250 mg when it flares.");
        assert!(ops.iter().any(|c| c.contains("shoulder injury from rugby")), "{ops:?}");
        assert!(ops.iter().any(|c| c == "User takes naproxen 250 mg"), "{ops:?}");
        let ops = said("Hello, I am Nilufar, 52 years, I have a bakery in Tooting.");
        assert!(ops.iter().any(|c| c == "User has a bakery in Tooting"), "{ops:?}");
        let ops = said("Me I am doing a plumbing course at the college.");
        assert_eq!(ops, vec!["User is doing a plumbing course at the college"]);
        let ops = said("My name is Teodor and I repair boilers in Gdansk, plus I keep bees at weekends.");
        assert!(ops.iter().any(|c| c.contains("keep bees") || c.contains("keeps bees")), "{ops:?}");
        // What only says more of the statement, or leans on it, is not; nor a topic alone.
        let topic = said("Question about my knee.");
        assert!(topic.is_empty(), "{topic:?}");
        for text in ["I live in Hexham, near my brother.", "I'm allergic to latex, it brings me out in a rash."] {
            assert_eq!(said(text).len(), 1, "{text:?}: {:?}", said(text));
        }
    }

    #[test]
    fn reported_speech_is_not_a_self_statement() {
        for t in [
            "my boss said I'm lazy lol",
            "My wife say I love the tree more than her, haha",
            "mum thinks I should move to Leeds",
            "my sister keeps saying I am allergic to cats",
            "my friend Kat says I'm a pushover",
            "my teacher mrs okafor said im overthinking it lol",
            "she also said the client thinks I'm the best account manager",
            "my brother reckons ill be knackered by the second lap",
            "she also still thinks I'm vegetarian, which I haven't been since 2019",
            "Says I'm the best on fish on the whole south coast",
        ] {
            nothing_written(t);
        }
    }

    #[test]
    fn a_subject_said_twice_is_said_once() {
        assert_eq!(
            contents("My brother he works in a bank in Tabriz."),
            vec!["User's brother works in a bank in Tabriz"]
        );
        let got = contents("my aunt Leila she is teaching piano since ten years");
        assert!(got.iter().any(|c| c == "Leila (User's aunt) is teaching piano since ten years"), "{got:?}");
        // Someone else's words about a third person keep their pronoun.
        let got = contents("My boss said he is leaving the company in May.");
        assert!(got.iter().all(|c| !c.contains("boss is leaving")), "{got:?}");
    }

    #[test]
    fn another_language_is_archived_never_read_by_english_rules() {
        for t in [
            "Me llamo Lucía y vivo en Valencia.",
            "El mes que viene me mudo a Madrid con mi novio.",
            "Ich heiße Jonas, ich wohne in Hamburg und mein Hund heißt Bello.",
            "Je m'appelle Claire, je suis allergique aux arachides.",
            "Mi chiamo Marco e non mangio carne.",
            "Servus! I sing seit zwei Jahren im Kirchenchor in Rosenheim, im Alt.",
            "Eu moro em Lisboa com a minha irmã.",
        ] {
            none(t);
        }
        // An English sentence in a mixed message is still read.
        assert_eq!(contents("Hola! Estoy bien. I live in Valencia now."), vec!["User lives in Valencia"]);
    }

    #[test]
    fn contractions_and_curly_quotes_are_understood() {
        assert_eq!(contents("im a nurse"), vec!["User is a nurse"]);
        assert_eq!(contents("I\u{2019}m a nurse"), vec!["User is a nurse"]);
        assert_eq!(contents("i dont like olives"), vec!["User dislikes olives"]);
        // Texting drops the apostrophe of "I'll" and "she's" too; "ill" elsewhere is unwell.
        assert_eq!(
            normalise("Ill ask my mum tonight. ill be there by 6", true),
            "I'll ask my mum tonight. I'll be there by 6"
        );
        assert_eq!(normalise("shes into museums, im more food", true), "she's into museums, i'm more food");
        assert_eq!(normalise("I was ill all week", true), "I was ill all week");
        assert_eq!(normalise("im so ill just lying here", true), "i'm so ill just lying here");
        assert_eq!(normalise("so ill be doin the dinners that week", true), "so I'll be doin the dinners that week");
        assert_eq!(normalise("tired and ill, be back later", true), "tired and ill, be back later");
        assert_eq!(normalise("tired and ill still", true), "tired and ill still");
        assert_eq!(normalise("Ill again today, staying in", true), "Ill again today, staying in");
    }

    #[test]
    fn a_subject_said_twice_is_said_once_but_an_object_before_a_new_clause_stays() {
        assert_eq!(normalise("My father he went back to Iran", true), "My father went back to Iran");
        assert_eq!(normalise("so my sister Mai she is the cook", true), "so my sister Mai is the cook");
        let said = "im a carer for my dad he has dementia";
        assert!(normalise(said, true).contains("my dad he has dementia"), "{}", normalise(said, true));
    }

    #[test]
    fn a_habit_given_up_is_let_go_and_kept_as_news() {
        let ops = run("I gave up drinking in 2021 and haven't looked back");
        assert!(ops.iter().any(|o| matches!(o.action, Action::Forget(_))), "{ops:#?}");
        let said: Vec<&str> = ops.iter().map(|o| o.draft.content.as_str()).collect();
        assert!(said.iter().any(|c| c.starts_with("User gave up drinking in 2021")), "{said:?}");
        // A letting go of another kind keeps only what follows it.
        assert!(!contents("I'm not vegan anymore, I eat fish now").iter().any(|c| c.contains("not vegan")));
    }

    #[test]
    fn a_clause_on_been_after_the_users_own_has_its_ive_back() {
        assert_eq!(
            normalise("I'm from Lagos originally but been in Manchester 10 years", true),
            "I'm from Lagos originally but I've been in Manchester 10 years"
        );
        // Only after a sentence the user opened: the sister's "been" stays hers.
        let said = "My sister moved to Leeds and been happy since";
        assert_eq!(normalise(said, true), said);
    }

    #[test]
    fn a_named_relatives_occasion_is_theirs_with_the_left_out_possessive() {
        assert_eq!(
            normalise("My sister Selam wedding is Ginbot 16 in our calendar", true),
            "My sister Selam's wedding is Ginbot 16 in our calendar"
        );
        assert_eq!(
            normalise("ok so my brother Dev graduation is next friday", true),
            "ok so my brother Dev's graduation is next friday"
        );
        // Already said, or no name between: unchanged.
        for said in ["my sister Selam's wedding is in May", "my sister wedding is in May", "my son Always party"] {
            assert_eq!(normalise(said, true), said);
        }
        // A clause on "been" after the user's own has dropped its "I've".
        let found = contents("My sister Selam wedding is Ginbot 16, I think this is May 24 for you.");
        assert!(found.iter().any(|c| c.contains("wedding")), "{found:?}");
    }

    #[test]
    fn hedged_statements_are_less_sure() {
        let sure = run("I live in Lisbon")[0].draft.confidence;
        let hedged = run("I think I live in Lisbon now")[0].draft.confidence;
        assert!(hedged < sure * 0.8, "{hedged} vs {sure}");
    }

    #[test]
    fn an_allergy_said_as_its_reaction_or_after_what_it_is_to_is_typed() {
        for (text, want) in [
            ("also amoxicillin blows me up like a balloon lol", "User is allergic to amoxicillin"),
            ("Shellfish brings me out in hives.", "User is allergic to shellfish"),
            ("also im alergic to penicilin bro, found out last year", "User is allergic to penicillin"),
            ("I react badly to latex gloves", "User is allergic to latex"),
            ("no prawns in mine please, I'm allergic", "User is allergic to prawns"),
            ("Also I cannot eat peanut, I have allergy since child.", "User is allergic to peanut"),
            ("no nuts for me, I've got a severe allergy", "User is allergic to nuts"),
            ("I have a cat allergy so no sleepovers at Jo's", "User is allergic to cat"),
            // A second allergen after "and also": its own memory.
            ("I am allergic to penicillin and also to sesame, so no tahini in my life.", "User is allergic to sesame"),
            (
                "I am allergic to penicillin and also to sesame, so no tahini in my life.",
                "User is allergic to penicillin",
            ),
        ] {
            assert!(contents(text).iter().any(|c| c == want), "{text}: {:?}", contents(text));
        }
        // Nor is the animal an allergy names a pet of the user's.
        assert!(contents("I have a cat allergy").iter().all(|c| !c.contains("has a cat")));
        // A reaction to what is no allergen, or "allergic" with nothing named, types nothing.
        for text in ["running gives me a rash on my thighs", "I'm allergic, I think"] {
            assert!(contents(text).iter().all(|c| !c.contains("allergic to")), "{text}: {:?}", contents(text));
        }
    }

    #[test]
    fn a_learners_name_without_its_verb_is_a_name_and_tiredness_is_none() {
        assert_eq!(keyed("My name Thuy, I work in a bakery", "name").as_deref(), Some("Thuy"));
        assert_eq!(keyed("my name tag fell off", "name"), None);
        let got = contents("I'm tired, 20 hours awake");
        assert!(got.iter().all(|c| !c.contains("years old") && !c.contains("name")), "{got:?}");
        let got = contents("im exhausted, 12 hour shift");
        assert!(got.iter().all(|c| !c.contains("years old")), "{got:?}");
    }

    #[test]
    fn a_sorry_before_a_date_and_a_learners_wrong_date_take_the_date_back() {
        for text in [
            "sorry 14 june, the venue changed it",
            "Sorry I tell wrong date. Wedding is 9 October, my aunt tell me now.",
        ] {
            let ops = run(text);
            assert!(
                ops.iter().any(|o| matches!(o.action, Action::Amend(Target::Latest(ValueShape::Date)))),
                "{text}: {ops:#?}"
            );
        }
        // With the old value named, that value is what it amends.
        let ops = run("sorry the 3rd, not the 2nd");
        assert!(ops.iter().any(|o| o.action == Action::Amend(Target::Matching("2nd".into()))), "{ops:#?}");
        // Sorry for something else is no take-back.
        let ops = run("sorry 2 late, traffic was awful");
        assert!(ops.iter().all(|o| !matches!(o.action, Action::Amend(_))), "{ops:#?}");
    }

    #[test]
    fn a_self_introduction_says_each_part_of_the_user() {
        let got = contents("im Seamus, retired postman from Athlone, 68 this year");
        for want in
            ["User's name is Seamus", "User is 68 years old", "User is a retired postman", "User is from Athlone"]
        {
            assert!(got.iter().any(|c| c == want), "{want}: {got:?}");
        }
        let got = contents("My name is Amara, 34, from Lagos, a nurse");
        for want in ["User's name is Amara", "User is 34 years old", "User is from Lagos", "User is a nurse"] {
            assert!(got.iter().any(|c| c == want), "{want}: {got:?}");
        }
        // A greeting after the name is no description.
        assert_eq!(contents("Hi I'm Jo, nice to meet you"), vec!["User's name is Jo"]);
        let said = normalise("I'm Ruth, 61, school cook in Wigan, retiring at Easter", true);
        assert_eq!(said, "I'm Ruth. I'm 61. I'm school cook in Wigan. I'm retiring at Easter");
        assert_eq!(normalise("I'm Jo, nice to meet you", true), "I'm Jo, nice to meet you");
        // A name after a place goes on naming the place, never the user.
        assert_eq!(
            normalise("I am Karwan, from Sulaymaniyah, Kurdistan. 34 age.", true),
            "I am Karwan. I'm from Sulaymaniyah, Kurdistan. 34 age."
        );
        let got = contents("Hi. I am Rasa, 38, from Lithuania, Panevėžys. I work in warehouse");
        assert!(got.iter().all(|c| !c.contains("name is Panev")), "{got:?}");
        assert!(got.iter().any(|c| c == "User's name is Rasa"), "{got:?}");
        assert_eq!(normalise("I'm Jo, Leeds born and bred", true), "I'm Jo, Leeds born and bred");
        // A name with the kind of place it is goes on naming the place; a whereabouts with no
        // verb is no "I'm …".
        assert_eq!(
            normalise("I am Gurpreet, 38, from Jagraon side, Ludhiana district.", true),
            "I am Gurpreet. I'm 38. I'm from Jagraon side, Ludhiana district."
        );
        let got = contents("keith here, 61, toftwood just outside dereham.");
        assert!(got.iter().all(|c| !c.starts_with("User is toftwood")), "{got:?}");
    }

    #[test]
    fn a_geordie_av_before_what_was_done_is_i_have() {
        assert_eq!(
            normalise("An av packed in working for dennis, gone on me own now", true),
            "And I've packed in working for dennis, gone on my own now"
        );
        assert_eq!(normalise("av got a new van", true), "I've got a new van");
        assert_eq!(normalise("the av club meets on friday", true), "the av club meets on friday");
    }

    #[test]
    fn a_dialects_me_before_what_the_user_has_is_my() {
        assert_eq!(normalise("on amlodipine 5mg for me blood presure", true), "on amlodipine 5mg for my blood presure");
        assert_eq!(normalise("doc upped me amlodipine to 10mg", true), "doc upped my amlodipine to 10mg");
        assert_eq!(normalise("Went to me mam's for tea", true), "Went to my mam's for tea");
        assert_eq!(normalise("had me bp done at the chemist", true), "had my bp done at the chemist");
        assert_eq!(normalise("she got me tickets for the match", true), "she got me tickets for the match");
        for said in [
            "the doctor gave me amlodipine",
            "can you help me move",
            "she came with me yesterday",
            "it makes me happy",
            "that was for me too",
            "they talk to me like a child",
            "Something awesome happened to me last Thursday",
            "look what life has thrown for me right now haha",
            "they are more important to me than anything",
            "she's always with me while I write",
        ] {
            assert_eq!(normalise(said, true), said);
        }
    }

    #[test]
    fn the_spouse_said_with_the_is_the_users_and_a_name_keeps_its_wat() {
        assert_eq!(contents("the wife wants a new kitchen"), vec!["User's wife wants a new kitchen"]);
        assert!(
            contents("our kid Josh has his driving test on the 20th")
                .iter()
                .any(|c| c == "User's brother is named Josh")
        );
        assert_eq!(
            normalise("Passport also I have to renew, it is expiring in June.", true),
            "I also have to renew my passport, it is expiring in June."
        );
        assert_eq!(contents("the hubby is off work this week"), vec!["User's husband is off work this week"]);
        assert_eq!(normalise("the wife of my neighbour", true), "the wife of my neighbour");
        assert!(normalise("we had doro wat for dinner", true).contains("doro wat"));
        assert!(normalise("visited Wat Arun", true).contains("Wat Arun"));
        assert_eq!(normalise("idk wat to get him", true), "idk what to get him");
        assert_eq!(normalise("wat do u think", true), "what do u think");
        assert_eq!(
            normalise("me n my missus lookin at buyin in baldivis", true),
            "me n my missus looking at buying in baldivis"
        );
        assert_eq!(normalise("my cousin robin is in", true), "my cousin robin is in");
        assert_eq!(normalise("Startin' my own biz", true), "Starting my own biz");
        assert_eq!(normalise("Robin is here", true), "Robin is here");
    }

    #[test]
    fn chat_leads_questions_and_routines_are_not_what_is_kept() {
        assert_eq!(contents("fyi I start the new job on monday"), vec!["User starts the new job on monday"]);
        assert_eq!(
            contents("heads up, I'm away the first week of august"),
            vec!["User is away the first week of august"]
        );
        // A question for the listener is answered in the chat.
        for text in [
            "i want to make a question about my visa",
            "I have a few questions",
            "I wanted to know about selling my caravan",
        ] {
            none(text);
        }
        none("I have a question about my visa");
        // A routine is a fact of the user's days, not a loop one doing closes.
        for (text, want) in [
            ("I have to take the bins out every tuesday", "User has to take the bins out every tuesday"),
            ("I need to be at the depot by 6 every morning", "User needs to be at the depot by 6 every morning"),
        ] {
            let ops = run(text);
            assert!(ops.iter().all(|o| o.draft.kind != Kind::OpenLoop), "{text}: {ops:?}");
            assert!(ops.iter().any(|o| o.draft.content == want), "{text}: {ops:?}");
        }
        let ops =
            run("I am doing security guard job in one office in Canary Wharf, night duty, four night in one week.");
        assert!(ops.iter().all(|o| o.draft.kind != Kind::OpenLoop), "{ops:?}");
        // A routine elsewhere in the sentence leaves a dated appointment dated.
        let ops = run("I have a dentist appointment on friday, and I walk the dog every morning");
        assert!(ops.iter().any(|o| o.draft.kind == Kind::OpenLoop && o.draft.due_at.is_some()), "{ops:?}");
        // Without its article an appointment is still one, dated.
        let ops = run("Reminder I have dentist on friday at 3");
        assert!(
            ops.iter().any(|o| o.draft.kind == Kind::OpenLoop && o.draft.content == "User has dentist on friday at 3"),
            "{ops:?}"
        );
        // A note to self that opens on a verb is a task.
        assert_eq!(
            contents("Note to self: renew the car insurance before the 20th"),
            vec!["User asked to be reminded to renew the car insurance before the 20th"]
        );
    }

    #[test]
    fn secrets_are_never_proposed() {
        nothing_written("my api key is sk-proj-abcdefghijklmnopqrstuvwxyz");
        none("My card is [redacted card_number] and my password is [redacted password].");
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_safe(text in "\\PC{0,200}") {
            let _ = run(&text);
        }

        #[test]
        fn any_chatty_text_is_safe(words in proptest::collection::vec(proptest::sample::select(vec![
            "I", "i'm", "my", "name", "is", "Dana", "not", "anymore", "forget", "about", "call", "me", "mom", "on",
            "Friday", "by", "March", "15", "never", "mention", "the", "a", "love", "hate", "switched", "to", "from",
            "Vim", "Neovim", "we", "our", "database", "is", "Postgres", "'", ",", ".", "?", "!", "Ä", "İ", "ß", "é",
            "called", "last", "night", "need", "remind", "tomorrow", "feeling", "tired", "today", "dog", "named",
        ]), 0..30)) {
            let _ = run(&words.join(" "));
        }
    }

    #[test]
    fn extractor_identity() {
        assert_eq!(HeuristicExtractor.name(), "heuristic");
        assert_eq!(HeuristicExtractor.version(), "2");
    }

    /// Every wanted memory is among what `text` proposes.
    fn has_all(text: &str, wanted: &[&str]) {
        let got = contents(text);
        for w in wanted {
            assert!(got.iter().any(|c| c == w), "{text}: want {w:?} in {got:?}");
        }
    }

    #[test]
    fn introductions_in_more_voices() {
        has_all(
            "bout ye. clodagh here, 34, hairdresser in a salon on the lisburn rd.",
            &["User's name is Clodagh", "User is 34 years old", "User is a hairdresser in a salon on the lisburn rd"],
        );
        has_all("hey cher its rodney, 58, i run a shrimp boat out of delcambre", &["User's name is Rodney"]);
        has_all(
            "Good morning. I am Selvi, working as maths teacher in one CBSE school in Velachery.",
            &["User's name is Selvi", "User is a maths teacher in one CBSE school in Velachery"],
        );
        let got = contents("Afternoon. I'm Maureen, 60, retired from Royal Mail last year.");
        assert!(got.iter().any(|c| c.starts_with("User retired from Royal Mail")), "{got:?}");
        // A part that goes on with the one before is no description of its own.
        let got = contents("im Kezia, 38, RN at Mt Hope, ward 6.");
        assert!(got.iter().all(|c| c != "User is ward 6" && !c.contains("User is ward")), "{got:?}");
        // "it's" introduces only after a greeting.
        assert!(contents("hey its raining again").iter().all(|c| !c.contains("name")));
        has_all("hiya my name is Alfie I'm 13", &["User's name is Alfie"]);
        // After the name, a part with a verb of its own or a count is said as it was.
        let got = contents(
            "evening. emyr here, 63, got a hill farm above tregaron, 410 ewes on the hill, lambing starts next week.",
        );
        assert!(
            got.iter()
                .all(|c| !c.contains("User is got") && !c.contains("User is 410") && !c.contains("User is lambing")),
            "{got:?}"
        );
        has_all("Hello, I am Zuzana, I am from Prešov in Slovakia, I have 29 years.", &["User is 29 years old"]);
        assert!(contents("I have 3 years experience").iter().all(|c| !c.contains("years old")));
    }

    #[test]
    fn agreement_where_the_verb_already_agrees_or_is_none() {
        let got = contents("I does take it with my tea in the morning");
        assert!(got.iter().any(|c| c.contains("User does take")), "{got:?}");
        let got = contents("well i done sold the boat last week");
        assert!(got.iter().any(|c| c.contains("User has sold the boat")), "{got:?}");
        let got = contents("Now I and wife live with our daughter in Tbilisi.");
        assert!(got.iter().all(|c| !c.contains("ands")), "{got:?}");
        // "has given me topiramate": the user is given the medicine, it is not theirs yet.
        let got = contents("The neurologist has given me topiramate, every day 25 mg, to prevent the migraine.");
        assert!(got.iter().all(|c| !c.contains("User's topiramate")), "{got:?}");
        // Pidgin's markers before a verb take no -s.
        let got = contents("also i don comot from uber sha. i dey drive for NHS patient transport now");
        assert!(got.iter().all(|c| !c.contains("dons") && !c.contains("deys")), "{got:?}");
        // "no" before a thing is what the sentence says.
        let got = contents("no tattoo, my wife vetoed it");
        assert!(got.iter().any(|c| c.starts_with("No tattoo")), "{got:?}");
        // A reason alone is no memory.
        let got =
            contents("The doctor change my medicine, now Colchicin 1,5 mg, because I had 2 attacks in the summer.");
        assert!(got.iter().all(|c| !c.starts_with("Because")), "{got:?}");
    }

    #[test]
    fn take_backs_said_as_replies() {
        for said in [
            "no it's the 27th he just told me",
            "actually its the 8th of March, just checked the email",
            "Sorry no, today the midwife say 29 September, she measure again.",
        ] {
            let ops = run(said);
            assert!(
                ops.iter().any(|o| matches!(o.action, Action::Amend(Target::Latest(ValueShape::Date)))),
                "{said}: {ops:#?}"
            );
        }
        for said in ["Actually it's Friday already", "no I'm free on Saturday"] {
            let ops = run(said);
            assert!(ops.iter().all(|o| !matches!(o.action, Action::Amend(_))), "{said}: {ops:#?}");
        }
        // What follows the correction in the message goes with it.
        let ops = run("No, I write wrong. 18 July is birthday of his bride. Wedding is 11 July, Saturday.");
        let amend: Vec<&ProposedOp> = ops.iter().filter(|o| matches!(o.action, Action::Amend(_))).collect();
        assert_eq!(amend.len(), 1, "{ops:#?}");
        assert!(amend[0].draft.content.contains("Wedding is 11 July"), "{ops:#?}");
    }

    #[test]
    fn health_said_as_learners_and_texters_say_it() {
        has_all("Also I have allergy on novocaine, dentist almost kill me.", &["User is allergic to novocaine"]);
        has_all(
            "I have blood pressure, I am taking Cardiomagnyl every morning and Lorista.",
            &["User has high blood pressure", "User takes cardiomagnyl every morning", "User takes lorista"],
        );
        assert!(contents("I have blood pressure check tomorrow").iter().all(|c| !c.contains("high blood pressure")));
        has_all("I am taking Foracort inhaler two times daily.", &["User takes foracort inhaler two times daily"]);
        has_all("an I on levothyroxin 75 for thyroid", &["User takes levothyroxine 75 for thyroid"]);
        has_all(
            "He stopped Cardiomagnyl, now I take Xarelto 20 in the evening.",
            &["User no longer takes cardiomagnyl", "User takes xarelto 20 in the evening"],
        );
        has_all(
            "doc took me off the allopurnol an put me on febuxostat",
            &["User no longer takes allopurinol (switched to febuxostat)", "User takes febuxostat"],
        );
        let got = contents("I cannot take chloroquine, my body will be scratching me seriously");
        assert!(got.iter().any(|c| c.starts_with("User cannot take chloroquine")), "{got:?}");
        assert!(contents("I can't take the bus today").iter().all(|c| !c.contains("cannot take")));
    }

    #[test]
    fn work_said_in_more_ways() {
        has_all("I got transfer to our Coimbatore branch from June.", &["User works at their Coimbatore branch"]);
        has_all(
            "I got work with one private construction company in Abuja.",
            &["User works at a private construction company in Abuja"],
        );
        has_all(
            "im running a fishing charter out of cypremort point now",
            &["User runs a fishing charter out of cypremort point"],
        );
        has_all("I pass!!! I am CNA now.", &["User is a CNA"]);
    }

    #[test]
    fn other_people_keep_their_days() {
        has_all(
            "Keith's having his knee replaced on the 2nd of June.",
            &["Keith is having his knee replaced on the 2nd of June"],
        );
        assert!(contents("Mum's having a bad day today").iter().all(|c| c != "User is having a bad day"));
        assert!(contents("Tesco's doing a deal on Friday").iter().all(|c| !c.starts_with("Tesco is")));
        has_all("Our daughter is born! Lina, 26 September.", &["User just had a baby daughter"]);
    }

    #[test]
    fn loose_intentions_are_loops() {
        let loops = |t: &str| -> Vec<String> {
            run(t).into_iter().filter(|o| o.draft.kind == Kind::OpenLoop).map(|o| o.draft.content).collect()
        };
        assert_eq!(
            loops("I keep meaning to join the county beekeepers' association, I'll get round to it."),
            vec!["User has been meaning to join the county beekeepers' association"]
        );
        assert_eq!(loops("Some day I will book the dentist."), vec!["User plans to book the dentist"]);
        assert!(loops("I'll be rich one day lol").is_empty());
        assert_eq!(
            loops("ill ring the derm nurse at some point n ask i guess"),
            vec!["User plans to ring the derm nurse at some point and ask"]
        );
        assert_eq!(
            loops("Passport also I have to renew, it is expiring in June."),
            vec!["User needs to renew their passport in June"]
        );
    }
}
