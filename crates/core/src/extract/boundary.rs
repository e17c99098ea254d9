//! Boundaries: "never mention my ex", "don't bring up work", "my weight is off limits", "I'd
//! rather not talk about my dad".
//!
//! A boundary is a protocol surfaced only as avoid: stored, loaded on every turn, never spoken.
//! The topic is kept in the user's words, in the third person ("their ex-husband").

use super::lex::{head, is_vague, third_person};
use regex::Captures;

use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::{Kind, Surface};
use crate::memory::Sensitivity;
use crate::op::Draft;
use crate::text::tidy;

/// Leading fillers that are not part of a topic ("honestly, work is off limits").
pub(super) const FILLERS: &[&str] = &[
    "also ",
    "also, ",
    "and ",
    "and also ",
    "btw ",
    "but ",
    "by the way ",
    "fyi ",
    "heads up ",
    "honestly ",
    "just ",
    "just so you know ",
    "note that ",
    "oh and ",
    "one more thing ",
    "please note ",
    "ps ",
    "so ",
];

/// Trailing words that qualify the request, not the topic.
pub(super) const QUALIFIERS: &[&str] = &[
    " any more",
    " anymore",
    " around me",
    " at all",
    " ever",
    " for now",
    " from now on",
    " going forward",
    " if possible",
    " if you can",
    " in any way",
    " in conversation",
    " in front of me",
    " in our conversations",
    " ok",
    " okay",
    " please",
    " thank you",
    " thanks",
    " to me",
    " unless i bring it up",
    " unless i do",
    " with me",
];

fn topic(x: &str) -> Option<String> {
    let mut t = tidy(head(x));
    loop {
        let lower = t.to_ascii_lowercase();
        let Some(f) = FILLERS.iter().find(|f| lower.starts_with(**f)) else { break };
        t = t[f.len()..].trim_start().to_string();
    }
    loop {
        let lower = t.to_ascii_lowercase();
        let Some(q) = QUALIFIERS.iter().find(|q| lower.ends_with(**q)) else { break };
        t.truncate(t.len() - q.len());
    }
    let t = t.trim().trim_end_matches(|c: char| !c.is_alphanumeric()).to_string();
    let mut w = t.split_whitespace().map(str::to_lowercase);
    let (first, second) = (w.next().unwrap_or_default(), w.next().unwrap_or_default());
    if matches!(first.as_str(), "it" | "that" | "this" | "those" | "these" | "them")
        && (second.is_empty()
            || matches!(
                second.as_str(),
                "with"
                    | "right"
                    | "now"
                    | "at"
                    | "for"
                    | "to"
                    | "today"
                    | "here"
                    | "there"
                    | "again"
                    | "stuff"
                    | "kind"
                    | "sort"
                    | "up"
            ))
    {
        return None;
    }
    if t.chars().count() < 2 || is_vague(&t) || matches!(t.to_lowercase().as_str(), "it up" | "that up" | "this up") {
        return None;
    }
    Some(third_person(&t))
}

/// What "it"/"that" points back to in "... Please don't bring it up again": the words before the
/// request in the same sentence, else the previous sentence, when they say something about the
/// user ("I failed my driving test last week") — never a pleasantry ("Thanks so much!").
fn referent(c: &Captures<'_>, s: &Sentence<'_>) -> Option<String> {
    let before = s.text[..c.get(0).map_or(0, |m| m.start())].trim();
    let candidates = [Some(before), s.prev];
    candidates.into_iter().flatten().find_map(|t| {
        let mut t = t.trim();
        loop {
            let trimmed = t.trim_end_matches(|c: char| !c.is_alphanumeric()).trim_end();
            let lower = trimmed.to_lowercase();
            let filler = ["please", "pls", "so", "and", "but", "just", "ok", "okay"]
                .into_iter()
                .find(|f| lower.ends_with(f) && lower[..lower.len() - f.len()].ends_with([' ', ',']));
            t = match filler {
                Some(f) => &trimmed[..trimmed.len() - f.len()],
                None => {
                    t = trimmed;
                    break;
                }
            };
        }
        let t = t
            .split_once(' ')
            .filter(|(w, _)| {
                matches!(w.to_lowercase().trim_end_matches(','), "so" | "and" | "but" | "well" | "oh" | "yeah" | "ugh")
            })
            .map_or(t, |(_, rest)| rest);
        let words: Vec<String> = t
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase())
            .collect();
        let personal = words.iter().any(|w| matches!(w.as_str(), "i" | "i'm" | "i've" | "my" | "me" | "we" | "our"));
        let content = words.iter().filter(|w| w.len() > 2 && !crate::text::is_stopword(w)).count();
        (personal && content >= 2).then(|| {
            let t = third_person(&tidy(t));
            let t = t.strip_prefix("they ").map_or(t.clone(), |rest| format!("that they {rest}"));
            t.trim_end_matches([',', ';', ':', '-', ' ']).to_string()
        })
    })
}

/// A boundary on the captured topic; a pronoun ("bring it up") stands for what was said before.
fn boundary_or_referent(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let x = cap(c, "x").unwrap_or_default();
    // "don't mention that again, I'm dealing with it": the topic is the pronoun's clause.
    let topic_words = head(x);
    let pronoun = matches!(
        topic_words
            .split_whitespace()
            .next()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
            .as_deref(),
        Some("it" | "that" | "this" | "them")
    ) && topic_words.split_whitespace().count() <= 3;
    if pronoun { referent(c, s).map_or_else(Vec::new, |t| vec![Found::add(avoid(&t))]) } else { boundary(x) }
}

fn avoid(t: &str) -> Draft {
    let mut d = Draft::new(Kind::Protocol, format!("Do not bring up {t} unless the user does"), 0.9, 0.9)
        .surfaced(Surface::Avoid);
    d.sensitivity = Sensitivity::Sensitive;
    d
}

fn boundary(x: &str) -> Vec<Found> {
    let Some(t) = topic(x) else { return Vec::new() };
    vec![Found::add(avoid(&t))]
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "boundary.never-mention",
            Mode::Request,
            &[
                "mention",
                "bring",
                "talk",
                "ask",
                "raise",
                "discuss",
                "remind",
                "joke",
                "comment",
                "reference",
                "get into",
                "go into",
            ],
            r"(?x)
                # e.g. Please never mention my divorce again.
                \b(?:
                    never | (?:don't | do\s+not | dont)(?:\s+to)? | stop | quit | avoid | no\s+more
                    | you\s+(?:please\s+)?not | refrain\s+from | please\s+don't(?:\s+to)?
                )
                \s+(?:ever\s+)?(?:again\s+)?(?:
                    mention(?:ing)?
                    | bring(?:ing)?\s+up
                    | talk(?:ing)?\s+(?:to\s+me\s+)?about
                    | ask(?:ing)?\s+(?:me\s+)?about
                    | rais(?:e|ing)
                    | discuss(?:ing)?
                    | remind(?:ing)?\s+me\s+(?:of|about)
                    | jok(?:e|ing)\s+about
                    | mak(?:e|ing)\s+jokes\s+about
                    | comment(?:ing)?\s+on
                    | referenc(?:e|ing)
                    | get(?:ting)?\s+into
                    | go(?:ing)?\s+into
                )
                \s+(?P<x><TAIL>)
            ",
            boundary_or_referent,
        ),
        Rule::new(
            "boundary.please-not",
            Mode::Request,
            &[
                "not ask",
                "not mention",
                "not talk",
                "not bring",
                "not to ask",
                "not to mention",
                "not to talk",
                "not to bring",
            ],
            r"(?x)
                # e.g. Okay, please not ask me about my weight.
                # A learner's please not to mention my ex; only after please, as the idiom
                # (the cost, not to mention the hassle) is no request.
                (?:(?:^|[,;:]\s*)not\s+|\bplease,?\s+not\s+(?:to\s+)?)(?:ever\s+)?(?:
                    ask(?:ing)?\s+(?:me\s+)?about
                    | mention(?:ing)?
                    | talk(?:ing)?\s+(?:to\s+me\s+)?about
                    | bring(?:ing)?\s+up
                )
                \s+(?P<x><TAIL>)
            ",
            boundary_or_referent,
        ),
        Rule::new(
            "boundary.avoid-topic",
            Mode::Request,
            &["avoid", "steer clear", "stay away", "keep away", "skip"],
            r"(?x)
                # e.g. Can you avoid the topic of politics with me?
                \b(?:please\s+)?(?:avoid|skip|steer\s+clear\s+of|stay\s+away\s+from|keep\s+away\s+from)\s+
                (?:the\s+|any\s+)?(?:topic|subject|issue|conversation|discussion)s?\s+(?:of\s+|about\s+|around\s+)?
                # the topic is the rest of the sentence
                (?P<x><TAIL>)
            ",
            |c, _| boundary(cap(c, "x").unwrap_or_default()),
        ),
        Rule::new(
            "boundary.bring-x-up",
            Mode::Request,
            &["bring"],
            r"\b(?:never|don't|do\s+not|dont|stop|please\s+don't)\s+bring(?:ing)?\s+(?P<x>[^.;!?]+?)\s+up\b",
            boundary_or_referent,
        ),
        Rule::new(
            "boundary.rather-not-talk",
            Mode::Request,
            &["talk", "speak", "hear", "chat", "think", "discuss", "get into"],
            r"(?x)
                # e.g. I'd rather not talk about my father.
                (?:\bi\s*)?(?:
                    don't
                    | do\s+not
                    | dont
                    | really\s+don't
                    | 'd\s+rather\s+not
                    | \s+would\s+rather\s+not
                    | 'd\s+prefer\s+not\s+to
                    | \s+would\s+prefer\s+not\s+to
                    | prefer\s+not\s+to
                    | never\s+want\s+to
                    | don't\s+want\s+to
                    | do\s+not\s+want\s+to
                    | don't\s+wanna
                    | don't\s+like\s+to
                    | hate\s+to
                    | can't
                    | cannot
                )
                \s+(?:
                    (?:talk(?:ing)?|speak(?:ing)?|hear(?:ing)?|chat(?:ting)?)\s+about
                    | discuss
                    | get\s+into
                    | go\s+into
                )
                \s+(?P<x><TAIL>)
            ",
            boundary_or_referent,
        ),
        Rule::new(
            "boundary.lets-not",
            Mode::Request,
            &["let's", "lets"],
            r"\blet'?s\s+(?:not|never)\s+(?:talk\s+about|discuss|bring\s+up|mention|go\s+into|get\s+into|dwell\s+on|get\s+started\s+on)\s+(?P<x><TAIL>)",
            boundary_or_referent,
        ),
        Rule::new(
            "boundary.off-limits",
            Mode::Request,
            &[
                "limits",
                "off the table",
                "no-go",
                "no go",
                "sore",
                "sensitive",
                "touchy",
                "painful",
                "taboo",
                "not up for",
                "something i",
            ],
            r"(?x)
                # e.g. My sister's wedding is a sore subject.
                \b(?P<x>[^,.;!?]+?)\s+(?:is|are)\s+(?:
                    completely\s+
                    | totally\s+
                    | strictly\s+
                    | absolutely\s+
                    | kind\s+of\s+
                    | kinda\s+
                    | a\s+bit\s+(?:of\s+)?
                )?
                (?:
                    off[-\x20]limits
                    | off\s+the\s+table
                    | a\s+no[-\x20]go(?:\s+zone|\s+area|\s+topic)?
                    | a\s+sore\s+(?:spot|subject|topic|point)
                    | (?:a\s+)?(?:very\s+|really\s+|super\s+)?(?:sensitive|touchy|painful|difficult)\s+(?:topic|subject|area|issue)
                    | not\s+up\s+for\s+discussion
                    | taboo
                    | (?:not\s+)?something\s+i\s+(?:don't\s+|do\s+not\s+|never\s+)?(?:want|like|wish|care)\s+to\s+(?:talk|discuss|think|hear)(?:\s+about)?
                )
            ",
            |c, _| boundary(cap(c, "x").unwrap_or_default()),
        ),
        Rule::new(
            "boundary.leave-out",
            Mode::Request,
            &["out of"],
            r"\b(?:keep|leave)\s+(?P<x>[^.;!?]+?)\s+out\s+of\s+(?:it|this|our\s+(?:chats?|conversations?)|the\s+conversation|conversations?|things)",
            |c, _| boundary(cap(c, "x").unwrap_or_default()),
        ),
        Rule::new(
            "boundary.not-comfortable",
            Mode::Request,
            &["comfortable", "ready"],
            r"\b<IM>\s+not\s+(?:comfortable|ready|okay|ok)\s+(?:talking|discussing|to\s+talk|to\s+discuss|with\s+talking|sharing)\s+(?:about\s+)?(?P<x><TAIL>)",
            |c, _| boundary(cap(c, "x").unwrap_or_default()),
        ),
        Rule::new(
            "boundary.dont-call-me",
            Mode::Request,
            &["call me"],
            r#"\b(?:don't|do\s+not|dont|never|stop|please\s+don't|quit)\s+call(?:ing)?\s+me\s+["']?(?P<x><NAME>)"#,
            |c, _| {
                let Some(x) = cap(c, "x").map(tidy) else { return Vec::new() };
                if super::lex::is_not_a_name(&x) {
                    return Vec::new();
                }
                let d =
                    Draft::new(Kind::Protocol, format!("Do not call the user {x}"), 0.9, 0.8).surfaced(Surface::Avoid);
                vec![Found::add(d)]
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{contents, none, nothing_written, only_episodes, run};
    use crate::kind::{Kind, Surface};

    #[test]
    fn boundaries_in_many_words() {
        for (s, topic) in [
            ("Please never mention my ex-husband.", "their ex-husband"),
            ("Never mention my ex-husband.", "their ex-husband"),
            ("Please not to mention my ex-husband, is painful for me", "their ex-husband"),
            ("please don't to talk about my weight", "their weight"),
            ("don't bring up my divorce unless I do", "their divorce"),
            ("Please don't ask me about my weight", "their weight"),
            ("My weight is off limits.", "their weight"),
            ("honestly, work is off-limits on weekends", "work"),
            ("I'd rather not talk about my dad", "dad"),
            ("I don't want to talk about the accident", "the accident"),
            ("let's not discuss politics", "politics"),
            ("Can you stop bringing up my job search?", "their job search"),
            ("My mother is a sensitive topic for me", "their mother"),
            ("keep my ex out of it", "their ex"),
            ("don't bring my brother up ever again", "their brother"),
            ("Please avoid the topic of religion.", "religion"),
            ("Let's not get into politics.", "politics"),
            ("Could you not bring up my dad?", "dad"),
            ("My ex is not something I want to talk about.", "their ex"),
        ] {
            let ops = run(s);
            assert_eq!(ops.len(), 1, "{s}: {ops:?}");
            assert_eq!(ops[0].draft.kind, Kind::Protocol, "{s}");
            assert_eq!(ops[0].draft.surface, Some(Surface::Avoid), "{s}");
            assert_eq!(ops[0].draft.content, format!("Do not bring up {topic} unless the user does"), "{s}");
        }
        assert_eq!(contents("don't call me Danny"), vec!["Do not call the user Danny"]);
    }

    #[test]
    fn not_boundaries() {
        none("don't mention it");
        none("Don't worry about it");
        none("can we talk about my project?");
        only_episodes("I can't stop thinking about the trip");
        none("Stop talking about me, tell me about your day");
        none("Thanks so much! Don't mention it.");
        only_episodes("The rent went up again, not to mention the hassle of the deposit");
        only_episodes("I had to stop to talk about the budget with Jo");
        nothing_written("I did not ask about this, you brought it up");
    }

    #[test]
    fn a_pronoun_points_back_to_what_the_user_said() {
        for text in [
            "I failed my driving test last week. Please don't bring it up again.",
            "failed my driving test last week, please dont mention it",
            "So I failed my driving test on Tuesday... let's not talk about it",
            "I failed my driving test on Tuesday. Please, not ask me about this, is too hard.",
            "Failed my driving test on Tuesday. Honestly, don't mention that again, I'm dealing with it.",
        ] {
            let ops = run(text);
            let b = ops.iter().find(|o| o.draft.kind == Kind::Protocol).unwrap_or_else(|| panic!("{text}: {ops:?}"));
            assert_eq!(b.draft.surface, Some(Surface::Avoid));
            assert!(b.draft.content.contains("driving test"), "{text}: {}", b.draft.content);
        }
    }
}
