//! Identity: name, job, employer, home, family, pets, age, relationship, allergies.
//!
//! Profile slots are keyed (`name`, `job`, `employer`, `home`, `hometown`, `age`, `birthday`,
//! `relationship`, `family:<relation>`, `allergy:<what>`) so a later statement supersedes an
//! earlier one. People and pets a user can have several of are keyed with their name too
//! (`family:sister:emma`, `pet:dog:biscuit`): a second dog is not a correction of the first.

use regex::Captures;

use super::lex::{
    article, head, is_not_a_name, is_unique_relation, phrase, relation_key, species_key, species_singular,
    third_person, title, title_words,
};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::memory::Sensitivity;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;
use regex::Regex;
use std::sync::OnceLock;

fn profile(content: String, conf: f32, sal: f32) -> Draft {
    Draft::new(Kind::Profile, content, conf, sal)
}

/// A name as the user wrote it, or None when it is a common word ("my name is not important").
fn name_of(x: &str) -> Option<String> {
    let x = ["actually ", "really ", "just ", "officially ", "now ", "still "].iter().fold(x.trim_start(), |acc, p| {
        if acc.to_ascii_lowercase().starts_with(p) { acc[p.len()..].trim_start() } else { acc }
    });
    let first = x.split_whitespace().next()?;
    if is_not_a_name(first) || first.len() < 2 && !first.eq_ignore_ascii_case("a") {
        return None;
    }
    // "my name is Alfie I'm 13": the user's "I" opens what comes next, it is no surname.
    let x = match x.split_once(char::is_whitespace) {
        Some((one, rest)) if rest.trim().split(['\'', '\u{2019}']).next() == Some("I") => one,
        _ => x,
    };
    let x = x.trim_end_matches(|c: char| !c.is_alphanumeric());
    let x = x.strip_suffix("'s").unwrap_or(x);
    (!x.is_empty()).then(|| title_words(x))
}

/// Greetings before a bare name ("hi, Dana here").
pub(super) const GREETINGS: &[&str] = &[
    "alright",
    "bout",
    "evening",
    "greetings",
    "hello",
    "hey",
    "heya",
    "hi",
    "hiya",
    "howdy",
    "howya",
    "hullo",
    "morning",
    "salaam",
    "salam",
    "sup",
    "wassup",
    "yo",
];

/// Whether the words before `start` (or the previous sentence) greet: "hi, i'm sam".
fn greeted(s: &Sentence<'_>, start: usize) -> bool {
    let first = |t: &str| t.split(|c: char| !c.is_alphanumeric()).find(|w| !w.is_empty()).map(str::to_lowercase);
    let here = first(&s.text[..start]).is_some_and(|w| GREETINGS.contains(&w.as_str()));
    let before =
        s.text[..start].trim().is_empty() && s.prev.and_then(first).is_some_and(|w| GREETINGS.contains(&w.as_str()));
    here || before
}

/// Phrases after "I live in" that are no place ("the moment", "denial").
pub(super) const NOT_PLACES: &[&str] = &[
    "a bubble",
    "a flat",
    "a house",
    "a van",
    "an apartment",
    "denial",
    "fear",
    "harmony",
    "hell",
    "here",
    "hope",
    "it",
    "my car",
    "my head",
    "peace",
    "sin",
    "that",
    "the apartment",
    "the area",
    "the city",
    "the flat",
    "the future",
    "the house",
    "the moment",
    "the now",
    "the past",
    "the present",
    "the same",
    "there",
    "this",
];

/// Last words of a phrase after "moved to" that name a place at work or in a ranking, not a
/// home ("moved to the QA team", "the Leeds office", "nights", "Year 10").
const NOT_HOME_HEADS: &[&str] = &[
    "branch",
    "channel",
    "class",
    "days",
    "department",
    "dept",
    "desk",
    "division",
    "grade",
    "group",
    "league",
    "level",
    "nights",
    "office",
    "phase",
    "plan",
    "position",
    "project",
    "role",
    "server",
    "set",
    "shift",
    "site",
    "squad",
    "stage",
    "store",
    "team",
    "tier",
    "unit",
    "version",
    "ward",
    "warehouse",
    "year",
];

/// Trims a place phrase: "Lisbon, near the river" → "Lisbon", "Berlin with my wife" → "Berlin".
fn place(x: &str, s: &Sentence<'_>) -> Option<String> {
    let mut p = head(x).to_string();
    for sep in [
        " with ",
        " for ",
        " near ",
        " by ",
        " close to ",
        " next to ",
        " since ",
        " in a ",
        " in an ",
        " on a ",
        " and ",
        " at the moment",
        " in the end",
        " at last",
        " right now",
        " these days",
        " at ",
        " where ",
        " from ",
        " originally",
        " now",
        " already",
    ] {
        if let Some(i) = p.to_ascii_lowercase().find(sep) {
            p.truncate(i);
        }
    }
    // "in Glendale 11 years", as a learner says how long: the span is no part of the place.
    static SPAN: OnceLock<Regex> = OnceLock::new();
    let span = SPAN.get_or_init(|| Regex::new(r"(?i)\s+\d+\s+(?:years?|yrs?|months?)$").expect("span regex"));
    if let Some(m) = span.find(&p) {
        p.truncate(m.start());
    }
    let p = super::lex::strip_times(p.trim_end_matches(|c: char| !c.is_alphanumeric()));
    // "the QA team", "the Leeds office": somewhere at work, not a home (nor is the month after
    // it, "the data team in March", a place).
    let head_of = |p: &str| p.split(" in ").next().unwrap_or_default().to_ascii_lowercase();
    if head_of(&p).split_whitespace().last().is_some_and(|w| NOT_HOME_HEADS.contains(&w)) {
        return None;
    }
    // "a small flat in Manchester": the named place is what matters.
    let p = match p.rfind(" in ") {
        Some(i)
            if ["a ", "an ", "the "].iter().any(|a| p.to_ascii_lowercase().starts_with(a))
                && p[i + 4..].starts_with(char::is_uppercase) =>
        {
            p[i + 4..].to_string()
        }
        _ => p,
    };
    let lower = p.to_ascii_lowercase();
    if p.is_empty() || NOT_PLACES.contains(&lower.as_str()) || p.split_whitespace().count() > 5 {
        return None;
    }
    // "we've moved to Wednesdays", "moved to nights": a time, not a place.
    let first = lower.trim_start_matches("the ").split_whitespace().next().unwrap_or_default();
    let day = first.trim_end_matches('s');
    if super::when::WEEKDAYS.split('|').any(|d| d == day)
        || matches!(
            first,
            "weekends" | "weekdays" | "nights" | "days" | "mornings" | "evenings" | "afternoons" | "lates" | "earlies"
        )
    {
        return None;
    }
    // "moved to the 9 now" (a bus route, a shift, a team): a place is named in words.
    let mut named = lower.split_whitespace().filter(|w| !matches!(*w, "the" | "a" | "an" | "number"));
    if named.all(|w| !w.contains(char::is_alphabetic)) {
        return None;
    }
    let capitalised = p.starts_with(|c: char| c.is_uppercase())
        || (lower.starts_with("the ") && p[4..].starts_with(|c: char| c.is_uppercase()));
    let described = ["a ", "an ", "the "].iter().any(|a| lower.starts_with(a)) && p.split_whitespace().count() >= 3;
    // Typed all in lower case, a named place is written as it is named ("manchester" →
    // "Manchester"), so it is one place with the same place typed with capitals.
    let p = if s.lowercase && !described { place_name(&p) } else { p };
    (capitalised || s.lowercase || described).then(|| third_person(&p))
}

/// The home `text` names as had or given ("gave us a new flat in Stepney Green", "got a
/// two-bed place in Toxteth"), for a move told after it without a destination ("We moved in
/// last week"). A friend's house ("my sister's new house in Leeds") names none of the user's.
fn new_home_named(text: &str, s: &Sentence<'_>) -> Option<String> {
    static HOME: OnceLock<Regex> = OnceLock::new();
    let home = HOME.get_or_init(|| {
        super::lex::expand(
            r"(?xi)
                \b(?:(?P<det>a|an|our|my|the)\s+)?
                (?:(?:new|own|first|lovely|little|nice|small|big|bigger|smaller|council|rented|shared|ground|top|floor
                    |\w+-bed(?:room)?|\d+\s*bed(?:room)?)\s+)*
                (?:flat|house|home|place|apartment|bungalow|condo|unit|terrace|cottage|room|\d+[\s-]*bed(?:room)?)
                \s+(?:over\s+|up\s+|down\s+|out\s+)?(?P<prep>in|at)\s+<PLACE>
            ",
        )
    });
    home.captures_iter(text)
        .filter(|c| c.get(0).is_some_and(|m| the_users(&text[..m.start()], cap(c, "det").unwrap_or_default())))
        // "a flat at the end of the road" names no place; "the flat at Beech Court" does.
        .filter(|c| {
            cap(c, "prep").is_some_and(|p| p.eq_ignore_ascii_case("in"))
                || cap(c, "x").is_some_and(|x| x.trim_start().starts_with(char::is_uppercase))
        })
        .filter_map(|c| place(cap(&c, "x").unwrap_or_default(), s))
        .last()
}

/// The place a described home is in, with how it lies there: "moved to a little village
/// outside York" → ("outside", "York"), "moved into a flat in Clifton" → ("in", "Clifton").
/// `None` when no place follows the home ("moved into a bigger flat").
fn described_home(text: &str) -> Option<(String, String)> {
    static HOME: OnceLock<Regex> = OnceLock::new();
    let home = HOME.get_or_init(|| {
        Regex::new(
            r"(?xi)
                \b(?:to|into)\s+(?:a|an|my|our|new|the\s+new|another)\s+(?:[\w'-]+\s+){0,3}?
                (?:flat|house|home|place|apartment|bungalow|condo|unit|terrace|cottage|room|village|town|suburb
                    |estate|farm|farmhouse|street|neighbourhood|neighborhood|area|city|studio|houseboat)
                \s+(?P<prep>in|near|outside(?:\s+of)?|just\s+outside(?:\s+of)?)\s+(?P<x>[^,.;!?]+)
            ",
        )
        .expect("described home regex")
    });
    let c = home.captures(text)?;
    let prep = tidy(&c.name("prep")?.as_str().to_lowercase());
    Some((prep.trim_end_matches(" of").to_string(), c.name("x")?.as_str().to_string()))
}

/// Whether a home named after `before` with determiner `det` is the user's: theirs by its
/// word ("our new place"), by a first-person word before it ("gave us a flat"), or with the
/// subject left out ("finally got a council flat in …"); "My brother bought a house" is not.
fn the_users(before: &str, det: &str) -> bool {
    let lower = before.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).collect();
    matches!(det.to_lowercase().as_str(), "our" | "my")
        || words.iter().any(|w| matches!(*w, "i" | "we" | "us" | "me" | "our"))
        || words
            .iter()
            .find(|w| {
                !matches!(**w, "so" | "yeah" | "well" | "finally" | "just" | "and" | "then" | "at" | "last" | "oh")
            })
            .is_some_and(|w| {
                matches!(*w, "got" | "found" | "bought" | "rented" | "signed" | "were" | "been" | "offered")
            })
}

/// Words after "moved" that make it something moved, not a move of home.
const OBJECTS: &[&str] = &[
    "his",
    "her",
    "their",
    "my",
    "our",
    "its",
    "it",
    "them",
    "him",
    "me",
    "us",
    "your",
    "everything",
    "stuff",
    "things",
    "all",
];

/// Whether a job said after "like" is a learner's "as" ("I work like pastry chef", "a job like
/// junior engineer"): a role named bare. "I work like a dog", "like crazy" say how, not what.
fn learners_like(c: &Captures<'_>) -> bool {
    if !cap(c, "as").is_some_and(|a| a.eq_ignore_ascii_case("like")) {
        return true;
    }
    let first = c
        .name("role")
        .or_else(|| c.name("job"))
        .map(|m| m.as_str().split_whitespace().next().unwrap_or_default().to_lowercase())
        .unwrap_or_default();
    // The role names a job in its first words ("pastry chef", "junior engineer in …"); "like
    // clockwork", "like nobody's business" name none.
    static JOB: OnceLock<Regex> = OnceLock::new();
    let job = JOB.get_or_init(|| super::lex::expand(r"\b<JOB>s?\b"));
    let head: String = c
        .name("role")
        .or_else(|| c.name("job"))
        .map(|m| m.as_str().split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    if !job.is_match(&head) {
        return false;
    }
    let before = c.get(0).map_or("", |m| m.as_str()).to_lowercase();
    // The article the role pattern may have eaten ("a job like a real adult").
    let article = before.contains(" like a ") || before.contains(" like an ") || before.contains(" like the ");
    !article
        && !matches!(
            first.as_str(),
            "a" | "an"
                | "the"
                | "crazy"
                | "mad"
                | "hell"
                | "nuts"
                | "that"
                | "this"
                | "it"
                | "there"
                | "always"
                | "usual"
                | "normal"
                | "everyone"
                | "everybody"
                | "anyone"
                | "mine"
                | "yours"
                | "before"
        )
}

/// A place typed in lower case as it is written: each word capitalised ("new york" → "New
/// York"), the linking words left small ("the lake district" → "the Lake District", "newcastle
/// upon tyne"), and a two-letter name in capitals ("the uk" → "the UK", "la" → "LA").
fn place_name(p: &str) -> String {
    p.split_whitespace()
        .map(|w| match w {
            "the" | "of" | "upon" | "on" => w.to_string(),
            _ if w.len() == 2 && w.chars().all(|c| c.is_ascii_alphabetic()) => w.to_ascii_uppercase(),
            _ => title(w),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words after a greeting or "I'm" that are no name ("hi all", "I'm back").
pub(super) const NOT_HERE: &[&str] = &[
    "all", "anyone", "back", "cheers", "come", "ditto", "down", "everyone", "get", "go", "hello", "hey", "hi", "in",
    "just", "look", "looky", "me", "no", "nobody", "nothing", "now", "ok", "okay", "out", "over", "right", "same",
    "see", "sit", "sorry", "stay", "still", "stop", "thank", "thanks", "up", "wait", "welcome", "whoa", "wow", "yes",
    "you",
];

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "identity.pronoun-name",
            Mode::Statement,
            &["name", "called", "named"],
            r"^\s*(?:(?:and\s+)?(?:his|her|its|their)\s+name(?:'s|\s+is)|(?:he|she|it)(?:'s|\s+is)\s+(?:called|named))\s+(?P<x><NAMEI>)",
            |c, s| {
                // "We got a kitten! Her name is Pumpkin.": the name belongs to the creature or
                // person the previous sentence introduced.
                static NOUN: OnceLock<Regex> = OnceLock::new();
                let noun = NOUN.get_or_init(|| {
                    Regex::new(
                        r"(?xi)
                            \b(
                                # a pet
                                kitten | puppy | dog | cat | bunny | rabbit | hamster | parrot | bird | horse
                                | fish | turtle | guinea\x20pig
                                # a child
                                | baby | son | daughter | boy | girl | niece | nephew | grandson | granddaughter
                            )s?\b
                        ",
                    )
                    .expect("referent regex")
                });
                let Some(prev) = s.prev else { return Vec::new() };
                let Some(referent) = noun.find_iter(prev).last().map(|m| m.as_str().to_lowercase()) else {
                    return Vec::new();
                };
                let Some(name) = cap(c, "x").and_then(name_of) else { return Vec::new() };
                let family = ["baby", "son", "daughter", "boy", "girl", "niece", "nephew", "grandson", "granddaughter"];
                let key = if family.contains(&referent.as_str()) {
                    format!("family:{referent}:{}", name.to_lowercase())
                } else {
                    format!("pet:{referent}:{}", name.to_lowercase())
                };
                vec![Found::add(profile(format!("User's {referent} is named {name}"), 0.85, 0.8).keyed(key, name))]
            },
        ),
        Rule::new(
            "identity.name-explicit",
            Mode::Statement,
            &["name"],
            r"(?x)
                # e.g. My full name is Theodora Blackwood.
                (?:
                    \b(?:
                        my\s+name\s+is\s+actually
                        | my\s+(?:full\s+|first\s+|real\s+|actual\s+|given\s+|good\s+)?name\s+is
                        | my\s+name's
                        | the\s+name's
                    )
                    | ^\s*name's
                )
                \s+(?P<x><NAMEI>)
                # A learner's My name Hoa: without the verb, only a capital says it is a name.
                | \bmy\s+name\s+(?P<y>(?-i:[A-Z][a-z'-]+))\b
            ",
            |c, _| {
                let Some(name) = cap(c, "x").or(cap(c, "y")).and_then(name_of) else { return Vec::new() };
                vec![Found::add(profile(format!("User's name is {name}"), 0.9, 0.9).keyed("name", name))]
            },
        ),
        Rule::new(
            "identity.name-intro",
            Mode::Statement,
            &["i'm", "i am", "this is", "here", "it's", "its", "it is"],
            r"(?x)
                # e.g. Hey there, I'm Marisol.
                (?:
                    \b(?:hi|hey|hello|hiya|yo|greetings|heya|howdy|morning|evening)[,!.]?\s+
                    # a word to whoever reads it: hey there, hi all, hey cher
                    (?:(?:there|all|everyone|guys|folks|mate|cher|yall|y'all|bro|fam|hun|babe)[,!.]?\s+)?
                    (?:(?:this\s+is|it's|its|it\s+is)\s+)?
                    | ^
                    | [,;:!.]\s*
                    | \band\s+
                )
                (?:(?:i'm|i\s+am)\s+)?(?P<x><NAME>|(?-i:[a-z])[\w'-]*)(?P<after>'s|\s+here\b|[\w'-]*)
            ",
            |c, s| {
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let after = cap(c, "after").unwrap_or_default().to_lowercase();
                if NOT_HERE.contains(&cap(c, "x").unwrap_or_default().to_lowercase().as_str()) {
                    return Vec::new();
                }
                // "shes here!! poppy mae, born monday": a pronoun with its verb, someone else
                // arriving, never a name.
                let x_lower = cap(c, "x").unwrap_or_default().to_lowercase().replace('\u{2019}', "'");
                let (head, _) = x_lower.split_once('\'').unwrap_or((&x_lower, ""));
                if matches!(head, "she" | "he" | "it" | "they" | "we" | "you" | "who" | "what" | "there" | "that")
                    || matches!(x_lower.as_str(), "shes" | "hes" | "theyre" | "were" | "youre" | "thats" | "theres")
                {
                    return Vec::new();
                }
                // "hey cher its rodney, 58": after a greeting, "it's" introduces too.
                let greeted_its = ["it's ", "its ", "it is "].iter().any(|w| whole.contains(w))
                    && GREETINGS.iter().any(|g| whole.starts_with(g));
                let introduced =
                    whole.contains("i'm ") || whole.contains("i am ") || whole.contains("this is ") || greeted_its;
                if after == "'s" || !(introduced || after.trim() == "here") {
                    return Vec::new();
                }
                let x = cap(c, "x").unwrap_or_default();
                if x.starts_with(char::is_lowercase) {
                    // Without capitals a name needs a greeting before it ("hey! i'm sam"), or
                    // an age after it, as people introduce themselves ("im cian, 17, doin the
                    // leavin", "wayne here, 56").
                    let xl = x.to_lowercase();
                    let greeting =
                        ["hi", "hey", "hello", "hiya", "yo", "heya", "howdy"].iter().any(|g| whole.starts_with(g));
                    let rest = s.text[c.get(0).map_or(0, |m| m.end())..].trim_start();
                    // The number alone, an age of ten or more: not "im off, 10 mins".
                    let age_first = |r: &str| {
                        let digits = r.chars().take_while(char::is_ascii_digit).count();
                        let after = r[digits..].trim_start();
                        digits == 2 && !r.starts_with('0') && (after.is_empty() || after.starts_with([',', '.', ';']))
                    };
                    // "im bri btw 26, shift manager": the chat's "btw" before it.
                    let after_btw = rest.strip_prefix("btw").map(|r| r.trim_start_matches(',').trim_start());
                    let aged = rest.strip_prefix(',').map(str::trim_start).is_some_and(age_first)
                        || after_btw.is_some_and(age_first);
                    // "wayne here, 56, fish crab out of twillingate" opens the message the way a
                    // signature does; its parts were split off as sentences of their own.
                    let signed = after.trim() == "here"
                        && c.get(0).is_some_and(|m| s.text[..m.start()].trim().is_empty())
                        && (rest.is_empty() || rest.starts_with(['.', '!']))
                        && !super::lex::is_relation_word(&xl)
                        && !super::lex::is_pet_word(&xl);
                    let aged = (aged || signed)
                        && !crate::text::is_stopword(&xl)
                        && !xl.ends_with("ing")
                        && !xl.ends_with("ed");
                    let mood = super::lex::MOODS.split('|').any(|m| m.trim() == xl);
                    // Its age straight after shows a name even where the message has a capital
                    // elsewhere ("im nadia, 20, … work at shoppers in STC").
                    if (!s.lowercase && !aged)
                        || mood
                        || !(greeting || aged || greeted(s, c.get(0).map_or(0, |m| m.start())))
                    {
                        return Vec::new();
                    }
                }
                // "I'm ADHD", "I'm OK": all-capital words are not names.
                if x.len() > 1 && x.chars().all(|c| !c.is_lowercase()) {
                    return Vec::new();
                }
                let end = c.get(0).map_or(0, |m| m.end());
                let next = s.text[end..].trim_start().to_lowercase();
                // "I'm Canadian", "I'm Dana's mom", "I'm Google certified": not a name.
                if !(next.is_empty()
                    || next.starts_with([',', '.', '!', ';', '-', ':', '('])
                    || next.starts_with("and ")
                    || next.starts_with("from ")
                    || next.starts_with("by the way")
                    || next.starts_with("btw"))
                {
                    return Vec::new();
                }
                let Some(name) = name_of(x) else { return Vec::new() };
                vec![Found::add(profile(format!("User's name is {name}"), 0.8, 0.9).keyed("name", name))]
            },
        ),
        Rule::new(
            "identity.name-age-signed",
            Mode::Statement,
            &[","],
            r"(?x)
                # e.g. Evening. Dean, 43, Coventry.  (a message signed at its top: name, age, place)
                ^\s*(?P<x>(?-i:[A-Z][a-z'-]+)),\s*(?P<n>[1-9]\d)\s*(?:,\s*(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*)){0,2})?\s*[.!]?\s*$
            ",
            |c, s| {
                // Only opening the message, or after a greeting: "Tom, 12." in the middle of a
                // chat is more likely a child named.
                if !(s.prev.is_none() || greeted(s, 0)) {
                    return Vec::new();
                }
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.to_lowercase();
                if super::lex::is_relation_word(&xl) || super::lex::is_pet_word(&xl) || super::lex::NOT_NAMES.contains(&xl.as_str())
                {
                    return Vec::new();
                }
                let Some(name) = name_of(x) else { return Vec::new() };
                let Ok(age) = cap(c, "n").unwrap_or_default().parse::<u32>() else { return Vec::new() };
                vec![
                    Found::add(profile(format!("User's name is {name}"), 0.8, 0.9).keyed("name", name)),
                    Found::add(profile(format!("User is {age} years old"), 0.85, 0.6).keyed("age", age.to_string())),
                ]
            },
        ),
        Rule::new(
            "identity.family-fact",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. My older brother works as a firefighter in Leeds.
                \b(?:my|our)\s+(?:
                    (?:
                        little | big | older | younger | baby | twin | eldest | oldest | youngest | new
                        | late | amazing | lovely
                    )
                    \s+
                )?
                (?P<rel><REL>)(?:,?\s+(?P<nm><NAME>),?)?\s+(?P<v>
                    is\s+an?
                    | is\s+(?:now\s+)?(?:working|studying|living|allergic|married|engaged|pregnant|retired)
                    | works
                    | lives
                    | loves
                    | likes
                    | hates
                    | enjoys
                    | teaches
                    | studies
                    | plays
                    | has\s+(?:a|an|two|three)
                    | just\s+(?:got|started|moved|turned)
                    | recently\s+(?:got|started|moved)
                    | got\s+(?:married|engaged|a\s+new)
                    | moved
                    | turned
                    | turns
                    | goes\s+to
                    | attends
                    | speaks
                    | runs
                    | owns
                    | is\s+\d{1,2}(?:\s+years?\s+old)?
                )
                (?:\s+(?P<rest><CLAUSE>))?
            ",
            |c, s| {
                let rel = cap(c, "rel").unwrap_or_default();
                let rest = cap(c, "rest").unwrap_or_default();
                let rl = rest.to_lowercase();
                if rl.starts_with("called") || rl.starts_with("named") {
                    return Vec::new();
                }
                if s.lowercase && cap(c, "nm").is_some() {
                    return Vec::new();
                }
                let v = tidy(cap(c, "v").unwrap_or_default());
                let rest = match phrase(rest) {
                    Some(r) => format!(" {r}"),
                    None if v.starts_with("is ") && v[3..].starts_with(|c: char| c.is_ascii_digit()) => String::new(),
                    None => return Vec::new(),
                };
                let who = match cap(c, "nm").and_then(name_of) {
                    Some(n) => format!("User's {} {n}", rel.to_lowercase()),
                    None => format!("User's {}", rel.to_lowercase()),
                };
                vec![Found::add(profile(format!("{who} {v}{rest}"), 0.75, 0.6))]
            },
        ),
        Rule::new(
            "identity.family-named",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. My daughter is called Ines.
                \b(?:my|our)\s+(?:
                    (?:
                        little | big | older | younger | baby | twin | eldest | oldest | youngest | new
                        | late | sweet | rescue | old
                    )
                    \s+
                )?
                (?P<rel><REL>|<SPECIES>)(?:
                    's\s+name\s+is
                    | \s+is\s+(?:called|named)
                    | \s+goes\s+by
                    | \s+named
                    | \s+called
                    | \s+'s\s+called
                )
                \s+(?P<x><NAMEI>)
            ",
            |c, s| named_relation(c, s, true),
        ),
        Rule::new(
            "identity.family-is-name",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. My husband is Raj.
                \b(?:my|our)\s+(?:
                    (?:little|big|older|younger|baby|twin|eldest|oldest|youngest|new)\s+
                )?
                (?P<rel><REL>|<SPECIES>|<BREED>)\s+is\s+(?P<x><NAME>)(?:$|\s*[,.;!?]|\s+(?:and|not|btw|by\s+the\s+way)\b)
            ",
            |c, s| {
                if s.lowercase {
                    return Vec::new();
                }
                named_relation(c, s, false)
            },
        ),
        Rule::new(
            "identity.family-appositive",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. My cousin, Priya, is visiting next month.
                \b(?:my|our)\s+(?:
                    (?:
                        little | big | older | younger | baby | twin | eldest | oldest | youngest | new
                        | late | sweet | rescue | old
                    )
                    \s+
                )?
                (?P<rel><REL>|<SPECIES>),?\s+(?P<x><NAME>)
            ",
            |c, s| {
                if s.lowercase {
                    return Vec::new();
                }
                named_relation(c, s, false)
            },
        ),
        Rule::new(
            "identity.name-then-relation",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. And yup, I do- Oscar, my guinea pig. He's been great.
                (?:^|[,;:!.\-]\s*|\b(?:and|yes|yup|yeah|meet)\s+)
                (?P<x><NAME>),\s+(?:my|our)\s+
                (?:(?:little|big|older|younger|baby|twin|eldest|oldest|youngest|new|late|sweet|rescue|old)\s+)?
                (?P<rel><REL>|<SPECIES>)\s*(?:[,.!;]|$)
            ",
            |c, s| {
                // "Thanks, my friend!", "Sorry, my love": a reply word, not a name.
                let x = cap(c, "x").unwrap_or_default().to_lowercase();
                if s.lowercase || NOT_HERE.contains(&x.as_str()) || super::episodic::LEADS.contains(&x.as_str()) {
                    return Vec::new();
                }
                named_relation(c, s, false)
            },
        ),
        Rule::new(
            "identity.pet-lowercase",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. my dog biscuit hates the rain (a message typed all in lower case)
                \b(?:my|our)\s+(?:(?:little|big|old|new|sweet|rescue|baby|lil)\s+)?
                (?P<rel><SPECIES>)\s+(?P<x>[a-z][a-z'-]+)\s+
                (?P<v>is|was|has|had|just|always|never|still|keeps|kept|got|gets|ate|eats|does|did
                    |won't|wont|can't|cant|doesn't|doesnt|didn't|didnt|[a-z]+(?:s|ed))\b
            ",
            |c, s| {
                // Typed in lower case, a name has no capital to tell it: the word after "my dog"
                // is one when a verb follows it, and it is neither a verb itself nor the other
                // half of a compound ("my dog food is …", "my cat litter smells").
                let x = cap(c, "x").unwrap_or_default();
                if !s.lowercase || looks_like_a_verb(x) || PET_COMPOUNDS.contains(&x) || crate::text::is_stopword(x) {
                    return Vec::new();
                }
                named_relation(c, s, true)
            },
        ),
        Rule::new(
            "identity.have-pets-kids",
            Mode::Statement,
            &["have", "got", "adopted", "rescued"],
            r"(?x)
                # e.g. We have two cats named Miso and Tofu.
                \b(?:i|we)(?:'ve|\s+have)?\s+(?:(?:just|recently|also|finally|now)\s+)*(?:have|got|adopted|rescued|'ve\s+got|have\s+got)\s+(?P<n>a|an|one|two|three|four|five|six|\d+)\s+(?:
                    (?:
                        little | big | old | young | new | rescue | senior | beautiful | cute | adorable
                        | lovely | grown | wonderful | amazing | teenage | adult | black | white | grey
                        | gray | brown | ginger | orange | fluffy | tiny | huge | sweet | crazy | lazy
                        | chocolate | yellow
                    )
                    \s+
                )*
                (?P<what>
                    <BREED> | <SPECIES> | kids | children | sons? | daughters? | brothers?
                    | sisters? | siblings | grandkids | grandchildren | boys | girls
                )
                \b(?:
                    ,?\s+(?:(?:named|called)\s+|:\s*)?(?P<names>
                        (?-i:[A-Z])[\w'-]*(?:(?:,\s*|\s+and\s+|,\s+and\s+|\s*&\s*)(?-i:[A-Z])[\w'-]*)*
                    )
                )?
                (?:
                    \s+(?:named|called)\s+(?P<lnames>
                        [A-Za-z][\w'-]*(?:(?:,\s*|\s+and\s+|,\s+and\s+)[A-Za-z][\w'-]*)*
                    )
                )?
            ",
            |c, s| {
                // "I have a cat allergy" names what the user is allergic to, not a pet.
                let after = c.name("what").and_then(|m| s.text.get(m.end()..)).unwrap_or_default();
                if after.trim_start().to_lowercase().starts_with("allerg") {
                    return Vec::new();
                }
                let n = cap(c, "n").unwrap_or("a").to_lowercase();
                let what = cap(c, "what").unwrap_or_default().to_lowercase();
                let names = cap(c, "names").or(cap(c, "lnames")).map(|n| {
                    let parts: Vec<String> = n
                        .split([',', '&'])
                        .flat_map(|p| p.split(" and "))
                        .map(|p| title(p.trim()))
                        .filter(|p| !p.is_empty() && !is_not_a_name(p))
                        .collect();
                    parts
                });
                let pet = super::lex::is_pet_word(&what);
                let names = names.filter(|v| !v.is_empty());
                let single = matches!(n.as_str(), "a" | "an" | "one");
                if pet {
                    let species = species_singular(&what);
                    let key = species_key(&what);
                    return match (single, names) {
                        (true, Some(names)) if names.len() == 1 => {
                            let name = &names[0];
                            vec![Found::add(
                                profile(format!("User has {} {species} named {name}", article(&species)), 0.85, 0.75)
                                    .keyed(format!("pet:{key}:{}", name.to_lowercase()), name.clone()),
                            )]
                        }
                        (_, Some(names)) => {
                            let list = join_names(&names);
                            vec![Found::add(profile(format!("User has {n} {what} named {list}"), 0.85, 0.75))]
                        }
                        (true, None) => {
                            vec![Found::add(profile(format!("User has {} {species}", article(&species)), 0.8, 0.6))]
                        }
                        (false, None) => vec![Found::add(profile(format!("User has {n} {what}"), 0.8, 0.6))],
                    };
                }
                let content = match &names {
                    Some(names) if !names.is_empty() => format!("User has {n} {what} named {}", join_names(names)),
                    _ => format!("User has {n} {what}"),
                };
                let key = match what.as_str() {
                    "kids" | "children" | "boys" | "girls" => Some("family:children".to_string()),
                    _ => None,
                };
                let d = profile(content, 0.85, 0.7);
                vec![Found::add(match key {
                    Some(k) => d.keyed(k, n),
                    None => d,
                })]
            },
        ),
        Rule::new(
            "identity.and-a-pet",
            Mode::Statement,
            &["named", "called"],
            r"(?x)
                # e.g. We've got a hamster and a rabbit named Clover.
                (?:,|\band)\s+(?:a|an|one)\s+(?:
                    (?:
                        little | big | old | young | new | rescue | senior | black | white | grey | gray
                        | brown | ginger | orange | fluffy | tiny | sweet
                    )
                    \s+
                )*
                (?P<rel><BREED>|<SPECIES>)\s+(?:named|called)\s+(?P<x><NAMEI>)
            ",
            |c, s| {
                if !["have", "got", "adopted", "rescued", "own"].iter().any(|w| s.lower.contains(w)) {
                    return Vec::new();
                }
                named_relation(c, s, true)
            },
        ),
        Rule::new(
            "identity.employer-at",
            Mode::Statement,
            &["i'm", "i am"],
            r"\b<IM>\s+(?:(?:now|currently|still|also)\s+)?(?:at|with|working\s+at|employed\s+at)\s+(?P<emp><NAME>)",
            |c, s| {
                let work = [
                    "job",
                    "work",
                    "company",
                    "now",
                    "switched",
                    "moved",
                    "changed",
                    "joined",
                    "employer",
                    "currently",
                ]
                .iter()
                .any(|w| s.lower.contains(w));
                let Some(org) = cap(c, "emp").filter(|_| work && !s.lowercase).and_then(|e| organisation(e, s)) else {
                    return Vec::new();
                };
                if super::lex::is_not_a_name(&org) {
                    return Vec::new();
                }
                vec![Found::add(profile(format!("User works at {org}"), 0.85, 0.8).keyed("employer", org))]
            },
        ),
        Rule::new(
            "identity.owns-business",
            Mode::Statement,
            &["own", "run", "manage", "founded", "started", "co-own"],
            r"(?x)
                # e.g. I run a small bakery in the old town.
                (?:\bi\s+(?:(?:also|now|still|actually)\s+)?(?:own|run|manage|co-own|co-founded|founded|started)
                    | \bi(?:'m|\s+am)\s+(?:(?:now|still|also)\s+)?running)\s+(?P<x>
                    (?:a|an|my\s+own|our|the\s+family)\s+(?:[\w'-]+\s+){0,3}?(?:
                        business | company | startup | shop | store | bakery | restaurant | cafe | café
                        | coffee\s+shop | bar | pub | studio | agency | firm | practice | clinic | salon
                        | gym | farm | consultancy | brand | label | nonprofit | non-profit | charity
                        | school | hotel | bookstore | boutique | food\s+truck | bistro | brewery
                        | winery | garage | workshop | daycare | b&b | podcast | channel | newsletter
                        | boat | charter | stall | taxi | van
                    )
                    \b[^,.;!?]*
                )
            ",
            |c, _| {
                let Some(x) = cap(c, "x").and_then(phrase) else { return Vec::new() };
                let v = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let verb = if v.contains("founded") || v.contains("started") {
                    "founded"
                } else if v.contains("own") {
                    "owns"
                } else if v.contains("manage") {
                    "manages"
                } else {
                    "runs"
                };
                vec![Found::add(profile(format!("User {verb} {x}"), 0.85, 0.8).keyed("job", x))]
            },
        ),
        Rule::new(
            "identity.new-job-as",
            Mode::Statement,
            &["job", "role", "position", "gig", "offer"],
            r"(?x)
                # e.g. I just landed a job as a data analyst at Spotify.
                \bi(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?
                (?:got|landed|accepted|took|started|scored|was\s+offered)\s+(?:a|an|the|my)\s+(?:new\s+|first\s+|dream\s+)?
                # a learner's like for as: I got a job like junior engineer
                (?:job|role|position|gig|offer)\s+(?P<as>as|like)\s+(?:a\s+|an\s+)?(?P<role>[^,.;!?]+?)
                # the employer, when named, ends the role
                (?:\s+(?:at|with|for)\s+(?P<emp>[^,.;!?]+))?(?:$|[,.;!?])
            ",
            |c, s| {
                if !learners_like(c) {
                    return Vec::new();
                }
                let Some(role) = cap(c, "role").map(super::lex::strip_times).and_then(|r| phrase(&r)) else {
                    return Vec::new();
                };
                let mut out = vec![Found::add(
                    profile(format!("User works as {} {role}", article(&role)), 0.9, 0.8).keyed("job", role),
                )];
                if let Some(org) = cap(c, "emp").and_then(|e| organisation(e, s)) {
                    out.push(Found::add(profile(format!("User works at {org}"), 0.9, 0.8).keyed("employer", org)));
                }
                out
            },
        ),
        Rule::new(
            "identity.had-baby",
            Mode::Statement,
            &["baby", "welcomed", "had a", "born"],
            r"(?x)
                # e.g. We just welcomed a baby girl named Lucia.
                \b(?:i|we)\s+(?:just\s+|recently\s+|finally\s+)?(?:had|welcomed)\s+
                (?:a|our)\s+(?:new\s+|first\s+|second\s+|third\s+)?(?:baby\s+)?(?P<what>girl|boy|baby|son|daughter)
                (?:\s+(?:named|called)\s+(?P<x><NAMEI>))?
                # e.g. Our daughter is born! (as a learner says it); our baby boy was born today.
                | ^\s*(?:our|my)\s+(?:new\s+|baby\s+|little\s+)*(?P<what2>girl|boy|baby|son|daughter)\s+(?:is|was|has\s+been)\s+born\b
            ",
            |c, _| {
                let what = cap(c, "what").or(cap(c, "what2")).unwrap_or("baby").to_lowercase();
                let rel = match what.as_str() {
                    "girl" | "daughter" => "daughter",
                    "boy" | "son" => "son",
                    _ => "baby",
                };
                let d = match cap(c, "x").and_then(name_of) {
                    Some(n) => profile(format!("User has a baby {rel} named {n}"), 0.9, 0.85)
                        .keyed(format!("family:{rel}:{}", n.to_lowercase()), n),
                    None => profile(format!("User just had a baby {rel}"), 0.85, 0.85),
                };
                vec![Found::add(d)]
            },
        ),
        Rule::new(
            "identity.relative-birthday",
            Mode::Statement,
            &["birthday"],
            r"\b(?:my\s+)?(?P<rel><REL>)'s\s+(?:birthday|bday)\s+is\s+(?:on\s+)?(?P<x>(?:the\s+\d{1,2}(?:st|nd|rd|th)|<MONTH_DAY>))",
            |c, _| {
                let rel = cap(c, "rel").unwrap_or_default().to_lowercase();
                let x = tidy(cap(c, "x").unwrap_or_default());
                let key = format!("birthday:{}", relation_key(&rel));
                vec![Found::add(profile(format!("User's {rel}'s birthday is on {x}"), 0.85, 0.7).keyed(key, x))]
            },
        ),
        Rule::new(
            "identity.speaks",
            Mode::Statement,
            &["speak", "native", "first language", "mother tongue"],
            r"(?x)
                # e.g. I speak Portuguese and a little Japanese.
                \bi\s+(?:also\s+|can\s+)?speak\s+(?P<x>
                    (?:fluent\s+|some\s+|a\s+little\s+|basic\s+)?<LANG>(?:
                        (?:,\s*|\s+and\s+|\s*&\s*|,\s+and\s+)(?:fluent\s+|some\s+|a\s+little\s+|basic\s+)?<LANG>
                    )*
                )
                | \bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<n><LANG>)
                | \b<IM>\s+a\s+native\s+(?P<m><LANG>)\s+speaker
            ",
            |c, _| {
                if let Some(n) = cap(c, "n").or(cap(c, "m")) {
                    let n = title(&n.to_lowercase());
                    return vec![Found::add(
                        profile(format!("User's native language is {n}"), 0.85, 0.7).keyed("native_language", n),
                    )];
                }
                let x = tidy(cap(c, "x").unwrap_or_default());
                let shown = x
                    .split(' ')
                    .map(|w| {
                        if w.len() > 3 && !["some", "little", "basic", "fluent"].contains(&w.to_lowercase().as_str()) {
                            title(&w.to_lowercase())
                        } else {
                            w.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                vec![Found::add(profile(format!("User speaks {shown}"), 0.85, 0.7).keyed("languages_spoken", shown))]
            },
        ),
        Rule::new(
            "identity.trait",
            Mode::Statement,
            &["i'm", "i am"],
            r"(?x)
                # e.g. I'm such a night owl.
                \b<IM>\s+(?:
                    (?:
                        such | totally | definitely | really | very | quite | a\s+bit\s+of | kind\s+of
                        | more\s+of | very\s+much | pretty\s+much | also | a\s+total | a\s+huge
                        | a\s+big
                    )
                    \s+
                )*
                (?:(?P<art>a|an)\s+)?(?P<x>
                    night\s+owl | morning\s+person | early\s+bird | introvert | extrovert | ambivert
                    | homebody | people\s+person | dog\s+person | cat\s+person | coffee\s+person
                    | tea\s+person | bookworm | foodie | gamer | introverted | extroverted
                    | colou?r-?blind | left-handed | right-handed | deaf | hard\s+of\s+hearing
                    | dyslexic | autistic | neurodivergent | insomniac | pregnant
                    | an?\s+only\s+child | only\s+child | twin | vegan\s+athlete | christian
                    | muslim | jewish | hindu | buddhist | atheist | sikh | catholic
                )
                \b
            ",
            |c, _| {
                let x = tidy(&cap(c, "x").unwrap_or_default().to_lowercase());
                let art = cap(c, "art").map(|a| format!("{} ", a.to_lowercase())).unwrap_or_default();
                let mut d = profile(format!("User is {art}{x}"), 0.85, 0.65)
                    .keyed(format!("trait:{}", x.replace(' ', "_")), x.clone());
                if [
                    "deaf",
                    "dyslexic",
                    "autistic",
                    "neurodivergent",
                    "pregnant",
                    "hard of hearing",
                    "christian",
                    "muslim",
                    "jewish",
                    "hindu",
                    "buddhist",
                    "atheist",
                    "sikh",
                    "catholic",
                ]
                .contains(&x.as_str())
                {
                    d.sensitivity = Sensitivity::Sensitive;
                }
                vec![Found::add(d)]
            },
        ),
        Rule::new(
            "identity.timezone",
            Mode::Statement,
            &[
                "pst",
                "pdt",
                "est",
                "edt",
                "cst",
                "cdt",
                "mst",
                "mdt",
                "gmt",
                "bst",
                "cet",
                "cest",
                "utc",
                "ist",
                "jst",
                "aest",
                "time zone",
                "timezone",
                "pacific",
                "eastern",
                "central",
                "mountain",
            ],
            r"(?x)
                # e.g. I'm based in CET.
                \b(?:<IM>\s+(?:in|on|based\s+in)|my\s+time\s*zone\s+is)\s+(?P<tz>
                    (?-i:
                        PST | PDT | EST | EDT | CST | CDT | MST | MDT | GMT | BST | CET | CEST | UTC
                        | IST | JST | AEST | AEDT
                    )
                    (?:[+-]\d{1,2})?
                    | (?:pacific|eastern|central|mountain)\s+time
                    | utc[+-]\d{1,2}
                )
                \b
            ",
            |c, _| {
                let tz = tidy(cap(c, "tz").unwrap_or_default());
                vec![Found::add(profile(format!("User's time zone is {tz}"), 0.85, 0.6).keyed("timezone", tz))]
            },
        ),
        Rule::new(
            "identity.job-im-a",
            Mode::Statement,
            &["i'm", "i am"],
            r"(?x)
                # e.g. I'm a pediatric nurse at a children's hospital.
                \b<IM>\s+(?:
                    (?:
                        now | currently | actually | still | also | just | officially | basically
                        | technically | working\s+as | employed\s+as
                    )
                    \s+
                )*
                # up to four words before the job word: a qualified title (senior data engineer)
                (?P<art>a|an|the)\s+(?P<x>(?:[\w/&+.-]+\s+){0,4}?<JOB>s?(?:[\s-]+<JOB>s?)*)\b
                (?P<rest>\s+(?:at|for|in|with|on|of|from)\s+[^,.;!?]+)?
                (?:\s+(?:based|living)\s+(?:in|out\s+of)\s+(?P<based><CLAUSE>))?
            ",
            |c, s| {
                let mut out = job(c, s);
                let rest = cap(c, "rest").unwrap_or_default();
                let based = cap(c, "based").or_else(|| {
                    let l = rest.to_ascii_lowercase();
                    ["based in ", "living in ", "based out of "]
                        .iter()
                        .find_map(|k| l.find(k).map(|i| &rest[i + k.len()..]))
                });
                if let Some(p) = based.and_then(|b| place(b, s)) {
                    out.push(Found::add(profile(format!("User lives in {p}"), 0.85, 0.8).keyed("home", p)));
                }
                out
            },
        ),
        Rule::new(
            "identity.job-im-bare",
            Mode::Statement,
            &["i'm", "i am"],
            r"(?x)
                # e.g. I am software engineer in one bank (a learner's English, no article).
                \b<IM>\s+(?:(?:now|currently|working\s+as)\s+)?
                (?P<x>(?:[\w/&+.-]+\s+)?<JOB>)\b
                (?P<rest>\s+(?:at|for|in|with|on)\s+[^,.;!?]+)?
                (?:$|[,.;!?]|\s+(?:at|for|in|with|on|and|since|from|but|so|now)\b)
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                let first = x.split_whitespace().next().unwrap_or_default().to_lowercase();
                // "I'm so tired", "I'm the …", "I'm not …": no bare job title.
                if matches!(first.as_str(), "a" | "an" | "the" | "not" | "so" | "very" | "really" | "just" | "also")
                    || x.split_whitespace().count() > 2
                {
                    return Vec::new();
                }
                // Only a sentence that says nothing else: "I am chess trainer, I have small club
                // for children in Limassol" is kept whole by the episodic family.
                let end = c.get(0).map_or(0, |m| m.end());
                if !s.text[end..].trim_matches(|ch: char| !ch.is_alphanumeric()).is_empty() {
                    return Vec::new();
                }
                let mut found = job(c, s);
                let art = super::lex::article(x);
                for f in &mut found {
                    if f.draft.content.starts_with("User is a ") {
                        f.draft.content = format!("User is {art} {}", &f.draft.content["User is a ".len()..]);
                    }
                }
                found
            },
        ),
        Rule::new(
            "identity.job-work",
            Mode::Statement,
            &["work"],
            r"(?x)
                # e.g. I work as a sound engineer.
                \bi(?:'m|\s+am|'ve\s+been|\s+have\s+been)?\s+(?:
                    (?:
                        now | currently | still | also | mainly | mostly | actually | full-time
                        | part-time | just
                    )
                    \s+
                )*
                (?:work|working)\s+(?:
                    (?P<as>as|like)\s+(?P<job><CLAUSE>)
                    | (?P<prep>at|for)\s+(?P<emp><CLAUSE>)
                    | in\s+(?P<field><CLAUSE>)
                    | (?P<remote>
                        from\s+home
                        | remotely
                        | remote
                        | from\s+an?\s+office
                        | in\s+an?\s+office
                        | hybrid
                    )
                    | on\s+(?P<proj><CLAUSE>)
                )
            ",
            work,
        ),
        Rule::new(
            "identity.employer-joined",
            Mode::Statement,
            &["joined", "started", "hired", "job at", "offer", "employed", "starting", "start at", "start work", "got work", "got job", "transfer"],
            r"(?x)
                # e.g. I just joined Datadog; I have left the bank and joined Systems Limited; I'm
                # starting at the Larkfield garage on Monday; (texted, the subject left out)
                # Starting at Aldi next week.
                (?:
                    \bi(?:'ve|\s+have|'m|\s+am|\s+was|'ll(?:\s+be)?|\s+will(?:\s+be)?)?\s+
                    | ^\s*
                    | ,\s*
                )
                (?:(?:just|recently|finally|officially|now)\s+)*
                (?:(?:left|quit)\s+[^,.;!?]{1,40}?\s+and\s+(?:then\s+|now\s+|have\s+)?)?(?:
                    joined
                    | started\s+(?:a\s+new\s+job\s+|a\s+new\s+role\s+|working\s+)?at
                    | started\s+at
                    | (?:starting|start)\s+(?:a\s+new\s+job\s+|my\s+new\s+job\s+|work\s+|working\s+)?at
                    | got\s+(?:a\s+(?:new\s+)?job|hired|an\s+offer|a\s+position|a\s+role|work|job)\s+(?:at|with|from|by|in)
                    # a transfer within the company: I got transfer to our Coimbatore branch
                    | got\s+(?:a\s+|the\s+)?transfer\s+to
                    | (?:am|'m)\s+being\s+transferred\s+to
                    | (?:got\s+)?hired\s+(?:at|by)
                    | employed\s+(?:at|by)
                )
                \s+(?P<emp><CLAUSE>)
            ",
            |c, s| {
                // "at the Larkfield garage on Monday": when it begins is no part of the name.
                let emp = super::lex::strip_times(cap(c, "emp").unwrap_or_default());
                let emp = emp.as_str();
                let (emp, role) = match emp.to_ascii_lowercase().find(" as ") {
                    Some(i) => (&emp[..i], Some(&emp[i + 4..])),
                    None => (emp, None),
                };
                let Some(joined) = employer(emp, s) else { return Vec::new() };
                let mut out = vec![joined];
                // "as team lead from 1st April": the role, not when it began.
                if let Some(role) = role.map(super::lex::strip_times).as_deref().and_then(phrase) {
                    out.push(Found::add(profile(format!("User works as {role}"), 0.85, 0.8).keyed("job", role)));
                }
                out
            },
        ),
        Rule::new(
            "identity.team-moved",
            Mode::Statement,
            &["moved", "transferred", "switched", "moving", "transferring", "switching", "changed"],
            r"(?x)
                # e.g. I moved to the QA team in June.
                \bi(?:'ve|\s+have|'m|\s+am|\s+was|\s+got|\s+have\s+been|'ve\s+been)?\s+
                (?:(?:just|recently|finally|officially|now|been|got)\s+)*
                (?:moved|transferred|switched|changed|moving|transferring|switching)\s+(?:over\s+)?(?:in)?to\s+
                (?P<x>(?:the\s+|a\s+|an\s+|another\s+)?[\w&/+-]+(?:\s+[\w&/+-]+){0,3}?\s+
                    (?P<head>team|department|dept|division|unit|ward|squad|crew|shift))\b
            ",
            |c, _| {
                let x = tidy(cap(c, "x").unwrap_or_default());
                let head = cap(c, "head").unwrap_or_default().to_lowercase();
                let (content, key) = match head.as_str() {
                    "shift" => (format!("User works {x}"), "shift"),
                    "ward" => (format!("User works on {x}"), "team"),
                    _ => (format!("User works in {x}"), "team"),
                };
                vec![Found::add(profile(content, 0.85, 0.75).keyed(key, x))]
            },
        ),
        Rule::new(
            "identity.job-my-job-is",
            Mode::Statement,
            &["job", "role", "position", "title", "occupation", "profession", "company", "employer"],
            r"(?x)
                # e.g. My current role is Staff Engineer at Monzo.
                \bmy\s+(?:(?:new|current|day|full-time|main)\s+)?(?P<what>
                    job | role | position | title | job\s+title | occupation | profession | company
                    | employer
                )
                \s+is\s+(?P<x><CLAUSE>)
            ",
            |c, s| {
                let what = cap(c, "what").unwrap_or_default().to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                if what == "company" || what == "employer" {
                    let Some(org) = organisation(x, s) else { return Vec::new() };
                    return vec![Found::add(profile(format!("User works at {org}"), 0.85, 0.8).keyed("employer", org))];
                }
                let xl = x.trim_start().to_lowercase();
                let first = xl.split_whitespace().next().unwrap_or_default();
                let ok =
                    matches!(first, "a" | "an" | "the") || first.ends_with("ing") || x.starts_with(char::is_uppercase);
                let Some(p) = phrase(x).filter(|_| ok) else { return Vec::new() };
                vec![Found::add(profile(format!("User's {what} is {p}"), 0.85, 0.8).keyed("job", p))]
            },
        ),
        Rule::new(
            "identity.job-teach-study",
            Mode::Statement,
            &["teach", "study", "studying", "major"],
            r"(?x)
                # e.g. I teach chemistry at a high school.
                \bi(?:'m|\s+am)?\s+(?:(?:currently|now|also|still)\s+)*(?P<v>
                    teach
                    | study
                    | studying
                    | majoring\s+in
                    | doing\s+(?:a|my)\s+(?:phd|masters|master's|degree|bachelor's|doctorate)\s+in
                )
                \s+(?P<x><CLAUSE>)
            ",
            |c, _| {
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                let first = x.trim_start().to_lowercase();
                let first = first.split_whitespace().next().unwrap_or_default();
                if matches!(
                    first,
                    "every"
                        | "for"
                        | "hard"
                        | "a"
                        | "all"
                        | "at"
                        | "in"
                        | "late"
                        | "on"
                        | "with"
                        | "really"
                        | "so"
                        | "it"
                        | "that"
                        | "this"
                        | "them"
                        | "myself"
                        | "how"
                        | "what"
                        | "when"
                        | "too"
                        | "more"
                        | "online"
                        | "up"
                ) {
                    return Vec::new();
                }
                let Some(x) = phrase(x) else { return Vec::new() };
                let content = match v.as_str() {
                    "teach" => format!("User teaches {x}"),
                    "study" => format!("User studies {x}"),
                    v if v.starts_with("doing") => format!("User is {} {x}", tidy(&third_person(v))),
                    _ => format!("User is studying {x}"),
                };
                vec![Found::add(profile(content, 0.8, 0.75).keyed("job", x))]
            },
        ),
        Rule::new(
            "identity.job-status",
            Mode::Statement,
            &[
                "retired",
                "unemployed",
                "self-employed",
                "between jobs",
                "out of work",
                "stay-at-home",
                "freelanc",
                "leave",
                "laid off",
                "job hunting",
                "looking for",
            ],
            r"(?x)
                # e.g. I'm retired now.
                \b<IM>\s+(?:(?:now|currently|just|recently|officially|finally|still|also)\s+)*(?P<x>
                    retired
                    | unemployed
                    | self-employed
                    | between\s+jobs
                    | out\s+of\s+work
                    | a\s+stay-at-home\s+(?:mom|dad|parent)
                    | freelancing
                    | a\s+freelancer
                    | on\s+(?:parental|maternity|paternity|medical)\s+leave
                    | job\s+hunting
                    | looking\s+for\s+(?:a\s+)?(?:new\s+)?(?:job|work)
                )
                \b
            ",
            |c, _| {
                let x = tidy(cap(c, "x").unwrap_or_default()).to_lowercase();
                vec![Found::add(profile(format!("User is {x}"), 0.85, 0.75).keyed("job", x))]
            },
        ),
        Rule::new(
            "identity.home-live",
            Mode::Statement,
            &["live", "living", "based", "reside", "located", "settled"],
            r"(?x)
                # e.g. I live in Porto.
                # a first-person subject, or been with none at the start (yeah been based in leeds)
                (?:\b(?:i|we)(?:'ve|\s+have|'re|\s+are|'m|\s+am)?\s+|^(?:(?:yeah|yep|yes|ya|oh|well|so|ok|okay|lol|haha|honestly)[\s,!.]+)*been\s+)(?:
                    (?:
                        now | currently | still | actually | also | just | been | recently | finally
                        | happily | officially
                    )
                    \s+
                )*
                (?:live|living|reside|residing|based|located|settled)
                # who they live with is skipped: the place is what is kept
                (?:\s+with\s+(?:my|our)\s+[\w-]+(?:\s+[\w-]+)?)?
                \s+(?P<prep>in|near|outside(?:\s+of)?|just\s+outside(?:\s+of)?|out\s+of|on)\s+<PLACE>
            ",
            |c, s| {
                let Some(p) = place(cap(c, "x").unwrap_or_default(), s) else { return Vec::new() };
                let prep = tidy(&cap(c, "prep").unwrap_or("in").to_lowercase());
                let prep = if prep == "out of" { "in".to_string() } else { prep };
                vec![Found::add(profile(format!("User lives {prep} {p}"), 0.85, 0.8).keyed("home", p))]
            },
        ),
        Rule::new(
            "identity.home-since",
            Mode::Statement,
            &["since", "years"],
            r"(?x)
                # e.g. (a learner's present for the perfect) Now I am in Surrey BC since 2014; I am
                # in Leeds for 5 years.
                \b(?:i|we)(?:'m|\s+am|'re|\s+are)\s+(?:(?:now|here|still|already)\s+)*in\s+
                (?P<x>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){0,3})
                \s+(?:already\s+)?(?:since\s+(?:19|20)\d\d|for\s+\d+\s+(?:years?|yrs?))\b
            ",
            |c, s| {
                let Some(p) = place(cap(c, "x").unwrap_or_default(), s) else { return Vec::new() };
                vec![Found::add(profile(format!("User lives in {p}"), 0.8, 0.75).keyed("home", p))]
            },
        ),
        Rule::new(
            "identity.home-stay",
            Mode::Statement,
            &["stay"],
            r"(?x)
                # e.g. (in Indian, Nigerian and Singaporean English) I stay in Lekki; i stay tampines.
                \b(?:i|we)\s+(?:(?:now|currently|still|also|actually)\s+)*stay\s+(?:in\s+|at\s+)?<PLACE>
            ",
            |c, s| {
                // A stay for a while ("I stay in London for work sometimes", "we stay in Cornwall
                // every summer", "I stay in a hotel") is no home.
                const PASSING: &[&str] = &[
                    "sometimes", "usually", "often", "when", "whenever", "while", "tonight", "night", "nights", "week",
                    "weekend", "weekends", "holiday", "holidays", "hotel", "hostel", "airbnb", "summer", "winter",
                    "bed", "touch", "shape", "tune", "line", "contact", "till", "until", "for",
                ];
                let passing = s.lower.split(|c: char| !c.is_alphanumeric()).any(|w| PASSING.contains(&w))
                    || super::when::recurring(&s.lower)
                    || super::when::find(s.text, s.at).is_some();
                if passing {
                    return Vec::new();
                }
                let Some(p) = place(cap(c, "x").unwrap_or_default(), s) else { return Vec::new() };
                if matches!(p.to_lowercase().as_str(), "home" | "here" | "there" | "in" | "up" | "out" | "put") {
                    return Vec::new();
                }
                vec![Found::add(profile(format!("User lives in {p}"), 0.8, 0.75).keyed("home", p))]
            },
        ),
        Rule::new(
            "identity.home-moved",
            Mode::Statement,
            &["moved", "relocated", "move from"],
            r"(?x)
                # e.g. We moved to Montreal last summer; (a learner's present for the past) now
                # we move from Clayton to Carnegie.
                # a first-person subject, or none: at the start, or after but, and, then, so
                (?:\b(?:i|we)(?:'ve|\s+have|'re|\s+are)?\s+|^|\b(?:but|and|then|so)\s+)
                (?:(?:just|recently|finally|officially|now|also|since|actually|eventually|already)\s+)*
                (?:(?P<moved>moved|relocated)(?:\s+(?:back|over|out|away|here))?\s+(?:from\s+(?P<a>[^,.;!?]+?)\s+)?
                    | (?P<now>move)\s+from\s+(?P<from>[^,.;!?]+?)\s+
                )
                (?:to|into)\s+<PLACE>
            ",
            |c, s| {
                // The present "move from … to …" is a move made only with no time still to come
                // ("every summer we move from …", "next month we move from …" are not).
                let to_come = || {
                    super::when::recurring(&s.lower)
                        || super::when::find(s.text, s.at).is_some_and(|t| t.at > s.at)
                        || s.lower.split_whitespace().any(|w| matches!(w, "next" | "will" | "soon" | "gonna" | "going"))
                };
                if c.name("now").is_some() && to_come() {
                    return Vec::new();
                }
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.trim_start().to_lowercase();
                // "moved into a flat in Clifton", "moved to a little village outside York": the
                // home is described, the place after it is where the user lives now.
                let described = ["a ", "an ", "my ", "our ", "new ", "the new ", "another "]
                    .iter()
                    .any(|p| xl.starts_with(p))
                    .then(|| described_home(c.get(0).map_or("", |m| &s.text[m.start()..])))
                    .map(|home| home.and_then(|(prep, x)| place(&x, s).map(|p| (prep, p))));
                let (prep, p) = match described {
                    Some(Some(found)) => found,
                    Some(None) => return Vec::new(),
                    None => match place(x, s) {
                        Some(p) => ("in".to_string(), p),
                        None => return Vec::new(),
                    },
                };
                let mut f = Found::add(profile(format!("User lives {prep} {p}"), 0.9, 0.8).keyed("home", p));
                f.replaces = cap(c, "a").or_else(|| cap(c, "from")).map(str::to_string);
                vec![f]
            },
        ),
        Rule::new(
            "identity.home-moved-in",
            Mode::Statement,
            &["moved", "shifted"],
            r"(?x)
                # e.g. Council gave us a new flat in Stepney Green. We moved in last week.
                # a move with no destination: the new home was named before it
                # or none after a clause that found it ('Found a flat in Acomb, moved in on sat')
                (?:\b(?:i|we)(?:'ve|\s+have)?\s+|^\s*|,\s*|\b(?:and|then)\s+)(?:(?:just|finally|officially|actually|already|all)\s+)*
                (?:moved|shifted)(?:\s+(?:in|over|house|across|there))?\b
                (?P<after>\s+\w+(?:\s+\w+)?)?
            ",
            |c, s| {
                // "moved to …" names its own place; "moved in with Sam" a person, not a home.
                let after = cap(c, "after").unwrap_or_default().trim().to_lowercase();
                let first = after.split_whitespace().next().unwrap_or_default();
                // "I've moved on (from it)" is over something, not a move; "moved on Sunday" is one.
                let second = after.split_whitespace().nth(1);
                let moved_on =
                    first == "on" && second.is_none_or(|w| matches!(w, "from" | "to" | "with" | "now" | "since"));
                // "We moved his piano in": something moved, not the user.
                let moved_a_thing = OBJECTS.contains(&first)
                    || (matches!(first, "a" | "an" | "the")
                        && second.is_none_or(|w| {
                            !["weekend", "week", "day", "month", "fortnight", "other", "same", "end"].contains(&w)
                        }));
                if matches!(first, "to" | "into" | "from" | "back" | "out" | "away" | "with" | "together")
                    || moved_on
                    || moved_a_thing
                {
                    return Vec::new();
                }
                let Some(at) = c.get(0) else { return Vec::new() };
                let Some(p) =
                    new_home_named(&s.text[..at.start()], s).or_else(|| s.prev.and_then(|p| new_home_named(p, s)))
                else {
                    return Vec::new();
                };
                // A move told is news: the old home is over.
                vec![Found::with(
                    Action::Update(Target::Key("home".into())),
                    profile(format!("User lives in {p}"), 0.9, 0.8).keyed("home", p),
                )]
            },
        ),
        Rule::new(
            "identity.home-my-home",
            Mode::Statement,
            &["home", "house", "apartment", "flat", "place"],
            r"(?x)
                # e.g. I call Melbourne home.
                \b(?:
                    my\s+(?:home|house|apartment|flat|place)\s+is\s+(?:in|near)
                    # e.g. Home for me is Leeds these days.
                    | home(?:\s+for\s+(?:me|us))?(?:\s+base)?\s+is
                    | i\s+call\s+(?P<called>\S+(?:\s+(?-i:[A-Z])\S*)?)\s+home
                    # e.g. Leeds is home now. (a capitalised place opening the sentence)
                    | ^\s*(?P<is>(?-i:[A-Z])\S*(?:\s+(?-i:[A-Z])\S*)?)\s+is\s+home\b(?:\s+(?:now|these\s+days|for\s+(?:me|us)))*\s*[.!]?\s*$
                )
                \s*(?P<x><CLAUSE>)?
            ",
            |c, s| {
                let x = cap(c, "called").or(cap(c, "is")).or(cap(c, "x")).unwrap_or_default();
                let Some(p) = place(x, s) else { return Vec::new() };
                vec![Found::add(profile(format!("User lives in {p}"), 0.85, 0.8).keyed("home", p))]
            },
        ),
        Rule::new(
            "identity.hometown",
            Mode::Statement,
            &["from", "grew up", "born", "raised"],
            r"(?x)
                # e.g. I grew up in Nairobi.
                \b(?:
                    <IM>\s+(?:originally\s+)?from
                    | i\s+(?:originally\s+)?(?:come|came)\s+from
                    | i\s+grew\s+up\s+(?:in|on|near)
                    | i\s+was\s+(?:born|raised)(?:\s+and\s+raised)?\s+in
                )
                \s+<PLACE>
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                if x.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                    return Vec::new();
                }
                let Some(p) = place(x, s) else { return Vec::new() };
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let content = if whole.contains("grew up") {
                    format!("User grew up in {p}")
                } else if whole.contains("born") || whole.contains("raised") {
                    format!("User was born in {p}")
                } else {
                    format!("User is from {p}")
                };
                vec![Found::add(profile(content, 0.85, 0.7).keyed("hometown", p))]
            },
        ),
        Rule::new(
            "identity.age",
            Mode::Statement,
            &["i'm", "i am", "turned", "years old", "i have"],
            r"(?x)
                # e.g. I just turned 40.
                \b(?:
                    <IM>(?:\s+(?:actually|now|only|just|almost|nearly|turning|(?P<on>on)))?
                    # a learner's 'I have 29 years' (with its years, below)
                    | (?P<have>i\s+have)
                    | i\s+(?:just\s+)?turned
                    # texting drops the I: turned 16 on saturday
                    | ^\s*(?:just\s+)?turned
                )
                \s+(?P<n>\d{1,2})(?P<unit>\s+(?:years?|yrs?)(?:\s+old)?|\s*yo|\s*y/o)?(?P<next>\s*(?:$|[,.;!]|and\b|now\b|today\b|this\s+year\b|btw\b|but\b|so\b|tho\b|though\b|lol\b|haha\b|on\s+(?:mon|tues?|wed|thu|fri|sat|sun)|yesterday\b|last\s+(?:week|month|night)\b))
            ",
            |c, _| {
                let n = cap(c, "n").unwrap_or_default();
                // "I have 29 years", "I am on 52 years" (as a Bulgarian says it) are ages; "I
                // have 12", "I'm on 20" are not.
                if (c.name("have").is_some() || c.name("on").is_some()) && !cap(c, "unit").is_some_and(|u| u.contains("year")) {
                    return Vec::new();
                }
                let Ok(age) = n.parse::<u32>() else { return Vec::new() };
                if !(10..=99).contains(&age) {
                    return Vec::new();
                }
                vec![Found::add(profile(format!("User is {age} years old"), 0.85, 0.6).keyed("age", age.to_string()))]
            },
        ),
        Rule::new(
            "identity.birthday",
            Mode::Statement,
            &["birthday", "born on", "born in"],
            r"(?x)
                # e.g. My birthday is on October 12.
                \b(?:
                    my\s+(?:birthday|bday|b-day)\s+is\s+(?:on\s+)?
                    | i\s+was\s+born\s+on\s+
                )
                (?P<x>(?:<MONTH_DAY>))
                | \b(?P<rel>today|tomorrow|on\s+\w+day|this\s+\w+day|next\s+\w+day)\s+is\s+my\s+(?:birthday|bday)
                | \bmy\s+(?:birthday|bday)\s+is\s+(?P<rel2>today|tomorrow|on\s+\w+day|this\s+\w+day|next\s+\w+day)
                | \bi\s+was\s+born\s+in\s+(?P<year>(?:19|20)\d{2})\b
            ",
            |c, s| {
                if let Some(y) = cap(c, "year") {
                    return vec![Found::add(profile(format!("User was born in {y}"), 0.9, 0.6).keyed("birth_year", y))];
                }
                // "Tomorrow is my birthday": the date it names, not the word.
                let x = match cap(c, "rel").or(cap(c, "rel2")) {
                    Some(r) => match super::when::resolve(r, s.at) {
                        Some(d) => d.format("%B %-d").to_string(),
                        None => return Vec::new(),
                    },
                    None => match cap(c, "x") {
                        Some(x) => title_words(&x.to_lowercase()),
                        None => return Vec::new(),
                    },
                };
                vec![Found::add(profile(format!("User's birthday is {x}"), 0.9, 0.7).keyed("birthday", x))]
            },
        ),
        Rule::new(
            "identity.relationship",
            Mode::Statement,
            &[
                "married",
                "single",
                "divorced",
                "engaged",
                "widowed",
                "separated",
                "relationship",
                "dating",
                "seeing someone",
            ],
            r"(?x)
                # e.g. I'm engaged to Tomás.
                \b<IM>\s+(?:
                    (?:
                        happily | recently | newly | now | still | currently | just | also | finally
                        | officially
                    )
                    \s+
                )*
                (?P<x>
                    married | single | divorced | engaged | widowed | separated
                    | in\s+a\s+relationship | seeing\s+someone | dating\s+someone
                )
                \b(?:\s+(?:to|with)\s+(?P<to><NAME>))?(?:
                    \s+with\s+(?P<kids>one|two|three|four|five|six|\d+|a)\s+(?P<kw>kids?|children|child|sons?|daughters?)
                )?
            ",
            |c, s| {
                let x = tidy(&cap(c, "x").unwrap_or_default().to_lowercase());
                let to = cap(c, "to").filter(|_| !s.lowercase).and_then(name_of);
                let content = match &to {
                    Some(n) => format!("User is {x} to {n}"),
                    None => format!("User is {x}"),
                };
                let mut out = vec![Found::add(profile(content, 0.85, 0.7).keyed("relationship", x))];
                if let (Some(n), Some(kw)) = (cap(c, "kids"), cap(c, "kw")) {
                    let n = n.to_lowercase();
                    out.push(Found::add(
                        profile(format!("User has {n} {}", kw.to_lowercase()), 0.85, 0.7).keyed("family:children", n),
                    ));
                }
                out
            },
        ),
        Rule::new(
            "identity.parent-of",
            Mode::Statement,
            &["mom", "dad", "mother", "father", "parent", "mum", "grand"],
            r"(?x)
                # e.g. I'm a single dad of two.
                \b<IM>\s+(?:a|an)\s+(?:(?:proud|new|single|first-time|busy|working|tired)\s+)*(?P<who>
                    mom | mum | dad | mother | father | parent | grandma | grandpa | grandmother
                    | grandfather | grandparent
                )
                (?:
                    \s+(?:of|to)\s+(?P<n>
                        one
                        | two
                        | three
                        | four
                        | five
                        | six
                        | \d+
                        | a\s+(?:baby|toddler|teenager|newborn|\w+)
                    )
                )?
                \b
            ",
            |c, _| {
                let who = cap(c, "who").unwrap_or_default().to_lowercase();
                let d = match cap(c, "n") {
                    Some(n) => profile(format!("User is {} {who} of {n}", article(&who)), 0.85, 0.75)
                        .keyed("family:children", n.to_lowercase()),
                    None => profile(format!("User is {} {who}", article(&who)), 0.85, 0.7).keyed("parent", who),
                };
                vec![Found::add(d)]
            },
        ),
        Rule::new(
            "identity.allergy",
            Mode::Statement,
            &[
                "allergic",
                "allergy",
                "intolerant",
                "celiac",
                "coeliac",
                "diabetic",
                "diabetes",
                "epilepsy",
                "epileptic",
                "asthma",
                "asthmatic",
                "epipen",
                "pressure",
                "hypertension",
                "cholesterol",
                "kidney",
                "heart",
                "copd",
                "crohn",
                "colitis",
                "adhd",
                "arthritis",
                "glaucoma",
                "gastritis",
                "migraines",
                "gout",
                "angina",
                "apnea",
                "apnoea",
                "thyroid",
                "hypothyroidism",
                "fib",
                "osteoporosis",
                "sclerosis",
                "parkinson",
                "lupus",
                "psoriasis",
                "eczema",
                "excema",
                "exema",
                "chron",
                "crone",
                "hepatitis",
                "hep ",
                "hiv",
                "sickle",
                "endometriosis",
                "pcos",
                "fibromyalgia",
                "hashimoto",
                " me up",
                " me out",
                " me into",
                " me swell",
                " me come",
                " me hives",
                " me a rash",
                " me a reaction",
                " me in hospital",
                "react",
                "sugar",
            ],
            r"(?x)
                # e.g. I'm allergic to shellfish; 'allergic on latex' and 'I allergic to peanut'
                # as learners write it.
                (?:\b<IM>\s+ | \bi\s+ | ^\s*(?:(?:also|and|but|plus|oh|btw|ps)[\s,]+)?)
                (?:<INTENSITY>\s+)*
                allergic\s+(?:to|on|for|against)\s+(?P<x><CLAUSE>)
                # e.g. I'm lactose intolerant.
                | \b<IM>\s+(?:<INTENSITY>\s+)*(?P<z><HEALTH>)\b
                # A texted fragment that is nothing but the state: 'lactose intolrant', 'coeliac
                # btw' ('Coeliac disease runs in the family' is no such fragment).
                | ^\s*(?:(?:also|and|but|plus|oh|btw|ps)[\s,]+)?(?P<f><HEALTH>)
                  \s*(?:$|[.!,;]|\s+(?:tho|though|too|btw|lol|so|and|but|as\s+well)\b)
                # Ending a clause of the user's: 'I can't eat gluten, coeliac' (not 'Sam,
                # coeliac and proud of it, bakes').
                | [,;]\s*(?:(?:also|and|but|plus|btw)\s+)?(?P<f2><HEALTH>)\s*(?:tho|though|too|btw|lol)?\s*[.!]*\s*$
                # e.g. I have a peanut allergy.
                | \bi\s+have\s+(?:a|an)\s+(?:severe\s+|bad\s+|mild\s+)?(?P<y>[\w-]+(?:\s+[\w-]+)?)\s+allergy
                # e.g. I have an allergy to novocaine; 'I have allergy on novocaine' as a learner
                # says it.
                | \b(?:i\s+have|i\s+got|<IVE>\s+got)\s+(?:an?\s+)?(?:severe\s+|bad\s+|serious\s+|mild\s+)?allerg(?:y|ies)\s+(?:to|on|for|from|against|with|of)\s+(?P<x2><CLAUSE>)
                # e.g. I've got epilepsy; (doctor says) i have diabetes type 2; 'I am having
                # diabetes', 'I'm suffering from asthma' as learners say it.
                | \b(?:<IVE>\s+got|i\s+(?:have|got)|i\s+was\s+diagnosed\s+with|<IVE>\s+been\s+diagnosed\s+with
                    | <IM>\s+(?:having|suffering\s+(?:from|with)))\s+
                  (?:(?:mild|severe|bad|really\s+bad)\s+)?
                  (?P<c>
                    epilepsy | asthma | (?:coeliac|celiac)\s+disease
                    | type\s+(?P<t1>[12])\s+diabetes | diabetes(?:\s+type\s+(?P<t2>[12]))?
                    # 'I have sugar', as South Asian English says diabetes.
                    | sugar(?:\s+(?:problem|disease))?(?:,?\s+(?:diabetes(?:\s+type\s+(?P<t3>[12]))?|type\s+(?P<t4>[12])\s+diabetes))?
                    # 'high pressure', as a learner says it, is the blood pressure.
                    | high\s+(?:blood\s+)?pressure | hypertension | high\s+cholesterol
                    # 'I have blood pressure', as many learners say high blood pressure
                    | blood\s+pressure
                    | (?:chronic\s+)?kidney\s+disease | heart\s+(?:disease|failure) | a\s+heart\s+condition
                    # 'chrones', 'chrons': Crohn's as it is often typed
                    | copd | <CROHNS>(?:\s+disease)? | ulcerative\s+colitis
                    | adhd | (?:rheumatoid\s+)?arthritis | glaucoma | gastritis | migraines | gout | angina
                    | sleep\s+apn(?:o)?ea | (?:an\s+)?underactive\s+thyroid | hypothyroidism | a\s?fib
                    | atrial\s+fibrillation | osteoporosis | multiple\s+sclerosis | parkinson'?s(?:\s+disease)?
                    | lupus | psoriasis | <ECZEMA> | hepatitis\s+[abc] | hep\s+[bc] | hiv | sickle\s+cell(?:\s+disease|\s+an(?:a)?emia)? | endometriosis
                    | pcos | fibromyalgia | hashimoto'?s
                  )\b
                # The condition said as what it is doing: 'my excema is peak rn', 'my asthma
                # stay junk wit da vog'.
                | \bmy\s+(?P<c2>asthma|<ECZEMA>|psoriasis|arthritis|<CROHNS>|epilepsy|gout|copd|migraines|angina|lupus|endometriosis|fibromyalgia)
                  \s+(?:is|was|has|had|'s|stay|been|keeps|flared|flares|flaring|got|gets|playing)\b
                # e.g. I carry an EpiPen: an allergy bad enough to need adrenaline at hand.
                | (?P<pen>(?:\bi\s+(?:always\s+)?|^\s*(?:always\s+)?)carry\s+(?:an?\s+|my\s+)?epipens?\b)
                # The reaction said instead of the word: penicillin blows me up like a balloon,
                # shellfish brings me out in hives, I react badly to latex.
                | (?:^|[,;]|\b(?:also|and|but|plus|btw|ps))\s*(?P<r><ALLERGENS>)\s+(?:really\s+|just\s+|always\s+)?
                  (?:makes|gives|brings|blows|puts|sends|swells)\s+me\s+
                  (?:up|out\s+in|into\s+(?:anaphylaxis|anaphylactic\s+shock)|swell|come\s+out|hives|a\s+rash|a\s+reaction|in\s+hospital)\b
                | \bi\s+(?:always\s+)?(?:react\s+(?:badly\s+|really\s+badly\s+)?to|(?:get|have)\s+(?:a\s+)?(?:bad\s+|severe\s+|allergic\s+)?reactions?\s+to)\s+(?P<r2><ALLERGENS>)\b
                # Allergic with what to said before it: no shrimp or any shellfish pls, I'm allergic.
                | \b<IM>\s+(?:<INTENSITY>\s+)*allergic\b(?P<bare>)
                # The same said with the noun: I cannot eat peanut, I have allergy since child.
                | (?:\bi\s+(?:have|got|have\s+got)|\bi've(?:\s+got)?)\s+(?:an?\s+)?(?:bad\s+|severe\s+|serious\s+|big\s+)?(?:allergy|allergies)\b(?P<bare_noun>)
                # Or the allergen before the noun: I have a cat allergy, I've got a bad nut allergy.
                | (?:\bi\s+(?:have|got|have\s+got)|\bi've(?:\s+got)?)\s+(?:an?\s+)?(?:bad\s+|severe\s+|serious\s+|mild\s+)?(?P<r3><ALLERGENS>)\s+allerg(?:y|ies)\b
                # Topic first, with no verb, as BSL-shaped English puts it: me allergy plaster.
                | ^(?:important[.:!,]?\s+)?(?:me|my|i)\s+allerg(?:y|ies|ic)\s+(?P<r4><ALLERGENS>)\b
            "
            .replace("<ALLERGENS>", ALLERGENS)
            .replace("<HEALTH>", HEALTH_STATES)
            .replace("<INTENSITY>", INTENSITY)
            .replace("<ECZEMA>", ECZEMA)
            .replace("<CROHNS>", CROHNS)
            .as_str(),
            |c, s| {
                let health = if let Some(z) = cap(c, "z").or(cap(c, "f")).or(cap(c, "f2")).or(cap(c, "c")).or(cap(c, "c2")) {
                    let z = condition_as_spelt(&tidy(&z.to_lowercase()).replace('-', " "));
                    // Sugar is diabetes, and blood pressure is high, only where the clause ends
                    // on it: "I have sugar in my tea" is tea, "I have blood pressure check" a
                    // check.
                    if z.starts_with("sugar") || z == "blood pressure" {
                        let after = c.name("c").map_or("", |m| &s.text[m.end()..]).trim_start().to_lowercase();
                        let ends = after.is_empty()
                            || after.starts_with([',', '.', ';', '!'])
                            || ["since ", "for ", "too", "also", "so ", "and ", "but ", "now"].iter().any(|w| after.starts_with(w));
                        if !ends {
                            return Vec::new();
                        }
                    }
                    let z = if z.starts_with("sugar") { "diabetes".to_string() } else { z };
                    let z = if z == "high pressure" || z == "blood pressure" { "high blood pressure".to_string() } else { z };
                    // "I have high blood pressure": a condition one has, not one is.
                    let said_have = cap(c, "c").is_some() || cap(c, "c2").is_some();
                    let diabetes_type = cap(c, "t1").or(cap(c, "t2")).or(cap(c, "t3")).or(cap(c, "t4")).or_else(|| {
                        z.strip_prefix("type ").and_then(|t| t.strip_suffix(" diabetic")).filter(|t| t.len() == 1)
                    });
                    // One key per condition however it is said ("I'm diabetic", "I have diabetes").
                    let (state, content) = match (diabetes_type, z.as_str()) {
                        (Some(t), _) => (format!("type {t} diabetes"), format!("User has type {t} diabetes")),
                        (None, "diabetic") => ("diabetes".to_string(), "User is diabetic".to_string()),
                        (None, "epileptic") => ("epilepsy".to_string(), "User is epileptic".to_string()),
                        (None, "asthmatic") => ("asthma".to_string(), "User is asthmatic".to_string()),
                        (None, "epilepsy" | "asthma" | "diabetes") => (z.clone(), format!("User has {z}")),
                        (None, c) if c.ends_with(" disease") || said_have => {
                            (z.trim_start_matches("a ").to_string(), format!("User has {z}"))
                        }
                        _ => (z.clone(), format!("User is {z}")),
                    };
                    // "Crohn's" and "crohns" fill one slot.
                    let key =
                        format!("health:{}", state.trim_end_matches(" disease").replace(' ', "_").replace('\'', "").to_lowercase());
                    Some((content, key, state))
                } else if cap(c, "pen").is_some() {
                    // The EpiPen: what it is for is in the sentences around it, kept beside it.
                    let content = "User carries an EpiPen for a severe allergy".to_string();
                    Some((content, "health:epipen".to_string(), "yes".to_string()))
                } else {
                    None
                };
                if let Some((content, key, value)) = health {
                    let mut d = profile(content, 0.9, 0.85).keyed(key, value);
                    d.sensitivity = Sensitivity::Sensitive;
                    return vec![Found::add(d)];
                }
                if c.name("bare").is_some() || c.name("bare_noun").is_some() {
                    // What to: the allergens the sentence names before the word, or the medicines
                    // ("n no cipro ever im allergic").
                    let before = &s.text[..c.get(0).map_or(0, |m| m.start())];
                    let mut named: Vec<String> = allergens().find_iter(before).map(|m| m.as_str().to_lowercase()).collect();
                    if named.is_empty() {
                        named = before
                            .split(|ch: char| !ch.is_alphanumeric() && ch != '-')
                            .filter(|w| w.len() > 3 && super::medication::medicine(w, false))
                            .map(str::to_lowercase)
                            .collect();
                    }
                    return named
                        .into_iter()
                        .map(|x| {
                            Found::add(profile(format!("User is allergic to {x}"), 0.9, 0.9).keyed(format!("allergy:{x}"), x))
                        })
                        .collect();
                }
                let Some(x) =
                    cap(c, "x")
                    .or(cap(c, "x2"))
                    .or(cap(c, "y"))
                    .or(cap(c, "r"))
                    .or(cap(c, "r2"))
                    .or(cap(c, "r3"))
                    .or(cap(c, "r4"))
                    .and_then(phrase)
                else {
                    return Vec::new();
                };
                let x = if cap(c, "x").or(cap(c, "x2")).is_some() { x } else { x.to_lowercase() };
                // "allergic to ppd myself", "… too lol", "allergy of cat very strong": the chat's
                // words and how strong it is, after the allergen.
                let mut x = x.as_str();
                while let Some(cut) = [
                    "myself", "themselves", "too", "as well", "also", "lol", "btw", "tho", "though", "haha", "very", "strong",
                    "bad", "badly", "really", "real", "severe", "big time",
                ]
                    .iter()
                    .find_map(|w| x.strip_suffix(w).filter(|r| r.ends_with(' ')).map(str::trim_end))
                {
                    x = cut;
                }
                // "walnuts n pecans": the allergens named in full words.
                let x = x.split(' ').map(|w| if w == "n" || w == "&" { "and" } else { w }).collect::<Vec<_>>().join(" ");
                let key = format!("allergy:{}", x.to_lowercase());
                let mut found = vec![Found::add(profile(format!("User is allergic to {x}"), 0.9, 0.9).keyed(key, x.clone()))];
                // "allergic to penicillin and also to sesame": what the phrase left after its
                // "and" names more, each kept on its own.
                let raw = cap(c, "x").or(cap(c, "x2")).unwrap_or_default();
                let (raw, xl) = (raw.to_lowercase(), x.to_lowercase());
                let rest = raw.find(&xl).map_or("", |at| &raw[at + xl.len()..]).trim_start();
                if ["and ", "& ", "plus ", "as well as "].iter().any(|j| rest.starts_with(j)) {
                    for m in allergens().find_iter(rest) {
                        let more = m.as_str().to_lowercase();
                        if !xl.contains(&more) {
                            let d = profile(format!("User is allergic to {more}"), 0.9, 0.9);
                            found.push(Found::add(d.keyed(format!("allergy:{more}"), more)));
                        }
                    }
                }
                found
            },
        ),
    ]
}

/// Health states said as "I'm …" (and texted alone): the safety path's conditions.
const HEALTH_STATES: &str = r"(?:lactose[-\x20]intolerant|gluten[-\x20]intolerant|celiac|coeliac|type\s+[12]\s+diabetic|diabetic|epileptic|asthmatic)";

/// What people are allergic to, as a reaction to it names it ("penicillin blows me up") and
/// as "I'm allergic" after it ("no shrimp or shellfish, I'm allergic") refers to it: common
/// allergens by name, so a reaction to anything else ("running gives me a rash") is no allergy.
const ALLERGENS: &str = r"(?i:penicillin|amoxicillin|antibiotics|ibuprofen|aspirin|codeine|morphine|sulfa(?:\s+drugs)?|latex|plasters?|tree\s+nuts|peanuts?|nuts|cashews?|almonds?|walnuts|hazelnuts|shellfish|shrimps?|prawns?|crab|lobster|mussels|oysters|fish|eggs?|milk|dairy|gluten|wheat|soy|soya|sesame|strawberries|kiwis?|mangoes|mango|bee\s+stings?|wasp\s+stings?|stings|cats?|dogs?|pollen|dust\s+mites?|dust|feathers|nickel|mushrooms)";

/// [`ALLERGENS`] found anywhere in a text, as whole words.
fn allergens() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(&format!(r"\b{ALLERGENS}\b")).expect("allergens regex"))
}

/// How strongly a state is said to hold ("severely allergic", "very lactose intolerant",
/// "properly asthmatic").
const INTENSITY: &str = r"(?:severely|very|really|deathly|super|mildly|slightly|also|quite|extremely|highly|seriously|properly|pretty|badly)";

/// Eczema as it is typed ("excema", "exema").
const ECZEMA: &str = r"e(?:cz|xc|x|cx|z)ema";

/// Crohn's as it is typed ("crohns", "chrones", "chrons").
const CROHNS: &str = r"(?:crohn'?s|c?hro(?:h)?ne?'?s|chrons)";

/// A condition as it is spelt in its slot: "excema" is eczema, "chrones" Crohn's, "hep b"
/// hepatitis B, so a typo and the right spelling fill one slot.
fn condition_as_spelt(z: &str) -> String {
    static ECZEMA_RE: OnceLock<Regex> = OnceLock::new();
    static CROHNS_RE: OnceLock<Regex> = OnceLock::new();
    let eczema = ECZEMA_RE.get_or_init(|| Regex::new(&format!("^{ECZEMA}$")).expect("eczema regex"));
    let crohns =
        CROHNS_RE.get_or_init(|| Regex::new(&format!(r"^{CROHNS}(?P<d>\s+disease)?$")).expect("crohn's regex"));
    if eczema.is_match(z) {
        return "eczema".to_string();
    }
    if let Some(c) = crohns.captures(z) {
        return format!("Crohn's{}", c.name("d").map_or("", |d| d.as_str()));
    }
    if let Some(x) = z.strip_prefix("hep ").or_else(|| z.strip_prefix("hepatitis ")).filter(|x| x.len() == 1) {
        return format!("hepatitis {}", x.to_uppercase());
    }
    if z == "hiv" {
        return "HIV".to_string();
    }
    z.to_string()
}

fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "my dog is called Biscuit", "my sister Emma": a pet or a relation with a name.
fn named_relation(c: &Captures<'_>, s: &Sentence<'_>, explicit: bool) -> Vec<Found> {
    let rel = super::lex::relation_in_full(&cap(c, "rel").unwrap_or_default().to_lowercase());
    let Some(x) = cap(c, "x") else { return Vec::new() };
    // Bare appositions need a capital ("my sister Emma"); "is called biscuit" does not.
    if !explicit && (!x.starts_with(char::is_uppercase) || s.lowercase) {
        return Vec::new();
    }
    let Some(name) = name_of(x) else { return Vec::new() };
    // "my sis ROM", "my son GCSE": a short word in capitals is an acronym, not a name.
    let first = name.split_whitespace().next().unwrap_or_default();
    if !explicit && (2..=4).contains(&first.chars().count()) && first.chars().all(|c| c.is_uppercase()) {
        return Vec::new();
    }
    let species = species_key(&rel);
    let is_pet = super::lex::is_pet_word(&rel) && !super::lex::is_relation_word(&rel);
    let first_name = name.split_whitespace().next().unwrap_or_default().to_lowercase();
    if is_pet {
        let sp = species_singular(&rel);
        return vec![Found::add(
            profile(format!("User has {} {sp} named {name}", article(&sp)), 0.85, 0.75)
                .keyed(format!("pet:{species}:{first_name}"), name),
        )];
    }
    let key = relation_key(&rel);
    let key = if is_unique_relation(&key) { format!("family:{key}") } else { format!("family:{key}:{first_name}") };
    vec![Found::add(profile(format!("User's {rel} is named {name}"), 0.85, 0.8).keyed(key, name))]
}

/// Nouns that follow a pet word to make another noun ("dog food", "cat litter", "fish tank"):
/// after "my dog" in lower case, not a name.
const PET_COMPOUNDS: &[&str] = &[
    "food",
    "bowl",
    "bowls",
    "bed",
    "beds",
    "toy",
    "toys",
    "walker",
    "walkers",
    "sitter",
    "sitters",
    "park",
    "parks",
    "treats",
    "treat",
    "door",
    "crate",
    "leash",
    "lead",
    "collar",
    "harness",
    "vet",
    "hair",
    "fur",
    "tail",
    "litter",
    "tree",
    "flap",
    "tank",
    "cage",
    "feeder",
    "house",
    "kennel",
    "groomer",
    "trainer",
    "training",
    "insurance",
    "years",
    "days",
    "tag",
    "tags",
    "friend",
    "friends",
    "sitting",
    "walking",
    "show",
    "shelter",
    "person",
    "people",
    "mom",
    "mum",
    "dad",
    "owner",
    "owners",
    "stuff",
    "pics",
    "pic",
    "photos",
    "photo",
    "allergy",
    "allergies",
];

/// A word shaped like a finite or past verb ("hates", "loved", "gets"): no name.
fn looks_like_a_verb(w: &str) -> bool {
    let long = w.len() > 3;
    (long && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us"))
        || (long && w.ends_with("ed"))
        || w.ends_with("ing")
        || w.ends_with("ly")
        || matches!(w, "is" | "was" | "has" | "had" | "got" | "gets" | "ate" | "did" | "does")
}

/// Reads "at a fintech startup", "for Google", "I'm a nurse at St Mary's".
fn job(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let mut out = Vec::new();
    let x = cap(c, "x").unwrap_or_default();
    // "a 29 year old nurse": the age is its own slot.
    static AGE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let age_re = AGE.get_or_init(|| regex::Regex::new(r"^(\d{1,2})[- ]years?[- ]old\s+").expect("age regex"));
    let x = match age_re.captures(x) {
        Some(a) => {
            let n = a[1].to_string();
            out.push(Found::add(profile(format!("User is {n} years old"), 0.85, 0.6).keyed("age", n)));
            &x[a.get(0).map_or(0, |m| m.end())..]
        }
        None => x,
    };
    // "a nurse from Ohio": where they come from, not where they work.
    if let Some(r) = cap(c, "rest").filter(|r| r.trim_start().to_ascii_lowercase().starts_with("from ")) {
        if let Some(p) = place(&r.trim_start()[5..], s) {
            out.push(Found::add(profile(format!("User is from {p}"), 0.85, 0.7).keyed("hometown", p)));
        }
    }
    let mut job_ops = job_only(c, x);
    job_ops.extend(out);
    job_ops
}

/// Words that make "I'm a ... <job>" a judgement ("a bad cook") rather than a job.
pub(super) const JUDGED: &[&str] = &[
    "amazing",
    "anxious",
    "awful",
    "bad",
    "better",
    "big",
    "bit",
    "born",
    "careful",
    "cautious",
    "classic",
    "complete",
    "crap",
    "crappy",
    "decent",
    "excellent",
    "fantastic",
    "fast",
    "good",
    "great",
    "horrible",
    "huge",
    "lazy",
    "lousy",
    "mediocre",
    "messy",
    "natural",
    "nervous",
    "picky",
    "poor",
    "pretty",
    "proper",
    "real",
    "reluctant",
    "shit",
    "shitty",
    "slow",
    "terrible",
    "total",
    "typical",
    "very",
    "wannabe",
    "worse",
];

/// Words that make a job one the user no longer has, or not yet.
pub(super) const PAST: &[&str] =
    &["aspiring", "ex", "former", "future", "recovering", "retired", "wannabe", "would-be"];

/// Words that make a job-sounding noun a pastime ("amateur photographer").
pub(super) const HOBBY: &[&str] = &["amateur", "backyard", "casual", "hobby", "hobbyist", "home", "weekend"];

fn job_only(c: &Captures<'_>, x: &str) -> Vec<Found> {
    let art = cap(c, "art").unwrap_or("a").to_lowercase();
    let xl = x.to_lowercase();
    let words: Vec<&str> = xl.split_whitespace().collect();
    if words.iter().any(|w| JUDGED.contains(w)) {
        return Vec::new();
    }
    let rest = cap(c, "rest").map(head).unwrap_or_default();
    let rest = if rest.to_ascii_lowercase().starts_with("from ") { "" } else { rest };
    let rest = ["based in", "living in", "based out of"]
        .iter()
        .find_map(|k| rest.to_ascii_lowercase().find(k).map(|i| rest[..i].trim_end()))
        .unwrap_or(rest);
    let rest = if rest.is_empty() { String::new() } else { format!(" {}", third_person(rest)) };
    let what = format!("{}{rest}", tidy(x));
    let content = format!("User is {art} {what}");
    if words.iter().any(|w| PAST.contains(w)) {
        return vec![Found::add(profile(content, 0.8, 0.6))];
    }
    if words.iter().any(|w| HOBBY.contains(w)) {
        return vec![Found::add(Draft::new(Kind::Preference, content, 0.75, 0.6))];
    }
    vec![Found::add(profile(content, 0.85, 0.8).keyed("job", what))]
}

/// Words that make "I work in ..." a field of work rather than a place.
pub(super) const FIELDS: &[&str] = &[
    "a ",
    "accounting",
    "advertising",
    "an ",
    "analytics",
    "banking",
    "biotech",
    "communications",
    "construction",
    "consulting",
    "customer",
    "data",
    "design",
    "devops",
    "education",
    "energy",
    "engineering",
    "fashion",
    "film",
    "finance",
    "games",
    "gaming",
    "government",
    "health",
    "healthcare",
    "hospitality",
    "hr",
    "infrastructure",
    "insurance",
    "it",
    "journalism",
    "law",
    "legal",
    "logistics",
    "management",
    "manufacturing",
    "marketing",
    "media",
    "medicine",
    "music",
    "non-profit",
    "nonprofit",
    "nursing",
    "operations",
    "ops",
    "pharma",
    "policy",
    "pr",
    "product",
    "publishing",
    "qa",
    "real estate",
    "recruiting",
    "research",
    "retail",
    "sales",
    "science",
    "security",
    "software",
    "support",
    "tech",
    "the ",
    "ui",
    "ux",
];

/// "I work as/at/for/in/on ...".
fn work(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    if let Some(remote) = cap(c, "remote") {
        let r = tidy(&remote.to_lowercase());
        let r = if r == "remote" { "remotely".to_string() } else { r };
        return vec![Found::add(profile(format!("User works {r}"), 0.8, 0.6).keyed("work_mode", r))];
    }
    if let Some(j) = cap(c, "job") {
        if !learners_like(c) {
            return Vec::new();
        }
        let (j, at) = match j.to_ascii_lowercase().find(" at ").or_else(|| j.to_ascii_lowercase().find(" for ")) {
            Some(i) => (&j[..i], Some(&j[i..])),
            None => (j, None),
        };
        let Some(role) = phrase(j) else { return Vec::new() };
        let tail = at.and_then(phrase).map(|t| format!(" {t}")).unwrap_or_default();
        let tail = tail.trim_end().to_string();
        let tail = if tail.is_empty() { String::new() } else { format!(" {}", tail.trim_start()) };
        let what = format!("{role}{tail}");
        return vec![Found::add(profile(format!("User works as {what}"), 0.85, 0.8).keyed("job", what))];
    }
    if let Some(emp) = cap(c, "emp") {
        let prep = cap(c, "prep").unwrap_or("at").to_lowercase();
        let (e, role) = match emp.to_ascii_lowercase().find(" as ") {
            Some(i) => (&emp[..i], Some(&emp[i + 4..])),
            None => (emp, None),
        };
        let Some(org) = phrase(e) else { return Vec::new() };
        if matches!(org.to_lowercase().as_str(), "home" | "work" | "night" | "myself" | "themselves" | "a living") {
            if org.eq_ignore_ascii_case("themselves") || org.eq_ignore_ascii_case("myself") {
                return vec![Found::add(
                    profile("User is self-employed".to_string(), 0.85, 0.75).keyed("job", "self-employed"),
                )];
            }
            return Vec::new();
        }
        let mut out = vec![Found::add(profile(format!("User works {prep} {org}"), 0.85, 0.8).keyed("employer", org))];
        if let Some(role) = role.and_then(phrase) {
            out.push(Found::add(profile(format!("User works as {role}"), 0.85, 0.8).keyed("job", role)));
        }
        return out;
    }
    if let Some(field) = cap(c, "field") {
        let Some(f) = phrase(field) else { return Vec::new() };
        let fl = f.to_lowercase();
        let is_field = FIELDS.iter().any(|w| fl.contains(w));
        let capital_place = f.starts_with(char::is_uppercase) && !is_field;
        if capital_place && !s.lowercase {
            return vec![Found::add(profile(format!("User works in {f}"), 0.8, 0.7).keyed("work_location", f))];
        }
        return vec![Found::add(profile(format!("User works in {f}"), 0.85, 0.8).keyed("job", f))];
    }
    if let Some(p) = cap(c, "proj").map(super::lex::strip_times).and_then(|p| phrase(&p)) {
        // "working on something", "working on for weeks": nothing to remember.
        let first = p.split_whitespace().next().unwrap_or_default().to_lowercase();
        let det = matches!(first.as_str(), "my" | "their" | "a" | "an" | "the" | "our" | "this" | "that" | "some");
        let words = super::lex::key_words(&p);
        let vague = words.iter().all(|w| {
            matches!(
                w.as_str(),
                "project"
                    | "projects"
                    | "something"
                    | "new"
                    | "big"
                    | "cool"
                    | "exciting"
                    | "stuff"
                    | "thing"
                    | "things"
                    | "one"
                    | "side"
                    | "few"
                    | "couple"
                    | "lately"
            )
        });
        if !det || vague || p.split_whitespace().count() < 2 {
            return Vec::new();
        }
        let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
        let verb = if whole.contains("working on") { "is working on" } else { "works on" };
        return vec![Found::add(profile(format!("User {verb} {p}"), 0.75, 0.6))];
    }
    Vec::new()
}

/// Nouns that make "a/the ..." an organisation someone works at.
pub(super) const ORGS: &[&str] = &[
    "agency",
    "airline",
    "bakery",
    "bank",
    "bar",
    "branch",
    "business",
    "cafe",
    "café",
    "charity",
    "clinic",
    "college",
    "company",
    "consultancy",
    "corp",
    "corporation",
    "council",
    "depot",
    "enterprise",
    "factory",
    "firm",
    "garage",
    "government",
    "hospital",
    "hotel",
    "lab",
    "library",
    "magazine",
    "manufacturer",
    "ministry",
    "newspaper",
    "non-profit",
    "nonprofit",
    "nursery",
    "office",
    "org",
    "organisation",
    "organization",
    "pharmacy",
    "practice",
    "publisher",
    "restaurant",
    "retailer",
    "salon",
    "scale-up",
    "scaleup",
    "school",
    "shop",
    "startup",
    "store",
    "studio",
    "team",
    "unicorn",
    "university",
    "warehouse",
];

/// Where the user now works, read from the place after "joined" or "starting at" ("the
/// Larkfield garage"): `None` unless it names an organisation. Shared with the plan family,
/// which keeps "I'm starting at Aldi on Monday" as a dated plan too.
pub(super) fn employer(place: &str, s: &Sentence<'_>) -> Option<Found> {
    let org = organisation(place, s)?;
    Some(Found::add(profile(format!("User works at {org}"), 0.9, 0.8).keyed("employer", org)))
}

/// An organisation name: capitalised ("Stripe"), or "a/an ... startup/company/agency".
fn organisation(x: &str, s: &Sentence<'_>) -> Option<String> {
    let h = head(x);
    let h = h.split(" as ").next().unwrap_or(h);
    let lower = h.to_lowercase();
    // "one private construction company", as a learner says "a"; "our Coimbatore branch".
    let described = ["a ", "an ", "the ", "one ", "our "].iter().any(|a| lower.starts_with(a))
        && ORGS.iter().any(|o| lower.contains(o));
    // "the BBC", "the Guardian": a name with its article.
    let the_name = h.strip_prefix("the ").is_some_and(|n| n.starts_with(char::is_uppercase));
    let named =
        h.starts_with(char::is_uppercase) || the_name || (s.lowercase && !lower.starts_with("a ") && !lower.is_empty());
    if !(described || named) {
        return None;
    }
    match h.strip_prefix("one ") {
        Some(rest) => phrase(&format!("{} {rest}", super::lex::article(rest))),
        None => phrase(h),
    }
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{contents, keyed, none, only_episodes, run};
    use crate::op::{Action, Target};

    #[test]
    fn a_name_in_the_next_sentence_belongs_to_the_pet_just_introduced() {
        let got = contents("We just got a kitten! Her name is Pumpkin.");
        assert!(got.iter().any(|c| c == "User's kitten is named Pumpkin"), "{got:?}");
        assert!(contents("Her name is Pumpkin.").iter().all(|c| !c.contains("Pumpkin")), "no referent, no memory");
    }

    #[test]
    fn a_move_at_work_is_no_new_home() {
        for s in [
            "I moved to the data platform team in March.",
            "We moved to the Bristol office last year.",
            "I moved to nights",
        ] {
            assert!(contents(s).iter().all(|c| !c.contains("lives in")), "{s}: {:?}", contents(s));
        }
        assert!(
            contents("We moved to the Lake District in March.").iter().any(|c| c == "User lives in the Lake District")
        );
    }

    #[test]
    fn a_name_before_the_relation_it_names() {
        assert!(
            contents("Ha, and Mabel, my grandmother, still drives.")
                .iter()
                .any(|c| c == "User's grandmother is named Mabel")
        );
        for s in ["Thanks, my friend!", "Cheers, my dear.", "Sorry, my love, I forgot."] {
            assert!(contents(s).iter().all(|c| !c.contains("named")), "{s}: {:?}", contents(s));
        }
        let got = contents("Biscuit, my beagle, stole a sandwich today.");
        assert!(got.iter().all(|c| !c.starts_with("User's beagle,")), "{got:?}");
    }

    #[test]
    fn a_pet_named_in_a_message_typed_in_lower_case() {
        assert!(contents("my dog biscuit hates the rain").iter().any(|c| c == "User has a dog named Biscuit"));
        assert!(
            contents("omg my cat luna just knocked my coffee over").iter().any(|c| c == "User has a cat named Luna")
        );
        for s in ["my dog food is so expensive now", "my dog loves walks in the rain", "my cat litter smells awful"] {
            assert!(contents(s).iter().all(|c| !c.contains("named")), "{s}: {:?}", contents(s));
        }
        // With capitals, the capital tells: "Walks" would be a name, "food" is not.
        assert!(contents("My dog food is so expensive now").iter().all(|c| !c.contains("named")));
    }

    #[test]
    fn names() {
        for s in [
            "My name is Dana.",
            "Hi! My name is dana.",
            "hey, I'm Dana",
            "Hi there, I'm Dana and I need help",
            "Dana here, quick question",
            "my name's dana btw",
            // All in lower case, an age after it.
            "story. im dana, 17, doin the leavin this year",
            "whaddya at. dana here, 56, fish crab out of twillingate",
            "Hello, this is Dana.",
            // Indian English's polite form.
            "Hi, my good name is Dana.",
        ] {
            assert_eq!(keyed(s, "name"), Some("Dana".into()), "{s}");
        }
        assert_eq!(contents("my name is Mary Ann"), vec!["User's name is Mary Ann"]);
        none("I'm Canadian");
        only_episodes("I'm Dana's mom");
        none("I'm OK thanks");
        assert_eq!(keyed("im off, 10 mins till my bus", "name"), None);
        assert_eq!(keyed("mum here, just checking in", "name"), None);
        assert_eq!(keyed("grand here, 20 degrees and sunny", "name"), None);
        assert_eq!(keyed("shes here!! poppy mae, born monday 7lb 2", "name"), None);
        assert_eq!(keyed("She's here!", "name"), None);
        assert_eq!(keyed("im done, 45 minutes of that", "name"), None);
        none("what's my name?");
        none("My name is not important");
    }

    #[test]
    fn a_learners_present_move_from_one_place_to_another_is_a_new_home() {
        assert_eq!(
            keyed("Husband already arrive, now we move from Clayton to Carnegie, more near the train", "home"),
            Some("Carnegie".into())
        );
        for said in ["Next month we move from Clayton to Carnegie", "Every summer we move from Leeds to the coast"] {
            assert_eq!(keyed(said, "home"), None, "{said}");
        }
    }

    #[test]
    fn to_stay_somewhere_is_to_live_there_unless_it_is_for_a_while() {
        assert_eq!(keyed("I stay in Lekki with my brother", "home"), Some("Lekki".into()));
        assert_eq!(keyed("i stay tampines, work at changi doing logistics", "home"), Some("Tampines".into()));
        for said in [
            "I stay in London for work sometimes",
            "we stay in Cornwall every summer",
            "I stay in bed on Sundays",
            "I stay at a hotel near the airport",
            "I stay home with the kids",
        ] {
            assert_eq!(keyed(said, "home"), None, "{said}");
        }
    }

    #[test]
    fn an_acronym_after_a_relation_is_no_name() {
        let got = contents("april is my sis ROM, 18 april at the registry");
        assert!(got.iter().all(|c| !c.contains("named ROM")), "{got:?}");
        assert_eq!(keyed("my sister Emma is visiting", "family:sister:emma"), Some("Emma".into()));
    }

    #[test]
    fn starting_at_an_organisation_is_a_new_employer() {
        assert_eq!(keyed("I joined the BBC last year", "employer"), Some("the BBC".into()));
        // Starting somewhere new, said in full, texted without the subject or after a comma.
        for said in [
            "I'm starting at the Larkfield garage on Monday",
            "startin at the larkfield garage on monday",
            "I've got a new job, starting at the Larkfield garage on Monday",
            "I'll be starting at the Larkfield garage next week",
        ] {
            assert_eq!(
                keyed(said, "employer").map(|v| v.to_lowercase()),
                Some("the larkfield garage".into()),
                "{said}"
            );
        }
        for said in ["I'm starting at 9am tomorrow", "I start work at 6", "Starting at the bottom is fine"] {
            assert_eq!(keyed(said, "employer"), None, "{said}");
        }
    }

    #[test]
    fn jobs_and_employers() {
        assert_eq!(
            contents("I'm a backend engineer at a fintech startup."),
            vec!["User is a backend engineer at a fintech startup"]
        );
        assert_eq!(contents("i am a nurse"), vec!["User is a nurse"]);
        assert_eq!(
            contents("I work as a product designer at Figma"),
            vec!["User works as a product designer at Figma"]
        );
        assert_eq!(contents("I work at Stripe"), vec!["User works at Stripe"]);
        assert_eq!(keyed("I work for a small agency as a copywriter", "job"), Some("a copywriter".into()));
        assert_eq!(keyed("I just joined Shopify!", "employer"), Some("Shopify".into()));
        assert_eq!(keyed("I teach math at a high school", "job"), Some("math at a high school".into()));
        assert_eq!(keyed("I'm retired now", "job"), Some("retired".into()));
        assert_eq!(keyed("I work remotely", "work_mode"), Some("remotely".into()));
        only_episodes("I'm a terrible cook");
        assert_eq!(keyed("I'm a big fan of jazz", "job"), None);
        assert_eq!(keyed("I'm a bit tired", "job"), None);
        only_episodes("I joined a gym");
        none("If I were a teacher I'd be happier");
        none("Are you a doctor?");
    }

    #[test]
    fn a_learners_like_for_as_names_the_job_and_a_simile_does_not() {
        assert_eq!(
            keyed("I am working like nurse assistant in care home", "job"),
            Some("nurse assistant in care home".into())
        );
        for said in [
            "I work like a dog all week",
            "we worked like crazy to finish",
            "I got a job like the one my dad had",
            "I work like clockwork on Mondays",
            "I work like nobody's business in December",
        ] {
            assert_eq!(keyed(said, "job"), None, "{said}");
        }
    }

    #[test]
    fn a_move_told_after_the_home_it_went_to() {
        for (said, home) in [
            ("The co-op accepted our offer on a little terrace in Heaton. We moved over Easter.", "Heaton"),
            ("finally got a council flat in walthamstow, we shifted last weekend", "Walthamstow"),
            ("We found a lovely cottage in Grasmere and we've finally moved in", "Grasmere"),
            ("We have got the top floor flat at Ashby House in the end... Moved in on the Monday...", "Ashby House"),
            ("The agency found us apartment in Tallaght, two bedroom. On Monday we moved.", "Tallaght"),
            ("council offered us a 2 bed in kirkby and we moved in yesterday", "Kirkby"),
            ("out of the caravan at last! got a 1 bed flat in Chapeltown, moved in on sat", "Chapeltown"),
        ] {
            assert_eq!(keyed(said, "home"), Some(home.into()), "{said}");
            assert!(run(said).iter().any(|o| o.action == Action::Update(Target::Key("home".into()))), "{said}");
        }
        for said in [
            // someone else's home, a home not moved to, a move that names no home of the user's
            "My brother bought a house in Didsbury. We moved his piano in on Sunday.",
            "They showed us a flat in Bow. Honestly we have moved on from that area.",
            "We saw a nice house in Frome and then we moved in with my parents for a bit.",
            "We might get a flat in Deptford. We haven't moved yet.",
            "We moved in last week, the kids love it.",
            "We rented a flat at the end of the road. Moved in on Friday.",
        ] {
            assert_eq!(keyed(said, "home"), None, "{said}");
        }
    }

    #[test]
    fn a_move_to_a_described_home_names_where_it_is() {
        let ops = run("We moved to a tiny hamlet cottage outside of Hexham in March.");
        assert_eq!(ops[0].draft.content, "User lives outside Hexham", "{ops:#?}");
        assert_eq!(keyed("i just moved into a studio in Kreuzberg", "home"), Some("Kreuzberg".into()));
        assert_eq!(keyed("we relocated to a farm near Ballarat", "home"), Some("Ballarat".into()));
        for said in [
            "We moved into a bigger flat.",
            "I moved to a new team in March.",
            "I moved to a new job in Leeds.",
            "The club dropped our Tuesday slot so we've moved to Thursdays at the Swan.",
            "I've moved to nights at the depot.",
        ] {
            assert_eq!(keyed(said, "home"), None, "{said}");
        }
    }

    #[test]
    fn homes() {
        assert_eq!(contents("I live in Lisbon, near the river."), vec!["User lives in Lisbon"]);
        // Typed in lower case, the place is written as named: one place with "Lisbon".
        assert_eq!(keyed("i live in lisbon!", "home"), Some("Lisbon".into()));
        assert_eq!(keyed("i live in the uk now", "home"), Some("the UK".into()));
        assert_eq!(keyed("been living in new york for ages lol", "home"), Some("New York".into()));
        assert_eq!(keyed("We're based in Berlin these days", "home"), Some("Berlin".into()));
        assert_eq!(keyed("I've been living in New York City for 3 years", "home"), Some("New York City".into()));
        assert_eq!(keyed("I'm originally from Brazil", "hometown"), Some("Brazil".into()));
        let ops = run("I moved to Porto last year");
        assert_eq!(ops[0].action, Action::Update(Target::Key("home".into())));
        assert_eq!(ops[0].draft.content, "User lives in Porto");
        none("I don't live in Paris");
        only_episodes("I used to live in Paris when I was a kid, do you know it?");
        only_episodes("I live in the moment");
        assert_eq!(keyed("I'd love to live in Japan", "home"), None);
    }

    #[test]
    fn family_and_pets() {
        assert_eq!(contents("My dog is called Biscuit"), vec!["User has a dog named Biscuit"]);
        assert_eq!(contents("I have a dog named Biscuit."), vec!["User has a dog named Biscuit"]);
        assert_eq!(contents("I have a cat named Miso."), vec!["User has a cat named Miso"]);
        // The adoption is news as well as the name.
        assert_eq!(
            contents("we adopted a puppy called Pepper"),
            vec!["User has a puppy named Pepper", "User and others adopted a puppy called Pepper"]
        );
        assert_eq!(contents("I have two cats, Miso and Tofu"), vec!["User has two cats named Miso and Tofu"]);
        assert_eq!(contents("my wife's name is Sarah"), vec!["User's wife is named Sarah"]);
        assert_eq!(keyed("My husband Tom is visiting", "family:husband"), Some("Tom".into()));
        assert_eq!(keyed("my sister Emma just had a baby", "family:sister:emma"), Some("Emma".into()));
        assert_eq!(keyed("I have two kids", "family:children"), Some("two".into()));
        assert_eq!(contents("My sister lives in Paris"), vec!["User's sister lives in Paris"]);
        assert_eq!(keyed("I'm married to Alex", "relationship"), Some("married".into()));
        assert_eq!(keyed("I'm allergic to peanuts", "allergy:peanuts"), Some("peanuts".into()));
        assert_eq!(keyed("I'm 34", "age"), Some("34".into()));
        assert_eq!(keyed("my birthday is on March 3rd", "birthday"), Some("March 3rd".into()));
        assert_eq!(keyed("Tomorrow is my birthday!", "birthday"), Some("March 3".into()));
        assert_eq!(keyed("I was born in 1990.", "birth_year"), Some("1990".into()));
        none("my sister loves jazz? no idea");
        only_episodes("I'm 5 minutes away");
    }

    #[test]
    fn more_ways_to_say_who_one_is() {
        assert_eq!(keyed("I've got a golden retriever called Max.", "pet:dog:max"), Some("Max".into()));
        assert_eq!(
            contents("We have a cat named Luna and a dog named Rocky."),
            vec!["User has a cat named Luna", "User has a dog named Rocky"]
        );
        assert_eq!(keyed("We just had a baby girl named Ava!", "family:daughter:ava"), Some("Ava".into()));
        assert_eq!(keyed("I run a small bakery in Leeds.", "job"), Some("a small bakery in Leeds".into()));
        assert_eq!(keyed("I'm the CTO of a small startup.", "job"), Some("CTO of a small startup".into()));
        assert_eq!(
            contents("I'm a 29 year old nurse from Ohio."),
            vec!["User is a nurse", "User is 29 years old", "User is from Ohio"]
        );
        assert_eq!(keyed("turned 17 on saturday, finally", "age"), Some("17".into()));
        assert_eq!(keyed("I turned 40 yesterday!", "age"), Some("40".into()));
        assert_eq!(keyed("I'm a software developer based in Toronto.", "home"), Some("Toronto".into()));
        assert_eq!(keyed("I live with my partner in a small flat in Manchester.", "home"), Some("Manchester".into()));
        assert_eq!(keyed("just moved to Seattle!", "home"), Some("Seattle".into()));
        let ops = run("I got a new job as a UX designer at Airbnb.");
        let keys: Vec<_> = ops.iter().map(|o| (o.action.clone(), o.draft.value.clone())).collect();
        assert_eq!(
            keys,
            vec![
                (Action::Update(Target::Key("job".into())), Some("UX designer".into())),
                (Action::Update(Target::Key("employer".into())), Some("Airbnb".into())),
            ]
        );
        assert_eq!(keyed("I changed jobs, I'm now at Stripe.", "employer"), Some("Stripe".into()));
        assert_eq!(keyed("I speak Spanish and Portuguese.", "languages_spoken"), Some("Spanish and Portuguese".into()));
        assert_eq!(keyed("I'm a night owl.", "trait:night_owl"), Some("night owl".into()));
        assert_eq!(keyed("I'm in PST.", "timezone"), Some("PST".into()));
        assert_eq!(keyed("Mom's birthday is on the 21st", "birthday:mother"), Some("the 21st".into()));
        assert_eq!(keyed("hey! i'm sam and i live in boston", "name"), Some("Sam".into()));
        assert_eq!(keyed("my name is actually Danielle", "name"), Some("Danielle".into()));
        assert_eq!(keyed("i'm tired and i live in boston", "name"), None);
        assert_eq!(keyed("Same here!", "name"), None);
        assert_eq!(keyed("Her name's Coco and she's adorable", "name"), None);
        assert_eq!(keyed("I'm Emily.", "name"), Some("Emily".into()));
        assert_eq!(keyed("I'm married with two kids.", "family:children"), Some("two".into()));
        let ops = run("I'm originally from Lagos but moved to Berlin for work.");
        let vals: Vec<_> = ops.iter().map(|o| (o.draft.key.clone().unwrap(), o.draft.value.clone().unwrap())).collect();
        assert!(
            vals.contains(&("home".into(), "Berlin".into())) && vals.contains(&("hometown".into(), "Lagos".into()))
        );
        // A new pet is an addition, never a correction of the old one.
        let ops = run("My partner Sam and I just got a puppy named Waffles.");
        assert!(ops.iter().all(|o| o.action == Action::Add), "{ops:?}");
        // Naming the old value makes it a replacement of that one.
        let ops = run("Sorry, my daughter is Lily, not Lila.");
        assert_eq!(ops[0].action, Action::Update(Target::Matching("daughter lila".into())));
        assert_eq!(ops[0].draft.content, "User's daughter is named Lily");
    }
}
