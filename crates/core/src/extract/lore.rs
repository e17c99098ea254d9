//! Lore: the texture of this relationship. Nicknames, names given together ("let's call it
//! Project Phoenix"), pet names ("we call him Captain Fluff"), inside jokes and rituals.
//!
//! Lore is spoken: surfaced naturally, which is the point of remembering it.

use regex::Captures;

use super::lex::{head, species_key, third_person, title_words};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::op::Draft;
use crate::text::tidy;

fn lore(content: String, conf: f32, sal: f32) -> Draft {
    Draft::new(Kind::Lore, content, conf, sal)
}

/// First words after "call me" that are no name ("call me back", "call me crazy").
pub(super) const NOT: &[&str] = &[
    "a",
    "about",
    "about,",
    "after",
    "again",
    "an",
    "any",
    "anything",
    "anytime",
    "around",
    "asap",
    "at",
    "back",
    "before",
    "by",
    "crazy",
    "first",
    "for",
    "if",
    "in",
    "it",
    "later",
    "maybe",
    "names",
    "next",
    "now",
    "ok",
    "okay",
    "old-fashioned",
    "on",
    "out",
    "please",
    "right",
    "sir",
    "sometime",
    "sometimes",
    "soon",
    "that",
    "the",
    "this",
    "to",
    "tomorrow",
    "tonight",
    "up",
    "what",
    "whatever",
    "when",
    "whenever",
    "with",
    "you",
];

/// A name that follows "call me": not "back", "later", "crazy".
fn call_name(x: &str) -> Option<String> {
    let x = x.trim().trim_matches(|c: char| c == '"' || c == '\'');
    let first = x.split_whitespace().next()?.to_lowercase();
    if NOT.contains(&first.as_str()) || super::lex::is_not_a_name(&first) && first.len() > 3 {
        return None;
    }
    Some(title_words(x))
}

/// Things people name besides pets and relations (a car, a band, a plant).
pub(super) const NAMED: &[&str] = &[
    "app",
    "band",
    "bike",
    "boat",
    "bot",
    "camper",
    "car",
    "cluster",
    "company",
    "computer",
    "doll",
    "drone",
    "guitar",
    "house",
    "laptop",
    "motorcycle",
    "phone",
    "plant",
    "project",
    "robot",
    "roomba",
    "server",
    "sourdough",
    "starter",
    "startup",
    "team",
    "teddy",
    "toy",
    "truck",
    "vacuum",
    "van",
];

/// The thing a pronoun in "we call him ..." stands for: the last "my <noun>" before it in the
/// sentence, or in the previous sentence.
fn antecedent(s: &Sentence<'_>, before: usize) -> Option<String> {
    // Only things people name: pets, people, and a few objects ("my car", "our new robot").
    let find = |text: &str| -> Option<String> {
        let lower = text.to_ascii_lowercase();
        let words: Vec<&str> =
            lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
        words.iter().rev().map(|w| w.strip_suffix("'s").unwrap_or(w)).find_map(|w| {
            (super::lex::is_pet_word(w) || super::lex::is_relation_word(w) || NAMED.contains(&w)).then(|| w.to_string())
        })
    };
    find(&s.text[..before]).or_else(|| s.prev.and_then(find))
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "lore.nickname",
            Mode::Statement,
            &["nickname", "nick", "call me", "calls me"],
            r#"(?x)
                # e.g. My friends call me Sunny.
                \b(?:
                    my\s+(?:nick\s*name|nick)\s+is
                    | (?:
                        people | everyone | everybody | my\s+friends | friends | my\s+family | my\s+team
                        | my\s+coworkers | my\s+colleagues | they | most\s+people | my\s+kids | my\s+\w+
                    )
                    \s+(?:usually\s+|often\s+|all\s+|just\s+|always\s+|still\s+)?calls?\s+me
                )
                \s+["']?(?P<x><NAMEI>)
            "#,
            |c, _| {
                let Some(x) = cap(c, "x").and_then(call_name) else { return Vec::new() };
                vec![Found::add(lore(format!("User's nickname is {x}"), 0.85, 0.7).keyed("nickname", x))]
            },
        ),
        Rule::new(
            "lore.call-me",
            Mode::Request,
            &["call me", "go by", "be called", "refer to me"],
            r#"(?x)
                # e.g. You can call me Ziggy.
                (?:
                    (?:
                        ^
                        | [,;:.!]\s*
                        | \b(?:
                            please
                            | pls
                            | you\s+can
                            | you\s+may
                            | you\s+could
                            | just
                            | feel\s+free\s+to
                            | can\s+you
                            | could\s+you
                            | would\s+you
                            | i'd\s+(?:prefer|like)\s+(?:it\s+)?if\s+you
                            | i\s+prefer\s+(?:it\s+)?if\s+you
                            | and
                            | but
                            | so
                            | also
                            | actually
                            | oh
                        )
                        \s+
                    )
                    call\s+me
                    | \bi\s+go\s+by
                    | \b(?:i\s+)?(?:prefer|like|want)\s+to\s+be\s+called
                    | \bi(?:'d|\s+would)\s+(?:like|prefer|rather)\s+(?:to\s+)?be\s+called
                    | \brefer\s+to\s+me\s+as
                )
                \s+["']?(?P<x><NAMEI>)
            "#,
            |c, _| {
                let Some(x) = cap(c, "x").and_then(call_name) else { return Vec::new() };
                vec![Found::add(lore(format!("User likes to be called {x}"), 0.85, 0.8).keyed("nickname", x))]
            },
        ),
        Rule::new(
            "lore.we-call-it",
            Mode::Statement,
            &["call", "named", "nicknamed", "dubbed", "refer to"],
            r#"(?x)
                # e.g. We call the old Volvo The Tank.
                \b(?P<who>we|i)(?:'ve|\s+have)?\s+(?:
                    (?:
                        always | usually | all | just | affectionately | jokingly | lovingly | started
                        | been | now | also | secretly
                    )
                    \s+
                )*
                (?P<v>call|calling|nicknamed|named|dubbed|refer\s+to)\s+(?P<obj>
                    him
                    | her
                    | it
                    | them
                    | this
                    | that
                    | (?:my|our|the|this|that)\s+[\w-]+(?:\s+[\w-]+){0,4}?
                )
                \s+(?:as\s+)?(?P<x>(?-i:[A-Z])[^,.;!?"']*|["'][^"']+["'])
            "#,
            we_call,
        ),
        Rule::new(
            "lore.lets-call-it",
            Mode::Request,
            &["let's", "lets", "agreed", "decided", "means", "i mean", "i say"],
            r#"(?x)
                # e.g. Let's call this project Bluebird.
                \b(?:
                    (?:let's|lets|let\s+us|we\s+(?:agreed|decided)\s+to|we'll)\s+(?:call|name|nickname|dub)\s+(?P<obj>
                        it
                        | this
                        | that
                        | him
                        | her
                        | them
                        | (?:the|this|that|our|my|your)\s+[\w-]+(?:\s+[\w-]+)?
                    )
                    \s+["']?(?P<x>[^,.;!?"']+)
                    | (?:from\s+now\s+on,?\s+)(?P<term>["']?[\w\s-]{1,30}?["']?)\s+means\s+(?P<meaning><CLAUSE>)
                    | when\s+i\s+say\s+(?P<said>["']?[\w\s-]{1,30}?["']?),?\s+i\s+mean\s+(?P<meant><CLAUSE>)
                )
            "#,
            |c, _| {
                if let (Some(t), Some(m)) = (cap(c, "term"), cap(c, "meaning")) {
                    let (t, m) = (t.trim().trim_matches(|c| c == '"' || c == '\''), tidy(head(m)));
                    return vec![Found::add(lore(
                        format!("Between the user and the assistant, \"{t}\" means {m}"),
                        0.8,
                        0.7,
                    ))];
                }
                if let (Some(t), Some(m)) = (cap(c, "said"), cap(c, "meant")) {
                    let (t, m) = (t.trim().trim_matches(|c| c == '"' || c == '\''), third_person(&tidy(head(m))));
                    return vec![Found::add(lore(format!("When the user says \"{t}\" they mean {m}"), 0.8, 0.7))];
                }
                let obj = cap(c, "obj").unwrap_or("it").to_lowercase();
                let Some(name) = cap(c, "x").map(|x| tidy(head(x))).filter(|x| !x.is_empty()) else {
                    return Vec::new();
                };
                let obj = third_person(&obj).replace("your ", "the assistant's ");
                vec![Found::add(lore(format!("User and the assistant call {obj} {name}"), 0.85, 0.75))]
            },
        ),
        Rule::new(
            "lore.we-joke",
            Mode::Statement,
            &["joke"],
            r"\b(?:we|you\s+and\s+i|me\s+and\s+you)\s+(?:(?:always|often|still|constantly|keep)\s+)*(?:joke|joking)\s+(?:that|about)\s+(?P<x><TAIL>)",
            |c, _| {
                let x = tidy(&third_person(head(cap(c, "x").unwrap_or_default())));
                if x.chars().count() < 4 {
                    return Vec::new();
                }
                vec![Found::add(lore(format!("User's running joke: {x}"), 0.85, 0.7))]
            },
        ),
        Rule::new(
            "lore.inside-joke",
            Mode::Statement,
            &[
                "joke",
                "ritual",
                "tradition",
                "catchphrase",
                "code word",
                "secret word",
                "motto",
                "our thing",
                "our song",
                "our saying",
            ],
            r#"(?x)
                # e.g. Our running joke is that Mondays are cursed.
                \b(?:our|the|my)\s+(?:
                    (?:
                        little | running | favou?rite | old | classic | secret | weekly | daily | family
                        | usual
                    )
                    \s+
                )*
                (?P<what>
                    inside\s+joke | running\s+joke | private\s+joke | in-joke | thing | ritual
                    | tradition | catchphrase | code\s+word | secret\s+word | motto | saying | song
                )
                \s+(?:is|was|has\s+always\s+been|:)\s+(?P<x><TAIL>)
                | \b(?P<y>[^.;!?]+?)\s+(?:is|was|has\s+become)\s+(?:our|an|a|my)\s+(?:(?:little|running|old|favou?rite)\s+)*(?P<what2>
                    inside\s+joke
                    | running\s+joke
                    | private\s+joke
                    | in-joke
                    | ritual
                    | tradition
                )
                | \binside\s+joke\s*:\s*(?P<z><TAIL>)
            "#,
            |c, _| {
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let what = cap(c, "what").or(cap(c, "what2")).unwrap_or("inside joke").to_lowercase();
                let what = tidy(&what);
                if (what == "thing" || what == "saying" || what == "song") && !whole.starts_with("our") {
                    // "the thing is ..." is a filler, not lore.
                    return Vec::new();
                }
                let x = cap(c, "x").or(cap(c, "y")).or(cap(c, "z")).unwrap_or_default();
                let x = x.trim().trim_start_matches([',', ':']).trim();
                let x = ["and ", "but ", "also ", "so ", "oh ", "haha ", "lol "]
                    .iter()
                    .fold(x, |acc, p| if acc.to_ascii_lowercase().starts_with(p) { &acc[p.len()..] } else { acc });
                let x = tidy(&third_person(x.trim_matches(|c: char| !c.is_alphanumeric())));
                if x.chars().count() < 3 {
                    return Vec::new();
                }
                let label = match what.as_str() {
                    "thing" => "shared thing".to_string(),
                    w if w.contains("joke") => "inside joke".to_string(),
                    w => w.to_string(),
                };
                vec![Found::add(lore(format!("User's {label}: {x}"), 0.85, 0.7))]
            },
        ),
    ]
}

/// "we call him Captain Fluff", "I named my dog Biscuit".
fn we_call(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let v = cap(c, "v").unwrap_or_default().to_lowercase();
    let obj = cap(c, "obj").unwrap_or_default().to_lowercase();
    let x = cap(c, "x").unwrap_or_default();
    let name = tidy(head(x.trim_matches(|c: char| c == '"' || c == '\'')));
    let name: String = name.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    if name.is_empty()
        || ["a day", "it a day", "it quits", "that", "him", "her"].contains(&name.to_lowercase().as_str())
    {
        return Vec::new();
    }
    let start = c.get(0).map_or(0, |m| m.start());
    let thing = if matches!(obj.as_str(), "him" | "her" | "it" | "them" | "this" | "that") {
        antecedent(s, start).map(|n| format!("their {n}")).unwrap_or_else(|| obj.clone())
    } else {
        third_person(&obj)
    };
    let noun = thing.split_whitespace().last().unwrap_or_default().to_string();
    let species = species_key(&noun);
    let is_pet = super::lex::is_pet_word(&noun);
    if v == "named" && is_pet && thing.starts_with("their ") {
        let first = name.split_whitespace().next().unwrap_or_default().to_lowercase();
        return vec![Found::add(
            Draft::new(Kind::Profile, format!("User has a {noun} named {name}"), 0.85, 0.75)
                .keyed(format!("pet:{species}:{first}"), name),
        )];
    }
    vec![Found::add(lore(format!("User calls {thing} {name}"), 0.85, 0.7))]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{contents, keyed, none, only_episodes, run};
    use crate::kind::Kind;

    #[test]
    fn nicknames_and_names_given_together() {
        assert_eq!(keyed("You can call me Dee", "nickname"), Some("Dee".into()));
        assert_eq!(keyed("please call me 'Dani'", "nickname"), Some("Dani".into()));
        assert_eq!(keyed("My friends call me Sparky", "nickname"), Some("Sparky".into()));
        assert_eq!(keyed("my nickname is Bean", "nickname"), Some("Bean".into()));
        assert_eq!(keyed("I go by Sam", "nickname"), Some("Sam".into()));
        assert_eq!(
            contents("My cat is a menace, we call him Captain Fluff."),
            vec!["User calls their cat Captain Fluff"]
        );
        assert_eq!(contents("Let's call it Project Phoenix"), vec!["User and the assistant call it Project Phoenix"]);
        assert_eq!(
            contents("Our inside joke is the exploding teapot"),
            vec!["User's inside joke: the exploding teapot"]
        );
        assert_eq!(contents("'Banana mode' is our running joke"), vec!["User's inside joke: Banana mode"]);
        let ops = run("when I say ship it, I mean deploy to staging");
        assert_eq!(ops[0].draft.kind, Kind::Lore);
        assert_eq!(
            keyed("I adopted a pup last week, my days are happier. I named it Ned.", "pet:dog:ned"),
            Some("Ned".into())
        );
        assert_eq!(contents("We named the bug in our code Gremlin."), vec!["User calls the bug in their code Gremlin"]);
        assert_eq!(
            contents("We always joke that my cat is the real boss."),
            vec!["User's running joke: their cat is the real boss"]
        );
        none("call me back later");
        only_episodes("We call it a day at 5");
        none("the thing is, I don't know");
    }
}
