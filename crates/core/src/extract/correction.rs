//! Corrections and switches: "actually ...", "not X anymore", "switched to", "these days I ...".
//!
//! Three pieces, applied by the driver:
//! - [`is_correction`]: a sentence that corrects or updates; its keyed statements become
//!   `Update(Key)` (confidence ≥ 0.9) so they supersede the old slot value;
//! - [`replaced_value`]: the old value a sentence names ("not engineering", "instead of tea"), so
//!   an unkeyed statement can supersede the best match for it;
//! - the "no longer" rules below: "I don't live in Berlin anymore", "I quit my job", "I'm not
//!   vegan anymore". With a replacement in the same sentence they only name the old value; with
//!   none they become a `Forget` of the best match. Forget was chosen over `Contradict` because a
//!   contradiction must write a new memory, and any sentence saying what stopped being true
//!   repeats the old words ("no longer lives in Berlin"), which would keep them active.

use std::sync::OnceLock;

use regex::Regex;

use super::lex::{head, key_words, strip_times, third_person};
use super::rule::{Found, Mode, Rule, cap};
use crate::kind::Kind;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;

/// Whether a sentence corrects or updates something said before.
pub(super) fn is_correction(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    is_retraction(lower)
        || RE
            .get_or_init(|| {
                Regex::new(
                    r"(?x)
                        \b(?:
                            # the old state is over, or a new one is set against it
                            no\s+longer | switched | swapped | these\s+days | nowadays | now | instead | changed | moved
                            | any\s*more | any\s+longer | from\s+now\s+on | going\s+forward | not\s+anymore
                            # a new thing in a slot that held an old one
                            | new\s+(?:job|role|place|apartment|city|house|number|id|address|editor|laptop|phone)
                            | just\s+(?:started|joined) | recently\s+(?:started|joined|moved)
                            # something dropped for something else
                            | ditched | replaced | migrated
                        )\b
                    ",
                )
                .expect("switch regex")
            })
            .is_match(lower)
}

/// Whether a sentence takes back what was said ("actually ...", "I meant ...", "scratch that"):
/// what it says is about the conversation, not news. A switch ("I've moved", "now I ...") is news
/// as well as an update.
pub(super) fn is_retraction(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                # a take-back word opening the sentence
                ^\s*(?:
                    actually | correction | no[,!] | nope | wait
                    | sorry,?\s+i\s+meant | i\s+meant | oops | my\s+bad | to\s+clarify | update:?
                    | scratch\s+that | let\s+me\s+correct | i\s+misspoke | i\s+was\s+wrong
                    | quick\s+update | small\s+correction
                )\b
            ",
        )
        .expect("retraction regex")
    })
    .is_match(lower)
}

/// Words after "not" that name no replaced value ("not at all", "not a big deal").
pub(super) const NOT_VALUES: &[&str] = &[
    "a big deal",
    "a fan",
    "all",
    "always",
    "anymore",
    "at all",
    "bad",
    "even",
    "everything",
    "exactly",
    "here",
    "it",
    "just",
    "like that",
    "me",
    "much",
    "now",
    "only",
    "quite",
    "really",
    "right",
    "so",
    "sure",
    "that",
    "there",
    "this",
    "today",
    "too",
    "true",
    "very",
    "wrong",
    "yet",
    "you",
];

/// The old value a correcting sentence names: "not engineering", "instead of tea", "from X to".
pub(super) fn replaced_value(text: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)\b(?:
                    not\s+(?:a\s+|an\s+|the\s+|in\s+|at\s+|with\s+|using\s+|into\s+)?(?P<a>[^,.;!?]+?)(?:\s+(?:anymore|any\s+more|any\s+longer|now|these\s+days))?(?:$|[,.;!?]|\s+(?:but|and|so)\b)
                    | instead\s+of\s+(?P<b>[^,.;!?]+)
                    | rather\s+than\s+(?P<c>[^,.;!?]+)
                    | from\s+(?P<d>[^,.;!?]+?)\s+to\b
                    | no\s+longer\s+(?:\w+\s+)?(?P<e>[^,.;!?]+)
                    | used\s+to\s+\w+\s+(?P<f>[^,.;!?]+)
                )
            ",
        )
        .expect("replaced value regex")
    });
    for c in re.captures_iter(text) {
        let v = ["a", "b", "c", "d", "e", "f"].iter().find_map(|n| c.name(n)).map(|m| m.as_str())?;
        let v = tidy(head(v));
        if v.is_empty() || NOT_VALUES.contains(&v.to_lowercase().as_str()) || key_words(&v).is_empty() {
            continue;
        }
        return Some(v);
    }
    None
}

/// What a "no longer" statement stops: its identifying words, or the slots it names.
fn stop(x: &str, verb: &str) -> Vec<Found> {
    let x = strip_times(head(x));
    let words = key_words(&x);
    let described = third_person(&x);
    let draft = |kind: Kind| Draft::new(kind, format!("User no longer {verb} {described}"), 0.85, 0.5);
    let mut out = Vec::new();
    if words.is_empty() || words.iter().all(|w| matches!(w.as_str(), "job" | "work" | "there" | "company")) {
        let v = verb.to_lowercase();
        let lx = x.to_lowercase();
        let keys: &[&str] = if v.contains("work") || lx.contains("job") || lx.contains("work") {
            &["job", "employer"]
        } else if v.contains("live") {
            &["home"]
        } else {
            &[]
        };
        for k in keys {
            out.push(Found {
                retractable: true,
                ..Found::with(Action::Forget(Target::Key((*k).into())), draft(Kind::Profile))
            });
        }
        return out;
    }
    vec![Found {
        retractable: true,
        ..Found::with(Action::Forget(Target::Matching(words.join(" "))), draft(Kind::Profile))
    }]
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "correction.dont-anymore",
            Mode::Statement,
            &["anymore", "any more", "any longer", "no longer"],
            r"(?x)
                # e.g. I don't play chess anymore.
                \bi\s+(?:(?:don't|do\s+not|dont|no\s+longer)\s+(?:really\s+)?)(?P<v>[a-z]+)\s+(?P<x>[^,.;!?]+?)
                (?:\s+(?:anymore|any\s+more|any\s+longer))?
                # the object ends at the clause's end or where a new clause begins
                (?:$|[,.;!?]|\s+(?:but|and|since|because|so)\b)
            ",
            |c, _| {
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let no_longer = whole.contains("no longer");
                if !no_longer && !["anymore", "any more", "any longer"].iter().any(|w| whole.contains(w)) {
                    return Vec::new();
                }
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                if ["know", "think", "care", "remember", "understand", "mind", "want", "need", "feel"]
                    .contains(&v.as_str())
                {
                    return Vec::new();
                }
                stop(cap(c, "x").unwrap_or_default(), &super::lex::third_singular(&v))
            },
        ),
        Rule::new(
            "correction.not-anymore",
            Mode::Statement,
            &["anymore", "any more", "any longer", "no longer"],
            r"(?x)
                # e.g. I'm not with Spotify anymore.
                \b<IM>\s+(?P<neg>not|no\s+longer)\s+(?:a\s+|an\s+)?(?:
                    (?P<prep>
                        with
                        | at
                        | in
                        | into
                        | based\s+in
                        | living\s+in
                        | working\s+(?:at|for|as)
                        | employed\s+(?:at|by)
                        | on
                        | using
                        | a\s+fan\s+of
                    )
                    \s+
                )?
                (?:a\s+|an\s+)?(?P<x>[^,.;!?]+?)(?P<any>\s+(?:anymore|any\s+more|any\s+longer))?(?:$|[,.;!?]|\s+(?:but|and|since|because|so)\b)
            ",
            |c, _| {
                let neg = cap(c, "neg").unwrap_or_default().to_lowercase();
                if neg == "not" && c.name("any").is_none() {
                    return Vec::new();
                }
                let x = cap(c, "x").unwrap_or_default();
                if ["sure", "really", "that", "too", "so", "very", "a fan"].contains(&x.trim().to_lowercase().as_str())
                {
                    return Vec::new();
                }
                let prep = cap(c, "prep").map(|p| tidy(p).to_lowercase());
                let verb = match prep.as_deref() {
                    Some(p) if p.starts_with("working") || p.starts_with("employed") => "works at",
                    Some(p) if p.contains("living") || p.contains("based") => "lives in",
                    _ => "is",
                };
                stop(x, verb)
            },
        ),
        Rule::new(
            "correction.stopped",
            Mode::Statement,
            &[
                "stopped",
                "quit",
                "gave up",
                "given up",
                "left",
                "dropped out",
                "unsubscribed",
                "moved out",
                "moved away",
                "got rid of",
            ],
            r"(?x)
                # e.g. I finally quit smoking last spring.
                \bi(?:'ve|\s+have)?\s+(?:(?:just|finally|recently|officially|actually|completely)\s+)*(?P<v>
                    stopped | quit | gave\s+up | given\s+up | left | dropped\s+out\s+of
                    | unsubscribed\s+from | moved\s+out\s+of | moved\s+away\s+from | got\s+rid\s+of
                )
                \s+(?P<x><CLAUSE>)
            ",
            |c, s| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.trim_start().to_lowercase();
                if v == "left" {
                    // "I left my keys at home" is no change of life; "I left Google" / "my job" is.
                    let org = x.trim_start().starts_with(char::is_uppercase) && !s.lowercase;
                    let life = [
                        "job",
                        "company",
                        "team",
                        "band",
                        "club",
                        "church",
                        "gym",
                        "school",
                        "university",
                        "position",
                        "role",
                        "startup",
                        "firm",
                    ]
                    .iter()
                    .any(|w| xl.contains(w));
                    if !(org || life) {
                        return Vec::new();
                    }
                }
                if xl.starts_with("to ") || xl.starts_with("by ") || xl.starts_with("for ") || xl.starts_with("at ") {
                    return Vec::new();
                }
                let verb = match v.as_str() {
                    "left" | "quit" => "works at".to_string(),
                    "moved out of" | "moved away from" => "lives in".to_string(),
                    other => third_person(other),
                };
                let verb = if verb == "works at" && !xl.contains("job") && !xl.contains("work") {
                    "is with".to_string()
                } else {
                    verb
                };
                stop(x, &verb)
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{none, only_episodes, run};
    use crate::op::{Action, Target};

    fn actions(s: &str) -> Vec<Action> {
        run(s).into_iter().map(|o| o.action).collect()
    }

    #[test]
    fn corrections_supersede() {
        let ops = run("Actually I work in product design now, not engineering.");
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].action, Action::Update(Target::Key("job".into())));
        assert_eq!(ops[0].draft.content, "User works in product design");
        assert!(ops[0].draft.confidence >= 0.9);
        assert_eq!(
            actions("Correction: I live in Porto, not Lisbon"),
            vec![Action::Update(Target::Key("home".into()))]
        );
        assert_eq!(
            actions("I don't live in Berlin anymore, I live in Munich now"),
            vec![Action::Update(Target::Key("home".into()))]
        );
        assert_eq!(actions("these days I'm a data scientist"), vec![Action::Update(Target::Key("job".into()))]);
        assert_eq!(
            actions("I don't like coffee anymore, I'm into tea"),
            vec![Action::Update(Target::Matching("coffee".into()))]
        );
        assert_eq!(
            actions("These days I mostly drink tea instead of coffee."),
            vec![Action::Update(Target::Matching("coffee".into()))]
        );
        assert_eq!(
            actions("Actually my dog's name is Cookie, not Biscuit"),
            vec![Action::Update(Target::Matching("dog biscuit".into()))]
        );
    }

    #[test]
    fn no_longer_without_replacement_forgets() {
        assert_eq!(actions("I don't live in Berlin anymore"), vec![Action::Forget(Target::Matching("berlin".into()))]);
        assert_eq!(actions("I'm not vegan anymore"), vec![Action::Forget(Target::Matching("vegan".into()))]);
        assert_eq!(actions("I no longer use Vim"), vec![Action::Forget(Target::Matching("vim".into()))]);
        assert_eq!(
            actions("I quit my job last week"),
            vec![Action::Forget(Target::Key("job".into())), Action::Forget(Target::Key("employer".into()))]
        );
        assert_eq!(actions("I left Google"), vec![Action::Forget(Target::Matching("google".into()))]);
        assert_eq!(actions("I'm not with Acme any more"), vec![Action::Forget(Target::Matching("acme".into()))]);
        none("I'm not sure anymore");
        none("I don't know anymore");
        only_episodes("I left my keys at home");
        none("I don't live in Paris");
    }
}
