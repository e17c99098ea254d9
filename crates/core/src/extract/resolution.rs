//! Resolutions: completions that close an open loop. "called my mom last night" closes "call
//! mom this weekend" (a classic failure: the loop stays open forever); "I finally sent the slides", "done with the tax
//! return", "the interview went well".
//!
//! A resolution is a `CloseLoop(Matching(..))` whose text holds the words a plan about the same
//! thing would contain: the object's identifying words (kin synonyms added: "mother" finds
//! "mom") and the verb in its base form ("called" → "call"). The engine resolves it against open
//! loops only; a completion with no matching loop is rejected there and changes nothing.

use regex::Captures;

use super::lex::{NOT_DONE, base_verb, head, is_past, key_words, strip_times, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;

/// Regular past tenses of things people plan and then do: trusted without a subject
/// ("Called my mom!"), where any other "-ed" word could be an adjective.
pub(super) const TASK_VERBS: &[&str] = &[
    "aced",
    "answered",
    "apologised",
    "apologized",
    "applied",
    "asked",
    "assembled",
    "backed",
    "baked",
    "booked",
    "bought",
    "brought",
    "built",
    "called",
    "canceled",
    "cancelled",
    "charged",
    "checked",
    "cleaned",
    "cleared",
    "closed",
    "completed",
    "configured",
    "confirmed",
    "contacted",
    "cooked",
    "crushed",
    "delivered",
    "deployed",
    "did",
    "drafted",
    "dropped",
    "drove",
    "edited",
    "emailed",
    "emptied",
    "filed",
    "finalised",
    "finalized",
    "finished",
    "fixed",
    "flew",
    "followed",
    "found",
    "gave",
    "got",
    "groomed",
    "handed",
    "hired",
    "inspected",
    "installed",
    "interviewed",
    "invited",
    "launched",
    "made",
    "mailed",
    "merged",
    "messaged",
    "met",
    "moved",
    "mowed",
    "nailed",
    "opened",
    "ordered",
    "organised",
    "organized",
    "packed",
    "paid",
    "painted",
    "passed",
    "phoned",
    "picked",
    "pitched",
    "planted",
    "posted",
    "practiced",
    "practised",
    "prepared",
    "presented",
    "printed",
    "published",
    "pushed",
    "rang",
    "reached",
    "read",
    "recorded",
    "refilled",
    "registered",
    "released",
    "renewed",
    "renovated",
    "repaired",
    "replied",
    "rescheduled",
    "reserved",
    "returned",
    "reviewed",
    "scheduled",
    "sent",
    "serviced",
    "shared",
    "shipped",
    "signed",
    "sold",
    "sorted",
    "spoke",
    "studied",
    "submitted",
    "talked",
    "tested",
    "texted",
    "thanked",
    "told",
    "took",
    "topped",
    "unpacked",
    "updated",
    "uploaded",
    "vaccinated",
    "vacuumed",
    "visited",
    "walked",
    "washed",
    "watered",
    "went",
    "won",
    "wrapped",
    "wrote",
];

fn is_task_verb(v: &str) -> bool {
    TASK_VERBS.contains(&v)
}

/// Participles that say what befell a thing, not a task done to it ("the car got stuck", "the
/// flight was cancelled" is the event family's).
const STATES_DONE_TO: &[&str] = &[
    "admitted",
    "arrested",
    "bored",
    "cancelled",
    "canceled",
    "confused",
    "damaged",
    "delayed",
    "destroyed",
    "divorced",
    "engaged",
    "excited",
    "fired",
    "flooded",
    "hurt",
    "injured",
    "killed",
    "locked",
    "married",
    "moved",
    "postponed",
    "promoted",
    "rejected",
    "sacked",
    "scared",
    "scratched",
    "shocked",
    "stolen",
    "stressed",
    "stuck",
    "tired",
    "towed",
    "upset",
    "worried",
];

/// Verbs too general to identify a task on their own.
pub(super) const GENERIC_VERBS: &[&str] =
    &["do", "find", "get", "give", "go", "have", "make", "put", "run", "see", "set", "take"];

/// Whether the words before `pos` deny the completion ("I didn't call", "still haven't sent").
fn denied(s: &Sentence<'_>, pos: usize) -> bool {
    let before = s.text[..pos].to_lowercase();
    let clause = before.rfind([',', ';']).map_or(before.as_str(), |i| &before[i + 1..]);
    [
        "didn't",
        "did not",
        "haven't",
        "have not",
        "hasn't",
        "not yet",
        "never",
        "couldn't",
        "wasn't able",
        "forgot to",
        "still need",
        "still have to",
        "won't",
        "can't",
        "cannot",
        "if i",
        "when i",
        "before i",
        "after i",
        "until i",
        "once i",
        "hope i",
        "wish i",
        "should have",
        "should've",
        "would have",
        "would've",
    ]
    .iter()
    .any(|w| clause.contains(w))
}

fn close(matching: String, content: String) -> Vec<Found> {
    if matching.trim().is_empty() {
        return Vec::new();
    }
    let d = Draft::new(Kind::OpenLoop, content, 0.8, 0.5);
    vec![Found::with(Action::CloseLoop(Target::Matching(matching)), d)]
}

/// Close ops for a finished thing named by a noun phrase ("the tax return").
fn close_thing(x: &str, s: &Sentence<'_>, start: usize, said: &str) -> Vec<Found> {
    if denied(s, start) {
        return Vec::new();
    }
    let x = strip_times(head(x));
    let words = key_words(&x);
    if words.is_empty() {
        return Vec::new();
    }
    let x = match x.split_once(' ') {
        Some((d, rest)) if ["The", "A", "An", "My", "Our", "That"].contains(&d) => {
            format!("{} {rest}", d.to_lowercase())
        }
        _ => x,
    };
    close(words.join(" "), format!("User {said} {}", third_person(&x)))
}

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "resolution.had-event",
            Mode::Statement,
            &["had"],
            r"\b(?:i|we)\s+(?:(?:just|finally|already|actually)\s+)*had\s+(?P<x>(?:my|the|our|that)\s+(?:[\w'-]+\s+){0,3}?<EVENT>)\b",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "had"),
        ),
        Rule::new(
            "resolution.event-went",
            Mode::Statement,
            &["went", "was", "over", "cancel"],
            r"(?x)
                # e.g. The presentation went really well.
                \b(?P<x>(?:my|the|our|that)\s+(?:[\w'-]+\s+){0,3}?<EVENT>)\s+(?:
                    went
                    | was
                    | is\s+over
                    | got\s+cancel(?:l)?ed
                    | has\s+been\s+cancel(?:l)?ed
                    | was\s+cancel(?:l)?ed
                )
                \s*(?:
                    (?:
                        really | so | pretty | very | super | surprisingly | quite | amazingly | totally
                        | better\s+than\s+expected | ok | just
                    )
                    \s+
                )*
                (?:
                    well | fine | great | ok | okay | badly | smoothly | terribly | alright
                    | amazing | awesome | good | bad | horrible | awful | over | perfectly
                    | a\s+success | a\s+disaster
                )?
                \b
            ",
            |c, s| {
                let whole = c.get(0).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
                let outcome = ["went", "over", "cancel"].iter().any(|w| whole.contains(w))
                    || [
                        " was well",
                        " was fine",
                        " was great",
                        " was good",
                        " was bad",
                        " was awful",
                        " was amazing",
                        " was a ",
                    ]
                    .iter()
                    .any(|w| whole.contains(w));
                if !outcome {
                    return Vec::new();
                }
                close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "went through")
            },
        ),
        Rule::new(
            "resolution.done-with",
            Mode::Statement,
            &["done", "finished", "through"],
            r"\b(?:done|finished|through)\s+with\s+(?P<x><CLAUSE>)",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "completed"),
        ),
        Rule::new(
            "resolution.is-done",
            Mode::Statement,
            &[
                "done",
                "finished",
                "submitted",
                "sent",
                "booked",
                "handled",
                "sorted",
                "taken care",
                "over",
                "complete",
                "paid",
                "filed",
                "fixed",
                "approved",
                "signed",
                "delivered",
                "shipped",
                "out the door",
            ],
            r"(?x)
                # e.g. The grant application is finally submitted.
                \b(?P<x>(?:my|the|our|that)\s+[^,.;!?]+?)\s+(?:is|are|was|were|got|has\s+been|have\s+been|'s)\s+(?:(?:finally|all|now|officially|already|just)\s+)*(?:
                    done | finished | submitted | sent(?:\s+off)? | booked | handled
                    | sorted(?:\s+out)? | taken\s+care\s+of | complete | completed | paid(?:\s+off)?
                    | filed | fixed | approved | signed | delivered | shipped | out\s+the\s+door
                )
                \b
            ",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "completed"),
        ),
        Rule::new(
            "resolution.got-done-to",
            Mode::Statement,
            &["got ", "been ", "was ", "were "],
            r"(?x)
                # e.g. organ got tuned the tuesday before; the boiler was serviced on Friday
                (?P<x>\b(?:my|the|our)\s+[^,.;!?]+?|^[a-z]+(?:\s+[a-z]+)?)\s+(?:got|has\s+been|have\s+been|was|were)\s+
                (?:(?:finally|all|just|already|now)\s+)*(?P<v>[a-z]{3,}ed)\b
            ",
            |c, s| {
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                // What happened to someone ("my sister got married", "my mum was admitted") or
                // a state ("the car got stuck") is no task done.
                let noun = x.split_whitespace().last().unwrap_or_default().to_lowercase();
                if STATES_DONE_TO.contains(&v.as_str())
                    || super::lex::is_relation_word(&noun)
                    || super::lex::is_pet_word(&noun)
                {
                    return Vec::new();
                }
                let mut found = close_thing(x, s, c.get(0).map_or(0, |m| m.start()), "got");
                for f in &mut found {
                    f.draft.content = super::lex::capitalised(&format!("{} got {v}", third_person(x.trim())));
                }
                found
            },
        ),
        Rule::new(
            "resolution.got-through",
            Mode::Statement,
            &["got through to"],
            // e.g. got through to hmrc in the end (closes: ring hmrc about my utr)
            r"\bgot\s+through\s+to\s+(?P<x>[^,.;!?]+)",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "got through to"),
        ),
        Rule::new(
            "resolution.thing-arrived",
            Mode::Statement,
            &["arrived", "came", "showed up", "turned up", "is here", "are here", "got here"],
            r"(?x)
                # e.g. The new passport arrived in the mail today! (closes: renew my passport)
                \b(?P<x>(?:my|the|our)\s+[^,.;!?]+?)\s+(?:(?:finally|just|has|have|had|already)\s+)*(?:
                    arrived | came(?:\s+through)? | showed\s+up | turned\s+up | got\s+here | is\s+here | are\s+here
                )
                \b
            ",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "received"),
        ),
        Rule::new(
            "resolution.thing-s-done",
            Mode::Statement,
            &[
                "'s done",
                "'s over",
                "'s finished",
                "'s submitted",
                "'s sorted",
                "'s booked",
                "is done",
                "is over",
                "are done",
                "all done",
                ": done",
                ": sorted",
                "also done",
                "already done",
                "finally done",
            ],
            r"(?x)
                # e.g. Taxes are done!
                ^(?:(?:so|and|yay|ok|okay|well|finally|phew|whew)[,!]?\s+)*
                # the thing finished: the fewest words (one to three) before the verb
                (?P<x>[\w-]+(?:\s+[\w-]+){0,2}?)
                (?:
                    (?:'s|\s+is|\s+are|:)\s+(?:(?:finally|all|officially|now)\s+)?
                    # a learner's 'Passport renewal also done'
                    | \s+(?:also|already|finally)\s+
                )
                (?:done|over|finished|submitted|sorted|booked|handled|complete|in)\b
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                if ["it", "that", "this", "everything", "we", "i", "today", "work", "life", "the day", "all"]
                    .contains(&x.to_lowercase().as_str())
                {
                    return Vec::new();
                }
                close_thing(x, s, c.get(0).map_or(0, |m| m.start()), "completed")
            },
        ),
        Rule::new(
            "resolution.got-done",
            Mode::Statement,
            &["done", "care of", "off"],
            r"(?x)
                # e.g. I finally got the garage cleaned out done.
                \b(?:got|get|finally\s+got)\s+(?P<x>[^,.;!?]+?)\s+(?:done|finished|sorted|submitted|sent\s+off|out\s+the\s+door)\b
                | \b(?:took|taken)\s+care\s+of\s+(?P<y><CLAUSE>)
                | \b(?:crossed|checked|ticked)\s+(?P<z>[^,.;!?]+?)\s+off\b
            ",
            |c, s| {
                let x = cap(c, "x").or(cap(c, "y")).or(cap(c, "z")).unwrap_or_default();
                close_thing(x, s, c.get(0).map_or(0, |m| m.start()), "completed")
            },
        ),
        Rule::new(
            "resolution.back-from",
            Mode::Statement,
            &["back from", "returned from", "home from"],
            r"(?:\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+|^)(?:(?:just|finally)\s+)?(?:got\s+back|came\s+back|back|returned|home)\s+from\s+(?P<x><CLAUSE>)",
            |c, s| close_thing(cap(c, "x").unwrap_or_default(), s, c.get(0).map_or(0, |m| m.start()), "got back from"),
        ),
        Rule::new(
            "resolution.was-there",
            Mode::Statement,
            &["was in", "was at", "were in", "were at"],
            r"(?x)
                # e.g. I was in Ausländerbehörde, they gave me the paper (closes: make a Termin in
                # the Ausländerbehörde); we were at the bank this morning.
                \b(?:i|we)\s+(?:finally\s+|already\s+)?(?:was|were)\s+(?:in|at)\s+
                (?P<x>(?:the\s+)?(?-i:\p{Lu})[\p{L}'-]+(?:\s+(?-i:\p{Lu})[\p{L}'-]+){0,2}|the\s+[\p{L}'-]+(?:\s+[\p{L}'-]+)?)
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                let head = x.trim_start_matches("the ").to_lowercase();
                // Where a day is spent, not a place gone to for something.
                if ["work", "home", "school", "bed", "office", "moment", "end", "same", "time", "mood", "middle"]
                    .iter()
                    .any(|w| head.starts_with(w))
                {
                    return Vec::new();
                }
                close_thing(x, s, c.get(0).map_or(0, |m| m.start()), "went to")
            },
        ),
        Rule::new(
            "resolution.learner-already",
            Mode::Statement,
            &["already"],
            r"(?x)
                # A learner's present with 'already' says it is done: I buy extractor fan
                # already; we already pay the deposit.
                \b(?:i|we)\s+(?:
                    (?P<bv>[a-z]{3,})\s+(?P<obj>[^,.;!?]+?)\s+already\b
                    | already\s+(?P<bv2>[a-z]{3,})\s+(?P<obj2><CLAUSE>)
                )
            ",
            learner_already,
        ),
        Rule::new(
            "resolution.did-it",
            Mode::Statement,
            &[],
            r"(?x)
                # e.g. I called the plumber yesterday.
                (?:
                    ^(?:
                        (?:
                            and | but | so | then | ok | okay | yay | well | oh | update:? | good\s+news:?
                            | btw | also | finally | today | yesterday | earlier | just | last\s+night
                            | this\s+morning | guess\s+what
                        )
                        [,:!]?\s+
                    )*
                    (?:(?P<subj>i|we)(?:'ve|\s+have|'d|\s+had)?\s+)?
                    | \b(?P<subj2>i|we)(?:'ve|\s+have|'d|\s+had)?\s+
                )
                (?:
                    (?:
                        just | finally | already | actually | also | successfully | eventually
                        | officially | totally | literally | yesterday | today | earlier | last\s+night
                        | this\s+morning | at\s+last
                    )
                    \s+
                )*
                (?:
                    (?P<aux>
                        did
                        | managed\s+to
                        | remembered\s+to
                        | got\s+around\s+to
                        | went\s+ahead\s+and
                        | was\s+able\s+to
                        | ended\s+up
                    )
                    \s+(?P<bv>[a-z]+)
                    | (?P<v>
                        [a-z]{2,}ed | went | sent | met | wrote | bought | paid | took | gave | made
                        | did | got | spoke | told | saw | drove | flew | rang | built | sold | brought
                        | found | won | put | read | began | held | rode | swam | threw | taught
                        | caught | fed | hung | sang | wore | drew | ran
                    )
                )
                (?P<part>\s+(?:up|off|in|out|back|over))?\s+(?P<obj><CLAUSE>)
            ",
            did_it,
        ),
    ]
}

/// Verbs whose object follows a preposition ("talked to mom", "met with Sam", "registered to
/// the doctor", "signed up to the gym"): the person or place is the task.
pub(super) const WITH_PREP: &[&str] = &[
    "apply",
    "catch",
    "chat",
    "enrol",
    "enroll",
    "get",
    "go",
    "hear",
    "listen",
    "meet",
    "reach",
    "register",
    "reply",
    "respond",
    "sign",
    "speak",
    "subscribe",
    "talk",
    "write",
];

/// "I buy extractor fan already", "we already pay the deposit": a task verb in its plain form
/// with "already" is a learner's past. Only verbs whose past is a task verb ("buy" for
/// "bought"), never a general one ("I already have a doctor", "I take metformin already").
fn learner_already(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let Some(verb) = c.name("bv").or(c.name("bv2")) else { return Vec::new() };
    let base = verb.as_str().to_lowercase();
    if GENERIC_VERBS.contains(&base.as_str()) || is_past(&base) {
        return Vec::new();
    }
    let Some(past) = TASK_VERBS.iter().find(|t| base_verb(t) == base) else { return Vec::new() };
    if denied(s, verb.start()) {
        return Vec::new();
    }
    let said = strip_times(&tidy(head(cap(c, "obj").or(cap(c, "obj2")).unwrap_or_default())));
    let first = said.split_whitespace().next().unwrap_or_default().to_lowercase();
    if matches!(first.as_str(), "it" | "that" | "this" | "you" | "your" | "u") {
        return Vec::new();
    }
    let heads: Vec<&str> = said.split_whitespace().filter(|w| !key_words(w).is_empty()).take(3).collect();
    let mut words = key_words(&heads.join(" "));
    if words.is_empty() {
        return Vec::new();
    }
    words.insert(0, base);
    close(words.join(" "), format!("User {past} {}", third_person(&said)))
}

/// "called my mom last night", "I finally sent the slides to Priya", "I did call her".
fn did_it(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let aux = cap(c, "aux").map(str::to_lowercase);
    let v = cap(c, "v").or(cap(c, "bv")).unwrap_or_default().to_lowercase();
    let part = cap(c, "part").map(|p| tidy(p).to_lowercase());
    let base = match &aux {
        Some(_) if v.ends_with("ing") && v.len() > 5 => v.trim_end_matches("ing").to_string(),
        Some(_) if is_past(&v) => base_verb(&v),
        Some(_) => v.clone(),
        None if NOT_DONE.contains(&v.as_str()) || v.ends_with("eed") || !(is_past(&v) || is_task_verb(&v)) => {
            return Vec::new();
        }
        // Without "I", a sentence-initial "-ed" word may be an adjective ("Crowded bars ...").
        None if c.name("subj").or(c.name("subj2")).is_none() && !is_task_verb(&v) => return Vec::new(),
        None => base_verb(&v),
    };
    // "packed in evri", "jacked in the bar job": a job left (the "no longer" family's), no task.
    if matches!(v.as_str(), "packed" | "jacked") && part.as_deref() == Some("in") {
        return Vec::new();
    }
    let start = c.name("v").or(c.name("bv")).map_or(0, |m| m.start());
    if denied(s, start) {
        return Vec::new();
    }
    let said = tidy(head(cap(c, "obj").unwrap_or_default()));
    // "I've built a website before": experience, not a task just done.
    if said.to_lowercase().ends_with(" before") || said.to_lowercase().ends_with(" many times") {
        return Vec::new();
    }
    let obj = strip_times(&said);
    let ol = obj.to_lowercase();
    let first = ol.split_whitespace().next().unwrap_or_default().to_string();
    // "finished reading your answer", "sent you the file": about this conversation.
    let about_chat = ol.split_whitespace().any(|w| matches!(w, "you" | "your" | "u"));
    if obj.is_empty() || about_chat || matches!(first.as_str(), "that" | "it" | "so" | "like" | "about" | "up" | "out")
    {
        return Vec::new();
    }
    // "went to the dentist": the place is the task; "tried to", "failed to": no object.
    let obj = match (first.as_str(), base.as_str()) {
        ("to" | "with" | "from", b) if WITH_PREP.contains(&b) => {
            obj.get(first.len() + 1..).unwrap_or_default().to_string()
        }
        ("to", _) => return Vec::new(),
        _ => obj,
    };
    let first = obj.split_whitespace().next().unwrap_or_default().to_lowercase();
    if GENERIC_VERBS.contains(&base.as_str())
        && !matches!(first.as_str(), "the" | "my" | "our" | "his" | "her" | "their" | "those" | "these" | "to" | "all")
    {
        return Vec::new();
    }
    // The head of the object names the task: its first three identifying words.
    let heads: Vec<&str> = obj.split_whitespace().filter(|w| !key_words(w).is_empty()).take(3).collect();
    let concepts = heads.len();
    let mut words = key_words(&heads.join(" "));
    let person = matches!(first.as_str(), "her" | "him" | "them");
    if words.is_empty() && !person {
        return Vec::new();
    }
    // "sent them the email", "gave her a ring", "made the call": the noun is the task's verb
    // ("email occ health", "ring the gp", "call mum"), which a plan names instead.
    let light = matches!(base.as_str(), "send" | "give" | "make" | "drop" | "shoot")
        && words
            .iter()
            .any(|w| matches!(w.as_str(), "email" | "text" | "message" | "call" | "ring" | "letter" | "note"));
    if !GENERIC_VERBS.contains(&base.as_str()) && !light && (concepts <= 2 || person) {
        words.insert(0, base);
    }
    if words.is_empty() {
        return Vec::new();
    }
    let particle = part.map(|p| format!(" {p}")).unwrap_or_default();
    let shown_verb = match aux {
        Some(a) => format!("{a} {v}{particle}"),
        None => format!("{v}{particle}"),
    };
    close(words.join(" "), format!("User {shown_verb} {}", third_person(&strip_times(&said))))
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{only_episodes, run};
    use crate::op::{Action, Target};

    fn closes(s: &str) -> String {
        let ops = run(s);
        let found: Vec<_> = ops
            .iter()
            .filter_map(|o| match &o.action {
                Action::CloseLoop(Target::Matching(t)) => Some(t.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(found.len(), 1, "{s}: {ops:?}");
        found[0].clone()
    }

    #[test]
    fn completions_close_loops() {
        assert_eq!(closes("called my mom last night"), "call mom mum mother");
        assert_eq!(closes("I called my mom last night."), "call mom mum mother");
        assert_eq!(closes("Finally called Mom!"), "call mom mum mother");
        assert_eq!(closes("I finally sent the slides to Priya"), "send slides presentation deck priya");
        assert_eq!(closes("done with the tax return"), "tax taxes return");
        assert_eq!(closes("I submitted the report this morning"), "submit report");
        assert_eq!(closes("just booked the flights!"), "book flight flights tickets");
        assert_eq!(closes("The interview went really well"), "interview");
        assert_eq!(closes("I had my dentist appointment today"), "dentist appointment");
        assert_eq!(closes("my passport renewal is finally done"), "passport renewal");
        assert_eq!(closes("ok I did call her"), "call");
        assert_eq!(closes("went to the dentist yesterday"), "dentist");
        assert_eq!(closes("I registered to dentist already, the one on Mill Road."), "register dentist");
        assert_eq!(closes("I've emailed Sam about the invoice"), "email sam invoice");
        // The noun is the verb a plan would use ("text the landlord", "ring the vet").
        assert_eq!(closes("sent the landlord a text last night"), "landlord text");
        assert_eq!(closes("i sent them the email the same day"), "email");
        assert_eq!(closes("Exam's done!"), "exam");
        assert_eq!(closes("Aced my exam!!"), "ace exam");
        assert_eq!(closes("Talked to my mum for an hour today!"), "talk mom mum mother");
        assert_eq!(closes("Just got back from the dentist."), "dentist");
        assert_eq!(closes("got the gift for mom"), "gift mom mum mother");
        // A completion told as what arrived ("renew my passport" is closed by the new one).
        assert!(closes("the new passport arrived in the mail today!").contains("passport"));
        assert!(closes("My visa finally came through").contains("visa"));
        // A learner's plain verb with "already" is done.
        assert_eq!(closes("I buy extractor fan already for every table"), "buy extractor fan");
        assert_eq!(closes("we already pay the deposit for the flat"), "pay deposit flat");
    }

    #[test]
    fn already_with_a_verb_that_is_no_task_is_no_completion() {
        for said in ["I take metformin already", "I already have a GP", "I already know the way", "I already told you"]
        {
            let ops = run(said);
            assert!(
                !ops.iter().any(|o| o.draft.rule.as_deref() == Some("resolution.learner-already")),
                "{said}: {ops:?}"
            );
        }
    }

    #[test]
    fn not_completions() {
        only_episodes("I didn't call my mom yet");
        only_episodes("I still haven't sent the slides");
        only_episodes("I tried calling my mom");
        only_episodes("I forgot to call my mom");
        only_episodes("I loved the movie");
        only_episodes("did you call my mom?");
        assert!(
            run("Crowded bars are not my thing, honestly").iter().all(|o| !matches!(o.action, Action::CloseLoop(_)))
        );
        only_episodes("My mother also passed away last year");
        only_episodes("I've built a website before");
    }
}
