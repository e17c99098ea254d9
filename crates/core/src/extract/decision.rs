//! Decisions and conventions for a project or an agent: "from now on we use pnpm instead of
//! npm", "let's always write the test first", "we decided to go with Postgres", "our convention
//! is snake_case for columns".
//!
//! A convention is a protocol: loaded on every turn (path A) and used silently, because it
//! governs how work is done from then on. One that names what it replaces ("instead of npm")
//! supersedes the memory that said the old way. Life decisions ("we decided to adopt a puppy")
//! are not conventions: they are kept by episodic capture, so "decided" counts here only when
//! what was decided is a way of working (use, adopt, switch to, always, never ...).

use regex::Captures;

use super::episodic::says_nothing;
use super::lex::{head, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::{Kind, Surface};
use crate::op::Draft;
use crate::text::tidy;

/// How sure a stated convention is: people say these deliberately.
const CONFIDENCE: f32 = 0.85;

/// Verbs after "decided to"/"agreed to" that make a decision a way of working; a scoped
/// `(?x:...)` group, so it reads the same spliced into any pattern.
const WAYS: &str = r"(?x:
    use | using | go\s+with | going\s+with | switch\s+to | switching\s+to | stick\s+with
    | standardi[sz]e\s+on | stop\s+using | move\s+to | migrate\s+to
    # a standing rule
    | always | never | only\s+use | require
)";

fn convention(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let Some(x) = cap(c, "x") else { return Vec::new() };
    let mut what = tidy(head(x));
    if let Some(always) = cap(c, "always") {
        what = format!("{} {what}", always.to_lowercase());
    }
    // "From now on I want shorter answers" is a reply preference, read by the style family.
    let first = what.split_whitespace().next().unwrap_or_default().to_lowercase();
    if matches!(first.as_str(), "want" | "prefer" | "like" | "need" | "would" | "remind" | "call") {
        return Vec::new();
    }
    let what = third_person(&what);
    let words = what.split_whitespace().filter(|w| w.len() > 2).count();
    // "Let's never give up and keep striving for success" cheers the other person on.
    if words < 2 || s.hedged || says_nothing(&what) {
        return Vec::new();
    }
    let draft = Draft::new(Kind::Protocol, format!("Convention: {what}"), CONFIDENCE, 0.8).surfaced(Surface::Adapt);
    let mut found = Found::add(draft);
    found.replaces = cap(c, "old").map(|o| tidy(head(o)));
    vec![found]
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "decision.instead-of",
            Mode::Statement,
            &["instead of", "rather than"],
            r"(?x)
                # e.g. We use tabs instead of spaces in this repo.
                \b(?:
                    (?:from\s+now\s+on,?\s+|going\s+forward,?\s+)(?:we|i|the\s+team|our\s+team)
                    | we
                    | the\s+team
                    | our\s+team
                )
                (?:
                    'll
                    | \s+will
                    | \s+now
                    | \s+should
                    | 're\s+going\s+to
                    | \s+are\s+going\s+to
                    | \s+always
                )?
                \s+(?P<x>
                    (?:
                        use | go\s+with | stick\s+with | standardi[sz]e\s+on | write | deploy | name
                        | run | format
                    )
                    \s+[^,.;!?]+?
                )
                \s+(?:instead\s+of|rather\s+than)\s+(?P<old><CLAUSE>)
            ",
            convention,
        ),
        Rule::new(
            "decision.from-now-on",
            Mode::Statement,
            &["from now on", "going forward", "moving forward", "henceforth", "from here on"],
            r"(?x)
                # e.g. From now on we deploy only on Tuesdays.
                \b(?:
                    from\s+now\s+on
                    | going\s+forward
                    | moving\s+forward
                    | henceforth
                    | from\s+here\s+on(?:\s+out)?
                )
                \s*,?\s+(?:we|i|the\s+team)(?:'ll|\s+will|\s+should|\s+are\s+going\s+to|\s+always)?\s+(?P<x><TAIL>)
            ",
            convention,
        ),
        Rule::new(
            "decision.lets-always",
            Mode::Statement,
            &["let's", "lets", "let us"],
            r"\blet(?:'?s|\s+us)\s+(?P<always>always|never|only|stick\s+to)\s+(?P<x><TAIL>)",
            convention,
        ),
        Rule::new(
            "decision.decided-way",
            Mode::Statement,
            &["decided", "agreed", "settled on", "standardised", "standardized"],
            &format!(
                r"(?x)
                    # e.g. We agreed to stick with trunk-based development.
                    \b(?:we|i|the\s+team|our\s+team)(?:'ve|\s+have)?\s+(?:(?:just|finally|officially|all)\s+)?
                    (?:decided|agreed|settled)\s+(?:to\s+|on\s+|that\s+(?:we(?:'ll|\s+will|\s+should)?\s+)?)?
                    # only a way of working makes the decision a convention, not a one-off choice
                    (?P<x>{WAYS}\s+<TAIL>)
                "
            ),
            convention,
        ),
        Rule::new(
            "decision.convention-is",
            Mode::Statement,
            &["convention", "rule", "standard", "guideline", "style guide"],
            r"(?x)
                # e.g. Our naming convention is kebab-case for every file.
                \b(?:our|the|my)\s+(?:team\s+|project\s+|coding\s+|naming\s+)?(?:convention|rule|standard|guideline|style\s+guide)\s+(?:is|says)\s*(?::|that|to)?\s+(?P<x><TAIL>)
            ",
            convention,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::run;
    use crate::kind::{Kind, Surface};
    use crate::op::{Action, Target};

    fn convention(text: &str) -> Option<(String, Action)> {
        run(text)
            .into_iter()
            .find(|o| o.draft.kind == Kind::Protocol && o.draft.surface == Some(Surface::Adapt))
            .map(|o| (o.draft.content, o.action))
    }

    #[test]
    fn conventions_in_many_words() {
        for (text, want) in [
            ("From now on we use pnpm instead of npm.", "pnpm"),
            ("going forward we'll squash-merge every PR", "squash-merge every PR"),
            ("Let's always write the failing test first.", "always write the failing test first"),
            ("lets never push straight to main", "never push straight to main"),
            ("We decided to go with Postgres for the event store.", "Postgres"),
            ("The team agreed to use conventional commits.", "conventional commits"),
            ("Our naming convention is snake_case for every column.", "snake_case"),
        ] {
            let (content, _) = convention(text).unwrap_or_else(|| panic!("{text}: {:?}", run(text)));
            assert!(content.starts_with("Convention: ") && content.contains(want), "{text}: {content}");
        }
    }

    #[test]
    fn what_a_convention_replaces_is_superseded() {
        let (_, action) = convention("From now on we use pnpm instead of npm.").unwrap();
        assert_eq!(action, Action::Update(Target::Matching("npm".into())));
    }

    #[test]
    fn life_decisions_and_questions_are_not_conventions() {
        for text in [
            "We decided to adopt a puppy last week!",
            "Should we always use tabs?",
            "Maybe from now on we use Rust, not sure yet.",
            // encouragement between friends, not a way of working
            "Let's never stop dreaming and keep pushing forward!",
            "lets always stay positive, ok?",
        ] {
            assert_eq!(convention(text), None, "{text}");
        }
    }
}
