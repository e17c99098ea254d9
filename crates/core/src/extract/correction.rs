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
use crate::shape::ValueShape;
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
                            # a switch under way: changing from layers to kienyeji chickens
                            | (?:changing|change|switching|switch|moving|move)\s+(?:over\s+)?from
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
    static OPENING: OnceLock<Regex> = OnceLock::new();
    says_it_was_wrong(lower)
        || OPENING
            .get_or_init(|| {
                // A reply word opening the sentence takes back only there: "Yeah actually - I'm
                // in the tournament again" agrees.
                Regex::new(r"^\s*(?:actually|no[,!]|nope)\b").expect("retraction opening regex")
            })
            .is_match(lower)
}

/// Whether a sentence says in words that something said was wrong: a slip owned anywhere ("I
/// counted wrong"), or a take-back opening it, after a word or two of reply ("Good, but
/// correction: …", "oh wait …", "sorry, I meant …"). What an amendment needs: a bare "no" or
/// "nope" answers a question, and "actually" may only open the sentence.
fn says_it_was_wrong(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    owns_a_slip(lower)
        || RE
            .get_or_init(|| {
                Regex::new(&after_reply_words(&format!("(?:{TAKE_BACK_WORDS})\\b"))).expect("retraction regex")
            })
            .is_match(lower)
}

/// A sentence opening on `body`, after a word or three of reply ("Good, but correction: …",
/// "oh wait …", "ah sorry, …"), as a free-spacing regex pattern.
fn after_reply_words(body: &str) -> String {
    format!(r"(?x)^\s*(?:(?:{REPLY_WORDS})[,!.]?\s+){{0,3}}{body}")
}

/// Words of reply that may open a sentence before a take-back ("Good, but correction: …").
const REPLY_WORDS: &str = "ok|okay|oh|ah|good|hmm|so|but|and|yeah|um|sorry|also|hey|hi|hello|omg|ugh|no|naw|nah|wallahi|lol|lmao|bruh|ngl|chai|omo|oof|yikes";

/// Words that take back what was said, as a regex alternation (free-spacing).
const TAKE_BACK_WORDS: &str = r"
    correction | wait
    | sorry,?\s+i\s+meant | sorry,?\s+i\s+mean | i\s+meant | oops | my\s+bad | to\s+clarify | update:?
    | scratch\s+that | let\s+me\s+correct | i\s+correct | i\s+misspoke | i\s+was\s+wrong | hang\s+on
    | quick\s+update | small\s+correction";

/// Whether a sentence owns a slip in so many words, anywhere in it ("I counted wrong", "sorry,
/// I say wrong before", "I got that wrong", "I mixed up my days", "my mistake"): what it says
/// next, or what the sentence after it says, corrects something said before. A mistake that is
/// news ("I made a mistake at work today") goes on past the word and is no slip.
fn owns_a_slip(lower: &str) -> bool {
    slip().is_match(lower)
}

/// A slip owned in words, as [`owns_a_slip`] reads it; also what [`take_back`] leaves out.
fn slip() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?ix)
                \b(?:
                    i\s+(?:got|had)\s+(?:that|it|this|them|the\s+\w+)\s+(?:(?:wrote|written|down|put|noted)\s+)?wrong\b
                    | i\s+(?:say|said|tell|told|write|wrote|type|typed|give|gave|read|counted|heard|remembered|understood|put)\s+(?:\w+\s+){0,2}?(?:wrong|wrongly|bad|badly|incorrectly)\b
                    # where the wrong value came from: I was looking at the wrong page, I was
                    # seeing other letter
                    | i\s+(?:was\s+(?:looking|reading)\s+at|looked\s+at|read|checked|misread)\s+the\s+wrong\s+[\w-]+
                    | i\s+was\s+(?:seeing|looking\s+(?:at|on|in)|reading)\s+(?:the\s+|an?\s+)?(?:other|another|old|wrong)\s+(?:letter|page|email|e-mail|date|line|one|paper|calendar|calender|card|message|timetable|schedule|list|website|rota|version|diary)
                    # as a learner owns it: I am wrong for the date
                    | i\s*(?:am|was|'m)\s+wrong\s+(?:for|about|with|on|in|at)\s+the\s+(?:date|day|dates|days|time|times|month|week)\b
                    | i\s+mix(?:ed)?\s+(?:up\s+)?(?:the\s+|my\s+)?(?:numbers|days|dates|times|names|weeks|months|them|it|things)(?:\s+up)?\b
                    | mixed\s+up\s+(?:the|my)\s+(?:numbers|days|dates|times|names|weeks|months)\b
                    | i\s+mix(?:ed)?\s+up\b
                    | i\s+(?:misread|misremembered|misunderstood|misheard|mistyped)\b
                    # a learner's I confused with other date, I got confused
                    | i\s+(?:was\s+|got\s+)?confused\s+(?:with|the|it|them|my|two|dates|days)\b
                    | i\s+(?:was|got)\s+confused\s*(?:$|[,.!;:-])
                    | my\s+mistake\b
                    # the slip pointed at: that was wrong
                    | (?:that|this|it)\s+(?:was|is)\s+wrong\s*(?:$|[,.!;:-])
                    | (?:that's|it's|thats|its)\s+wrong\s*(?:$|[,.!;:-])
                    # the source looked at again: I look in the letter, it is Wednesday 10
                    | i\s+(?:look|looked|check|checked|read)\s+(?:again\s+)?(?:in|at|on)\s+(?:the|my)\s+(?:letter|calendar|calender|email|e-mail|ticket|booking|invite|invitation|confirmation|paper|card|message|diary|schedule|rota)\b
                    | i\s+(?:am|'m|was)\s+wrong\s*(?:$|[,.!;:-])
                    | i\s+(?:made|make)\s+(?:a\s+)?(?:small\s+|little\s+)?mistake(?:\s+(?:before|earlier|there|again|above))?\s*(?:$|[,.!;:])
                )
            ",
        )
        .expect("slip regex")
    })
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

/// What a take-back sentence corrects, as [`take_back`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TakeBack {
    /// It owns a slip and says no more ("Sorry, I say wrong before."): the sentence after it is
    /// the correction.
    Bare,
    /// It names the detail that was wrong ("not tues"): the detail's words, which the memory
    /// it belongs to holds, and the user's correcting words, the take-back lead and the slip
    /// left out.
    Detail {
        /// The wrong detail's words.
        detail: String,
        /// The correcting words.
        said: String,
        /// Whether it is news rather than a slip: the value changed since ("so it's 125 now
        /// not 100", "I change to 10K, not half"), and what was said before was true then.
        news: bool,
        /// Whether only a day set against another says so, no word owning a slip or a change
        /// ("Pieter says the party is the 13th, not the 6th"): the memory meant must then share
        /// a word with the sentence besides the days ([`super::DAY_FOR_DAY_RULE`]).
        unowned: bool,
    },
    /// It corrects without naming what was wrong ("i read the email wrong its thurs 6th"): the
    /// new value's words cannot find the old memory. Naming a day or a time, it goes beside the
    /// latest memory that named one shortly before; otherwise the sentence is kept on its own.
    /// The take-back lead is left out either way.
    Unnamed {
        /// The sentence.
        said: String,
    },
}

/// Reads a sentence that takes back something said before ("wait actually its not tues its
/// wed", "Good, but correction: is 12 April, not 21", "the starter is 5 weeks not 3, I counted
/// wrong"). `None` when it takes nothing back. `after_slip`: the sentence before only owned a
/// slip ("Sorry, I check website again. Not Tuesday."), so this one takes back what it names.
pub(super) fn take_back(text: &str, lower: &str, after_slip: bool) -> Option<TakeBack> {
    let wrong = after_slip || says_it_was_wrong(lower) || lower.trim_start().starts_with("actually");
    // An apology or a change, with the old value named ("Sorry all it's the 29th not the
    // 22nd", "so it's 125 now not 100"), takes that value back too; without one it is
    // news of its own ("sorry I'm late", "I'm in Leeds now").
    let sorry = apologetic(lower);
    let news = !wrong && !sorry && changed_now(lower);
    // "no it's the 27th", "Sorry no, today the doctor say 29 September": a reply that takes
    // back, with a day by its number.
    let answered = answers_no(lower) && numbered_value(without_leads(text));
    if !wrong && !sorry && !news && !answered {
        // "Doc bumped my blood pressure pill up to 20 milligram": a value changed to a number,
        // the thing it belongs to named; the memory that holds the thing gets the news.
        if let Some(detail) = changed_to(lower) {
            return Some(TakeBack::Detail { detail, said: text.trim().to_string(), news: true, unowned: false });
        }
        // "My brother says the party is the 13th, not the 6th": the old day is taken back.
        // Kept as what the user said, not as a slip of theirs: whose slip it was, the words
        // do not say.
        return day_for_day(lower).map(|detail| TakeBack::Detail {
            detail,
            said: text.trim().to_string(),
            news: true,
            unowned: true,
        });
    }
    static NOT: OnceLock<Regex> = OnceLock::new();
    let not = NOT.get_or_init(|| {
        Regex::new(
            r"(?i)\bnot\s+(?:the\s+|on\s+|at\s+|in\s+|a\s+|an\s+)?(?P<x>(?:\d[\d,.]*\d\w*|[\w'-]+)(?:\s+[\w'-]+)?)",
        )
        .expect("corrected detail regex")
    });
    let slipped = owns_a_slip(lower);
    // Said in so many words: a slip owned, "correction", "I meant", "scratch that".
    let explicit = slipped
        || ["correction", "i meant", "misspoke", "let me correct", "i was wrong", "scratch that"]
            .iter()
            .any(|w| lower.contains(w));
    let said = without_leads(text);
    let whole = said.to_string();
    // The slip owned ("I counted wrong") is no part of what is now true.
    static DANGLING: OnceLock<Regex> = OnceLock::new();
    let dangling = DANGLING.get_or_init(|| Regex::new(r"\s*[,;:-]+\s*([.!?]|$)").expect("dangling regex"));
    let said = slip().replace_all(said, "");
    let said = dangling.replace_all(&said, "$1");
    let said = said.trim_matches([',', ';', ':', '-', ' ']).split_whitespace().collect::<Vec<_>>().join(" ");
    let said = said.trim_start_matches([',', ';', ':', '-', ' ']).to_string();
    if (slipped || sorry) && checked_again(&said.to_lowercase()) {
        // "Sorry I am wrong, I look on the letter now.": the sentence after it corrects.
        return Some(TakeBack::Bare);
    }
    // "Wait. Kadri says I mixed it.": whose word the slip is does not name what slipped.
    static REPORTER: OnceLock<Regex> = OnceLock::new();
    let reporter = REPORTER.get_or_init(|| {
        Regex::new(r"(?i)\b(?:[\w'-]+\s+){1,2}(?:says|say|said|reckons|thinks|tells\s+me|told\s+me)[\s.!?]*$")
            .expect("slip reporter regex")
    });
    let reported_only = slipped && key_words(&reporter.replace(&said, "")).is_empty();
    if key_words(&said).is_empty() || said.split_whitespace().count() < 2 || reported_only {
        // "Sorry, I say wrong before.": what follows corrects; a bare "nope" or "ok update"
        // corrects nothing by itself.
        return slipped.then_some(TakeBack::Bare);
    }
    // The detail is the word or two after "not", up to where the new value begins ("not tues
    // its wed"), once the words that name nothing are dropped.
    let detail = not
        .captures(&said)
        .and_then(|c| c.name("x"))
        .map(|x| x.as_str().to_lowercase())
        .filter(|x| !x.split_whitespace().next().is_some_and(|w| NOT_VALUES.contains(&w)))
        .map(|x| {
            // A number is a detail too ("5 weeks not 3", "1,540 not 1,450", "the 29th not the
            // 22nd"): the memory holds it as said.
            let mut words: Vec<String> =
                key_words(&x).into_iter().filter(|w| !NOT_VALUES.contains(&w.as_str())).collect();
            if let Some(n) = x.split_whitespace().next().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric())) {
                if n.starts_with(|c: char| c.is_ascii_digit()) {
                    words.retain(|w| !n.contains(w.as_str()));
                    words.insert(0, n.to_string());
                }
            }
            words
        })
        .filter(|w| !w.is_empty())
        // "wait, dey've moved dad ta da 16th no da 9th": the old day, said with "no".
        .or_else(|| day_for_day(lower).map(|d| vec![d]));
    // Without a "not" naming the detail, only a correction said in words says the sentence
    // corrects ("Actually, I went to the market" is news), or a value named after a slip owned
    // in the sentence before ("Sorry, I wrote it bad."), an apology ("No sorry its the 10th")
    // or a take-back word ("wait no hr emailed, its the 21st"): the value that holds now.
    // "Actually it's Friday already" takes nothing back.
    let names_value = (after_slip && ValueShape::of(&said).is_some())
        || (sorry && leads_with_value(&said))
        || (says_it_was_wrong(lower) && (says_it_is(&said) || leads_with_value(&said)))
        || answered;
    match detail {
        Some(words) => Some(TakeBack::Detail { detail: words.join(" "), said, news, unowned: false }),
        // "Actually the tutor's just emailed, the assessment's 19 May now": the thing whose day
        // changed is named, so the memory holding it gets the news.
        None => match changed_to(lower) {
            Some(detail) => {
                Some(TakeBack::Detail { detail, said, news: !explicit && !says_it_was_wrong(lower), unowned: false })
            }
            None => (explicit || names_value).then_some(TakeBack::Unnamed { said: whole }),
        },
    }
}

/// `text` without the reply and take-back words that open it ("Sorry no, …", "wait actually").
fn without_leads(text: &str) -> &str {
    let mut said = text.trim();
    while let Some(m) = retraction_lead().find(said) {
        said = said[m.end()..].trim_start_matches([',', ':', ';', '-', '!', '.', ' ']);
    }
    said
}

/// Whether a sentence opens on a reply that takes back ("no it's the 27th", "actually its the
/// 8th of March", "Sorry no, today the doctor say 29 September"), with no comma needed.
fn answers_no(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\s*(?:(?:sorry|oops|ah|oh|wait|hang\s+on|hold\s+on|shoot|oh\s+shoot|oh\s+dear|oh\s+god|oh\s+lord|dang|darn|doh|ugh|my\s+bad)[,!.]?\s+)?(?:no|nope|nah|naw|actually)\b")
            .expect("reply no regex")
    })
    .is_match(lower)
}

/// Whether what is left of a take-back gives a day by its number, first of all ("it's the
/// 27th …") or as someone reported it ("today the doctor say 29 September"): what a bare "no"
/// or "actually" needs to correct. "Actually it's Friday already" gives none.
fn numbered_value(said: &str) -> bool {
    let lower = said.to_lowercase();
    let reported = [" say ", " says ", " said ", " told ", " wrote ", " changed it to ", " moved it to "]
        .iter()
        .any(|w| format!(" {lower} ").contains(w));
    said.chars().any(|c| c.is_ascii_digit())
        && ValueShape::of(said) == Some(ValueShape::Date)
        && (leads_with_value(said) || reported)
}

/// Whether a sentence says first of all which day or time it is ("its the 10th", "it's
/// Weds", "the 22nd"): after an apology that is the value taken back; "Sorry, it's been a
/// long Monday" is not.
fn leads_with_value(said: &str) -> bool {
    static LEAD: OnceLock<Regex> = OnceLock::new();
    let lead = LEAD.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(?:(?:it'?s|its|it\s+is|it\s+was|it'll\s+be|that'?s|thats)\s+)?(?:(?:on|at|actually|really)\s+)*",
        )
        .expect("value lead regex")
    });
    let rest = &said[lead.find(said).map_or(0, |m| m.end())..];
    let first: Vec<&str> = rest.split_whitespace().take(3).collect();
    ValueShape::of(&first.join(" ")).is_some()
}

/// Whether a sentence says somewhere which day or time "it" is ("hr emailed, its the 21st").
fn says_it_is(said: &str) -> bool {
    static IT: OnceLock<Regex> = OnceLock::new();
    let it = IT.get_or_init(|| Regex::new(r"(?i)\b(?:it'?s|its|it\s+is|it'll\s+be)\s").expect("it-is regex"));
    it.find_iter(said).any(|m| leads_with_value(&said[m.start()..]))
}

/// Whether a take-back's words (`said`) name only the wrong `detail` ("Not Tuesday."): the
/// value that holds then comes in the sentence after ("It is Wednesday evening, 7 o'clock").
/// A day or number taken back with only its thing named beside it ("review is not 20 April.")
/// waits the same way: nothing else in it is a value.
pub(super) fn names_only_the_detail(said: &str, detail: &str) -> bool {
    let wrong = key_words(detail);
    let rest: Vec<String> = key_words(said).into_iter().filter(|w| !wrong.contains(w) && w != "not").collect();
    rest.is_empty()
        || (detail.contains(|c: char| c.is_ascii_digit()) && rest.len() <= 2 && !names_a_value(&rest.join(" ")))
}

/// Whether what is left of a take-back only says where the user looked again ("I look on the
/// letter now", "I check website again", "just checked blackboard"): the value it found is in
/// the sentence after.
fn checked_again(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)^(?:i\s+)?(?:just\s+|have\s+|'ve\s+)?(?:check(?:ed)?|double-?check(?:ed)?|look(?:ed)?|re-?read)
                (?:\s+(?:on|at|in|again))?(?:\s+(?:the|my|their|your))?\s+[\w-]+(?:\s+[\w-]+)?
                (?:\s+(?:now|again|just\s+now|properly|today))?\s*[.!]?$",
        )
        .expect("checked-again regex")
    })
    .is_match(lower.trim())
}

/// Whether a sentence opens by taking back what was just said ("Ah sorry, …", "No wait, …",
/// "naw hang on, …", "scratch that"): right after a statement of the same message, it
/// corrects that statement, whatever it names.
pub(super) fn retracts(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&after_reply_words(&format!(
            r"(?:sorry\s*[,.!-]|sorry\s+(?:its\s+|it's\s+|the\s+)?\d|(?:sorry\s+(?:no|wait|i\s+mean)|wait|hang\s+on|hold\s+on|scratch\s+that|no\s+no|i\s+mean|{TAKE_BACK_WORDS})\b)"
        )))
        .expect("retracts regex")
    })
    .is_match(lower)
}

/// Whether a sentence names a value a slip could be about: a number, a day or month, or the
/// old value after "not" ("Hang on, let me grab them" takes nothing back).
pub(super) fn names_a_value(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    lower.contains(|c: char| c.is_ascii_digit())
        || RE
            .get_or_init(|| {
                Regex::new(
                    r"\b(?:not|mon|monday|tue|tues|tuesday|wed|weds|wednesday|thu|thur|thurs|thursday|fri|friday|sat|saturday|sun|sunday|january|february|march|april|may|june|july|august|september|october|november|december|tomorrow|tonight|yesterday|morning|afternoon|evening|noon|midnight)\b",
                )
                .expect("value regex")
            })
            .is_match(lower)
}

/// Whether a sentence opens with an apology ("Sorry all, …", "ah sorry, …"): with an old
/// value named, it takes that value back.
fn apologetic(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    // "Sorry about the delay", "sorry I'm late": sorry for something else.
    RE.get_or_init(|| {
        Regex::new(&after_reply_words(
            r"(?:sorry\s+(?:all|everyone|guys|folks)\b|(?:sorry|excuse\s+me|pardon)\s*(?:[,.!-]|$)|sorry\s+(?:it'?s|its|it\s+is|that'?s|thats)\b|sorry\s+(?:the\s+)?\d|sorry,?\s+not\s+(?:the\s+|on\s+)?\d)",
        ))
            .expect("apology regex")
    })
    .is_match(lower)
}

/// Whether a sentence says a value is different now and names the old one right there ("125
/// now not 100", "cargo ship not cruise anymore", "I change to 10K, not half"). "Not in any
/// online groups right now" names no value that changed.
fn changed_now(lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                \b(?:now|instead|these\s+days|nowadays)\s*[,;-]?\s*not\s
                | \bnot\s+(?:the\s+|a\s+|an\s+)?[\w'-]+(?:\s+[\w'-]+)?\s+(?:anymore|any\s+more|no\s+more|now)\b
                | \b(?:change[sd]?|changing|switch(?:ed|es|ing)?|moved?|moving|upped|raised|lowered|increased|decreased|reduced)
                  \s+(?:it\s+|me\s+|us\s+)?(?:up\s+|down\s+)?to\s+[^,.;!?]*?[,;]?\s*not\s",
        )
        .expect("changed-now regex")
    })
    .is_match(lower)
}

/// The old day of a day set against another ("the party is the 13th, not the 6th", "Saturday
/// 18 July not the 11th", "the funeral now be 21st march not 14th", "moved dad ta da 16th no da
/// 9th"): one day said in place of another is a take-back whoever it came from, with or without
/// a word owning the slip. `None` unless both sides are days.
pub(super) fn day_for_day(lower: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        let months = crate::shape::MONTHS;
        let day = r"(?:[12]?\d|3[01])";
        let ordinal = format!(r"{day}(?:st|nd|rd|th)");
        Regex::new(&format!(
            r"(?x)
                \b(?:{ordinal}|{day}\s+(?:of\s+)?(?:{months})\b|(?:{months})\s+{day}\b|the\s+{day}\b)
                (?:\s+(?:of\s+)?(?:{months})\b)?(?:\s+now)?
                \s*,?\s*
                (?:
                    not\s+(?:the\s+|on\s+|da\s+)?(?P<old>{ordinal}|{day}(?:\s+(?:of\s+)?(?:{months}))?|(?:{months})\s+{day})
                    # a Scots or Shetland 'no' for 'not', before an ordinal only: 'da 16th no da 9th'
                    | no\s+(?:the\s+|da\s+)?(?P<scots>{ordinal})
                )\b
            "
        ))
        .expect("day-for-day regex")
    });
    let c = re.captures(lower)?;
    let old = c.name("old").or(c.name("scots"))?.as_str();
    Some(old.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The key words of a thing whose number changed, said without the old number ("my blood
/// pressure pill up to 20 milligram", "upped my dose to 75mg", "moved the appointment to
/// 3pm", "my rent went up to 950"): `None` unless a change verb, the thing (one to three key
/// words after "my", "the" or "our") and a number after "to" are all there.
pub(super) fn changed_to(lower: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        // A number as typed or as said ("20", "two and a half").
        let number = r"(?:\d|(?:a\s+)?(?:half|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred)\b)";
        // As learners say it too, in the present: they move the test to March 27.
        let changed = r"(?:bumped|upped|raised|increased|lowered|reduced|decreased|cut|dropped|changed|moved|put|pushed|postponed|preponed|rescheduled|shifted|brought|move|moves|shift|shifts|postpone|postpones|reschedule|reschedules)";
        // Or a day the thing was moved to ("pushed the appointment back to Friday").
        let day = r"(?:the\s+)?(?:\d|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|next\s+(?:week|month))";
        let month = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*";
        Regex::new(&format!(
            r"(?x)
                \b{changed}
                  \s+(?:up\s+|down\s+)?(?:my|the|our|her|his|their)\s+(?P<x>[\w'-]+(?:\s+[\w'-]+){{0,3}}?)\s+(?:up\s+|down\s+|back\s+|forward\s+)?to\s+(?:{number}|{day})
                | \b(?:my|the|our)\s+(?P<y>[\w'-]+(?:\s+[\w'-]+){{0,3}}?)\s+(?:went|goes|go|has\s+gone|got|was|is|been)\s+(?:up|down|raised|increased|lowered|reduced|cut|bumped\s+up)\s+to\s+{number}
                # The thing named by its unit: they have dropped me to two and a half milligrams.
                | \b{changed}\s+(?:me|us|him|her|them)\s+(?:up\s+|down\s+)?to\s+{number}[^,.;!?]{{0,24}}?
                  [\s\d](?P<z>milligrams?|mg|micrograms?|mcg|ml|units|tablets|pills|puffs)\b
                # Said of the thing itself: the op's shifted to 17 September; surgery is moved,
                # now is April 28.
                | (?:^|[,;:]\s*|\b(?:my|the|our|her|his|their)\s+)(?P<w>[\w'-]+(?:\s+[\w'-]+){{0,2}}?)
                  (?:'s|\u{{2019}}s|\s+is|\s+was|\s+has\s+been|\s+have\s+been|\s+got|\s+gets|\s+been)\s+(?:now\s+|just\s+|been\s+|also\s+)*
                  {changed}(?:\s+(?:back|forward|up|down))?(?:\s+to|\s*,?\s*now\s+(?:is\s+|it's\s+|its\s+)?(?:on\s+)?)\s*{day}
                # Or its new day said with a now: the assessment's 19 May now.
                | \b(?:my|the|our)\s+(?P<v>[\w'-]+(?:\s+[\w'-]+){{0,2}}?)(?:'s|\u{{2019}}s|\s+is)\s+(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?
                  (?:\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)?\s+now\b
                # Or with the now before it: my workshop is now Saturday 20 June instead.
                | \b(?:my|the|our)\s+(?P<u>[\w'-]+(?:\s+[\w'-]+){{0,2}}?)(?:'s|\u{{2019}}s|\s+is)\s+now\s+(?:on\s+)?(?:the\s+)?
                  (?:
                    (?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+(?:the\s+)?\d{{1,2}}
                    | \d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{month}
                    | \d{{1,2}}(?:st|nd|rd|th)
                    | {month}\s+\d{{1,2}}
                  )\b"
        ))
        .expect("changed-to regex")
    });
    let c = re.captures(lower)?;
    let thing = ["x", "y", "z", "w", "v", "u"].iter().find_map(|n| c.name(n))?.as_str();
    // The words as said (no synonyms): the memory must hold every one.
    let words: Vec<&str> = thing
        .split_whitespace()
        .filter(|w| w.len() > 1 && !crate::text::is_stopword(w) && !super::lex::GENERIC.contains(w))
        // "we've been moved to the 3rd floor": a pronoun is no thing.
        .filter(|w| !w.split_once('\'').is_some_and(|(head, _)| crate::text::is_stopword(head)))
        .collect();
    (!words.is_empty() && words.len() <= 3).then(|| words.join(" "))
}

/// One take-back or reply word at the start of a sentence, as [`is_retraction`] reads them.
fn retraction_lead() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?ix)^\s*(?:sorry\s+(?:all|everyone|guys|folks) | {TAKE_BACK_WORDS} | actually | no | nope | mb | {REPLY_WORDS} | lol | ffs | everyone | everybody | guys | folks | hang\s+on | hold\s+on | shoot | dang | darn | doh | ugh)\b"
        ))
        .expect("retraction lead regex")
    })
}

/// What a switch under way leaves ("I am changing from layers to kienyeji chickens", "we're
/// moving over from Slack to Teams"): its words, so the memory that held it is replaced by what
/// the message says now. `None` without a "from … to" switch.
pub(super) fn switched_from(text: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?ix)\b(?:changing|change|changed|switching|switch|switched|moving|move|moved|going|gone|went)
                \s+(?:over\s+|back\s+)?from\s+(?P<x>[^,.;!?]+?)\s+to\b",
        )
        .expect("switched-from regex")
    });
    let words = key_words(re.captures(text)?.name("x")?.as_str());
    (!words.is_empty() && words.len() <= 3).then(|| words.join(" "))
}

/// What a sentence calls off ("the Hyderabad transfer is cancelled", "our trip got called off",
/// "we are not going back to Wrocław"): the words naming the plan, so the memory that held it
/// is replaced by what the message says now. `None` when nothing is called off.
pub(super) fn cancelled(text: &str, lowercase: bool) -> Option<String> {
    static OFF: OnceLock<Regex> = OnceLock::new();
    static NOT_GOING: OnceLock<Regex> = OnceLock::new();
    let off = OFF.get_or_init(|| {
        Regex::new(
            r"(?ix)
                # e.g. The Hyderabad transfer is cancelled.
                \b(?P<x>(?:(?:the|my|our|his|her|their)\s+)?[\w'-]+(?:\s+[\w'-]+){0,3}?)
                \s+(?:is|was|has\s+been|had\s+been|got|gets|'s)\s+(?:(?:now|officially|actually|also|just|been)\s+)*
                (?:cancell?ed|called\s+off|scrapped|off\s+the\s+table|not\s+happening)\b
            ",
        )
        .expect("called-off regex")
    });
    let not_going = NOT_GOING.get_or_init(|| {
        Regex::new(
            r"(?ix)
                # e.g. We are not going back to Wrocław.
                \b(?:we|i)(?:'re|\s+are|'m|\s+am|\s+were|\s+was)\s+not\s+(?:going|moving|relocating|heading|flying)
                \s+(?:back\s+)?to\s+(?P<y>[\w'-]+)
            ",
        )
        .expect("not-going regex")
    });
    if let Some(c) = off.captures(text) {
        let words = key_words(&c["x"]);
        // "It was cancelled", "that got called off": the plan stood in an earlier turn.
        if !words.is_empty() && words.len() <= 4 {
            return Some(words.join(" "));
        }
    }
    let y = not_going.captures(text)?.name("y")?.as_str();
    // A place is named ("not going to Leeds"); "not going to lie" is no plan.
    (lowercase || y.starts_with(char::is_uppercase)).then(|| key_words(y).join(" ")).filter(|w| !w.is_empty())
}

/// Whether what follows a "left …" goes on to a new job in the same breath (", now with …",
/// ", from May I am …", ", starting at …", "and joined …").
fn moved_on(after: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^\s*,?\s*(?:and\s+)?(?:(?:i'm|im|i\s+am)\s+)?(?:now\s+(?:with|at|working|full|part|in|on|a|an|the|doing)|from\s+\w+\s+(?:i\s+am|i'm|im|i\s+will|i'll)|starting|startin|joined|started\s+(?:at|with|a|as))\b",
        )
        .expect("moved-on regex")
    })
    .is_match(after)
}

/// What a "no longer" statement stops: its identifying words, or the slots it names.
fn stop(x: &str, verb: &str) -> Vec<Found> {
    let x = strip_times(head(x));
    let words = key_words(&x);
    let described = third_person(&x);
    // "User is no longer vegan", "User no longer works at Google".
    let said = match verb.strip_prefix("is") {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => format!("User is no longer{rest} {described}"),
        _ => format!("User no longer {verb} {described}"),
    };
    let draft = |kind: Kind| Draft::new(kind, said.clone(), 0.85, 0.5);
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
                # or, in a learner's order, I am not anymore at the support.
                \b<IM>\s+(?P<neg>not|no\s+longer)\s+(?P<any0>(?:anymore|any\s+more|any\s+longer)\s+)?(?:a\s+|an\s+)?(?:
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
                if neg == "not" && c.name("any").is_none() && c.name("any0").is_none() {
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
                "stepped down",
                "resigned",
                "packed in",
                "jacked in",
            ],
            r"(?x)
                # e.g. I finally quit smoking last spring.
                (?:
                    \b(?:i(?:'ve|\s+have)?|ive)\s+(?:(?:just|finally|recently|officially|actually|completely|also|already)\s+)*
                    # 'packed in evri, startin with dpd on monday': a job left, the 'I' left out
                    | ^(?P<elided>(?:so\s+|and\s+|well\s+|finally\s+)?)
                )
                (?P<v>
                    stopped | quit | gave\s+up | given\s+up | left | dropped\s+out\s+of
                    # British: packed in the job, jacked in the bar
                    | packed\s+in | jacked\s+in
                    | unsubscribed\s+from | moved\s+out\s+of | moved\s+away\s+from | got\s+rid\s+of
                    # e.g. ive stepped down as coordinator: a role given up
                    | stepped\s+down\s+(?:as|from) | resigned\s+(?:as|from)
                )
                \s+(?P<x><CLAUSE>)
            ",
            |c, s| {
                let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
                let x = cap(c, "x").unwrap_or_default();
                let xl = x.trim_start().to_lowercase();
                // With the "I" left out only leaving a job reads as the user's ("Stopped at the
                // shop", "Gave up on it" say nothing that ends).
                let elided = c.name("elided").is_some();
                if elided
                    && !matches!(v.as_str(), "quit" | "left" | "packed in" | "jacked in")
                    && !v.starts_with("stepped down")
                    && !v.starts_with("resigned")
                {
                    return Vec::new();
                }
                if matches!(v.as_str(), "left" | "packed in" | "jacked in") || (elided && v == "quit") {
                    // "I left my keys at home" is no change of life; "I left Google" / "my job" is,
                    // and so is what was left for a new job said in the same breath ("i've left
                    // uber, now with addison lee", "I left the fintech, from May I am head of …").
                    // The match's offsets are the text's: lower case can change a letter's
                    // length ("İ"), so the text after it is lowered on its own.
                    let after = s.text[c.get(0).map_or(0, |m| m.end())..].to_lowercase();
                    let moved_on = moved_on(&after);
                    let org = (x.trim_start().starts_with(char::is_uppercase) && !s.lowercase) || moved_on;
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
                    "left" | "quit" | "packed in" | "jacked in" => "works at".to_string(),
                    v if v.starts_with("stepped down") || v.starts_with("resigned") => "is".to_string(),
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
    use crate::shape::ValueShape;

    fn actions(s: &str) -> Vec<Action> {
        run(s).into_iter().map(|o| o.action).collect()
    }

    #[test]
    fn a_value_changed_to_a_number_names_the_thing_it_belongs_to() {
        let got = |t: &str| super::changed_to(&t.to_lowercase());
        assert_eq!(
            got("Doc bumped my blood pressure pill up to 20 milligram last week").as_deref(),
            Some("blood pressure pill")
        );
        assert_eq!(got("the GP upped my sertraline to 100mg").as_deref(), Some("sertraline"));
        assert_eq!(got("my rent went up to 950 in May").as_deref(), Some("rent"));
        assert_eq!(got("they moved the appointment to 3pm").as_deref(), Some("appointment"));
        // Said as words, and the thing named by its unit alone.
        assert_eq!(got("the specialist put me up to one and a half tablets").as_deref(), Some("tablets"));
        assert_eq!(got("the consultant upped me to 40mg").as_deref(), Some("mg"));
        assert_eq!(got("my rent went up to five hundred a week").as_deref(), Some("rent"));
        assert_eq!(got("they dropped me to the station"), None);
        // Moved to another day.
        assert_eq!(got("the clinic pushed my scan back to friday").as_deref(), Some("scan"));
        assert_eq!(got("they postponed the hearing to 3 june").as_deref(), Some("hearing"));
        // No number, no change verb, or nothing named: nothing changed that a memory holds.
        assert_eq!(got("I moved to Leeds in 2019"), None);
        // Said of the thing itself, or its new day with a "now".
        assert_eq!(got("hospital rang, op's shifted to 17 september, surgeon's poorly").as_deref(), Some("op"));
        assert_eq!(got("hospital called, surgery is moved, now is april 28").as_deref(), Some("surgery"));
        assert_eq!(got("the tutor's just emailed, the assessment's 19 may now").as_deref(), Some("assessment"));
        assert_eq!(got("we've been moved to the 3rd floor"), None);
        assert_eq!(
            got("the raku place emailed, their kiln's being repaired so my workshop is now saturday 20 june instead")
                .as_deref(),
            Some("workshop")
        );
        assert_eq!(got("big problem, my osce got preponed to may 13th, centre sent mail").as_deref(), Some("osce"));
        assert_eq!(got("my son is now 12"), None);
        assert_eq!(got("they move the test to march 27 because of the snow storm").as_deref(), Some("test"));
        // A number that is no day: "my commute is 25 mins now" is news, no moved day.
        assert_eq!(got("my commute to work is 25 mins now instead of an hour"), None);
        assert_eq!(got("we raised money for the hospice"), None);
        assert_eq!(got("I drove my kids to school"), None);
        let amend = Action::Amend(Target::Matching("blood pressure pill".into()));
        assert_eq!(actions("Doc bumped my blood pressure pill up to 20 milligram last week"), vec![amend]);
    }

    #[test]
    fn news_that_names_the_old_value_amends_it_and_is_said_not_corrected() {
        let amend = |d: &str| Action::Amend(Target::Matching(d.into()));
        for (said, action, words) in [
            ("so the rent is 1,150 now not 1,050", amend("1,050"), "User said: \"The rent is 1,150 now not 1,050\""),
            (
                "we're on the blue plan not the green one anymore",
                amend("green one"),
                "User said: \"We're on the blue plan not the green one anymore\"",
            ),
            (
                "the coach switched me to the u12s, not the u11s",
                amend("u11s"),
                "User said: \"The coach switched me to the u12s, not the u11s\"",
            ),
            // An apology with the old value named takes it back, whoever it is said to.
            ("Sorry everyone, it's the 3rd not the 5th", amend("5th"), "User corrected: \"it's the 3rd not the 5th\""),
            ("sorry all its the 3rd not the 5th", amend("5th"), "User corrected: \"its the 3rd not the 5th\""),
        ] {
            let ops = run(said);
            assert_eq!(ops.len(), 1, "{said}: {ops:?}");
            assert_eq!(ops[0].action, action, "{said}");
            assert_eq!(ops[0].draft.content, format!("On 2026-03-02 {words}"), "{said}");
        }
        // No old value named, or no change: nothing amended.
        for said in [
            "I'm not sure now",
            "sorry I didn't reply sooner, not a great week",
            "not now, maybe later",
            "Actually it's Friday already, this week flew by",
            "Sorry, it's been a long Monday",
        ] {
            assert!(run(said).iter().all(|o| !matches!(o.action, Action::Amend(_))), "{said}: {:?}", run(said));
        }
    }

    #[test]
    fn an_apology_before_the_old_number_and_the_slips_source_are_read() {
        assert!(super::apologetic("sorry not 12, is 14 may."));
        assert!(!super::apologetic("sorry not sorry"));
        for slip in [
            "i was looking on old timetable.",
            "i had it wrote wrong on the calendar",
            "hold yew hard that's wrong, she say its the 22nd",
            "i am wrong for the date, my father has changed the flights",
        ] {
            assert!(super::owns_a_slip(slip), "{slip}");
        }
        assert!(!super::owns_a_slip("i was wrong about him, he is kind"));
        assert!(super::says_it_was_wrong("wallahi my bad its sept 15 not 8"));
    }

    #[test]
    fn a_slip_taken_back_in_the_same_message_is_kept_with_its_correction() {
        for said in [
            "Dentist is on the 9th. Oh wait, no, I checked the card, it's the 11th.",
            "My flight lands at 6. Ah sorry, I looked again, is 8 in the evening.",
            "The recital is on the 20th. Hang on, not the 20th, the 21st!",
        ] {
            let ops = run(said);
            assert_eq!(ops.len(), 1, "{said}: {ops:?}");
            assert_eq!(ops[0].action, Action::Add, "{said}");
            assert_eq!(ops[0].draft.content, format!("On 2026-03-02 User said: \"{said}\""), "{said}");
        }
        // A typed statement in the take-back says what holds.
        let ops = run("I live in Leeds. No wait, I live in York now.");
        assert!(ops.last().is_some_and(|o| o.draft.content == "User lives in York"), "{ops:?}");
        let ops = run("The party is on the 4th. No wait, I live in York now, it's on the 5th.");
        assert!(ops.iter().all(|o| !o.draft.content.contains("4th")), "{ops:?}");
        // An apology for something else, or a pause, takes nothing back.
        let ops = run("I got the job at the bakery. Sorry I didn't reply sooner.");
        assert!(ops.iter().any(|o| o.draft.content == "User got the job at the bakery"), "{ops:?}");
        for said in
            ["I drew some plans for the shed. Hang on, let me find them.", "Sorry 'bout not getting back sooner."]
        {
            assert!(run(said).iter().all(|o| !o.draft.content.contains(said)), "{said}: {:?}", run(said));
            assert!(run(said).iter().all(|o| !o.draft.content.contains("corrected")), "{said}: {:?}", run(said));
        }
    }

    #[test]
    fn a_move_to_another_team_lets_go_of_what_was_left_and_fills_the_team() {
        for said in [
            "from May I'm not anymore on reception, I moved to the accounts team",
            "I'm not on reception any more, they transferred me... no, I transferred to the accounts team.",
        ] {
            let ops = run(said);
            assert!(
                ops.iter().any(|o| o.action == Action::Forget(Target::Matching("reception".into()))),
                "{said}: {ops:#?}"
            );
            assert!(
                ops.iter()
                    .any(|o| o.draft.key.as_deref() == Some("team")
                        && o.draft.content == "User works in the accounts team"),
                "{said}: {ops:#?}"
            );
        }
        // A new home with the old one named still replaces it (no forget besides).
        let ops = run("I'm not in Derby anymore, I live in Nottingham now.");
        assert!(ops.iter().all(|o| !matches!(o.action, Action::Forget(_))), "{ops:#?}");
    }

    #[test]
    fn a_corrected_detail_amends_what_it_belongs_to() {
        // The test clock is Monday 2 March 2026.
        let amend = |d: &str| Action::Amend(Target::Matching(d.into()));
        for (said, action, words) in [
            (
                "wait actually its not tues its wed mb our captain moved it",
                amend("tues"),
                "its not tues its wed mb our captain moved it",
            ),
            ("Oops, not Thursday, Friday!", amend("thursday"), "not Thursday, Friday!"),
            ("Sorry, I meant the 14th not the 12th", amend("12th"), "the 14th not the 12th"),
            ("Good, but correction: is 12 April, not 21.", amend("21"), "is 12 April, not 21."),
            ("Actually the starter is 5 weeks not 3, I counted wrong.", amend("3"), "the starter is 5 weeks not 3."),
            // Naming no wrong detail, the correction goes beside what named a date a moment
            // before (the engine keeps it on its own when nothing did).
            (
                "omg no i read the email wrong its thurs 6th.",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "i read the email wrong its thurs 6th.",
            ),
            ("sorry i meant thursday the 9th", Action::Amend(Target::Latest(ValueShape::Date)), "thursday the 9th"),
            ("Correction: I went to the lakes with Joss", Action::Add, "I went to the lakes with Joss"),
            (
                "Sorry I told wrong, it is 9 June. I was seeing the other letter.",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "I told wrong, it is 9 June.",
            ),
            (
                "wait no the council rang back, its the 9th now",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "the council rang back, its the 9th now",
            ),
            ("sorry i mean the 12th", Action::Amend(Target::Latest(ValueShape::Date)), "the 12th"),
            (
                "oh shoot no its the 27th he lands at fort campbell",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "its the 27th he lands at fort campbell",
            ),
            (
                "wait no i moved it to the 19th, cant get the 12th off work",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "i moved it to the 19th, can't get the 12th off work",
            ),
            (
                "No, I look on the ticket, it is Friday 4.",
                Action::Amend(Target::Latest(ValueShape::Date)),
                "I look on the ticket, it is Friday 4.",
            ),
        ] {
            let ops = run(said);
            assert_eq!(ops.len(), 1, "{said}: {ops:?}");
            assert_eq!(ops[0].action, action, "{said}");
            assert_eq!(ops[0].draft.content, format!("On 2026-03-02 User corrected: \"{words}\""), "{said}");
        }
        // A typed statement in the take-back corrects as its own rule says.
        assert_eq!(
            actions("oh wait I got that wrong, the party is on the 7th not the 6th"),
            vec![Action::Update(Target::Matching("6th".into()))]
        );
        // A slip owned on its own is no memory: the sentence after it says what holds.
        let ops = run("Sorry, I say wrong before. Linh is 7 already, her birthday was last week.");
        assert!(ops.iter().all(|o| !o.draft.content.contains("wrong")), "{ops:?}");
        // So is a slip with where the user looked again: the value found comes after. An apology
        // with something else read is no take-back ("Sorry, I read your message late").
        assert!(
            super::take_back("Sorry, I read your message late.", "sorry, i read your message late.", false).is_none()
        );
        for said in [
            "Sorry I was wrong, I checked the invitation now. The party is on the 9th of May, not 2nd.",
            "Sorry, I look at the timetable again. The class is Thursday morning, not Monday.",
            "Sorry, I look at the timetable again. Not Monday. It is Thursday morning, 10 o'clock.",
        ] {
            let ops = run(said);
            let own = |c: &str| ["wrong", "look", "check"].iter().any(|w| c.contains(w));
            assert!(ops.iter().all(|o| !own(&o.draft.content)), "{ops:?}");
            assert!(ops.iter().any(|o| matches!(o.action, Action::Amend(_) | Action::Update(_))), "{said}: {ops:?}");
            let holds = if said.contains("Thursday") { "Thursday morning" } else { "9th of May" };
            assert!(ops.iter().any(|o| o.draft.content.contains(holds)), "{said}: {ops:?}");
        }
        // What leans on a take-back does not quote it again; a speaker's slip is no memory.
        let ops = run("Actually the starter is 5 weeks not 3, I counted wrong. started it the week before my birthday");
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert_eq!(ops[0].draft.surface, Some(crate::kind::Surface::Adapt), "the user's words, not a fact to enforce");
        for said in [
            "Marcus: sorry all I mixed up my days, I do Thursdays not Wednesdays",
            "Marcus: sorry, mixed up my days. I meant Thursdays both ways not Wednesdays, Wednesday is my office day",
        ] {
            let ops = run(said);
            assert!(ops.iter().all(|o| !o.draft.content.contains("mixed up")), "{ops:?}");
            assert!(ops.iter().all(|o| !o.draft.content.contains("User")), "{ops:?}");
        }
        let ops = run("Marcus: sorry, mixed up my days. I meant Thursdays both ways not Wednesdays");
        assert_eq!(ops[0].draft.content, "On 2026-03-02 Marcus corrected: \"Thursdays both ways not Wednesdays\"");
        // A second take-back in the message says more of the first.
        let ops =
            run("Good, but correction: is 12 April, not 21. I mixed numbers, with me this happens when I am tired.");
        assert_eq!(ops.len(), 1, "{ops:?}");
        // A reply word alone takes nothing back.
        for said in [
            "nope lol. rent is 1450 a month which is kinda insane",
            "ok update. spoke to the nurse n finished the meds",
        ] {
            assert!(
                run(said)
                    .iter()
                    .all(|o| !matches!(o.action, Action::Amend(_)) && !o.draft.content.contains("corrected")),
                "{said}"
            );
        }
        // Nothing to find the corrected memory by ("she" is whoever the turn before named).
        for said in ["I made mistake.", "Sorry all, I mixed up my days!"] {
            assert!(run(said).is_empty(), "{said}: {:?}", run(said));
        }
        // "Now" and "not" alone switch nothing the message tells.
        assert!(
            run("Not in any online groups right now, but I do have my gaming group I play with regularly")
                .iter()
                .all(|o| o.action == Action::Add)
        );
        // A speaker's take-back is found only among what that speaker said.
        let ops = run("John: oops, not the blue one, the green one");
        assert!(matches!(&ops[0].action, Action::Amend(Target::Matching(t)) if t.ends_with(" John")), "{ops:?}");
        // An answer is no take-back, nor is agreement.
        assert!(
            run("Nope, not a new game. We put together a tournament for our favorite game")
                .iter()
                .all(|o| !matches!(o.action, Action::Amend(_)))
        );
        assert!(!run("Yeah actually - I'm currently participating in the video game tournament again").is_empty());
        // Advice to mix things up is no slip.
        for said in [
            "Trying new stuff is a great way to push yourself and mix things up.",
            "Mix it up with different sauces and dips too",
        ] {
            assert!(run(said).iter().all(|o| !o.draft.content.contains("corrected")), "{said}");
        }
        // Not a take-back, or news of a mistake: nothing amended.
        for said in [
            "its not tues its wed",
            "Actually that's not bad at all",
            "I made a mistake at work today and my boss was cross",
        ] {
            assert!(run(said).iter().all(|o| !matches!(o.action, Action::Amend(_))), "{said}");
        }
    }

    #[test]
    fn a_message_that_calls_a_plan_off_replaces_it() {
        let ops =
            run("Hello, change of plans. Hyderabad transfer is cancelled. Now company is sending me onsite to Dallas.");
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert_eq!(ops[0].action, Action::Update(Target::Matching("hyderabad transfer".into())));
        assert!(ops[0].draft.content.contains("Dallas"), "{ops:?}");
        let ops = run("I have news, we are not going back to Wrocław. We decided to stay in Stockport.");
        assert_eq!(
            ops.iter().map(|o| &o.action).collect::<Vec<_>>(),
            vec![&Action::Update(Target::Matching("wrocław".into()))]
        );
        // Only calling off: the user's words, replacing the plan.
        let ops = run("so the trip to rome got cancelled");
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert_eq!(ops[0].action, Action::Update(Target::Matching("trip rome".into())));
        assert!(ops[0].draft.content.starts_with("On 2026-03-02 User said:"), "{ops:?}");
        // Nothing named, or nothing called off.
        for said in ["It was cancelled.", "I'm not going to lie, it was rough.", "The match was not cancelled."] {
            assert!(run(said).iter().all(|o| !matches!(o.action, Action::Update(Target::Matching(_)))), "{said}");
        }
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
        // A switch under way names what it leaves.
        let ops = run("Big news, I am changing from layers to kienyeji chicken, the improved local ones.");
        assert_eq!(
            ops.iter().map(|o| &o.action).collect::<Vec<_>>(),
            vec![&Action::Update(Target::Matching("layers".into()))]
        );
    }

    #[test]
    fn no_longer_without_replacement_forgets() {
        assert_eq!(actions("I don't live in Berlin anymore"), vec![Action::Forget(Target::Matching("berlin".into()))]);
        assert_eq!(actions("I'm not vegan anymore"), vec![Action::Forget(Target::Matching("vegan".into()))]);
        assert_eq!(actions("I no longer use Vim"), vec![Action::Forget(Target::Matching("vim".into()))]);
        // Quitting is also news of its own, kept beside the letting go.
        let ops = run("I quit my job last week");
        assert_eq!(
            ops.iter().map(|o| o.action.clone()).collect::<Vec<_>>(),
            vec![
                Action::Forget(Target::Key("job".into())),
                Action::Forget(Target::Key("employer".into())),
                Action::Add
            ]
        );
        assert!(ops[2].draft.content.starts_with("User quit their job"), "{}", ops[2].draft.content);
        assert_eq!(actions("I left Google"), vec![Action::Forget(Target::Matching("google".into())), Action::Add]);
        // A role given up, and what was left for a new job said in the same breath.
        let ops = run("yeah ive stepped down as coordinator, tomasz is doing it from may");
        assert!(
            ops.iter().any(|o| o.action == Action::Forget(Target::Matching("coordinator".into()))
                && o.draft.content == "User is no longer coordinator"),
            "{ops:#?}"
        );
        let ops = run("sawa sawa. also i've left uber, now with addison lee full time");
        assert!(ops.iter().any(|o| o.action == Action::Forget(Target::Matching("uber".into()))), "{ops:#?}");
        let ops = run("Beseder. Ah and I left the fintech, from May I am head of product in a health startup.");
        assert!(ops.iter().any(|o| o.action == Action::Forget(Target::Matching("fintech".into()))), "{ops:#?}");
        // A letter whose lower case is longer before the match reads the same, without panic.
        let ops = run("İŞ bitti. I left the fintech, now with a startup");
        assert!(ops.iter().any(|o| o.action == Action::Forget(Target::Matching("fintech".into()))), "{ops:#?}");
        // British "packed in", the "I" left out as texts leave it.
        let ops = run("packed in evri, startin with dpd on monday, employed this time");
        assert!(ops.iter().any(|o| o.action == Action::Forget(Target::Matching("evri".into()))), "{ops:#?}");
        assert!(run("Stopped at the shop on the way home").iter().all(|o| !matches!(o.action, Action::Forget(_))));
        assert!(run("left the party early, was knackered").iter().all(|o| !matches!(o.action, Action::Forget(_))));
        // Left somewhere with nothing after it that says a new job: no change of life.
        assert!(run("i left the party early, was knackered").iter().all(|o| !matches!(o.action, Action::Forget(_))));
        let said = run("I quit smoking in 2019").into_iter().map(|o| o.draft.content).collect::<Vec<_>>();
        assert!(said.contains(&"User quit smoking in 2019".to_string()), "{said:?}");
        assert_eq!(actions("I'm not with Acme any more"), vec![Action::Forget(Target::Matching("acme".into()))]);
        none("I'm not sure anymore");
        none("I don't know anymore");
        only_episodes("I left my keys at home");
        none("I don't live in Paris");
    }
}
