//! Forget requests: "forget about my job", "forget that I live in Lisbon", "please forget what
//! I said about the coffee shop", "don't remember that", "delete the thing about my ex".
//!
//! A forget archives the memory it targets. Topics that are profile slots ("my job", "where I
//! live", "my name") target the slot's key, so the archived memory is the one in that slot
//! whatever its wording; anything else targets the best lexical match for the topic's
//! identifying words ("coffee shop"). "I forgot my keys" and "don't forget to call mom" are not
//! forget requests.

use super::lex::{head, key_words, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "forget.forget",
            Mode::Request,
            &["forget", "unlearn", "disregard", "ignore"],
            r"(?x)
                # e.g. Please forget what I said about my landlord.
                (?:
                    ^
                    | [,;:]\s*
                    | \b(?:
                        please | pls | can\s+you | could\s+you | would\s+you | will\s+you | you\s+can
                        | you\s+may | you\s+should | want\s+you\s+to | like\s+you\s+to | need\s+you\s+to
                        | just | also | and | so | ok | okay | now | hey | oh | then | actually
                        | go\s+ahead\s+and
                    )
                    \s+
                )
                (?:please\s+)?(?P<v>forget|unlearn|disregard|ignore)\s+(?P<intro>
                    about\s+
                    | all\s+about\s+
                    | everything\s+(?:about|regarding)\s+
                    | (?:what|everything|anything|whatever|all)\s+(?:you\s+know|i\s+(?:said|told\s+you|mentioned|wrote|shared))\s+(?:about\s+|regarding\s+|re\s+)?
                    | the\s+(?:thing|part|bit|stuff|fact|memory|note|info|information|detail)s?\s+(?:about|that|where|regarding)\s+
                    | the\s+fact\s+that\s+
                    | i\s+(?:said|told\s+you|mentioned)\s+(?:that\s+)?
                    | that\s+
                )?
                (?P<x><TAIL>)
            ",
            |c, s| {
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let intro = cap(c, "intro");
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.trim_start().to_lowercase();
                // "forget to call", "forget it": a reminder or "never mind", not a request.
                if intro.is_none()
                    && (xl.starts_with("to ") || xl == "it" || xl.starts_with("it ") || xl.starts_with("it,"))
                {
                    return Vec::new();
                }
                // "ignore the warning" is about the task at hand; only "ignore what I said" forgets.
                if v != "forget" && v != "unlearn" && intro.is_none() {
                    return Vec::new();
                }
                // "I can relax, forget my troubles": one of a list of things done, not a request.
                if !s.addressed(c.get(0).map_or(0, |m| m.start())) {
                    return Vec::new();
                }
                forget(x, s)
            },
        ),
        Rule::new(
            "forget.delete-memory",
            Mode::Request,
            &["delete", "remove", "erase", "wipe", "clear", "drop", "scrub", "purge", "scratch"],
            r"(?x)
                # e.g. Delete the note about my old phone number.
                \b(?:delete|remove|erase|wipe|clear|drop|scrub|purge|scratch)\s+(?:(?:the|that|any|all|your|whatever|everything|what)\s+)?(?:
                    (?:
                        memory | memories | note | notes | info | information | thing | things | stuff
                        | bit | part | entry | entries | record | records | fact | facts | details?
                    )
                    \s+(?:about|of|on|regarding|that|where|re)\s+(?P<x><TAIL>)
                    | (?:you\s+know|i\s+(?:said|told\s+you|mentioned))\s+(?:about\s+)?(?P<y><TAIL>)
                )
                | \b(?:delete|remove|erase|wipe|clear|drop|scrub)\s+(?P<z>[^.;!?]+?)\s+from\s+(?:your\s+)?(?:memory|memories|notes|records|mind)
            ",
            |c, s| forget(cap(c, "x").or(cap(c, "y")).or(cap(c, "z")).unwrap_or_default(), s),
        ),
        Rule::new(
            "forget.dont-remember",
            Mode::Request,
            &["rememb"],
            r"(?x)
                # e.g. Don't remember anything about my salary.
                \b(?:
                    # e.g. nah don't bother remembering the pint thing
                    (?:don't|dont|do\s+not)\s+bother(?:\s+with)?
                    | don't
                    | do\s+not
                    | dont
                    | stop
                    | no\s+need\s+to
                    | you\s+don't\s+(?:need|have)\s+to
                    | please\s+don't
                    | never
                )
                \s+(?:remembe?r(?:ing|in'?)?|rememb(?:ring|rin'?)|keep(?:ing)?\s+track\s+of)\s+(?:that\s+|the\s+fact\s+that\s+|anything\s+about\s+|about\s+)?(?P<x><TAIL>)
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.trim_start().to_lowercase();
                if xl.starts_with("to ") {
                    return Vec::new();
                }
                // "I don't remember what it's called" is recall failing, not a request.
                let start = c.get(0).map_or(0, |m| m.start());
                let last = s.text[..start].split_whitespace().last().unwrap_or_default().to_lowercase();
                let subject = matches!(
                    last.as_str(),
                    "i" | "we"
                        | "they"
                        | "he"
                        | "she"
                        | "really"
                        | "honestly"
                        | "even"
                        | "still"
                        | "just"
                        | "actually"
                        | "barely"
                        | "hardly"
                        | "probably"
                );
                let question = ["what", "where", "when", "who", "how", "which", "whether", "if", "at all"]
                    .iter()
                    .any(|q| xl.starts_with(q));
                if subject || question {
                    return Vec::new();
                }
                forget(x, s)
            },
        ),
        Rule::new(
            "forget.never-mind",
            Mode::Request,
            &["never mind", "nevermind", "scratch", "disregard"],
            r"\b(?:never\s*mind|scratch|disregard)\s+(?:what\s+i\s+(?:said|told\s+you|mentioned)\s+)?(?:about|regarding)\s+(?P<x><TAIL>)",
            |c, s| forget(cap(c, "x").unwrap_or_default(), s),
        ),
        Rule::new(
            "forget.ignore-the-stuff",
            Mode::Request,
            &["ignore", "disregard", "scratch"],
            r"(?x)
                # e.g. and ignore the castle stuff from before, i was being daft.
                \b(?:ignore|disregard|scratch)\s+(?:all\s+)?(?:the|that|my)\s+
                (?P<x>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s+(?:stuff|thing|things|bit|part|comment|comments|joke|idea)\b
            ",
            |c, s| forget(cap(c, "x").unwrap_or_default(), s),
        ),
    ]
}

/// Profile slots a forget topic may name, with the kind their memories have.
fn slots(topic: &str) -> Vec<(&'static str, Kind)> {
    let t = format!(" {} ", topic.to_lowercase());
    let has = |ws: &[&str]| ws.iter().any(|w| t.contains(w));
    let mut out = Vec::new();
    if has(&[" job ", " work ", " career ", " employer ", " company ", " occupation ", " profession ", " what i do "]) {
        out.extend([("job", Kind::Profile), ("employer", Kind::Profile)]);
    }
    if has(&[" where i live ", " address ", " my home ", " my city ", " my town ", " my place ", " where i'm based "]) {
        out.push(("home", Kind::Profile));
    }
    if has(&[" where i'm from ", " hometown ", " where i grew up "]) {
        out.push(("hometown", Kind::Profile));
    }
    if has(&[" my name ", " what i'm called ", " what to call me "]) {
        out.extend([("name", Kind::Profile), ("nickname", Kind::Lore)]);
    }
    if has(&[" nickname "]) {
        out.push(("nickname", Kind::Lore));
    }
    if has(&[" my age ", " how old i am "]) {
        out.push(("age", Kind::Profile));
    }
    if has(&[" birthday "]) {
        out.push(("birthday", Kind::Profile));
    }
    if has(&[" my diet ", " what i eat "]) {
        out.push(("diet", Kind::Preference));
    }
    out
}

/// Forget ops for a topic: its slots by key, or the best match for its identifying words.
pub(super) fn forget(x: &str, _s: &Sentence<'_>) -> Vec<Found> {
    let topic = tidy(head(x));
    if topic.is_empty() {
        return Vec::new();
    }
    let described = third_person(&topic);
    let draft = |kind: Kind| Draft::new(kind, format!("User asked to forget {described}"), 0.9, 0.5);
    let slots = slots(&topic);
    let words = key_words(&topic);
    let generic = words.iter().all(|w| {
        matches!(
            w.as_str(),
            "job"
                | "work"
                | "career"
                | "employer"
                | "company"
                | "name"
                | "address"
                | "home"
                | "city"
                | "town"
                | "place"
                | "age"
                | "birthday"
                | "diet"
                | "nickname"
                | "old"
                | "where"
                | "called"
                | "call"
                | "based"
                | "grew"
                | "occupation"
                | "profession"
                | "live"
                | "from"
        )
    });
    if !slots.is_empty() && generic {
        return slots
            .into_iter()
            .map(|(key, kind)| Found::with(Action::Forget(Target::Key(key.to_string())), draft(kind)))
            .collect();
    }
    if words.is_empty() {
        return Vec::new();
    }
    vec![Found::with(Action::Forget(Target::Matching(words.join(" "))), draft(Kind::Profile))]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{none, only_episodes, run};
    use crate::op::{Action, Target};

    fn targets(s: &str) -> Vec<Target> {
        run(s)
            .into_iter()
            .map(|o| match o.action {
                Action::Forget(t) => t,
                other => panic!("{s}: expected a forget, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn forget_requests_in_many_words() {
        let job = vec![Target::Key("job".into()), Target::Key("employer".into())];
        assert_eq!(targets("Forget about my job."), job);
        assert_eq!(targets("please forget where I work"), job);
        assert_eq!(targets("Forget that I live in Lisbon"), vec![Target::Matching("lisbon".into())]);
        assert_eq!(targets("can you forget where I live?"), vec![Target::Key("home".into())]);
        assert_eq!(
            targets("Please forget what I said about the coffee shop."),
            vec![Target::Matching("coffee shop".into())]
        );
        assert_eq!(targets("forget about that coffee shop"), vec![Target::Matching("coffee shop".into())]);
        assert_eq!(
            targets("Don't remember that my sister is pregnant"),
            vec![Target::Matching("sister pregnant".into())]
        );
        assert_eq!(targets("delete the thing about my ex"), vec![Target::Matching("ex".into())]);
        // As chat has it, spelt as said.
        assert_eq!(
            targets("nah dont bother remembrin the karaoke thing lol"),
            vec![Target::Matching("karaoke".into())]
        );
        let got = run("ok don't bother remembering the bungee jump, I'm just being daft");
        assert!(
            got.iter()
                .any(|o| matches!(&o.action, Action::Forget(Target::Matching(m)) if m.starts_with("bungee jump"))),
            "{got:?}"
        );
        assert_eq!(targets("Remove my allergy from your memory"), vec![Target::Matching("allergy".into())]);
        assert_eq!(targets("ok, forget my dog's name"), vec![Target::Matching("dog".into())]);
        assert_eq!(targets("never mind what I said about Berlin"), vec![Target::Matching("berlin".into())]);
        assert_eq!(targets("Scratch the bit about Berlin."), vec![Target::Matching("berlin".into())]);
    }

    #[test]
    fn forgetting_things_is_not_a_request() {
        only_episodes("I forgot my keys again");
        only_episodes("I always forget my passwords");
        none("forget it, not important");
        none("Ignore the warning, it's harmless");
        none("delete the file when you're done");
        only_episodes("I can relax, forget my troubles, and get lost in another world");
        none("I don't remember what it's called");
        assert_eq!(targets("Please delete what you know about my health."), vec![Target::Matching("health".into())]);
    }
}
