//! The heuristic extractor: rules over first-person statements, no model, microseconds a message.
//!
//! Each rule is a regular expression over one sentence and a builder that turns its captures
//! into a draft. Rules are ordered; the first that claims a sentence span wins it.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::{Extractor, sentences};
use crate::kind::{Kind, Surface};
use crate::message::{Message, Role};
use crate::op::{Action, Draft, ProposedOp, Target};
use crate::text::tidy;

/// Rule-based extractor: the offline default.
#[derive(Debug, Default, Clone, Copy)]
pub struct HeuristicExtractor;

struct Rule {
    re: Regex,
    build: fn(&Captures<'_>) -> Option<Draft>,
}

/// Trims a captured phrase at the first clause break so "hiking, but only in summer" keeps "hiking".
fn phrase(s: &str) -> Option<String> {
    let cut = s.find([',', '.', ';', '!', '?', '(', ')']).map_or(s, |i| &s[..i]);
    let cut = [" but ", " because ", " so ", " and i ", " and my ", " though", " anymore", " now", " these days"]
        .iter()
        .fold(cut, |acc, sep| acc.to_lowercase().find(sep).map_or(acc, |i| &acc[..i]));
    let t = third_person(&tidy(cut.trim_end_matches(|c: char| !c.is_alphanumeric())));
    (t.chars().count() >= 2).then_some(t)
}

/// Rewrites first-person words so stored content reads about the user, not as the user.
fn third_person(s: &str) -> String {
    s.split(' ')
        .map(|w| match w.to_lowercase().as_str() {
            "my" => "their".to_string(),
            "mine" => "theirs".to_string(),
            "me" => "them".to_string(),
            "myself" => "themselves".to_string(),
            "i" => "they".to_string(),
            "i'm" => "they're".to_string(),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn cap<'a>(c: &'a Captures<'_>, name: &str) -> Option<&'a str> {
    c.name(name).map(|m| m.as_str())
}

fn title(word: &str) -> String {
    let mut cs = word.chars();
    cs.next().map(|f| f.to_uppercase().chain(cs).collect()).unwrap_or_default()
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |p: &str| Regex::new(&format!("(?i){p}")).expect("extractor rule");
        vec![
            Rule {
                re: r(r"\b(?:my name is|my name's|call me|i go by)\s+(?P<x>[A-Za-z][\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)"),
                build: |c| {
                    let name = title(cap(c, "x")?);
                    Some(Draft::new(Kind::Profile, format!("User's name is {name}"), 0.9, 0.9).keyed("name", name))
                },
            },
            Rule {
                re: r(r"\bmy (?P<rel>wife|husband|partner|boyfriend|girlfriend|son|daughter|mom|mother|dad|father|sister|brother|grandma|grandmother|grandpa|grandfather|best friend|dog|cat|puppy|kitten|rabbit|parrot|horse)(?:'s name is| is called| is named| named| called)\s+(?P<x>[A-Za-z][\w'-]*)"),
                build: |c| {
                    let rel = cap(c, "rel")?.to_lowercase();
                    let name = title(cap(c, "x")?);
                    Some(
                        Draft::new(Kind::Profile, format!("User's {rel} is named {name}"), 0.85, 0.8)
                            .keyed(format!("family:{rel}"), name),
                    )
                },
            },
            Rule {
                re: r(r"\bi (?:have|got|adopted) (?:a|an|two|three|\d+) (?:dogs?|cats?|puppy|puppies|kittens?|rabbits?|parrots?|horses?|kids|children|sons?|daughters?)(?: (?:named|called) [A-Za-z][\w'-]*(?: and [A-Za-z][\w'-]*)?)?"),
                build: |c| {
                    let whole = tidy(c.get(0)?.as_str());
                    let (_, rest) = whole.split_once(' ')?;
                    let (verb, object) = rest.split_once(' ')?;
                    let verb = if verb.eq_ignore_ascii_case("have") { "has" } else { verb };
                    Some(Draft::new(Kind::Profile, format!("User {verb} {object}"), 0.85, 0.75))
                },
            },
            Rule {
                re: r(r"\bi(?:'m| am) (?:now )?(?:a|an) (?P<x>(?:[\w-]+ ){0,3}?(?:engineer|developer|programmer|designer|teacher|nurse|doctor|manager|student|writer|lawyer|accountant|scientist|researcher|consultant|analyst|architect|artist|chef|cook|photographer|founder|ceo|cto|product manager|pm|musician|pilot|therapist|dentist|pharmacist|journalist|editor|marketer|salesperson|recruiter|farmer|mechanic|electrician|plumber|carpenter|firefighter|police officer|paramedic|professor|lecturer|librarian|freelancer|entrepreneur|intern)\b(?: (?:at|for|in) [^,.;!?]+)?)"),
                build: |c| {
                    let job = phrase(cap(c, "x")?)?;
                    Some(Draft::new(Kind::Profile, format!("User is a {job}"), 0.85, 0.8).keyed("job", job))
                },
            },
            Rule {
                re: r(r"\bi (?:now )?work (?P<prep>as|at|for|in) (?P<x>[^,.;!?]+)"),
                build: |c| {
                    let prep = cap(c, "prep")?.to_lowercase();
                    let what = phrase(cap(c, "x")?)?;
                    let key = if prep == "at" || prep == "for" { "employer" } else { "job" };
                    Some(Draft::new(Kind::Profile, format!("User works {prep} {what}"), 0.85, 0.8).keyed(key, what))
                },
            },
            Rule {
                re: r(r"\bi (?:now )?(?:live|reside|moved) (?:in|to) (?P<x>[^,.;!?]+)"),
                build: |c| {
                    let place = phrase(cap(c, "x")?)?;
                    Some(Draft::new(Kind::Profile, format!("User lives in {place}"), 0.85, 0.8).keyed("home", place))
                },
            },
            Rule {
                re: r(r"\b(?:never|don't|do not|please don't|please do not) (?:mention|bring up|talk about|ask about|ask me about|raise)\s+(?P<x>[^.;!?]+)"),
                build: |c| {
                    let topic = phrase(cap(c, "x")?)?;
                    Some(
                        Draft::new(Kind::Protocol, format!("Do not bring up {topic} unless the user does"), 0.9, 0.9)
                            .surfaced(Surface::Avoid),
                    )
                },
            },
            Rule {
                re: r(r"\b(?P<x>[^,.;!?]+?) (?:is|are) off[- ]limits\b"),
                build: |c| {
                    let topic = phrase(cap(c, "x")?)?;
                    Some(
                        Draft::new(Kind::Protocol, format!("Do not bring up {topic} unless the user does"), 0.9, 0.9)
                            .surfaced(Surface::Avoid),
                    )
                },
            },
            Rule {
                re: r(r"\b(?:keep|make) (?:your |the )?(?:answers|responses|replies|messages) (?P<x>short|brief|concise|long|detailed|longer|shorter)"),
                build: |c| answer_length(cap(c, "x")?),
            },
            Rule {
                re: r(r"\bi (?:prefer|like|want) (?P<x>short|brief|concise|long|detailed|longer|shorter|in-depth) (?:answers|responses|replies|explanations)"),
                build: |c| answer_length(cap(c, "x")?),
            },
            Rule {
                re: r(r"\b(?:please )?(?:answer|reply|respond|talk to me) in (?P<x>english|spanish|french|german|italian|portuguese|dutch|japanese|chinese|korean|russian|polish|turkish|arabic|hindi)\b"),
                build: |c| {
                    let lang = title(cap(c, "x")?);
                    Some(
                        Draft::new(Kind::Preference, format!("User wants replies in {lang}"), 0.85, 0.7)
                            .keyed("language", lang),
                    )
                },
            },
            Rule {
                re: r(r"\bi (?:really |absolutely |do )?(?P<v>love|like|enjoy|adore|prefer)\s+(?P<x>[^,.;!?]+)"),
                build: |c| {
                    let what = phrase(cap(c, "x")?)?;
                    let verb = match cap(c, "v")?.to_lowercase().as_str() {
                        "prefer" => "prefers",
                        "love" | "adore" => "loves",
                        "enjoy" => "enjoys",
                        _ => "likes",
                    };
                    Some(Draft::new(Kind::Preference, format!("User {verb} {what}"), 0.75, 0.6))
                },
            },
            Rule {
                re: r(r"\bi (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like|am not a fan of|'m not a fan of)\s+(?P<x>[^,.;!?]+)"),
                build: |c| {
                    let what = phrase(cap(c, "x")?)?;
                    Some(Draft::new(Kind::Preference, format!("User dislikes {what}"), 0.75, 0.6))
                },
            },
        ]
    })
}

fn answer_length(word: &str) -> Option<Draft> {
    let short = matches!(word.to_lowercase().as_str(), "short" | "brief" | "concise" | "shorter");
    let (value, content) = if short {
        ("short", "User prefers short, concise answers")
    } else {
        ("long", "User prefers detailed, in-depth answers")
    };
    Some(Draft::new(Kind::Preference, content, 0.85, 0.7).keyed("answer_length", value).surfaced(Surface::Adapt))
}

/// Whether a sentence corrects something said before ("actually", "not X anymore", "switched to").
fn is_correction(sentence: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(?:actually|correction|no,|wait,)|\b(?:not .+ anymore|no longer|switched to|these days|now)\b",
        )
        .expect("correction regex")
    })
    .is_match(sentence)
}

impl Extractor for HeuristicExtractor {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    fn version(&self) -> &'static str {
        "1"
    }

    fn extract(&self, batch: &[Message]) -> Vec<ProposedOp> {
        let mut ops = Vec::new();
        for m in batch.iter().filter(|m| m.role == Role::User) {
            for sentence in sentences(&m.content) {
                let correction = is_correction(sentence);
                let mut claimed: Vec<(usize, usize)> = Vec::new();
                for rule in rules() {
                    for c in rule.re.captures_iter(sentence) {
                        let whole = c.get(0).expect("whole match");
                        if claimed.iter().any(|&(s, e)| whole.start() < e && s < whole.end()) {
                            continue;
                        }
                        let Some(mut draft) = rule.build(&c) else { continue };
                        claimed.push((whole.start(), whole.end()));
                        let action = match (&draft.key, correction) {
                            (Some(key), true) => {
                                draft.confidence = draft.confidence.max(0.9);
                                Action::Update(Target::Key(key.clone()))
                            }
                            _ => Action::Add,
                        };
                        ops.push(ProposedOp { action, draft, sources: vec![m.id.clone()] });
                    }
                }
            }
        }
        ops
    }
}

impl Rule {
    fn build(&self, c: &Captures<'_>) -> Option<Draft> {
        (self.build)(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::MessageId;
    use crate::scope::Scope;

    fn run(text: &str) -> Vec<ProposedOp> {
        let m = Message {
            id: MessageId::new("m1").unwrap(),
            scope: Scope::parse("t", None, Some("u"), Some("c")).unwrap(),
            role: Role::User,
            content: text.into(),
            at: "2026-03-02T09:00:00Z".parse().unwrap(),
        };
        HeuristicExtractor.extract(&[m])
    }

    fn contents(text: &str) -> Vec<String> {
        run(text).into_iter().map(|o| o.draft.content).collect()
    }

    #[test]
    fn identity_statements_become_profile_facts() {
        assert_eq!(contents("Hi! My name is dana."), vec!["User's name is Dana"]);
        assert_eq!(
            contents("My name is Maya and I live in Porto."),
            vec!["User's name is Maya", "User lives in Porto"]
        );
        assert_eq!(contents("my name is Mary Ann"), vec!["User's name is Mary Ann"]);
        assert_eq!(
            contents("I'm a backend engineer at a fintech startup."),
            vec!["User is a backend engineer at a fintech startup"]
        );
        assert_eq!(contents("I live in Lisbon, near the river."), vec!["User lives in Lisbon"]);
        assert_eq!(contents("My dog is called Biscuit"), vec!["User's dog is named Biscuit"]);
        assert_eq!(contents("I have a cat named Miso."), vec!["User has a cat named Miso"]);
    }

    #[test]
    fn preferences_and_keyed_preferences() {
        assert_eq!(
            contents("I really love hiking in the mountains, but not in winter"),
            vec!["User loves hiking in the mountains"]
        );
        assert_eq!(contents("I can't stand cilantro"), vec!["User dislikes cilantro"]);
        let ops = run("Please keep your answers short.");
        assert_eq!(ops[0].draft.key.as_deref(), Some("answer_length"));
        assert_eq!(ops[0].draft.value.as_deref(), Some("short"));
    }

    #[test]
    fn boundaries_are_avoid_protocols() {
        let ops = run("Please never mention my ex-husband.");
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].draft.kind, Kind::Protocol);
        assert_eq!(ops[0].draft.surface, Some(Surface::Avoid));
        assert_eq!(ops[0].draft.content, "Do not bring up their ex-husband unless the user does");
    }

    #[test]
    fn corrections_update_the_keyed_slot() {
        let ops = run("Actually I work in product design now, not engineering.");
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].action, Action::Update(Target::Key("job".into())));
        assert_eq!(ops[0].draft.content, "User works in product design");
        assert!(ops[0].draft.confidence >= 0.9);
    }

    #[test]
    fn small_talk_yields_nothing() {
        assert!(run("hi there, how are you?").is_empty());
        assert!(run("ok thanks").is_empty());
    }
}
