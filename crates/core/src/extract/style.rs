//! Keyed preferences about the replies themselves: answer length, format, language, tone and
//! emoji. Each has one key, so a later request with a new value supersedes the old one.
//!
//! Content is fixed per value ("User prefers short, concise answers"): the same wish said twice
//! in different words is one memory.

use regex::Captures;

use super::lex::title;
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::{Kind, Surface};
use crate::op::Draft;

pub(super) const LENGTH: &[&str] = &[
    "brief",
    "concise",
    "deeper",
    "depth",
    "detail",
    "elaborate",
    "essay",
    "fluff",
    "lengthy",
    "long",
    "point",
    "ramble",
    "rambling",
    "short",
    "succinct",
    "terse",
    "thorough",
    "tl;dr",
    "tldr",
    "verbose",
    "waffl",
    "wall",
    "wordy",
];

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "style.length-keep",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. Keep your answers short.
                \b(?:keep|make)\s+(?:your\s+|the\s+|all\s+|my\s+|them\s+|things\s+|it\s+)?(?:
                    (?:answers?|responses?|replies|reply|messages?|explanations?|summaries)\s+
                )?
                (?:
                    (?:
                        nice\s+and | really | very | super | a\s+bit | a\s+little | more | extra
                        | fairly | pretty
                    )
                    \s+
                )*
                (?P<x>
                    short | shorter | brief | briefer | concise | tight | succinct | terse | long
                    | longer | detailed | thorough | in-depth | comprehensive | to\s+the\s+point
                )
                \b
            ",
            |c, _| length(cap(c, "x")),
        ),
        Rule::new(
            "style.length-prefer",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. I prefer detailed answers.
                \b(?:i|we)(?:'d|\s+would)?\s+(?:really\s+|much\s+|generally\s+|usually\s+|always\s+|definitely\s+)?(?:
                    prefer | like | want | need | appreciate | love | rather\s+have | like\s+getting
                    | prefer\s+getting | enjoy | do\s+better\s+with
                )
                \s+(?:it\s+when\s+you\s+give\s+)?(?:(?:really|very|super|nice|more|much|a\s+lot\s+more|quick|clear)\s+)*(?P<x>
                    short | shorter | brief | concise | succinct | terse | long | longer | detailed
                    | thorough | in-depth | in\s+depth | comprehensive | deep | lengthy | one-line
                    | one\s+line | bite-sized | quick | extensive | elaborate | deeper
                )
                (?:\s+and\s+\w+)?\s+(?:
                    answers? | responses? | replies | explanations? | summaries | messages | replies
                    | dives? | write-?ups
                )
            ",
            |c, _| length(cap(c, "x")),
        ),
        Rule::new(
            "style.length-noun-first",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. Short answers please.
                \b(?P<x>short|shorter|brief|concise|detailed|longer|thorough|in-depth)\s+(?:answers?|responses?|replies|explanations?)\s+(?:
                    please
                    | pls
                    | from\s+now\s+on
                    | going\s+forward
                    | only
                    | are\s+(?:better|best|preferred)
                    | work\s+(?:better|best)\s+for\s+me
                    | for\s+me
                )
            ",
            |c, _| length(cap(c, "x")),
        ),
        Rule::new(
            "style.length-be",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. Please be more concise.
                \b(?:please\s+|pls\s+|try\s+to\s+|can\s+you\s+|could\s+you\s+|just\s+)?
                be\s+(?:more\s+|very\s+|extra\s+|super\s+|a\s+bit\s+more\s+|less\s+)?
                (?P<x>brief|concise|succinct|terse|thorough|detailed|verbose|wordy)\b
            ",
            |c, _| {
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                if whole.contains("less ") { length(Some("short")) } else { length(cap(c, "x")) }
            },
        ),
        Rule::new(
            "style.length-too",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. Your replies are way too long.
                \b(?:your\s+|the\s+|these\s+|those\s+)?(?:answers|responses|replies|messages|explanations)\s+(?:are|were|have\s+been|get)\s+(?:
                    (?:
                        way | far | a\s+bit | a\s+little | kind\s+of | kinda | always | often | usually
                        | sometimes | just | really
                    )
                    \s+
                )*
                too\s+(?P<x>long|verbose|wordy|short|brief|terse)
            ",
            |c, _| {
                let x = cap(c, "x").unwrap_or_default().to_lowercase();
                length(Some(if matches!(x.as_str(), "short" | "brief" | "terse") { "long" } else { "short" }))
            },
        ),
        Rule::new(
            "style.length-no-rambling",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. No rambling, just get to the point.
                \b(?:no|stop|don't|do\s+not|quit|without\s+(?:the|any))\s+(?:\w+\s+)?(?P<x>
                    rambling | ramble | waffling | waffle | fluff | essays | long\s+answers
                    | long\s+responses | walls?\s+of\s+text | long-winded\s+\w+ | novels
                    | over-?explaining | over-?explain | padding
                )
                \b
                | \b(?:get|cut|skip)\s+(?:straight\s+)?to\s+the\s+(?:point|chase)\b
                | \b(?:just|only)\s+(?:give\s+me\s+)?(?:the\s+)?(?:short|quick)\s+(?:answer|version)\b
                | \b(?:less|fewer)\s+(?:verbose|wordy|words|detail|text)\b
                | \bmore\s+(?:concise|succinct|brief)\b
                | \btl;?dr\s+(?:please|only|version|pls)\b
            ",
            |c, s| {
                // "get to the point where ..." is an idiom about something else.
                let end = c.get(0).map_or(0, |m| m.end());
                let next = s.text[end..].trim_start().to_lowercase();
                if ["where", "that", "of", "when", "at which"].iter().any(|w| next.starts_with(w)) {
                    return Vec::new();
                }
                length(Some("short"))
            },
        ),
        Rule::new(
            "style.length-more-detail",
            Mode::Request,
            LENGTH,
            r"(?x)
                # e.g. Give me more detail when you explain things.
                \b(?:give\s+me|i\s+want|i\s+need|i\s+like|i\s+prefer|go\s+into|include)\s+(?:a\s+lot\s+)?(?:more|lots\s+of|plenty\s+of|the\s+full|full|all\s+the)\s+(?:detail|details|depth|context)\b
                | \b(?:go|dig)\s+deeper\b
                | \bexplain\s+(?:things\s+|everything\s+)?in\s+(?:more\s+|great\s+|full\s+)?(?:detail|depth)\b
                | \bmore\s+in-depth\b
            ",
            |c, s| {
                let said = c.get(0).map_or("", |m| m.as_str()).to_lowercase();
                let after = c.get(0).map_or("", |m| &s.text[m.end()..]).trim_start().to_lowercase();
                // "more details about the game": one topic's, not how every answer should be.
                if ["about", "on ", "regarding", "of ", "for "].iter().any(|w| after.starts_with(w)) {
                    return Vec::new();
                }
                // "Let's go into more detail", "dig deeper": the topic at hand, unless the
                // sentence says it is for good.
                if (said.starts_with("go ") || said.starts_with("dig ")) && !for_good(s) {
                    return Vec::new();
                }
                length(Some("long"))
            },
        ),
        Rule::new(
            "style.format",
            Mode::Request,
            &[
                "bullet",
                "table",
                "prose",
                "paragraph",
                "sentences",
                "code",
                "numbered",
                "step",
                "markdown",
                "plain text",
                "list",
            ],
            r"(?x)
                # e.g. Use bullet points please.
                \b(?P<f>
                    bullet[-\x20]?points?
                    | bullets
                    | bulleted\s+lists?
                    | tables?
                    | tabular
                    | prose
                    | paragraphs
                    | full\s+sentences
                    | code\s+(?:examples?|snippets?|samples?|first|blocks?)
                    | (?:just|only)\s+the\s+code
                    | numbered\s+(?:lists?|steps)
                    | step[-\x20]by[-\x20]step
                    | markdown
                    | plain\s+text
                    | lists
                )
                \b
            ",
            format,
        ),
        Rule::new(
            "style.language-reply",
            Mode::Request,
            &[
                "english",
                "spanish",
                "french",
                "german",
                "italian",
                "portuguese",
                "dutch",
                "japanese",
                "chinese",
                "mandarin",
                "cantonese",
                "korean",
                "russian",
                "polish",
                "turkish",
                "arabic",
                "hindi",
                "swedish",
                "norwegian",
                "danish",
                "finnish",
                "greek",
                "hebrew",
                "czech",
                "ukrainian",
                "vietnamese",
                "thai",
                "indonesian",
                "romanian",
                "hungarian",
                "catalan",
                "bengali",
                "urdu",
                "persian",
                "farsi",
                "tagalog",
                "swahili",
            ],
            r"(?x)
                # e.g. Please reply in Spanish.
                \b(?:
                    (?:answer|reply|respond|talk|speak|write|chat|communicate|converse|text)(?:\s+to\s+me|\s+with\s+me|\s+back)?\s+(?:only\s+|always\s+)?in
                    | (?:let's|lets|can\s+we|could\s+we|shall\s+we)\s+(?:speak|talk|chat|switch\s+to|use|continue\s+in|do\s+this\s+in)
                    | (?:switch|change)\s+(?:the\s+language\s+|over\s+)?to
                    | (?:answers?|responses?|replies|messages)\s+(?:should\s+be\s+)?in
                    | (?:prefer|like|want)\s+(?:it\s+|things\s+|everything\s+)?in
                    | in
                    | use
                )
                \s+(?P<x><LANG>)\b(?P<tail>
                    \s+(?:
                        please
                        | pls
                        | from\s+now\s+on
                        | only
                        | going\s+forward
                        | instead
                        | if\s+possible
                    )
                )?
            ",
            |c, s| {
                let Some(lang) = cap(c, "x").map(|x| title(&x.to_lowercase())) else { return Vec::new() };
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                // A bare "in Spanish" is a wish only with "please", "from now on" and the like.
                let bare = whole.starts_with("in ") || whole.starts_with("use ");
                if bare && c.name("tail").is_none() && !s.lower.contains("prefer") {
                    return Vec::new();
                }
                vec![Found::add(
                    Draft::new(Kind::Preference, format!("User wants replies in {lang}"), 0.85, 0.7)
                        .keyed("language", lang)
                        .surfaced(Surface::Adapt),
                )]
            },
        ),
        Rule::new(
            "style.code-language",
            Mode::Request,
            &["example", "code", "snippet", "sample"],
            r"\b(?:(?:code\s+)?examples?|code|snippets?|samples?)\s+(?:should\s+be\s+|always\s+)?in\s+(?P<x>[\w+#.]+(?:\s+[\w+#.]+)?)",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                let Some((shown, cat)) = super::tool::lookup(x, s) else { return Vec::new() };
                if cat != "language" && cat != "framework" {
                    return Vec::new();
                }
                let asked = [
                    "please",
                    "show",
                    "give",
                    "write",
                    "prefer",
                    "want",
                    "use",
                    "always",
                    "can you",
                    "could you",
                    "i like",
                ]
                .iter()
                .any(|w| s.lower.contains(w));
                if !asked {
                    return Vec::new();
                }
                vec![Found::add(
                    Draft::new(Kind::Preference, format!("User wants code examples in {shown}"), 0.85, 0.65)
                        .keyed("code_language", shown)
                        .surfaced(Surface::Adapt),
                )]
            },
        ),
        Rule::new(
            "style.tone",
            Mode::Request,
            &[
                "casual",
                "formal",
                "professional",
                "friendly",
                "blunt",
                "direct",
                "honest",
                "gentle",
                "sugarcoat",
                "sugar-coat",
                "polite",
                "funny",
                "humor",
                "humour",
                "serious",
                "chill",
                "relaxed",
                "kind",
                "harsh",
                "brutal",
                "like a friend",
            ],
            r"(?x)
                # e.g. Please be more casual with me.
                \b(?:
                    (?:please\s+)?be\s+(?:
                        more\s+
                        | a\s+bit\s+more\s+
                        | less\s+
                        | super\s+
                        | very\s+
                        | totally\s+
                        | brutally\s+
                    )?
                    | (?:keep|make)\s+(?:it|things|the\s+tone|your\s+tone)\s+(?:more\s+)?
                    | (?:i\s+)?(?:prefer|like|want|appreciate)\s+(?:a\s+)?(?:more\s+)?
                    | (?:don't|do\s+not|no\s+need\s+to)\s+(?:be\s+)?(?:so\s+)?
                    | (?:stop|quit)\s+being\s+(?:so\s+)?
                    | talk\s+to\s+me\s+
                    | no\s+
                    | you\s+can\s+be\s+
                )
                (?P<x>
                    casual | informal | formal | professional | friendly | blunt | direct | honest
                    | gentle | nice | sugarcoat(?:ing)? | sugar-coat(?:ing)? | polite | funny
                    | playful | humorous | serious | chill | relaxed | harsh | brutally\s+honest
                    | like\s+a\s+friend | straightforward | kind | warm | stiff | robotic
                )
                \b(?P<tail>
                    \s+(?:tone|feedback|style|language|answers|responses|replies|with\s+me)
                )?
            ",
            tone,
        ),
        Rule::new(
            "style.units",
            Mode::Request,
            &["metric", "imperial", "celsius", "fahrenheit", "kilomet", "miles", "kg", "pounds", "lbs"],
            r"(?x)
                # e.g. Use metric please.
                \b(?:use|prefer|in|give\s+me|stick\s+to|switch\s+to|always|only)\s+(?:the\s+)?(?P<x>
                    metric | imperial | celsius | fahrenheit | kilometers | kilometres | km | miles
                    | kg | kilograms | pounds | lbs
                )
                \b
            ",
            |c, _| {
                let x = cap(c, "x").unwrap_or_default().to_lowercase();
                let metric =
                    ["metric", "celsius", "kilometers", "kilometres", "km", "kg", "kilograms"].contains(&x.as_str());
                let (value, content) = if metric {
                    ("metric", "User prefers metric units")
                } else {
                    ("imperial", "User prefers imperial units")
                };
                vec![Found::add(
                    Draft::new(Kind::Preference, content, 0.85, 0.6).keyed("units", value).surfaced(Surface::Adapt),
                )]
            },
        ),
        Rule::new(
            "style.level",
            Mode::Request,
            &[
                "simple",
                "eli5",
                "like i'm five",
                "like im five",
                "technical",
                "beginner",
                "layman",
                "jargon",
                "basics",
                "expert",
                "dumb it down",
                "newbie",
                "noob",
            ],
            r"(?x)
                # e.g. Explain it like I'm five.
                \b(?P<simple>
                    explain\s+(?:it\s+|things\s+)?like\s+i'?m\s+(?:five|5|a\s+child|a\s+kid)
                    | eli5
                    | (?:keep\s+it|in)\s+simple(?:\s+terms)?
                    | simple\s+(?:terms|language|words|explanations)
                    | layman'?s\s+terms
                    | dumb\s+it\s+down
                    | no\s+jargon
                    | without\s+(?:the\s+)?jargon
                    | i'?m\s+not\s+(?:very\s+|that\s+|super\s+)?technical
                    | i'?m\s+(?:a\s+)?(?:total\s+|complete\s+)?(?:beginner|newbie|noob|novice)
                )
                | (?P<expert>
                    i'?m\s+(?:an?\s+)?(?:expert|senior\s+engineer|very\s+technical|pretty\s+technical)
                    | skip\s+the\s+basics
                    | (?:be|get)\s+(?:more\s+)?technical
                    | don'?t\s+explain\s+the\s+basics
                    | assume\s+i\s+know\s+the\s+basics
                )
                \b
            ",
            |c, _| {
                let (value, content) = if c.name("simple").is_some() {
                    ("simple", "User prefers simple, jargon-free explanations")
                } else {
                    ("expert", "User prefers technical explanations without the basics")
                };
                vec![Found::add(
                    Draft::new(Kind::Preference, content, 0.8, 0.65).keyed("level", value).surfaced(Surface::Adapt),
                )]
            },
        ),
        Rule::new("style.emoji", Mode::Request, &["emoji"], r"\bemojis?\b", |c, s| {
            let neg = c.get(0).is_some_and(|m| s.negated_before(m.start()));
            let wish = neg
                || ["use", "love", "like", "more", "add", "want", "enjoy", "please"]
                    .iter()
                    .any(|w| s.lower.contains(w));
            if !wish {
                return Vec::new();
            }
            let (value, content) = if neg {
                ("none", "User prefers replies without emojis")
            } else {
                ("yes", "User likes emojis in replies")
            };
            vec![Found::add(
                Draft::new(Kind::Preference, content, 0.85, 0.6).keyed("emoji", value).surfaced(Surface::Adapt),
            )]
        }),
    ]
}

fn length(word: Option<&str>) -> Vec<Found> {
    let Some(word) = word else { return Vec::new() };
    let w = word.to_lowercase();
    let short = matches!(
        w.as_str(),
        "short"
            | "shorter"
            | "brief"
            | "briefer"
            | "concise"
            | "tight"
            | "succinct"
            | "terse"
            | "to the point"
            | "one-line"
            | "one line"
            | "bite-sized"
            | "quick"
    ) || w.starts_with("to ");
    let (value, content) = if short {
        ("short", "User prefers short, concise answers")
    } else {
        ("long", "User prefers detailed, in-depth answers")
    };
    vec![Found::add(
        Draft::new(Kind::Preference, content, 0.85, 0.7).keyed("answer_length", value).surfaced(Surface::Adapt),
    )]
}

fn format(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let Some(f) = cap(c, "f").map(str::to_lowercase) else { return Vec::new() };
    let neg = c.get(0).is_some_and(|m| s.negated_before(m.start()));
    // Only the clause the format word is in: "… remind me of my grandma's kitchen - makes me
    // think of the conversations we used to have at the table" asks for nothing.
    let at = c.get(0).map_or(0, |m| m.start()).min(s.lower.len());
    let from = s.lower[..at].rfind(['.', ',', ';', ':', '!', '?', '-', '\u{2013}', '\u{2014}']).map_or(0, |i| i + 1);
    let to = s.lower[at..].find(['.', ',', ';', '!', '?']).map_or(s.lower.len(), |i| at + i);
    let clause = &s.lower[from..to];
    let words: Vec<&str> =
        clause.split(|ch: char| !ch.is_alphanumeric() && ch != '\'').filter(|w| !w.is_empty()).collect();
    // A phrase is found in the clause; a word only as a whole word ("used" is not "use"); a
    // stem ("repl", "respon") at a word's start.
    let said = |w: &&str| match *w {
        "repl" | "respon" => words.iter().any(|x| x.starts_with(w)),
        w if w.contains(' ') => clause.contains(w),
        w => words.contains(&w),
    };
    let wish = neg
        || [
            "use",
            "prefer",
            "like",
            "love",
            "want",
            "give me",
            "format",
            "write",
            "answer",
            "respond",
            "reply",
            "put",
            "show",
            "please",
            "stick to",
            "always",
            "can you",
            "could you",
            "as a",
            "in a",
            "as",
            "in",
            "with",
        ]
        .iter()
        .any(said);
    // "I made a table", "the table is broken": a format is a wish only when asked for.
    let asked =
        ["you", "please", "answer", "repl", "respon", "prefer", "i like", "i love", "i want", "give me", "always"]
            .iter()
            .any(said);
    if !wish || !asked {
        return Vec::new();
    }
    let (value, content) = if f.starts_with("bullet") || f == "lists" {
        if neg {
            ("prose", "User prefers answers written as prose paragraphs")
        } else {
            ("bullets", "User prefers answers formatted as bullet points")
        }
    } else if f.starts_with("table") || f == "tabular" {
        if neg { return Vec::new() } else { ("tables", "User prefers tables in answers") }
    } else if f == "prose" || f == "paragraphs" || f == "full sentences" {
        if neg {
            ("bullets", "User prefers answers formatted as bullet points")
        } else {
            ("prose", "User prefers answers written as prose paragraphs")
        }
    } else if f.starts_with("code") || f.ends_with("the code") {
        if neg {
            ("prose", "User prefers explanations in words rather than code")
        } else {
            ("code", "User prefers code examples in answers")
        }
    } else if f.starts_with("numbered") || f.starts_with("step") {
        if neg { return Vec::new() } else { ("numbered", "User prefers numbered, step-by-step answers") }
    } else if f == "markdown" || f == "plain text" {
        if neg == (f == "markdown") {
            ("plain", "User prefers plain text without markdown")
        } else {
            ("markdown", "User prefers answers formatted in markdown")
        }
    } else {
        return Vec::new();
    };
    vec![Found::add(Draft::new(Kind::Preference, content, 0.85, 0.65).keyed("format", value).surfaced(Surface::Adapt))]
}

/// Whether a sentence says its wish is for good ("from now on", "always"): what makes a request
/// about the thing at hand a standing preference.
fn for_good(s: &Sentence<'_>) -> bool {
    ["from now on", "always", "in general", "going forward", "in future", "every time"]
        .iter()
        .any(|w| s.lower.contains(w))
}

fn tone(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let Some(x) = cap(c, "x").map(str::to_lowercase) else { return Vec::new() };
    let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
    // "how important it is to be kind": "be X" is a wish only when said to the assistant.
    if (whole.starts_with("be ") || whole.starts_with("please be")) && !s.addressed(c.get(0).map_or(0, |m| m.start())) {
        return Vec::new();
    }
    // "keep it chill", "make it more formal": the message or draft at hand ("it"), unless the
    // sentence says it is for good or for talking with the user ("with me").
    let artifact = whole.starts_with("keep it ") || whole.starts_with("make it ");
    if artifact && c.name("tail").is_none() && !for_good(s) {
        return Vec::new();
    }
    let liking = ["i ", "prefer", "like", "want", "appreciate"].iter().any(|w| whole.starts_with(w));
    if liking && c.name("tail").is_none() {
        // "I like funny movies" is about movies, not about how to talk.
        return Vec::new();
    }
    let negated = whole.starts_with("don't")
        || whole.starts_with("do not")
        || whole.starts_with("no need")
        || whole.starts_with("stop")
        || whole.starts_with("quit")
        || whole.contains(" less ")
        || whole.starts_with("no ");
    let casual = ("casual", "User prefers a casual, informal tone");
    let formal = ("formal", "User prefers a formal, professional tone");
    let blunt = ("blunt", "User prefers blunt, direct feedback");
    let gentle = ("gentle", "User prefers a gentle, supportive tone");
    let playful = ("playful", "User enjoys a playful, humorous tone");
    let (value, content) = match (x.as_str(), negated) {
        ("casual" | "informal" | "chill" | "relaxed" | "friendly" | "like a friend" | "warm", false) => casual,
        ("formal" | "professional" | "polite" | "stiff" | "robotic" | "serious", true) => casual,
        ("formal" | "professional" | "serious", false) => formal,
        ("casual" | "informal", true) => formal,
        ("blunt" | "direct" | "honest" | "harsh" | "brutally honest" | "straightforward", false) => blunt,
        (s, true) if s.starts_with("sugar") => blunt,
        ("nice", true) => blunt,
        ("gentle" | "kind" | "nice", false) => gentle,
        ("harsh" | "blunt", true) => gentle,
        ("funny" | "playful" | "humorous", false) => playful,
        _ => return Vec::new(),
    };
    if s.lower.contains("be honest") && !s.lower.contains("brutally") && x == "honest" && !s.lower.contains("always") {
        // "to be honest" is a filler, not a wish.
        return Vec::new();
    }
    vec![Found::add(Draft::new(Kind::Preference, content, 0.8, 0.6).keyed("tone", value).surfaced(Surface::Adapt))]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{keyed, run};
    use crate::kind::Kind;

    #[test]
    fn answer_length_in_many_words() {
        for s in [
            "Please keep your answers short.",
            "keep it short please",
            "I prefer short answers",
            "i'd prefer brief responses",
            "Short answers please!",
            "Could you be more concise?",
            "Your answers are way too long.",
            "no rambling, just get to the point",
            "Please don't write essays.",
            "I really like concise replies, thanks",
            "less verbose please",
        ] {
            assert_eq!(keyed(s, "answer_length"), Some("short".into()), "{s}");
        }
        for s in [
            "I prefer detailed answers.",
            "I like thorough explanations",
            "Give me more detail when you explain things",
            "please explain things in depth",
            "your replies are too short",
            "I want in-depth answers from now on",
        ] {
            assert_eq!(keyed(s, "answer_length"), Some("long".into()), "{s}");
        }
        // A request about the topic at hand is no standing wish for every answer.
        for s in [
            "Let's go into more detail.",
            "Can you give me more details about the game?",
            "I want more details on the trip!",
            "ok let's dig deeper",
        ] {
            assert_eq!(keyed(s, "answer_length"), None, "{s}");
        }
        for s in ["Can you go into more detail from now on?", "Always go deeper than that, please."] {
            assert_eq!(keyed(s, "answer_length"), Some("long".into()), "{s}");
        }
    }

    #[test]
    fn formats_languages_tones() {
        assert_eq!(keyed("Please use bullet points", "format"), Some("bullets".into()));
        assert_eq!(keyed("I prefer answers in bullet points.", "format"), Some("bullets".into()));
        assert_eq!(keyed("no bullet points please, write in paragraphs", "format"), Some("prose".into()));
        assert_eq!(keyed("Can you put comparisons in a table?", "format"), Some("tables".into()));
        assert_eq!(keyed("Always show me code examples", "format"), Some("code".into()));
        // A table that is furniture, in a sentence that asks for something elsewhere.
        let grandma = "The flavors always remind me of my grandma's kitchen - makes me think of all the \
                       conversations we used to have at the table. I hope you like it!";
        assert_eq!(keyed(grandma, "format"), None);
        assert_eq!(keyed("Please answer in Spanish.", "language"), Some("Spanish".into()));
        assert_eq!(keyed("can we speak french from now on?", "language"), Some("French".into()));
        assert_eq!(keyed("Reply in German please", "language"), Some("German".into()));
        assert_eq!(keyed("I'd like responses in Portuguese", "language"), Some("Portuguese".into()));
        assert_eq!(keyed("Be more casual with me", "tone"), Some("casual".into()));
        assert_eq!(keyed("don't be so formal", "tone"), Some("casual".into()));
        assert_eq!(keyed("Don't sugarcoat things", "tone"), Some("blunt".into()));
        assert_eq!(keyed("no emojis please", "emoji"), Some("none".into()));
        assert_eq!(keyed("Use metric units please.", "units"), Some("metric".into()));
        assert_eq!(keyed("Show me examples in TypeScript please.", "code_language"), Some("TypeScript".into()));
        assert_eq!(keyed("Keep it simple, I'm not technical.", "level"), Some("simple".into()));
        assert_eq!(keyed("Skip the basics, I'm a senior engineer", "level"), Some("expert".into()));
        assert_eq!(keyed("tl;dr please", "answer_length"), Some("short".into()));
        assert_eq!(keyed("You should get to the point where it works", "answer_length"), None);
        assert_eq!(keyed("it's important to be kind", "tone"), None);
        assert_eq!(keyed("I like funny movies", "tone"), None);
        // The draft at hand ("it"), not how to talk to the user, unless said for good.
        assert_eq!(keyed("ok but keep it relaxed, he already thinks I'm rude", "tone"), None);
        assert_eq!(keyed("Make it more formal, it's for the landlord.", "tone"), None);
        assert_eq!(keyed("Keep it casual from now on", "tone"), Some("casual".into()));
        assert_eq!(keyed("keep things casual", "tone"), Some("casual".into()));
        assert_eq!(keyed("Keep your tone casual with me", "tone"), Some("casual".into()));
    }

    #[test]
    fn mentions_are_not_wishes() {
        for s in [
            "I built a table for my kitchen",
            "My essay is long",
            "The code is in the repo",
            "to be honest I don't know",
        ] {
            assert!(run(s).iter().all(|o| o.draft.kind != Kind::Preference), "{s}");
        }
    }
}
