//! Tastes: likes and dislikes, favourites, hobbies, diet and goals.
//!
//! Likes are unkeyed (a person likes many things) and kept in the user's words ("User loves
//! hiking in the mountains"); favourites (`favorite:<what>`) and diet (`diet`) are keyed, so a new
//! favourite replaces the old one.

use regex::Captures;

use super::lex::{head, is_vague, phrase, third_person, third_singular};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::op::Draft;
use crate::text::tidy;

fn pref(content: String, conf: f32, sal: f32) -> Draft {
    Draft::new(Kind::Preference, content, conf, sal)
}

/// A favourite given as the answer to the assistant's question ("What's your favorite pizza?"
/// … "Pepperoni of course!"): the reply names it without saying "my favorite", so it is read
/// against the question. `asked` is the assistant's turn, `reply` the user's; `None` unless
/// the turn ends asking for one favourite and the reply opens on a short answer (at most five
/// words, no "I", "you" or refusal: "Hard to pick one!", "Not sure, you?").
pub(super) fn answered_favorite(asked: &str, reply: &str) -> Option<Draft> {
    static ASKED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static LEAD: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let asked_re = ASKED.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\bwhat(?:'s|\s+is|\s+are|\s+would\s+be)\s+(?:your|ur)\s+(?:(?:all[-\s]time|absolute|current)\s+)?(?:favou?rite|fave|fav)\s+(?P<cat>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)(?:\s+(?:of\s+all\s+time|these\s+days|right\s+now|ever|lately|at\s+the\s+moment))?\s*\?\s*$",
        )
        .expect("asked favourite regex")
    });
    let lead_re = LEAD.get_or_init(|| {
        regex::Regex::new(
            r"(?i)^(?:(?:oh|ooh|hmm+|um+|well|easy|definitely|probably|honestly|ha(?:ha)+|lol|ooh|gotta\s+be|has\s+to\s+be|it\s+has\s+to\s+be|it'?s|that'?s|that\s+would\s+be|i'?d\s+(?:have\s+to\s+)?say|i\s+(?:think|guess|love|adore))[\s,!.]+)+",
        )
        .expect("answer lead regex")
    });
    let last = asked.trim_end().rsplit(['.', '!']).next().unwrap_or(asked);
    let cat = asked_re.captures(last.trim())?.name("cat")?.as_str().to_lowercase();
    let reply = lead_re.replace(reply.trim(), "");
    let answer = reply.split(['.', '!', '?', ',', ';', '\u{2014}', '\u{2013}', '(']).next()?.trim();
    let answer = answer.split(" - ").next()?.trim();
    let answer = ["of course", "for sure", "definitely", "hands down", "all the way", "obviously", "for me"]
        .iter()
        .fold(answer, |a, tail| a.strip_suffix(tail).map_or(a, str::trim_end));
    let words: Vec<String> = answer.split_whitespace().map(|w| w.to_lowercase()).collect();
    let refusal = |w: &str| {
        matches!(
            w,
            "i" | "i'm"
                | "i've"
                | "i'd"
                | "me"
                | "my"
                | "you"
                | "your"
                | "yours"
                | "not"
                | "no"
                | "don't"
                | "dunno"
                | "none"
                | "hard"
                | "tough"
                | "too"
                | "many"
                | "so"
                | "sure"
                | "one"
                | "idk"
                | "depends"
                | "question"
                | "what"
                | "why"
                | "how"
                | "wow"
                | "yes"
                | "yeah"
                | "thanks"
                | "thank"
        )
    };
    if words.is_empty()
        || words.len() > 5
        || words.iter().any(|w| refusal(w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')))
    {
        return None;
    }
    Some(favorite(&cat, phrase(answer)?, 0.8))
}

/// "User's favorite {cat} is {x}", keyed `favorite:<cat>` so a new favourite replaces the old
/// one; "My favorite dishes are lasagna and ramen": the verb agrees with a plural.
fn favorite(cat: &str, x: String, confidence: f32) -> Draft {
    let plural = cat.ends_with('s') && !cat.ends_with("ss") && !cat.ends_with("us");
    let verb = if plural { "are" } else { "is" };
    let key = format!("favorite:{}", cat.replace(' ', "_"));
    pref(format!("User's favorite {cat} {verb} {x}"), confidence, 0.7).keyed(key, x)
}

/// Objects of "I like ..." that are about the conversation, not a taste.
fn about_chat(x: &str) -> bool {
    let l = x.trim().to_lowercase();
    // "I love to!", "passionate about - ...": nothing named.
    if super::lex::key_words(&l).is_empty() || l == "to" || l.ends_with(" to") || l.starts_with('-') {
        return true;
    }
    // "that explanation", "this one", "those examples": what the assistant just said; "how it
    // shows ...": what the other person just showed.
    let pointing =
        ["this ", "that ", "these ", "those ", "how it ", "how this ", "how that "].iter().any(|p| l.starts_with(p));
    // Anything the other person said or did ("the power you were talking about") makes it a
    // reaction to them, not a taste of the user's.
    let to_them = l
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| matches!(w, "you" | "your" | "you're" | "you've" | "yours" | "u" | "ur"));
    pointing
        || to_them
        || is_vague(&l)
        || [
            "to think",
            "to believe",
            "to say",
            "to know",
            "to imagine",
            "to keep it",
            "to be honest",
            "it when",
            "that idea",
            "this idea",
            "the idea",
            "your ",
            "you ",
            "how you",
            "what you",
            "the way you",
            "that you",
            "this one",
            "that one",
            "both",
            "this answer",
            "that answer",
            "the answer",
            "the first",
            "the second",
            "option",
            "the last",
            "this approach",
            "that approach",
            "the suggestion",
            "this suggestion",
            "is ",
            "are ",
            "was ",
            "were ",
            "makes ",
            "made ",
            "has ",
            "have ",
            "had ",
            "can ",
            "will ",
            "would ",
            "does ",
            "did ",
            "gets ",
            "keeps ",
            "it's ",
            "the thought",
        ]
        .iter()
        .any(|p| l.starts_with(p))
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "preference.diet",
            Mode::Statement,
            &[
                "vegetarian",
                "vegan",
                "pescatarian",
                "pescetarian",
                "keto",
                "paleo",
                "flexitarian",
                "plant-based",
                "carnivore",
                "gluten-free",
                "dairy-free",
                "kosher",
                "halal",
            ],
            r"(?x)
                # e.g. I'm vegetarian.
                \b(?:
                    <IM>
                    | i(?:'ve|\s+have)?\s+(?:
                        went | gone | become | became | turned | switched\s+to\s+being | switched\s+to
                        | decided\s+to\s+go | started\s+eating
                    )
                )
                \s+(?:
                    (?:
                        a | an | now | currently | strictly | mostly | also | fully | full | still
                        | mainly | completely | 100% | a\s+strict
                    )
                    \s+
                )*
                (?P<x>
                    vegetarian
                    | vegan
                    | pescatarian
                    | pescetarian
                    | keto
                    | paleo
                    | flexitarian
                    | plant-based
                    | carnivore
                    | on\s+a\s+(?:
                        keto
                        | paleo
                        | low-carb
                        | low\s+carb
                        | gluten-free
                        | vegan
                        | vegetarian
                        | plant-based
                    )
                    \s+diet
                    | gluten-free
                    | dairy-free
                    | kosher
                    | halal
                )
                \b
            ",
            |c, _| {
                let x = tidy(&cap(c, "x").unwrap_or_default().to_lowercase());
                let value = x.trim_start_matches("on a ").trim_end_matches(" diet").to_string();
                vec![Found::add(pref(format!("User is {x}"), 0.85, 0.8).keyed("diet", value))]
            },
        ),
        Rule::new(
            "preference.dont-eat",
            Mode::Statement,
            &["eat", "drink", "can't do", "can't have", "cannot do", "cannot have"],
            r"(?x)
                # e.g. I don't eat pork; texted, 'cant do dairy'.
                \bi\s+(?:(?:don't|do\s+not|dont|never|can't|cannot|no\s+longer)\s+)(?P<v>eat|drink)\s+(?P<x>
                    (?:red\s+)?(?:
                        meat | pork | beef | chicken | fish | seafood | shellfish | dairy | gluten
                        | eggs | sugar | carbs | alcohol | coffee | caffeine | soda | milk | cheese
                        | nuts | wheat | lamb | spicy\s+food | fried\s+food | animal\s+products
                    )
                )
                \b
                | (?:\bi\s+|^\s*)(?:can't|cannot)\s+(?:do|have)\s+(?P<y>dairy|gluten|nuts|eggs|wheat|shellfish|alcohol|caffeine|sugar|milk)\b
            ",
            |c, _| {
                if let Some(y) = cap(c, "y") {
                    let y = y.to_lowercase();
                    let key = format!("diet:no_{y}");
                    return vec![Found::add(pref(format!("User can't have {y}"), 0.85, 0.75).keyed(key, "no"))];
                }
                let v = cap(c, "v").unwrap_or("eat").to_lowercase();
                let x = tidy(&cap(c, "x").unwrap_or_default().to_lowercase());
                let key = format!("diet:no_{}", x.replace(' ', "_"));
                vec![Found::add(pref(format!("User doesn't {v} {x}"), 0.85, 0.75).keyed(key, "no"))]
            },
        ),
        Rule::new(
            "preference.favorite",
            Mode::Statement,
            &["favorite", "favourite", "fave", "fav "],
            r"(?x)
                # e.g. My favorite band is Radiohead.
                \bmy\s+(?:(?:all[-\x20]time|absolute|current|new|very)\s+)?(?:favou?rite|fave|fav)\s+
                # the category: the fewest words (one to three) before the verb
                (?P<cat>[\w-]+(?:\s+[\w-]+){0,2}?)
                \s+(?:is|are|has\s+to\s+be|would\s+be|of\s+all\s+time\s+is)\s+(?P<x><CLAUSE>)
                | \b(?P<y>[^,.;!?]+?)\s+(?:is|are)\s+(?:still\s+)?my\s+(?:(?:all[-\x20]time|absolute|current|new)\s+)?(?:favou?rite|fave|fav)\s+(?P<cat2>[\w-]+(?:\s+[\w-]+)?)
            ",
            |c, _| {
                let cat = tidy(&cap(c, "cat").or(cap(c, "cat2")).unwrap_or_default().to_lowercase());
                // "my favorite studio and it's calming": the category is one noun, maybe two.
                let cat = match cat.split_once(' ') {
                    Some((a, b))
                        if [
                            "and", "but", "so", "because", "that", "it", "ever", "of", "to", "in", "for", "with",
                            "right", "now", "too",
                        ]
                        .contains(&b) =>
                    {
                        a.to_string()
                    }
                    _ => cat,
                };
                let x = cap(c, "x").or(cap(c, "y")).unwrap_or_default();
                let x = ["and ", "but ", "honestly ", "also ", "oh ", "well ", "so ", "i think "].iter().fold(
                    x.trim(),
                    |acc, p| {
                        if acc.to_ascii_lowercase().starts_with(p) { acc[p.len()..].trim() } else { acc }
                    },
                );
                let Some(x) = phrase(x) else { return Vec::new() };
                if cat.is_empty() || x.split_whitespace().count() > 8 {
                    return Vec::new();
                }
                vec![Found::add(favorite(&cat, x, 0.85))]
            },
        ),
        Rule::new(
            "preference.hobbies",
            Mode::Statement,
            &["hobby", "hobbies", "free time", "spare time", "for fun", "downtime"],
            r"(?x)
                # e.g. My hobbies are pottery and birdwatching.
                \bmy\s+(?:main\s+|favou?rite\s+|biggest\s+|current\s+)?(?P<h>hobby|hobbies)\s+(?:is|are|include|includes)\s+(?P<x>[^.;!?]+)
                | \b(?:in\s+my\s+(?:free|spare|down)\s*time|for\s+fun),?\s+i\s+(?:(?:still|really|also|just|usually|mostly|often|always|sometimes)\s+)*(?:(?:like|love|enjoy)\s+(?:to\s+)?)?(?P<y><CLAUSE>)
            ",
            |c, _| {
                if let Some(x) = cap(c, "x") {
                    let x = third_person(&tidy(x.trim_end_matches(|c: char| !c.is_alphanumeric())));
                    let plural = cap(c, "h").is_some_and(|h| h.eq_ignore_ascii_case("hobbies"));
                    let content =
                        if plural { format!("User's hobbies are {x}") } else { format!("User's hobby is {x}") };
                    return vec![Found::add(pref(content, 0.85, 0.7))];
                }
                let Some(y) = cap(c, "y").and_then(phrase) else { return Vec::new() };
                let gerund = y.split_whitespace().next().is_some_and(|w| w.ends_with("ing"));
                let lead = if gerund { "enjoys" } else { "likes to" };
                vec![Found::add(pref(format!("In their free time, User {lead} {y}"), 0.8, 0.6))]
            },
        ),
        Rule::new(
            "preference.plays",
            Mode::Statement,
            &["play"],
            r"(?x)
                # e.g. I play the cello.
                \bi\s+(?:
                    (?:
                        also | really | still | usually | regularly | often | sometimes | mostly
                        | occasionally
                    )
                    \s+
                )*
                play\s+(?P<x>
                    (?:the\s+)?(?:
                        guitar | piano | violin | drums | bass | cello | ukulele | saxophone | sax
                        | flute | trumpet | harp | clarinet | keyboard | banjo | tennis | soccer
                        | football | basketball | volleyball | chess | golf | badminton | squash
                        | hockey | baseball | cricket | rugby | padel | pickleball | ping\s+pong
                        | table\s+tennis | video\s+games | board\s+games | d&d | dnd
                        | dungeons\s+and\s+dragons | poker | bridge | minecraft | ultimate\s+frisbee
                        | water\s+polo | softball | lacrosse
                    )
                    \b[^,.;!?]*
                )
            ",
            |c, _| {
                let Some(x) = cap(c, "x").and_then(phrase) else { return Vec::new() };
                vec![Found::add(pref(format!("User plays {x}"), 0.8, 0.6))]
            },
        ),
        Rule::new(
            "preference.goes-activity",
            Mode::Statement,
            &["go "],
            r"(?x)
                # e.g. I usually go bouldering on weekends.
                \bi\s+(?:
                    (?:
                        also | really | still | usually | regularly | often | sometimes | mostly
                        | love\s+to | like\s+to
                    )
                    \s+
                )*
                go\s+(?P<x>
                    running | hiking | climbing | bouldering | swimming | cycling | biking | surfing
                    | skiing | snowboarding | fishing | camping | dancing | skating | kayaking
                    | sailing | diving | jogging | birdwatching | birding | hunting | rowing
                    | paddleboarding | to\s+the\s+gym | to\s+yoga | to\s+church | to\s+the\s+pool
                )
                \b(?P<rest>[^,.;!?]*)
            ",
            |c, _| {
                let x = tidy(cap(c, "x").unwrap_or_default());
                let rest = phrase(cap(c, "rest").unwrap_or_default()).map(|r| format!(" {r}")).unwrap_or_default();
                vec![Found::add(pref(format!("User goes {x}{rest}"), 0.8, 0.6))]
            },
        ),
        Rule::new(
            "preference.learning",
            Mode::Statement,
            &["learning", "teaching myself"],
            r"(?x)
                # e.g. I'm learning Korean.
                \b(?:
                    i(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+(?:
                        (?:
                            currently
                            | also
                            | slowly
                            | trying\s+to\s+get\s+better\s+at
                            | really
                            | still
                            | now
                        )
                        \s+
                    )*
                    (?:learning|teaching\s+myself)
                    | i\s+(?:just\s+)?started\s+learning
                )
                \s+(?P<how>to\s+|how\s+to\s+)?(?P<x><CLAUSE>)
            ",
            |c, _| {
                let Some(x) = cap(c, "x").and_then(phrase) else { return Vec::new() };
                if about_chat(&x)
                    || ["a lot", "so much", "more", "about", "a ton", "lots", "a bunch", "tons"]
                        .iter()
                        .any(|p| x.to_ascii_lowercase().starts_with(p))
                {
                    return Vec::new();
                }
                let how = cap(c, "how").map(|h| tidy(h) + " ").unwrap_or_default();
                vec![Found::add(pref(format!("User is learning {how}{x}"), 0.8, 0.6))]
            },
        ),
        Rule::new(
            "preference.habit",
            Mode::Statement,
            &["every", "daily", "week", "weekends", "regularly", "days"],
            r"(?x)
                # e.g. I run every morning.
                \bi\s+(?:(?:also|really|usually|regularly|often|mostly|try\s+to)\s+)*(?P<v>
                    run | swim | cycle | bike | hike | climb | boulder | paint | draw | knit
                    | crochet | sew | bake | cook | garden | meditate | journal | surf | ski | skate
                    | dance | sing | do\s+yoga | do\s+pilates | do\s+crossfit | lift(?:\s+weights)?
                    | work\s+out | practice\s+\w+ | read | write
                )
                \s+(?P<freq>
                    every\s+(?:day|morning|evening|night|week|weekend|single\s+day|\w+day)
                    | daily
                    | most\s+(?:days|mornings|evenings|weekends)
                    | on\s+(?:weekends|the\s+weekends|\w+days)
                    | regularly
                    | weekly
                    | (?:twice|three\s+times|\w+\s+times)\s+a\s+week
                )
                \b
            ",
            |c, _| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let freq = tidy(&cap(c, "freq").unwrap_or_default().to_lowercase());
                let mut parts = v.splitn(2, ' ');
                let verb = third_singular(parts.next().unwrap_or_default());
                let rest = parts.next().map(|r| format!(" {r}")).unwrap_or_default();
                vec![Found::add(pref(format!("User {verb}{rest} {freq}"), 0.8, 0.6))]
            },
        ),
        Rule::new(
            "preference.likes",
            Mode::Statement,
            &[
                "love",
                "like",
                "enjoy",
                "adore",
                "prefer",
                "dig",
                "fancy",
                "into",
                "fan of",
                "obsessed",
                "passionate",
                "crazy about",
                "live for",
                "enough of",
                "hooked",
                "addicted",
            ],
            r"(?x)
                # e.g. I really love spicy ramen.
                \bi(?:
                    \s+<ADV>(?P<v1>
                        love
                        | like
                        | enjoy
                        | adore
                        | prefer
                        | dig
                        | fancy
                        | live\s+for
                        | can't\s+get\s+enough\s+of
                    )
                    | (?:'m|\s+am)\s+<ADV>(?P<v2>
                        (?:(?:much|way|a\s+lot|even)\s+)?(?:more\s+)?(?:really\s+)?into
                        | a\s+(?:big\s+|huge\s+|massive\s+|total\s+)?fan\s+of
                        | obsessed\s+with
                        | passionate\s+about
                        | crazy\s+about
                        | hooked\s+on
                        | addicted\s+to
                        | a\s+sucker\s+for
                    )
                )
                \s+(?P<x><CLAUSE>)
            ",
            likes,
        ),
        Rule::new(
            "preference.consumes",
            Mode::Statement,
            &["drink", "eat", "listen", "watch", "read", "drive", "ride", "wear"],
            r"\bi\s+<ADV>(?P<v>drink|eat|listen\s+to|watch|read|drive|ride|wear)\s+(?P<x><CLAUSE>)",
            |c, _| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let x = cap(c, "x").unwrap_or_default();
                let Some(x) = phrase(x) else { return Vec::new() };
                let first = x.split_whitespace().next().unwrap_or_default().to_lowercase();
                let bad = [
                    "a",
                    "too",
                    "way",
                    "so",
                    "there",
                    "here",
                    "out",
                    "with",
                    "at",
                    "in",
                    "on",
                    "it",
                    "that",
                    "this",
                    "what",
                    "whatever",
                    "lots",
                    "less",
                    "more",
                    "them",
                    "about",
                    "up",
                    "through",
                    "over",
                    "into",
                    "books",
                    // a manner, not a thing: "I drive like a hearse", "I eat like a horse"
                    "like",
                    "as",
                    "fast",
                    "slow",
                    "slowly",
                    "badly",
                    "well",
                    "carefully",
                    // "I ride and keep jelly babies in my jacket": another verb, no thing
                    "and",
                    "n",
                    "&",
                    "or",
                ];
                // "I eat metformin 500", as learners say it: a medicine, the medication rules'.
                if about_chat(&x) || bad.contains(&first.as_str()) || super::medication::medicine(&first, false) {
                    return Vec::new();
                }
                let mut parts = v.splitn(2, ' ');
                let verb = third_singular(parts.next().unwrap_or_default());
                let rest = parts.next().map(|r| format!(" {r}")).unwrap_or_default();
                vec![Found::add(pref(format!("User {verb}{rest} {x}"), 0.7, 0.5))]
            },
        ),
        Rule::new(
            "preference.dislikes",
            Mode::Statement,
            &[
                "hate",
                "dislike",
                "detest",
                "loathe",
                "despise",
                "stand",
                "don't like",
                "do not like",
                "don't enjoy",
                "care for",
                "bear",
                "fan of",
                "not into",
                "sick of",
                "tired of",
                "fed up",
            ],
            r"(?x)
                # e.g. I can't stand cilantro.
                \bi(?:
                    \s+<ADV>(?P<v1>
                        hate | dislike | detest | loathe | despise | can't\s+stand | cannot\s+stand
                        | can\s+not\s+stand | don't\s+like | do\s+not\s+like | don't\s+really\s+like
                        | don't\s+enjoy | do\s+not\s+enjoy | don't\s+care\s+for | can't\s+bear
                        | cannot\s+bear
                    )
                    | (?:'m|\s+am)\s+<ADV>(?P<v2>
                        not\s+(?:a\s+(?:big\s+|huge\s+)?)?fan\s+of
                        | not\s+(?:really\s+)?into
                        | sick\s+(?:and\s+tired\s+)?of
                        | tired\s+of
                        | fed\s+up\s+with
                    )
                )
                \s+(?P<x><CLAUSE>)
            ",
            |c, _| {
                let x = cap(c, "x").unwrap_or_default();
                // "I can't stand it when people are late": the situation is the object.
                let x = if x.trim_start().to_ascii_lowercase().starts_with("it when ")
                    && !x.to_ascii_lowercase().contains("you")
                {
                    &x.trim_start()[3..]
                } else {
                    x
                };
                // "I don't like coffee anymore" is a change, left to the "no longer" rules; "I
                // can't stand the cold anymore" (no liking negated) is a dislike grown stronger,
                // kept without its "anymore".
                let xl = x.to_lowercase();
                let negated_liking = cap(c, "v1").or(cap(c, "v2")).is_some_and(|v| {
                    let v = v.to_lowercase();
                    v.contains("like")
                        || v.contains("enjoy")
                        || v.contains("care")
                        || v.contains("fan")
                        || v.contains("into")
                });
                let any_more = [" anymore", " any more", " any longer"];
                let x = match any_more.iter().find_map(|w| xl.find(w)) {
                    Some(_) if negated_liking => return Vec::new(),
                    Some(at) if xl[at..].split_whitespace().count() <= 2 => &x[..at],
                    Some(_) => return Vec::new(),
                    None => x,
                };
                let Some(x) = phrase(x) else { return Vec::new() };
                if about_chat(&x) {
                    return Vec::new();
                }
                vec![Found::add(pref(format!("User dislikes {x}"), 0.75, 0.6))]
            },
        ),
        Rule::new(
            "preference.nothing-with",
            Mode::Request,
            &["suggest", "recommend", "give me", "include", "use"],
            r"(?x)
                # e.g. Please don't suggest anything with mushrooms.
                \b(?:don't|do\s+not|never|no\s+more)\s+(?:suggest|recommend|give\s+me|include|use|put)\s+
                (?:(?:me|us)\s+)?(?:anything|any\s+(?:recipes?|dishes|meals|food|snacks)|recipes?|dishes|meals|food)?\s*
                (?:with|that\s+(?:has|have|contains?)|containing)\s+(?P<x><CLAUSE>)
            ",
            |c, _| {
                let Some(x) = phrase(cap(c, "x").unwrap_or_default()) else { return Vec::new() };
                vec![Found::add(pref(format!("User does not want anything with {x}"), 0.8, 0.7))]
            },
        ),
        Rule::new(
            "preference.not-my-thing",
            Mode::Statement,
            &["my thing", "for me", "cup of tea", "not a fan", "not a big fan"],
            r"(?x)
                # e.g. Horror movies are not my thing.
                \b(?P<x>[^,.;!?]+?)\s+(?:is\s+not|isn't|'s\s+not|are\s+not|aren't|just\s+isn't)\s+(?:really\s+)?(?:my\s+thing|for\s+me|my\s+cup\s+of\s+tea)
                | ^(?:honestly\s+|tbh\s+)?not\s+a\s+(?:big\s+|huge\s+)?fan\s+of\s+(?P<y><CLAUSE>)
            ",
            |c, _| {
                let x = cap(c, "x").or(cap(c, "y")).unwrap_or_default();
                let x = ["honestly ", "tbh ", "but ", "and ", "well ", "i mean ", "i think "].iter().fold(
                    x.trim(),
                    |acc, p| {
                        if acc.to_ascii_lowercase().starts_with(p) { acc[p.len()..].trim() } else { acc }
                    },
                );
                let Some(x) = phrase(x) else { return Vec::new() };
                if about_chat(&x) {
                    return Vec::new();
                }
                vec![Found::add(pref(format!("User dislikes {x}"), 0.75, 0.6))]
            },
        ),
        Rule::new(
            "preference.goal",
            Mode::Statement,
            &["want to", "wanna", "hope to", "dream", "love to", "goal", "bucket list", "someday", "one day"],
            r"(?x)
                # e.g. I want to visit Patagonia someday.
                \b(?:
                    i\s+(?:really\s+|still\s+|eventually\s+)?(?:
                        want\s+to
                        | wanna
                        | hope\s+to
                        | dream\s+of
                        | 'd\s+love\s+to
                        | would\s+love\s+to
                    )
                    | my\s+(?:big\s+|main\s+|life\s+)?(?:goal|dream)\s+is\s+to
                    | (?:it's|is)\s+on\s+my\s+bucket\s+list\s+to
                )
                \s+(?P<v>
                    learn
                    | visit
                    | travel\s+to
                    | see
                    | try
                    | start
                    | become
                    | run
                    | write
                    | build
                    | open
                    | move\s+to
                    | retire
                    | go\s+to
                    | climb
                    | hike
                    | finish
                    | launch
                    | get\s+(?:better\s+at|into|a)
                    | buy
                    | own
                    | publish
                    | speak
                    | master
                    | live\s+in
                )
                \s+(?P<x><CLAUSE>)
            ",
            |c, _| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let Some(x) = cap(c, "x").and_then(phrase) else { return Vec::new() };
                if about_chat(&x)
                    || (v == "see" && x.split_whitespace().count() < 2)
                    || v == "try" && x.split_whitespace().count() < 2
                {
                    return Vec::new();
                }
                vec![Found::add(pref(format!("User wants to {v} {x}"), 0.7, 0.5))]
            },
        ),
    ]
}

fn likes(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    // Read on to the clause's end: a comma between two words for one noun ("creating a safe,
    // inviting place") does not end what is liked.
    let x = c.name("x").map_or("", |m| s.text.get(m.start()..).unwrap_or(m.as_str()));
    let raw = head(x);
    let Some(x) = phrase(x) else { return Vec::new() };
    if about_chat(&x) || about_chat(raw) || leans_on_before(raw) {
        return Vec::new();
    }
    let v = cap(c, "v1").or(cap(c, "v2")).map(|v| tidy(&v.to_lowercase())).unwrap_or_default();
    let verb = match v.as_str() {
        "love" | "adore" | "can't get enough of" => "loves".to_string(),
        "enjoy" => "enjoys".into(),
        "prefer" => "prefers".into(),
        "like" | "dig" | "fancy" => "likes".into(),
        "live for" => "lives for".into(),
        other if other.ends_with("into") => "is into".to_string(),
        other => format!("is {other}"),
    };
    vec![Found::add(pref(format!("User {verb} {x}"), 0.75, 0.6))]
}

/// Whether what is liked is a manner or a moment of something said before ("how they take me
/// to other places", "when it rains like that"): "User loves how they take them to other
/// places" names neither who "they" are nor whom they take.
fn leans_on_before(raw: &str) -> bool {
    let lower = raw.to_lowercase();
    let mut words = lower.split_whitespace();
    let opens = match words.next() {
        Some("how" | "when" | "that") => true,
        Some("the") => words.next() == Some("way"),
        _ => false,
    };
    opens
        && lower.split_whitespace().any(|w| {
            matches!(
                w.trim_matches(|c: char| !c.is_alphanumeric()),
                "it" | "they" | "them" | "this" | "these" | "those" | "he" | "she"
            )
        })
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{contents, keyed, none};

    #[test]
    fn likes_and_dislikes_in_many_words() {
        assert_eq!(
            contents("I really love hiking in the mountains, but not in winter"),
            vec!["User loves hiking in the mountains"]
        );
        assert_eq!(contents("I love hiking in the mountains!"), vec!["User loves hiking in the mountains"]);
        assert_eq!(
            contents("I'm passionate about running a cheap, friendly repair cafe"),
            vec!["User is passionate about running a cheap, friendly repair cafe"]
        );
        assert_eq!(contents("i absolutely adore jazz"), vec!["User loves jazz"]);
        // A word said to the listener ends nothing it follows; after "my" it is someone.
        assert_eq!(contents("i love pineapple on pizza bro"), vec!["User loves pineapple on pizza"]);
        assert!(contents("I love hanging out with my mate").iter().any(|c| c.ends_with("with their mate")));
        // A liking that leans on what was said before names nothing of its own.
        assert!(contents("I love how they make me feel at home").iter().all(|c| !c.starts_with("User loves how")));
        assert_eq!(contents("I love how quiet the village is"), vec!["User loves how quiet the village is"]);
        assert_eq!(contents("I'm really into bouldering these days"), vec!["User is into bouldering"]);
        assert_eq!(
            contents("I'm a huge fan of Studio Ghibli films"),
            vec!["User is a huge fan of Studio Ghibli films"]
        );
        assert_eq!(
            contents("I enjoy cooking Thai food on weekends"),
            vec!["User enjoys cooking Thai food on weekends"]
        );
        assert_eq!(contents("I can't stand cilantro"), vec!["User dislikes cilantro"]);
        // A dislike grown stronger is a dislike; a liking that stopped is a change.
        assert!(contents("I can't stand the cold anymore").contains(&"User dislikes the cold".to_string()));
        let got = contents("cant stand the cold anymore, thinking of spain for the winter");
        assert!(got.iter().any(|c| c.contains("the cold")), "{got:?}");
        assert!(!contents("I don't like coffee anymore").iter().any(|c| c == "User dislikes coffee"));
        assert_eq!(
            contents("please don't suggest anything with mushrooms"),
            vec!["User does not want anything with mushrooms"]
        );
        assert_eq!(contents("Don't give me recipes that contain pork."), vec!["User does not want anything with pork"]);
        assert_eq!(contents("I'm not a fan of horror movies"), vec!["User dislikes horror movies"]);
        assert_eq!(contents("Crowded bars are not my thing"), vec!["User dislikes Crowded bars"]);
        assert_eq!(contents("my favorite band is Radiohead"), vec!["User's favorite band is Radiohead"]);
        assert_eq!(
            contents("my favorite dishes are lasagna and ramen"),
            vec!["User's favorite dishes are lasagna and ramen"]
        );
        assert_eq!(keyed("Radiohead is my favourite band", "favorite:band"), Some("Radiohead".into()));
        assert_eq!(keyed("I'm vegetarian", "diet"), Some("vegetarian".into()));
        assert_eq!(contents("I play the guitar"), vec!["User plays the guitar"]);
        assert_eq!(contents("I'm learning Japanese"), vec!["User is learning Japanese"]);
        assert_eq!(contents("I run every morning"), vec!["User runs every morning"]);
        assert_eq!(contents("I want to visit Japan someday"), vec!["User wants to visit Japan someday"]);
    }

    #[test]
    fn chat_reactions_and_others_are_not_tastes() {
        none("I love that idea!");
        none("I like your answer");
        none("do you like hiking?");
        none("My sister loves jazz? really");
        none("I don't think I like jazz");
        none("I like it when you explain things");
        none("I love how it shows the togetherness and power you were talking about.");
        none("I love how this turned out!");
        assert_eq!(contents("I would love to live in Japan"), vec!["User wants to live in Japan"]);
    }

    #[test]
    fn what_is_done_in_free_time_is_said_once() {
        assert_eq!(
            contents("In my free time, I still love to get lost in good books."),
            vec!["In their free time, User likes to get lost in good books"]
        );
    }

    #[test]
    fn a_manner_is_no_taste() {
        // a simile says how, not what: nothing the user consumes, and what someone else says
        // of the user stays theirs
        for text in ["Liam says I drive like a hearse", "mum reckons i eat like a horse"] {
            let found = contents(text);
            assert!(found.iter().all(|m| m.contains(" says ") || m.contains(" reckons ")), "{text}: {found:?}");
        }
        assert_eq!(contents("Liam says I drive like a hearse"), vec!["Liam says User drives like a hearse"]);
        assert_eq!(contents("I drink oat milk"), vec!["User drinks oat milk"]);
    }
}
