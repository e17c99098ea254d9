//! Moods and transient states: "I'm exhausted today", "feeling stressed about the interview",
//! "I had a rough day".
//!
//! A bad day is not a personality trait: these are always [`Kind::Ephemeral`], surfaced only to
//! shape tone, and expire three days after the message. Salience clears the ephemeral floor (0.6)
//! only when the state is clearly about now; habits ("I get anxious when I fly") are skipped.

use chrono::Duration;
use regex::Captures;

use super::lex::{head, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::{Kind, Surface};
use crate::op::Draft;
use crate::text::tidy;

/// How long a mood stays true.
const TTL_DAYS: i64 = 3;

fn ephemeral(content: String, salience: f32, s: &Sentence<'_>) -> Found {
    let mut d = Draft::new(Kind::Ephemeral, content, 0.8, salience).surfaced(Surface::Adapt);
    d.expires_at = s.at.checked_add_signed(Duration::days(TTL_DAYS));
    d.valid_from = Some(s.at);
    Found::add(d)
}

/// Salience of a state from the words around it: now (0.75), unmarked present (0.65); none for
/// a habit or a past feeling, which are no mood to adapt to.
fn salience(s: &Sentence<'_>, past: bool) -> Option<f32> {
    let l = &s.lower;
    let habit =
        [" whenever ", " when i ", " always ", " usually ", " often ", " every time", " tend to ", " in general"]
            .iter()
            .any(|w| l.contains(w));
    if habit {
        return None;
    }
    let now = [
        "today",
        "tonight",
        " rn",
        "right now",
        "this morning",
        "at the moment",
        "currently",
        "this afternoon",
        "this evening",
        " now",
    ]
    .iter()
    .any(|w| l.contains(w));
    // A feeling in the past, told neither today nor just now ("I felt so proud at the parade"),
    // is no mood to adapt to: what happened is told, and episodic capture keeps it.
    match (past, now) {
        (false, true) => Some(0.75),
        (true, true) | (false, false) => Some(0.65),
        (true, false) => None,
    }
}

/// How the words after a mood begin when they say what it is about ("about the interview").
pub(super) const STARTS: &[&str] = &[
    "about",
    "after",
    "at ",
    "at the moment",
    "because",
    "before",
    "by ",
    "for",
    "from",
    "he ",
    "i ",
    "in ",
    "it ",
    "lately",
    "my ",
    "of",
    "on ",
    "over",
    "recently",
    "right now",
    "she ",
    "since",
    "that",
    "that ",
    "they ",
    "this morning",
    "this week",
    "to ",
    "today",
    "tonight",
    "with",
];

/// What follows a mood word when it says what about ("about the interview", "today").
fn about(rest: &str) -> String {
    let r = rest.trim_start();
    let l = r.to_lowercase();
    if !STARTS.iter().any(|s| l.starts_with(s)) {
        return String::new();
    }
    let cut = head(r);
    let words: Vec<&str> = cut.split_whitespace().take(12).collect();
    if words.is_empty() { String::new() } else { format!(" {}", third_person(&words.join(" "))) }
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "mood.mood-i-am",
            Mode::Statement,
            &[],
            r"(?x)
                # e.g. I'm so anxious about tomorrow.
                \bi(?P<tense>
                    'm
                    | \s+am
                    | 've\s+been
                    | \s+have\s+been
                    | \s+was
                    | \s+feel
                    | \s+felt
                    | 'm\s+feeling
                    | \s+am\s+feeling
                    | \s+keep\s+feeling
                    | 'm\s+getting
                    | \s+am\s+getting
                    | 'm\s+starting\s+to\s+feel
                    | \s+woke\s+up
                    | 've\s+been\s+feeling
                    | \s+have\s+been\s+feeling
                )
                \s+(?:
                    (?:
                        so | really | very | super | pretty | quite | a\s+bit | a\s+little
                        | a\s+little\s+bit | kinda | kind\s+of | sort\s+of | totally | completely
                        | absolutely | extremely | incredibly | utterly | just | too | still | also
                        | soo+ | rather | fairly | somewhat | beyond | insanely | seriously | mega
                        | hella | bloody | damn | fucking | freaking | feeling | honestly | literally
                        | increasingly | more\s+and\s+more | way\s+too | a\s+lot\s+more | [a-z]+ly
                    )
                    \s+
                )*
                (?P<adj><MOOD>)\b
            ",
            mood,
        ),
        Rule::new(
            "mood.in-a-mood",
            Mode::Statement,
            &["mood"],
            r"(?x)
                # e.g. I'm in a weirdly good mood.
                \b(?:<IM>\s+(?:in|having)|i've\s+been\s+in|been\s+in)\s+(?:such\s+)?(?:a|an)\s+(?:(?:really|very|super|pretty|weirdly|strangely)\s+)?(?P<adj>
                    great | good | bad | terrible | foul | rotten | weird | funny | sour | grumpy
                    | awful | amazing | fantastic | horrible | shit | crappy | reflective | mellow
                    | silly | cheerful | gloomy | dark | low
                )
                \s+mood\b
            ",
            |c, s| {
                let adj = cap(c, "adj").unwrap_or_default().to_lowercase();
                let Some(sal) = salience(s, false) else { return Vec::new() };
                let end = c.get(0).map_or(0, |m| m.end());
                let tail = about(&s.text[end..]);
                vec![ephemeral(format!("User is in {} {adj} mood{tail}", super::lex::article(&adj)), sal, s)]
            },
        ),
        Rule::new(
            "mood.mood-bare",
            Mode::Statement,
            &[],
            r"(?x)
                # e.g. Feeling pretty overwhelmed.
                ^(?:
                    (?:
                        ugh | man | well | honestly | tbh | omg | god | oof | sigh | meh | lol | so
                        | just | still | and | but | also | now
                    )
                    [,!.]?\s+
                )*
                (?P<tense>
                    feeling | been\s+feeling | feel | so | super | really | pretty | kinda | totally
                    | absolutely | completely | utterly | extremely | incredibly | soo+
                )
                \s+(?:
                    (?:
                        so | really | very | super | pretty | quite | a\s+bit | a\s+little | kinda
                        | kind\s+of | totally | completely | absolutely
                    )
                    \s+
                )*
                (?P<adj><MOOD>)\b
            ",
            mood,
        ),
        Rule::new(
            "mood.rough-day",
            Mode::Statement,
            &["day", "week", "night", "morning", "afternoon", "evening", "month", "weekend"],
            r"(?x)
                # e.g. I had such a rough week.
                \b(?P<v>
                    had | 've\s+had | have\s+had | having | 'm\s+having | am\s+having | it's\s+been
                    | it\s+was | been | today\s+was | today's\s+been | today\s+has\s+been
                )
                \s+(?:a|an|such\s+a|one\s+of\s+those|quite\s+a|the\s+most)?\s*(?:
                    (?:
                        really | very | super | pretty | so | long | bit\s+of\s+a | absolutely | fucking
                        | freaking | incredibly | extremely | truly
                    )
                    \s+
                )*
                (?P<adj>
                    rough | bad | terrible | awful | horrible | long | tough | hard | stressful
                    | crazy | hectic | exhausting | great | good | amazing | wonderful | fantastic
                    | productive | shitty | crappy | miserable | lovely | busy | brutal | draining
                    | weird | emotional | frustrating | difficult | exciting | chaotic | insane
                    | nightmare | emotional
                )
                \s+(?P<span>
                    days? | week | night | morning | afternoon | evening | month
                    | couple\s+of\s+days | few\s+days | weekend
                )
                \b
            ",
            |c, s| {
                // "you had a great day", "they had a rough week": someone else's day.
                let start = c.get(0).map_or(0, |m| m.start());
                let last = s.text[..start].split_whitespace().last().unwrap_or_default().to_lowercase();
                if matches!(last.as_str(), "you" | "he" | "she" | "they" | "we" | "kids" | "everyone" | "u") {
                    return Vec::new();
                }
                // "Mum's having a bad day", "my sister had a rough week", "Dave had a long day".
                let said = s.text[..start].split_whitespace().last().unwrap_or_default();
                let someone = (last.ends_with("'s")
                    && !matches!(last.as_str(), "it's" | "that's" | "today's" | "what's"))
                    || super::lex::is_relation_word(last.trim_end_matches("'s"))
                    || (said.starts_with(char::is_uppercase)
                        && !matches!(last.as_str(), "i" | "i'm" | "i've" | "i'd" | "it's" | "today" | "today's"));
                if someone {
                    return Vec::new();
                }
                let adj = cap(c, "adj").unwrap_or_default().to_lowercase();
                let span = tidy(&cap(c, "span").unwrap_or("day").to_lowercase());
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let (verb, sal) = if v.contains("having") {
                    ("is having", 0.75)
                } else {
                    let fresh = matches!(span.as_str(), "day" | "night" | "morning" | "afternoon" | "evening")
                        || s.lower.contains("today");
                    ("had", if fresh { 0.7 } else { 0.6 })
                };
                let art = super::lex::article(&adj);
                let span = if span == "days" { "few days".to_string() } else { span };
                vec![ephemeral(format!("User {verb} {art} {adj} {span}"), sal, s)]
            },
        ),
        Rule::new(
            "mood.day-was",
            Mode::Statement,
            &["today", "this week", "this morning", "tonight", "work", "the day"],
            r"(?x)
                # e.g. Today was exhausting.
                \b(?P<when>
                    today
                    | this\s+week
                    | this\s+morning
                    | tonight
                    | my\s+day
                    | my\s+week
                    | work\s+today
                )
                \s+(?:
                    was
                    | has\s+been
                    | is
                    | 's\s+been
                    | was\s+just
                    | is\s+being
                    | (?P<sucks>sucks|sucked|blows|blew|is\s+the\s+worst|was\s+the\s+worst)
                )
                \s*(?:
                    (?:
                        so | really | very | super | pretty | such\s+a | absolutely | incredibly
                        | a\s+bit | kind\s+of | kinda
                    )
                    \s+
                )*
                (?P<adj>
                    rough | awful | terrible | great | amazing | long | stressful | hard | tough
                    | exhausting | crazy | hectic | good | bad | brutal | draining | a\s+nightmare
                    | insane | chaotic | miserable | a\s+disaster | a\s+mess | wonderful | fantastic
                    | overwhelming
                )?
                \b
            ",
            |c, s| {
                if cap(c, "adj").is_none() && cap(c, "sucks").is_none() {
                    return Vec::new();
                }
                let when = tidy(&cap(c, "when").unwrap_or("today").to_lowercase());
                let adj = match cap(c, "sucks") {
                    Some(_) => "awful".to_string(),
                    None => tidy(&cap(c, "adj").unwrap_or_default().to_lowercase()),
                };
                let content = match when.as_str() {
                    "this week" => format!("User's week has been {adj}"),
                    "this morning" => format!("User's morning was {adj}"),
                    w if w.starts_with("work") => format!("User's work day was {adj}"),
                    _ => format!("User's day was {adj}"),
                };
                vec![ephemeral(content, 0.7, s)]
            },
        ),
        Rule::new(
            "mood.long-day-bare",
            Mode::Statement,
            &["day", "week", "night", "morning"],
            r"(?x)
                # e.g. Ugh, long day.
                ^(?:
                    (?:
                        ugh | man | oof | sigh | whew | phew | what\s+a | such\s+a | wow | bit\s+of\s+a
                        | kind\s+of\s+a | kinda\s+a
                    )
                    [,!.]?\s+
                )*
                (?:(?:a|an)\s+)?(?:(?:really|very|super|so)\s+)?(?P<adj>
                    long | rough | bad | tough | crazy | hectic | stressful | exhausting | busy
                    | terrible | awful | brutal | horrible
                )
                \s+(?P<span>day|week|night|morning)\b
            ",
            |c, s| {
                if s.text.split_whitespace().count() > 7 {
                    return Vec::new();
                }
                let adj = cap(c, "adj").unwrap_or_default().to_lowercase();
                let span = cap(c, "span").unwrap_or("day").to_lowercase();
                vec![ephemeral(format!("User had {} {adj} {span}", super::lex::article(&adj)), 0.7, s)]
            },
        ),
        Rule::new(
            "mood.sleep",
            Mode::Statement,
            &["sleep", "slept", "insomnia"],
            r"(?x)
                # e.g. I barely slept last night.
                \bi\s+(?:couldn't|could\s+not|can't|cannot|didn't|did\s+not|barely|hardly)\s+(?:sleep|slept|get\s+(?:any|much)\s+sleep)
                | \bi\s+(?:slept|sleep)\s+(?:so\s+|really\s+)?(?:
                    badly
                    | terribly
                    | poorly
                    | like\s+crap
                    | like\s+shit
                    | for\s+(?:like\s+)?(?:two|three|four|2|3|4)\s+hours
                )
                | \b(?:no|zero|barely\s+any|hardly\s+any|little)\s+sleep\b
                | \binsomnia\s+(?:again|last\s+night|is\s+back)
            ",
            |_, s| vec![ephemeral("User slept badly".to_string(), 0.65, s)],
        ),
        Rule::new(
            "mood.ailment",
            Mode::Statement,
            &["cold", "flu", "headache", "migraine", "covid", "fever", "sick", "sore throat", "coming down", "stomach"],
            r"(?x)
                # e.g. I think I have the flu.
                \bi(?:'ve|\s+have)?\s+(?:(?:just|also|still)\s+)*(?:
                    have
                    | got
                    | caught
                    | 've\s+got
                    | am\s+coming\s+down\s+with
                    | 'm\s+coming\s+down\s+with
                    | think\s+i\s+have
                )
                \s+(?P<x>
                    (?:a|an|the|some\s+kind\s+of|this)\s+(?:
                        (?:bad|terrible|nasty|awful|killer|splitting|horrible|mild|slight)\s+
                    )?
                    (?:
                        cold | flu | headache | migraine | fever | sore\s+throat | stomach\s+bug
                        | stomach\s+ache | bug | cough | virus
                    )
                    | covid
                    | the\s+flu
                )
            ",
            |c, s| {
                let x = tidy(&cap(c, "x").unwrap_or_default().to_lowercase());
                vec![ephemeral(format!("User has {x}"), 0.7, s)]
            },
        ),
    ]
}

/// Words a mood's object starts with.
const PREPOSITIONS: &[&str] = &["about", "at", "by", "for", "from", "in", "of", "on", "over", "to", "with"];

/// Glad feelings that, said bare, are a reply to the other speaker's news.
const REPLY_FEELINGS: &[&str] = &[
    "blessed",
    "chuffed",
    "ecstatic",
    "elated",
    "excited",
    "glad",
    "grateful",
    "happy",
    "hopeful",
    "hyped",
    "inspired",
    "lucky",
    "motivated",
    "on top of the world",
    "optimistic",
    "over the moon",
    "proud",
    "psyched",
    "pumped",
    "relieved",
    "stoked",
    "thankful",
    "thrilled",
];

/// Whether what a glad feeling is about leans on what was just said and names nothing of its
/// own: "thankful for those experiences", "stoked to start this new chapter", "happy with how
/// it turned out", or two words that say little ("excited to go", "thankful for their love").
/// Such a feeling answers the other speaker; "excited for this weekend" names a time and
/// stays, as does anything with a name or a number.
fn leans_on_the_chat(tail: &str) -> bool {
    let words: Vec<&str> = tail.split_whitespace().collect();
    if words.iter().any(|w| w.starts_with(char::is_uppercase) || w.chars().any(|c| c.is_ascii_digit())) {
        return false;
    }
    let lower: Vec<String> =
        words.iter().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase()).collect();
    let time = |w: &String| {
        super::readable::TIME_NOUNS.contains(&w.as_str())
            || matches!(w.as_str(), "today" | "tonight" | "tomorrow" | "now" | "lately" | "recently")
            || super::when::WEEKDAYS.split('|').any(|d| d == w)
    };
    if lower.iter().any(time) {
        return false;
    }
    // "proud of my daughter", "worried about my dad": someone of the user's is named.
    if lower.iter().any(|w| super::lex::is_relation_word(w) || super::lex::is_pet_word(w)) {
        return false;
    }
    let pointing = lower.iter().any(|w| matches!(w.as_str(), "it" | "this" | "that" | "those" | "these" | "them"));
    pointing || lower.len() <= 3
}

fn mood(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let adj = tidy(&cap(c, "adj").unwrap_or_default().to_lowercase());
    let tense = cap(c, "tense").unwrap_or_default().to_lowercase();
    let end = c.get(0).map_or(0, |m| m.end());
    let rest = &s.text[end..];
    let next = rest.trim_start().to_lowercase();
    // "sick of", "tired of": a dislike, not a mood. "happy to help", "down for", "off to": idioms.
    let idiom = match adj.as_str() {
        "sick" | "tired" => next.starts_with("of"),
        "happy" | "relieved" | "proud" => next.starts_with("to help") || next.starts_with("to hear"),
        "down" => next.starts_with("for") || next.starts_with("to ") || next.starts_with("with it"),
        "low" => next.starts_with("on"),
        "off" => !tense.contains("feel"),
        _ => false,
    };
    if idiom {
        return Vec::new();
    }
    // "happy for you", "proud of you", "excited to hear your thoughts": about the other person.
    if ["for you", "of you", "to hear", "to see you", "that you", "you ", "with you", "for u", "of u"]
        .iter()
        .any(|p| next.starts_with(p))
        || next == "you"
    {
        return Vec::new();
    }
    let past = tense.contains("was") || tense.contains("felt") || tense.contains("woke");
    let Some(sal) = salience(s, past) else { return Vec::new() };
    let tail = about(rest);
    let said: Vec<String> = tail
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase())
        .collect();
    // "proud of what you did": about the other speaker.
    if said.iter().any(|w| matches!(w.as_str(), "you" | "your" | "yours" | "u" | "ur")) {
        return Vec::new();
    }
    // "proud of it", "excited about them": what it is about was said before, and the memory
    // cannot carry it; the feeling is kept bare.
    let leans = said.first().is_some_and(|p| PREPOSITIONS.contains(&p.as_str()))
        && said
            .iter()
            .skip(1)
            .all(|w| matches!(w.as_str(), "it" | "this" | "that" | "them" | "these" | "those" | "all"));
    let tail = if leans { String::new() } else { tail };
    // A bare glad feeling with nothing it is about and no "now" ("I'm so stoked!", "Feeling
    // thankful") answers what the other speaker just said: a reply, not a state to adapt to.
    // A low one stays even bare ("I'm exhausted"): that is what tone should follow.
    let glad = REPLY_FEELINGS.contains(&adj.as_str());
    if (tail.is_empty() && !past && sal < 0.7 && glad) || (glad && !tail.is_empty() && leans_on_the_chat(&tail)) {
        return Vec::new();
    }
    // "freaking out", "panicking" are what the user is doing, not a feeling to name:
    // "User is panicking", never "User is feeling panicking".
    const FEELING_ING: &[&str] = &["amazing", "annoying", "boring", "depressing", "exhausting", "frustrating"];
    let doing = adj.split_whitespace().next().is_some_and(|w| w.ends_with("ing") && !FEELING_ING.contains(&w));
    let verb = match (past, doing) {
        (true, true) => "was",
        (false, true) => "is",
        (true, false) => "was feeling",
        (false, false) => "is feeling",
    };
    vec![ephemeral(format!("User {verb} {adj}{tail}"), sal, s)]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{none, only_episodes, run};
    use crate::kind::{Kind, Surface};
    use chrono::{DateTime, Utc};

    fn mood(s: &str) -> (String, f32) {
        let ops = run(s);
        assert_eq!(ops.len(), 1, "{s}: {ops:?}");
        let d = &ops[0].draft;
        assert_eq!(d.kind, Kind::Ephemeral, "{s}");
        assert_eq!(d.surface, Some(Surface::Adapt));
        assert_eq!(d.expires_at, Some("2026-03-05T09:00:00Z".parse::<DateTime<Utc>>().unwrap()));
        (d.content.clone(), d.salience)
    }

    #[test]
    fn moods_are_ephemeral_and_salient_when_now() {
        assert_eq!(mood("I'm exhausted today"), ("User is feeling exhausted today".into(), 0.75));
        assert_eq!(
            mood("feeling stressed about the interview"),
            ("User is feeling stressed about the interview".into(), 0.65)
        );
        assert_eq!(mood("I had a rough day").0, "User had a rough day");
        assert_eq!(mood("ugh, long day").0, "User had a long day");
        assert_eq!(mood("i'm sooo tired rn").0, "User is feeling tired");
        assert_eq!(mood("Honestly I've been feeling really down lately").0, "User is feeling down lately");
        assert_eq!(mood("I'm so nervous about my exam").0, "User is feeling nervous about their exam");
        assert_eq!(mood("today was awful").0, "User's day was awful");
        assert_eq!(mood("I couldn't sleep last night").0, "User slept badly");
        assert_eq!(mood("I think I have a cold").0, "User has a cold");
        assert!(mood("I'm happy today").1 >= 0.6);
        // A feeling in the past is no mood now: what happened is told, and capture keeps it.
        assert!(run("I was tired last week").iter().all(|o| o.draft.kind != Kind::Ephemeral));
        let told = run("I felt so proud and grateful at the parade");
        assert!(told.iter().any(|o| o.draft.kind == Kind::Event && o.draft.content.contains("parade")), "{told:?}");
        assert_eq!(mood("I'm in a great mood today!").0, "User is in a great mood today");
        assert_eq!(mood("today sucks").0, "User's day was awful");
        assert_eq!(mood("I'm kinda bummed.").0, "User is feeling bummed");
    }

    #[test]
    fn a_bare_glad_feeling_is_a_reply_a_bare_low_one_a_mood() {
        for said in ["I'm so stoked!", "I'm feeling thankful", "I am excited!!"] {
            assert!(run(said).iter().all(|o| o.draft.kind != Kind::Ephemeral), "{said}");
        }
        assert_eq!(
            mood("I'm so excited about the trip to Lisbon").0,
            "User is feeling excited about the trip to Lisbon"
        );
        assert_eq!(mood("I'm so happy today").0, "User is feeling happy today");
        assert_eq!(mood("I'm exhausted").0, "User is feeling exhausted");
        // What it is about was said before: the feeling stays bare, or goes when it is a reply.
        assert_eq!(mood("I'm so stressed about it").0, "User is feeling stressed");
        for said in ["I'm so stoked about this", "I'm proud of what you did", "I'm excited about"] {
            assert!(run(said).iter().all(|o| o.draft.kind != Kind::Ephemeral), "{said}");
        }
    }

    #[test]
    fn a_glad_feeling_about_what_was_just_said_is_a_reply() {
        for said in [
            "I'm feeling hopeful",
            "honestly I'm so motivated!",
            "I'm thankful for those memories",
            "I'm so stoked to start this new chapter",
            "I'm happy with how it came out",
            "I'm excited to go",
        ] {
            assert!(run(said).iter().all(|o| o.draft.kind != Kind::Ephemeral), "{said}");
        }
        // What it names keeps it: a time, a name, a number, or words of its own.
        assert_eq!(mood("I'm so excited for this weekend").0, "User is feeling excited for this weekend");
        assert_eq!(mood("I'm stoked about the gig in Bristol").0, "User is feeling stoked about the gig in Bristol");
        assert_eq!(
            mood("I'm proud of finishing my first sprint triathlon").0,
            "User is feeling proud of finishing their first sprint triathlon"
        );
        assert_eq!(mood("I'm so proud of my granddaughter").0, "User is feeling proud of their granddaughter");
        // A low feeling stays, bare or leaning: it is what tone should follow.
        assert_eq!(mood("I'm so anxious about it").0, "User is feeling anxious");
    }

    #[test]
    fn not_moods() {
        only_episodes("I get anxious whenever I fly");
        assert!(run("I'm sick of meetings that could be emails").iter().all(|o| o.draft.kind != Kind::Ephemeral));
        none("I'm happy to help");
        only_episodes("I'm down for pizza");
        none("Are you tired?");
        none("I'm so proud of you!");
        none("Looks like you had a great day!");
        none("Your hard work is really amazing");
    }
}
