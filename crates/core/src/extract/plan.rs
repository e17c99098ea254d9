//! Plans, promises, deadlines and reminders: open loops, with a due date resolved against the
//! message time when one is said ("on Friday", "this weekend", "by March 15").
//!
//! Content keeps the user's words with the time phrase ("User plans to call mom this weekend"),
//! so a later "called my mom" finds it. Firm intentions ("I need to", "I promised to", "remind
//! me to") are loops even without a date; soft ones ("I'll", "I want to", "I should") only with
//! one, since "I'll try that" is conversation, not a plan.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::lex::{key_words, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use super::when;
use crate::kind::Kind;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;

/// Cuts a verb phrase at its clause break, keeping time phrases ("call mom this weekend").
fn vp_head(s: &str) -> &str {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)(?:
                    [,;!?()]
                    | [.:](?:\s|$)
                    | \s-\s
                    | \s+(?:
                        but
                        | because
                        | cause
                        | cuz
                        | since
                        | though
                        | although
                        | so\s+(?:i|that|we|it|she|he)
                        | if
                        | unless
                        | lol
                        | haha
                        | btw
                        | tbh
                        | which
                        | who
                        | otherwise
                        | or\s+else
                        | and\s+(?:i|i'm|i've|it|it's|that|then|also|she|he|they|you|we)
                        | anyway
                        | please
                        | pls
                        | thanks
                        | or\s+something
                        | or\s+so
                    )
                    \b
                )
            ",
        )
        .expect("plan cut regex")
    });
    let s = s.trim_start();
    let cut = re.find(s).map_or(s, |m| &s[..m.start()]);
    cut.trim().trim_end_matches(|c: char| !c.is_alphanumeric() && c != ')')
}

/// How firmly an intention is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Firmness {
    /// "I need to", "I have to", "I must": a loop even without a date.
    Need,
    /// "I promised to".
    Promise,
    /// "I plan to", "I'm scheduled to".
    Plan,
    /// "I'll", "I'm going to": a loop only with a date.
    Soft,
    /// "I want to", "I hope to": only with a date.
    Want,
    /// "I should": only with a date.
    Should,
    /// "I've been meaning to".
    Meaning,
    /// "I'm supposed to".
    Supposed,
}

fn firmness(m: &str) -> Firmness {
    let m = m.to_lowercase();
    if m.contains("promis") {
        Firmness::Promise
    } else if m.contains("meaning") {
        Firmness::Meaning
    } else if m.contains("supposed") || m.contains("meant") || m.contains("expected") {
        Firmness::Supposed
    } else if ["need", "have to", "has to", "must", "got to", "gotta"].iter().any(|w| m.contains(w)) {
        Firmness::Need
    } else if m.contains("should") || m.contains("ought") {
        Firmness::Should
    } else if ["want", "wanna", "like to", "love to", "hope", "hoping", "aim"].iter().any(|w| m.contains(w)) {
        Firmness::Want
    } else if ["plan", "intend", "scheduled", "due", " set"].iter().any(|w| m.contains(w)) {
        Firmness::Plan
    } else {
        Firmness::Soft
    }
}

/// Verbs that never start a task ("I need to think", "I have to say").
pub(super) const NOT_TASKS: &[&str] = &[
    "admit",
    "agree",
    "apologise",
    "apologize",
    "ask",
    "be",
    "breathe",
    "calm",
    "check",
    "chill",
    "clarify",
    "confess",
    "consider",
    "decide",
    "do",
    "double-check",
    "doublecheck",
    "eat",
    "explain",
    "feel",
    "figure",
    "focus",
    "get",
    "go",
    "go,",
    "hate",
    "hurry",
    "keep",
    "know",
    "learn",
    "leave",
    "like",
    "look",
    "love",
    "mention",
    "need",
    "note",
    "pass",
    "point",
    "relax",
    "rest",
    "run",
    "say",
    "see",
    "sleep",
    "stop",
    "survive",
    "tell",
    "thank",
    "think",
    "try",
    "understand",
    "use",
    "vent",
    "wait",
    "want",
    "warn",
    "wonder",
    "work",
];

/// Tasks that are real only with more words or a date ("go" vs "go to the dentist tomorrow").
pub(super) const NEED_MORE: &[&str] =
    &["be", "check", "do", "eat", "get", "go", "leave", "look", "pass", "run", "see", "sleep", "use", "work"];

/// Leading words of a verb phrase that are not the task ("remember to call" → "call").
pub(super) const LEAD: &[&str] = &[
    "actually ",
    "also ",
    "definitely ",
    "finally ",
    "first ",
    "get around to ",
    "go ahead and ",
    "just ",
    "make sure i ",
    "make sure to ",
    "probably ",
    "really ",
    "remember to ",
    "seriously ",
    "still ",
    "totally ",
    "try and ",
    "try to ",
];

/// A task phrase from a verb phrase, or None when it is conversation ("think about it").
fn task(vp: &str, dated: bool) -> Option<String> {
    let mut v = tidy(vp_head(vp));
    loop {
        let lower = v.to_ascii_lowercase();
        let Some(l) = LEAD.iter().find(|l| lower.starts_with(**l)) else { break };
        v = v[l.len()..].to_string();
    }
    let lower = v.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let first = *words.first()?;
    let second = words.get(1).copied().unwrap_or_default();
    if NOT_TASKS.contains(&first) && !NEED_MORE.contains(&first) {
        return None;
    }
    let vague = matches!(
        second,
        "it" | "that" | "this" | "them" | "so" | "you" | "u" | "there" | "some" | "something" | "back"
    ) && words.len() <= 3;
    if vague || lower.starts_with("let you know") || lower.starts_with("let u know") || asks_the_listener(&words) {
        return None;
    }
    if NEED_MORE.contains(&first) && (!dated || words.len() < 2) {
        return None;
    }
    if first == "be"
        && !matches!(second, "at" | "in" | "there" | "home" | "back" | "on" | "ready" | "done" | "finished")
    {
        return None;
    }
    // "Later I will send, now I am dead": a verb that takes an object, with none, leans on
    // the turn before for what ("send" what?), whatever date the sentence holds.
    if words.len() < 2 && (!dated || (TASK_VERBS.contains(&first) && !ALONE.contains(&first))) {
        return None;
    }
    Some(third_person(&v))
}

/// Whether a task is only a question for the listener ("make a question about my visa", said
/// by learners of "ask"; "ask you something"): the chat answers it, nothing is left to do.
fn asks_the_listener(words: &[&str]) -> bool {
    let Some((first, rest)) = words.split_first() else { return false };
    let rest: Vec<&str> = rest
        .iter()
        .copied()
        .filter(|w| {
            !matches!(*w, "you" | "u" | "a" | "one" | "quick" | "small" | "little" | "another" | "some" | "few")
        })
        .collect();
    matches!(*first, "make" | "ask" | "have" | "put" | "do")
        && rest.first().is_some_and(|w| {
            let w = w.trim_end_matches(['.', ',', '!', '?']);
            matches!(w, "question" | "questions" | "something" | "sth" | "smth" | "query" | "doubt")
        })
}

/// Task verbs that say all they need without an object ("I'll move in June", "I want to
/// retire"); the others ("send", "book") alone lean on the turn before for what.
pub(super) const ALONE: &[&str] = &[
    "apply", "attend", "back", "clean", "cook", "drive", "graduate", "help", "move", "pay", "relocate", "retire",
    "rest", "run", "study", "swim", "train", "travel", "vote", "wait", "walk", "work",
];

/// Verbs of concrete tasks: an undated "I need to ..." with one of these is a loop.
pub(super) const TASK_VERBS: &[&str] = &[
    "apologise",
    "apologize",
    "apply",
    "arrange",
    "ask",
    "attend",
    "back",
    "bake",
    "book",
    "borrow",
    "bring",
    "buy",
    "call",
    "cancel",
    "change",
    "charge",
    "check",
    "claim",
    "clean",
    "close",
    "collect",
    "complete",
    "confirm",
    "contact",
    "cook",
    "declare",
    "declutter",
    "deliver",
    "deploy",
    "deposit",
    "do",
    "donate",
    "draft",
    "drive",
    "drop",
    "edit",
    "email",
    "feed",
    "file",
    "finalise",
    "finalize",
    "finish",
    "fix",
    "fly",
    "follow",
    "get",
    "go",
    "grab",
    "hand",
    "hire",
    "inform",
    "install",
    "interview",
    "invite",
    "join",
    "launch",
    "lend",
    "mail",
    "make",
    "meet",
    "merge",
    "message",
    "migrate",
    "move",
    "mow",
    "notify",
    "open",
    "order",
    "organise",
    "organize",
    "pack",
    "paint",
    "pay",
    "phone",
    "pick",
    "plan",
    "post",
    "practice",
    "practise",
    "prep",
    "prepare",
    "print",
    "publish",
    "push",
    "read",
    "redecorate",
    "refund",
    "register",
    "release",
    "remind",
    "renew",
    "renovate",
    "repaint",
    "repair",
    "replace",
    "reply",
    "reschedule",
    "research",
    "reserve",
    "respond",
    "return",
    "review",
    "revise",
    "ring",
    "schedule",
    "see",
    "sell",
    "send",
    "service",
    "set",
    "ship",
    "shop",
    "sign",
    "sort",
    "speak",
    "start",
    "study",
    "submit",
    "take",
    "talk",
    "tell",
    "test",
    "text",
    "thank",
    "tidy",
    "transfer",
    "travel",
    "turn",
    "update",
    "upload",
    "vacuum",
    "visit",
    "volunteer",
    "vote",
    "walk",
    "warn",
    "wash",
    "water",
    "withdraw",
    "write",
];

/// Verbs too general to be a task without a definite object ("make changes" vs "make the booking").
pub(super) const GENERIC_TASKS: &[&str] = &[
    "back", "change", "check", "close", "do", "get", "go", "make", "open", "plan", "read", "see", "set", "speak",
    "start", "take", "talk", "turn",
];

fn is_task(t: &str) -> bool {
    let words: Vec<String> = t.split_whitespace().map(str::to_lowercase).collect();
    let Some(first) = words.first() else { return false };
    if !TASK_VERBS.contains(&first.as_str()) {
        return false;
    }
    if words.iter().any(|w| w == "you" || w == "u") {
        return false;
    }
    if GENERIC_TASKS.contains(&first.as_str()) {
        let next = words.get(1).map(String::as_str).unwrap_or_default();
        let definite = [
            "the", "their", "my", "a", "an", "to", "with", "back", "in", "up", "out", "on", "off", "mom", "dad",
            "grandma", "grandpa",
        ];
        return definite.contains(&next) && words.len() >= 3;
    }
    true
}

/// A time phrase inside `inner` (preferred) or anywhere in the sentence. None where the text
/// searched tells a routine ("four night in one week", "every Tuesday"): its days recur, and
/// none of them is a due date. A routine elsewhere in the sentence leaves a date said inside
/// `inner` as it is ("I have the dentist on Friday, and I walk the dog every morning").
fn due(inner: &str, s: &Sentence<'_>) -> Option<(String, chrono::DateTime<chrono::Utc>)> {
    if when::recurring(inner) {
        return None;
    }
    when::find(inner, s.at).map(|t| (inner[t.start..t.end].to_string(), t.at)).or_else(|| {
        (!when::recurring(s.text))
            .then(|| when::find(s.text, s.at).map(|t| (s.text[t.start..t.end].to_string(), t.at)))?
    })
}

fn lower_first(t: &str) -> String {
    let mut cs = t.chars();
    cs.next().map(|f| f.to_lowercase().chain(cs).collect()).unwrap_or_default()
}

/// "content" plus the time phrase when the content does not already carry it.
fn with_time(content: String, time: Option<&str>) -> String {
    match time {
        Some(t) if !content.to_lowercase().contains(&t.to_lowercase()) => {
            // "Tomorrow I need to ..." moves the phrase to the end: no capital there.
            let first = t.split_whitespace().next().unwrap_or_default().to_lowercase();
            let common =
                ["tomorrow", "tonight", "today", "this", "next", "in", "on", "by", "end", "the", "later", "within"];
            let t = if common.contains(&first.as_str()) { lower_first(t) } else { t.to_string() };
            format!("{content} {t}")
        }
        _ => content,
    }
}

fn open_loop(content: &str, due_at: Option<chrono::DateTime<chrono::Utc>>, conf: f32) -> Found {
    // "send you the draft": in a plan, "you" is the assistant.
    let content = content
        .split(' ')
        .map(|w| match w {
            "you" => "the assistant",
            "your" => "the assistant's",
            w => w,
        })
        .collect::<Vec<_>>()
        .join(" ");
    let sal = if due_at.is_some() { 0.7 } else { 0.5 };
    let mut d = Draft::new(Kind::OpenLoop, content, conf, sal);
    d.due_at = due_at;
    Found::add(d)
}

/// First words after a state verb ("going well", "doing fine") that make it no plan.
pub(super) const STATES: &[&str] = &[
    "a", "alright", "an", "badly", "better", "crazy", "fine", "good", "great", "home", "insane", "mad", "much", "my",
    "nothing", "ok", "okay", "pretty", "really", "sick", "so", "such", "the", "this", "tired", "well", "worse",
];

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "plan.trip",
            Mode::Statement,
            &["trip", "vacation", "holiday", "getaway", "visit"],
            r"(?x)
                # e.g. We're planning a trip to Iceland.
                \b(?:i'm|i\s+am|we're|we\s+are|i've\s+been|we've\s+been)\s+
                (?:planning|going\s+on|taking|booking|organising|organizing)\s+(?:a|an|our|my|the)\s+
                (?P<what>(?:[\w-]+\s+)?(?:trip|vacation|holiday|getaway|visit))\s+to\s+
                # capitalised words only: a place name, not the rest of the sentence
                (?P<place>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)*)
            ",
            |c, s| {
                // "I'm planning a trip to Tokyo in October": a plan with a place, dated or not.
                let (Some(what), Some(place)) = (cap(c, "what"), cap(c, "place")) else { return Vec::new() };
                let time = due(s.text, s);
                let content = with_time(
                    format!("User is planning a {} to {place}", what.to_lowercase()),
                    time.as_ref().map(|t| t.0.as_str()),
                );
                vec![open_loop(&content, time.map(|t| t.1), 0.8)]
            },
        ),
        Rule::new(
            "plan.remind-me",
            Mode::Request,
            &["remind", "reminder", "note to self", "forget to", "forget about", "let me forget", "make sure i"],
            r"(?x)
                # e.g. Remind me to renew my passport next month.
                (?:
                    ^
                    | [,;:]\s*
                    | \b(?:
                        please | pls | can\s+you | could\s+you | would\s+you | will\s+you | and | also
                        | just | ok | okay | so | then | oh | hey | plz
                    )
                    \s+
                )
                (?:please\s+)?(?:
                    remind\s+me\s+(?:(?P<t>[^,.;!?]{1,40}?)\s+)?(?:
                        to\s+(?P<vp><TAIL>)
                        | (?:about|of)\s+(?P<np><TAIL>)
                        | that\s+(?P<cl><TAIL>)
                    )
                    | (?:set|add|create|make)\s+(?:a\s+)?reminder\s+(?:(?:for|about)\s+(?P<np2><TAIL>)|to\s+(?P<vp2><TAIL>))
                    | (?:reminder|note\s+to\s+self|todo|to-do)\s*:\s*(?P<np3><TAIL>)
                    | (?:don't|do\s+not|dont)\s+let\s+me\s+forget\s+(?:to\s+(?P<vp3><TAIL>)|(?:about\s+)?(?P<np4><TAIL>))
                    | (?:don't|do\s+not|dont)\s+forget\s+to\s+remind\s+me\s+(?:to\s+(?P<vp4><TAIL>)|(?:about\s+)?(?P<np5><TAIL>))
                    | make\s+sure\s+i\s+(?:remember\s+to\s+|don't\s+forget\s+to\s+)?(?P<vp5><TAIL>)
                )
            ",
            |c, s| {
                if !s.addressed(c.get(0).map_or(0, |m| m.start())) {
                    return Vec::new();
                }
                // "Note to self: renew the car insurance" is a task, not a thing to be reminded of.
                let listed = cap(c, "np3").filter(|np| {
                    np.split_whitespace().next().is_some_and(|w| TASK_VERBS.contains(&w.to_lowercase().as_str()))
                });
                let vp = ["vp", "vp2", "vp3", "vp4", "vp5"].iter().find_map(|n| cap(c, n)).or(listed);
                let np = ["np", "np2", "np3", "np4", "np5", "cl"].iter().find_map(|n| cap(c, n));
                let inner = vp.or(np).unwrap_or_default();
                let time = due(inner, s).or_else(|| {
                    cap(c, "t").and_then(|t| when::find(t, s.at).map(|f| (t[f.start..f.end].to_string(), f.at)))
                });
                let dated = time.is_some();
                // "Remind me that my car insurance renews on 3 March" is a clause: reminded
                // that it renews, not "about" it.
                let joins = if cap(c, "cl").is_some() { "that" } else { "about" };
                let content = match (vp, np) {
                    (Some(vp), _) => {
                        let Some(t) = task(vp, true) else { return Vec::new() };
                        format!("User asked to be reminded to {t}")
                    }
                    (None, Some(np)) => {
                        let t = third_person(&tidy(vp_head(np)));
                        if t.chars().count() < 3 || super::lex::is_vague(&t) {
                            return Vec::new();
                        }
                        format!("User asked to be reminded {joins} {t}")
                    }
                    _ => return Vec::new(),
                };
                let content = with_time(content, time.as_ref().map(|(t, _)| t.as_str()));
                let mut f = open_loop(&content, time.map(|(_, at)| at), 0.9);
                f.draft.salience = if dated { 0.8 } else { 0.6 };
                vec![f]
            },
        ),
        Rule::new(
            "plan.promise-to-someone",
            Mode::Plan,
            &["promised", "told", "assured", "swore"],
            r"(?x)
                # e.g. I promised my niece I'd take her to the zoo.
                \b(?:i|we)(?:'ve|\s+have)?\s+(?:(?:already|just|also|kind\s+of)\s+)?(?:promised|told|assured|swore\s+to)\s+(?P<whom>(?:my\s+|our\s+)?[\w-]+(?:\s+(?-i:[A-Z])[\w-]*)?)\s+(?:that\s+)?(?:
                    i'd | i\s+would | i'll | i\s+will | we'd | we'll | i\s+was\s+going\s+to
                    | i'm\s+going\s+to | i'm\s+gonna | to
                )
                \s+(?P<vp><TAIL>)
            ",
            |c, s| {
                let vp = cap(c, "vp").unwrap_or_default();
                let whom = third_person(&tidy(cap(c, "whom").unwrap_or_default()));
                let told = c.get(0).is_some_and(|m| m.as_str().to_lowercase().contains("told"));
                let time = due(vp, s);
                if told && time.is_none() {
                    return Vec::new();
                }
                let Some(t) = task(vp, time.is_some()) else { return Vec::new() };
                // "promised my mom I'd call her": the pronoun is the person promised.
                let words: Vec<&str> = t.split(' ').collect();
                let pron = words.iter().position(|w| matches!(w.to_lowercase().as_str(), "her" | "him" | "them"));
                let content = match pron {
                    Some(i) if i > 0 => {
                        let mut w: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
                        w[i] = whom;
                        format!("User promised to {}", w.join(" "))
                    }
                    _ => format!("User promised {whom} to {t}"),
                };
                let content = with_time(content, time.as_ref().map(|(t, _)| t.as_str()));
                vec![open_loop(&content, time.map(|(_, at)| at), 0.85)]
            },
        ),
        Rule::new(
            "plan.intent",
            Mode::Plan,
            &["i", "we"],
            r"(?x)
                # e.g. I need to book a dentist appointment.
                \b(?P<subj>i|we)(?P<m>
                    'll
                    | \s+will
                    | \s+shall
                    | (?:'m|\s+am|'re|\s+are)\s+(?:(?:definitely|really|totally|finally|probably|also|just)\s+)?(?:going\s+to|gonna)
                    | \s+gonna
                    | (?:'ve|\s+have)\s+(?:got\s+to|gotta|been\s+meaning\s+to|promised\s+to)
                    # I keep meaning to join the beekeepers' association
                    | \s+keep\s+meaning\s+to
                    | (?:'m|\s+am|'re|\s+are)\s+(?:planning|hoping|aiming|supposed|meant|scheduled|due|expected|set)\s+(?:to|on)
                    | (?:'d|\s+would)\s+(?:like|love)\s+to
                    | \s+(?:
                        (?:
                            really | still | definitely | also | absolutely | just | seriously | finally
                            | totally | probably | actually | urgently | desperately | already
                        )
                        \s+
                    )*
                    (?:
                        need\s+to | needs\s+to | have\s+to | has\s+to | must(?:\s+to)? | should
                        | ought\s+to | gotta | plan\s+to | intend\s+to | want\s+to | wanna | hope\s+to
                        | aim\s+to | mean\s+to | have\s+got\s+to | promised\s+to | promised | swore\s+to
                        | committed\s+to
                    )
                )
                \s+(?P<vp><TAIL>)
            ",
            intent,
        ),
        Rule::new(
            "plan.bare-intent",
            Mode::Plan,
            &[
                "gotta", "need to", "have to", "must", "got to", "gonna", "going to", "planning", "plan to",
                "promised", "should",
            ],
            r"(?x)
                # e.g. Gotta finish the quarterly report by Friday.
                ^(?:(?:so|ok|okay|and|also|oh|btw|ugh|but|still|really)[,]?\s+)*(?P<m>
                    gotta | need\s+to | have\s+to | must | got\s+to | gonna | going\s+to
                    | planning\s+to | plan\s+to | promised\s+to | should | supposed\s+to
                )
                \s+(?P<vp><TAIL>)
            ",
            intent,
        ),
        Rule::new(
            "plan.bare-progressive",
            Mode::Plan,
            &["heading", "flying", "going", "driving", "leaving", "traveling", "travelling", "off to", "moving"],
            r"(?x)
                # e.g. Heading to Lisbon on Thursday.
                ^(?:(?:so|and|just|also|finally|btw|oh|yay)[,!]?\s+)*
                (?P<v>heading|flying|going|driving|leaving|travel(?:l)?ing|moving|off)\s+
                (?P<rest>(?:to|for|back\s+to|home\s+to|out\s+to)\s+<CLAUSE>)
            ",
            |c, s| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let rest = cap(c, "rest").unwrap_or_default();
                let Some((time, at)) = due(rest, s) else { return Vec::new() };
                let rest = third_person(&tidy(vp_head(rest)));
                let verb = if v == "off" { "is off".to_string() } else { format!("is {v}") };
                vec![open_loop(&with_time(format!("User {verb} {rest}"), Some(&time)), Some(at), 0.8)]
            },
        ),
        Rule::new(
            "plan.have-event",
            Mode::Plan,
            &["have", "got", "'ve"],
            r"(?x)
                # e.g. I have a job interview on Wednesday; or, texted, got my driving test fri.
                (?:\b(?:i|we)(?:\s+(?:also|still|finally|actually|just))?(?:'ve\s+got|\s+have\s+got|\s+have|\s+got|'ll\s+have|\s+will\s+have)
                  | ^\s*(?:ive\s+|i've\s+)?got)
                \s+(?P<np>
                    # Learners and texters leave the article out: I have dentist on friday.
                    (?:
                        (?:
                            a | an | my | the | another | our | this | that | one | two | three | \d+ | some
                            | a\s+big | a\s+huge
                        )
                        \s+(?:[\w'-]+\s+){0,3}?
                    )?
                    <EVENT>s?\b[^,.;!?]*
                )
            ",
            |c, s| {
                let np = cap(c, "np").unwrap_or_default();
                let Some((time, at)) = due(np, s) else { return Vec::new() };
                let np = third_person(&tidy(vp_head(np)));
                let subj = if c.get(0).is_some_and(|m| m.as_str().to_ascii_lowercase().starts_with("we")) {
                    "User and others have"
                } else {
                    "User has"
                };
                vec![open_loop(&with_time(format!("{subj} {np}"), Some(&time)), Some(at), 0.85)]
            },
        ),
        Rule::new(
            "plan.someone-having",
            Mode::Plan,
            &["having", "getting", "sitting", "taking", "doing"],
            r"(?x)
                # e.g. Keith's having his knee replaced on the 2nd of June: someone the user names
                # has something done on a day.
                ^\s*(?P<who>(?-i:[A-Z])[a-z]+)(?:'s|\s+is)\s+(?P<v>having|getting|sitting|taking|doing)\s+(?P<rest><CLAUSE>)
            ",
            |c, s| {
                let who = cap(c, "who").unwrap_or_default();
                let lower = who.to_lowercase();
                if crate::text::is_stopword(&lower)
                    || super::lex::NOT_NAMES.contains(&lower.as_str())
                    || matches!(
                        lower.as_str(),
                        "it" | "that" | "this" | "there" | "here" | "what" | "everyone" | "nobody"
                    )
                {
                    return Vec::new();
                }
                let rest = cap(c, "rest").unwrap_or_default();
                // Something done to them or an occasion ("his knee replaced", "married", "her
                // exam"), not a mood ("Mum's having a bad day today") or a sale.
                static DONE: OnceLock<Regex> = OnceLock::new();
                let done = DONE
                    .get_or_init(|| super::lex::expand(r"\b(?:[a-z]{3,}ed|done|out|fitted|removed|taken|<EVENT>)\b"));
                if !done.is_match(vp_head(rest)) {
                    return Vec::new();
                }
                let Some((time, at)) = due(rest, s) else { return Vec::new() };
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let what = third_person(&tidy(vp_head(rest)));
                vec![open_loop(&with_time(format!("{who} is {v} {what}"), Some(&time)), Some(at), 0.8)]
            },
        ),
        Rule::new(
            "plan.event-is",
            Mode::Plan,
            &["my ", "our ", "the ", " is ", " starts ", " begins ", " start ", " begin "],
            r"(?x)
                # e.g. My flight to Denver is at 6am tomorrow; or, opening the sentence without
                # its determiner, Grade 1 exam is booked for 14 March.
                (?:\b(?P<det>my|our|the)\s+|^\s*)(?P<np>
                    (?:[\w'-]+\s+){0,3}?<EVENT>(?:\s+(?:to|with|for|at|in)\s+[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]*)?)?
                )
                \s+(?P<v>
                    is
                    | 's
                    | leaves
                    | departs
                    | lands
                    | arrives
                    | is\s+at
                    | was\s+moved\s+to
                    | got\s+moved\s+to
                    | has\s+been\s+moved\s+to
                    | got\s+(?:re)?scheduled\s+(?:to|for)
                    | was\s+(?:re)?scheduled\s+(?:to|for)
                    | is\s+now
                    | is\s+scheduled\s+for
                    | is\s+set\s+for
                    | is\s+booked\s+for
                    | starts
                    | begins
                    # plural, or a learner's base form: my classes start on Monday, the class start 3 March
                    | start
                    | begin
                    | kicks\s+off
                    | happens
                    | got\s+pushed\s+(?:back\s+)?to
                    | was\s+pushed\s+(?:back\s+)?to
                    # as many say it: the wedding is shifted to 18 July, got postponed to May
                    | (?:is|was|got|has\s+been)\s+(?:shifted|postponed|changed|brought\s+forward|put\s+back)\s+to
                    | is\s+coming\s+up
                )
                \s+(?P<rest><CLAUSE>)
            ",
            |c, s| {
                let rest = cap(c, "rest").unwrap_or_default();
                let Some(t) = when::find(rest, s.at) else { return Vec::new() };
                let det = cap(c, "det").map(str::to_lowercase);
                let np = tidy(cap(c, "np").unwrap_or_default());
                // "Now wedding is 21 June": the "now" is when, no part of the name.
                let (np, now) = match np.split_once(' ') {
                    Some((first, after)) if first.eq_ignore_ascii_case("now") => (after.to_string(), true),
                    _ => (np, false),
                };
                // Without a determiner only the user's own thing: "Jo's party is on Friday" is
                // someone else's.
                if det.is_none() && np.contains('\'') {
                    return Vec::new();
                }
                let np = match det {
                    // The capital of the sentence's first word is no proper noun's.
                    None if np
                        .split_whitespace()
                        .next()
                        .is_some_and(|w| w.chars().skip(1).all(|c| !c.is_uppercase())) =>
                    {
                        let mut cs = np.chars();
                        cs.next().map(|f| f.to_lowercase().chain(cs).collect()).unwrap_or_default()
                    }
                    _ => np,
                };
                // Said without a determiner, a gathering is no more the user's than anyone's
                // ("Party is Sunday 9 August", in a family chat about nan's 80th); an exam, a
                // flight or an appointment is the speaker's own.
                const GATHERINGS: &[&str] = &[
                    "party",
                    "wedding",
                    "reunion",
                    "funeral",
                    "barbecue",
                    "bbq",
                    "christening",
                    "meeting",
                    "festival",
                    "fair",
                    "match",
                    "game",
                    "concert",
                    "gig",
                    "service",
                    "ceremony",
                    "do",
                ];
                let gathering =
                    || np.split_whitespace().last().is_some_and(|w| GATHERINGS.contains(&w.to_lowercase().as_str()));
                let det = det.unwrap_or_else(|| if gathering() { "the" } else { "my" }.to_string());
                let v = tidy(cap(c, "v").unwrap_or_default()).to_lowercase();
                let rest = third_person(&tidy(vp_head(rest)));
                let who = if det == "the" { format!("The {np}") } else { format!("User's {np}") };
                let v = if v == "'s" { "is".to_string() } else { v };
                let v = if now && v == "is" { "is now".to_string() } else { v };
                // A learner's "the class start": one class starts.
                let plural = np.ends_with('s') && !np.ends_with("ss") && !np.ends_with("us") && !np.ends_with("is");
                let v = if matches!(v.as_str(), "start" | "begin") && !plural { format!("{v}s") } else { v };
                let mut f = open_loop(&format!("{who} {v} {rest}"), Some(t.at), 0.85);
                let moved = ["moved", "pushed", "shifted", "postponed", "changed", "brought", "put back"];
                if moved.iter().any(|m| v.contains(m)) || v.contains("scheduled") && v.contains("re") {
                    let words = key_words(&np);
                    if !words.is_empty() {
                        f.action = Action::Update(Target::Matching(words.join(" ")));
                    }
                }
                vec![f]
            },
        ),
        Rule::new(
            "plan.deadline",
            Mode::Plan,
            &["due", "deadline"],
            r"(?x)
                # e.g. My thesis is due on May 15.
                \b(?:
                    (?P<x>(?:my|our|the)\s+[^,.;!?]+?)\s+(?:is|are)\s+due\s+(?P<t><CLAUSE>)
                    | (?:the\s+|my\s+|our\s+)?deadline\s+(?:for|on)\s+(?P<y>[^,.;!?]+?)\s+is\s+(?P<t2><CLAUSE>)
                )
            ",
            |c, s| {
                let t = cap(c, "t").or(cap(c, "t2")).unwrap_or_default();
                let Some(found) = when::find(t, s.at) else { return Vec::new() };
                let time = &t[found.start..found.end];
                // "my sister is due in March", "my kaylee is due w her first baby july 4th": a
                // person due is a birth to come, their news and not the user's task; the
                // sentence is kept as said, baby and all.
                let person =
                    cap(c, "x").and_then(|x| x.split_whitespace().nth(1)).is_some_and(super::lex::is_relation_word);
                let birth = t.split_whitespace().any(|w| {
                    matches!(
                        w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase().as_str(),
                        "baby" | "babies" | "twins" | "triplets"
                    )
                });
                if person || birth {
                    return Vec::new();
                }
                let content = if let Some(x) = cap(c, "x") {
                    let x = tidy(x);
                    let what = x.split_once(' ').map_or(x.as_str(), |(_, w)| w).to_string();
                    if x.to_ascii_lowercase().starts_with("my") || x.to_ascii_lowercase().starts_with("our") {
                        format!("User's {what} is due {time}")
                    } else {
                        format!("User has a deadline: the {what} is due {time}")
                    }
                } else {
                    let y = third_person(&tidy(cap(c, "y").unwrap_or_default()));
                    format!("User's deadline for {y} is {time}")
                };
                vec![open_loop(&content, Some(found.at), 0.85)]
            },
        ),
        Rule::new(
            "plan.progressive-future",
            Mode::Plan,
            &["i'm", "i am", "we're", "we are"],
            r"(?x)
                # e.g. I'm meeting Carla for lunch on Friday.
                \b(?P<subj>i|we)(?:'m|\s+am|'re|\s+are)\s+(?:(?:also|finally|actually|probably|definitely|just|officially)\s+)?(?P<v>
                    meeting | seeing | visiting | flying | going | travel(?:l)?ing | driving
                    | heading | leaving | moving | starting | hosting | attending | taking
                    | presenting | interviewing | having | giving | running | doing | playing
                    | calling | celebrating | getting | picking\s+up | dropping\s+off
                    | catching\s+up\s+with | submitting | sending | launching | shipping | throwing
                    | cooking | baking | volunteering | speaking | performing | competing | racing
                    | signing | closing | finishing | wrapping\s+up | buying | selling | renovating
                    | painting | returning | coming\s+back
                )
                \s+(?P<rest><CLAUSE>)
            ",
            |c, s| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let rest = cap(c, "rest").unwrap_or_default();
                let Some((time, at)) = due(rest, s) else { return Vec::new() };
                let rl = rest.trim_start().to_lowercase();
                let first = rl.split_whitespace().next().unwrap_or_default();
                // "I'm doing great today", "I'm having a rough day": states, not plans.
                // "I'm getting motivated by something I saw today": a state, not an appointment.
                let loose = matches!(
                    v.as_str(),
                    "doing"
                        | "having"
                        | "getting"
                        | "taking"
                        | "running"
                        | "giving"
                        | "playing"
                        | "leaving"
                        | "starting"
                );
                let eventful = super::lex::EVENTS.split('|').any(|e| !e.contains('\\') && rl.contains(e))
                    || [
                        "married",
                        "engaged",
                        "a party",
                        "surgery",
                        "a baby",
                        "off",
                        "a trip",
                        "a break",
                        "a class",
                        "the day off",
                        "a course",
                        "the bus",
                        "the train",
                        "a flight",
                        "for",
                        "on a",
                    ]
                    .iter()
                    .any(|w| rl.contains(w));
                if loose && !eventful && !(v == "leaving" || v == "starting") {
                    return Vec::new();
                }
                let state_verb = matches!(v.as_str(), "doing" | "having" | "getting" | "going" | "running");
                let planned = v == "having"
                    && (rl.starts_with("a party")
                        || rl.contains("dinner")
                        || rl.contains("surgery")
                        || rl.contains("baby"));
                if state_verb && STATES.contains(&first) && !planned && !(v == "going" && first == "home") {
                    return Vec::new();
                }
                if v == "going"
                    && (first == "to" || first == "through" || first == "crazy" || first == "on")
                    && !rl.starts_with("to ")
                {
                    return Vec::new();
                }
                let rest_said = rest.trim_start();
                let rest = third_person(&tidy(vp_head(rest)));
                if rest.is_empty() {
                    return Vec::new();
                }
                let subj = if cap(c, "subj").is_some_and(|x| x.eq_ignore_ascii_case("we")) {
                    "User and others are"
                } else {
                    "User is"
                };
                let mut out = vec![open_loop(&with_time(format!("{subj} {v} {rest}"), Some(&time)), Some(at), 0.8)];
                // "I'm starting at the Larkfield garage on Monday": a new workplace as well.
                if v == "starting" && subj == "User is" {
                    if let Some(place) = rl.strip_prefix("at ").map(|_| super::lex::strip_times(&rest_said[3..])) {
                        out.extend(super::identity::employer(&place, s));
                    }
                }
                out
            },
        ),
    ]
}

/// "I need to ...", "I'm going to ...", "I promised to ...".
/// Whether a sentence puts what it says off to no set time ("at some point", "one of these
/// days", "when I see time", "I'll get round to it"): a loose intention, which is still one.
fn put_off(lower: &str) -> bool {
    [
        "at some point",
        "at some stage",
        "one of these days",
        "one of dese days",
        "some day",
        "someday",
        "sometime",
        "one day",
        "when i see time",
        "when i get time",
        "when i find time",
        "when i get a chance",
        "get round to it",
        "get around to it",
        "eventually",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

fn intent(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let m = cap(c, "m").unwrap_or_default();
    // "… n ask i guess": a hedge after the task is no part of it.
    let mut vp = cap(c, "vp").unwrap_or_default().trim_end();
    while let Some(cut) = ["i guess", "i think", "i suppose", "i spose", "i reckon", "lol", "tbh", "haha"]
        .iter()
        .find_map(|h| vp.strip_suffix(h).filter(|r| r.ends_with(' ')).map(str::trim_end))
    {
        vp = cut.trim_end_matches([',', ' ']);
    }
    // Texting's "n" between two verbs is "and" ("ring the derm nurse n ask").
    let joined = vp.replace(" n ", " and ");
    let mut vp = joined.as_str();
    let mut f = firmness(m);
    // "we'll have to push the start to Monday": what will be needed, not a plan "to have to".
    if let Some(rest) = ["have to ", "need to ", "have got to ", "got to "]
        .iter()
        .find_map(|h| vp.get(..h.len()).filter(|p| p.eq_ignore_ascii_case(h)).map(|_| &vp[h.len()..]))
    {
        vp = rest;
        f = Firmness::Need;
    }
    let time = due(vp, s);
    let dated = time.is_some();
    let needs_date = matches!(f, Firmness::Soft | Firmness::Want | Firmness::Should);
    // "I'll get a physio to look at it at some point", "I will do it when I see time": put off
    // in so many words, it is still something to do.
    let put_off = f == Firmness::Soft && put_off(&s.text.to_lowercase());
    if needs_date && !dated && !put_off {
        return Vec::new();
    }
    // "I'm going to Paris next week", "I'm going to the dentist": going somewhere.
    let first = vp.split_whitespace().next().unwrap_or_default();
    let first_lower = first.to_lowercase();
    let going_to_place = m.to_lowercase().contains("going to")
        && (first.starts_with(char::is_uppercase) && first != "I"
            || matches!(
                first_lower.as_str(),
                "the"
                    | "a"
                    | "an"
                    | "my"
                    | "our"
                    | "his"
                    | "her"
                    | "their"
                    | "this"
                    | "that"
                    | "bed"
                    | "work"
                    | "school"
                    | "church"
                    | "class"
                    | "town"
                    | "dinner"
                    | "lunch"
                    | "brunch"
            ));
    let we = cap(c, "subj").is_some_and(|x| x.eq_ignore_ascii_case("we"));
    if going_to_place {
        let rest = third_person(&tidy(vp_head(vp)));
        let subj = if we { "User and others are" } else { "User is" };
        let content = with_time(format!("{subj} going to {rest}"), time.as_ref().map(|(t, _)| t.as_str()));
        return vec![open_loop(&content, time.map(|(_, at)| at), 0.8)];
    }
    let Some(t) = task(vp, dated) else { return Vec::new() };
    // A routine ("I have to be at the depot by 6 every morning") is how the user's days go, not
    // a task that one doing closes: it is left to capture, which keeps it as a fact.
    if when::recurring(vp) {
        return Vec::new();
    }
    // Undated intentions are loops only when they name a concrete task ("call the bank"), not
    // a resolution ("find a better way to focus"); "we" without a date is usually a maxim.
    if !dated && (we || !is_task(&t)) {
        return Vec::new();
    }
    let (lead, conf) = match f {
        Firmness::Need => ("needs to", 0.8),
        Firmness::Promise => ("promised to", 0.85),
        Firmness::Plan => ("plans to", 0.8),
        Firmness::Soft => ("plans to", 0.75),
        Firmness::Want => ("wants to", 0.65),
        Firmness::Should => ("should", 0.65),
        Firmness::Meaning => ("has been meaning to", 0.7),
        Firmness::Supposed => ("is supposed to", 0.8),
    };
    let subj = if we {
        match f {
            Firmness::Need => "User and others need to".to_string(),
            Firmness::Promise => "User and others promised to".to_string(),
            Firmness::Want => "User and others want to".to_string(),
            Firmness::Should => "User and others should".to_string(),
            _ => "User and others plan to".to_string(),
        }
    } else {
        format!("User {lead}")
    };
    let content = with_time(format!("{subj} {t}"), time.as_ref().map(|(t, _)| t.as_str()));
    vec![open_loop(&content, time.map(|(_, at)| at), conf)]
}

#[cfg(test)]
mod trip_tests {
    use crate::extract::heuristic::tests::run;
    use crate::kind::Kind;

    #[test]
    fn a_planned_trip_is_an_open_loop_with_its_month() {
        let ops = run("I'm learning Japanese and I'm planning a trip to Tokyo in October.");
        let trip = ops.iter().find(|o| o.draft.content.contains("Tokyo")).expect("a trip");
        assert_eq!(trip.draft.kind, Kind::OpenLoop);
        assert!(trip.draft.content.contains("trip to Tokyo"), "{}", trip.draft.content);
        assert!(trip.draft.due_at.is_some());
        assert!(ops.iter().any(|o| o.draft.content.contains("Japanese")));
    }
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{only_episodes, run};
    use crate::kind::Kind;
    use chrono::{DateTime, Utc};

    fn due(s: &str) -> (String, Option<String>) {
        let ops = run(s);
        assert_eq!(ops.len(), 1, "{s}: {ops:?}");
        assert_eq!(ops[0].draft.kind, Kind::OpenLoop, "{s}");
        (ops[0].draft.content.clone(), ops[0].draft.due_at.map(|d: DateTime<Utc>| d.format("%Y-%m-%d").to_string()))
    }

    fn day(d: &str) -> Option<String> {
        Some(d.to_string())
    }

    #[test]
    fn plans_with_dates() {
        // The test clock is Monday 2 March 2026.
        assert_eq!(
            due("I need to call my mom this weekend"),
            ("User needs to call mom this weekend".into(), day("2026-03-08"))
        );
        assert_eq!(
            due("I promised to send the slides to Priya by March 15."),
            ("User promised to send the slides to Priya by March 15".into(), day("2026-03-15"))
        );
        assert_eq!(
            due("I'm going to call mom on Friday"),
            ("User plans to call mom on Friday".into(), day("2026-03-06"))
        );
        assert_eq!(
            due("I have to renew my passport next week"),
            ("User needs to renew their passport next week".into(), day("2026-03-09"))
        );
        assert_eq!(
            due("Remind me to water the plants tomorrow"),
            ("User asked to be reminded to water the plants tomorrow".into(), day("2026-03-03"))
        );
        assert_eq!(
            due("can you remind me tomorrow to email Sam?"),
            ("User asked to be reminded to email Sam tomorrow".into(), day("2026-03-03"))
        );
        // A person due is a birth to come, not the user's deadline.
        for said in ["my sister is due in March", "my kaylee is due w her first baby july 4th"] {
            let ops = crate::extract::heuristic::tests::run(said);
            assert!(ops.iter().all(|o| o.draft.kind != crate::kind::Kind::OpenLoop), "{said}: {ops:#?}");
        }
        // A clause after "that" is kept as one.
        assert_eq!(
            due("Can you remind me that my car insurance renews on 3 March?"),
            ("User asked to be reminded that their car insurance renews on 3 March".into(), day("2026-03-03"))
        );
        assert_eq!(
            due("I have an interview on Friday btw"),
            ("User has an interview on Friday".into(), day("2026-03-06"))
        );
        assert_eq!(due("My dentist appointment is on Thursday at 3pm").1, day("2026-03-05"));
        assert_eq!(due("the report is due end of the month").1, day("2026-03-31"));
        assert_eq!(
            due("I'm flying to Berlin in two weeks"),
            ("User is flying to Berlin in two weeks".into(), day("2026-03-16"))
        );
        assert_eq!(
            due("Tomorrow I need to pick up my sister from school"),
            ("User needs to pick up their sister from school tomorrow".into(), day("2026-03-03"))
        );
        assert_eq!(
            due("I promised my mom I'd call her this weekend"),
            ("User promised to call mom this weekend".into(), day("2026-03-08"))
        );
        assert_eq!(due("we're going to Lisbon next month").1, day("2026-04-01"));
        assert_eq!(due("I should finish the draft tonight").1, day("2026-03-02"));
        assert_eq!(
            due("Gotta submit my tax return by April 15."),
            ("User needs to submit their tax return by April 15".into(), day("2026-04-15"))
        );
        assert_eq!(
            due("Heading to Paris next weekend!"),
            ("User is heading to Paris next weekend".into(), day("2026-03-15"))
        );
        assert_eq!(due("My flight to Tokyo leaves in 3 days").1, day("2026-03-05"));
        assert_eq!(due("The kids' school play is next Thursday").1, day("2026-03-12"));
        assert_eq!(due("I have a 1:1 with my manager tomorrow at 11").1, day("2026-03-03"));
        assert_eq!(
            due("I'll send you the draft in two weeks").0,
            "User plans to send the assistant the draft in two weeks"
        );
    }

    #[test]
    fn firm_intentions_without_dates() {
        let (c, d) = due("I really need to fix my bike");
        assert_eq!((c.as_str(), d), ("User needs to fix their bike", None));
        // Loosely phrased, still a thread to pick up.
        let (c, _) = due("I really need to repaint my kitchen at some point, I keep putting it off");
        assert!(c.starts_with("User needs to repaint their kitchen"), "{c}");
        let (c, _) = due("don't let me forget to book the vet");
        assert_eq!(c, "User asked to be reminded to book the vet");
    }

    #[test]
    fn a_moved_event_replaces_the_old_one() {
        let ops = run("My interview got moved to Thursday");
        assert_eq!(ops[0].action, crate::op::Action::Update(crate::op::Target::Matching("interview".into())));
        assert_eq!(ops[0].draft.content, "User's interview got moved to Thursday");
        // as many say it
        let ops = run("The priest cannot on 11, so the wedding is shifted to 18 July.");
        let moved = ops.iter().find(|o| o.draft.content.contains("shifted")).expect("the move");
        let wedding = crate::op::Target::Matching("wedding".into());
        assert!(
            matches!(&moved.action, crate::op::Action::Update(t) | crate::op::Action::Amend(t) if *t == wedding),
            "{:?}",
            moved.action
        );
        let ops = run("Now wedding is 21 June, Sunday.");
        assert!(ops[0].draft.content.starts_with("The wedding is now 21 June"), "{}", ops[0].draft.content);
    }

    #[test]
    fn conversation_is_not_a_plan() {
        only_episodes("I'll try that");
        only_episodes("I need to think about it");
        only_episodes("I have to say, this is great");
        only_episodes("I'll let you know");
        only_episodes("I'm going to be honest");
        only_episodes("I want to understand how lifetimes work");
        only_episodes("I'm doing great today");
        only_episodes("Should I call my mom this weekend?");
        only_episodes("I'll do it tomorrow");
        only_episodes("Almost as silly as when I got to feed a horse a carrot");
        only_episodes("We gotta push ourselves out of our comfort zones");
        only_episodes("I need to find a better way to focus");
        only_episodes("I need to talk to you");
        assert!(run("I'm getting motivated by something I saw today").iter().all(|o| o.draft.kind != Kind::OpenLoop));
        only_episodes("as if I could feel her presence guide me and remind me of her love");
    }
}
