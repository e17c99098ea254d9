//! A take-back's new day or time written into the statement it corrects.
//!
//! "Keith's having his knee replaced on the 2nd of June", then "Sorry, 9th of June. They rang
//! and moved it": the memory a model should read is "Keith is having his knee replaced on the 9th
//! of June", not the old sentence with the user's correction after it, which leaves the model to
//! work out which day holds. [`restate`] does that rewrite when it is plain: the statement names
//! one day (or one time), the take-back names one other, and says nothing else new; otherwise it
//! returns `None` and the engine keeps the old text with the dated correction beside it. Pure
//! text functions; see [`crate::shape`] for how a take-back finds the memory it corrects.

use std::ops::Range;
use std::sync::OnceLock;

use regex::{Captures, Regex};

use crate::shape::{MONTHS, bare_day_re, time_re};

/// Weekdays in full; a take-back may also shorten them ("its wed"), a memory may not be read so
/// ("sat" is as likely the verb).
const WEEKDAYS: &str = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
const SHORT_WEEKDAYS: &str = "mon|tues?|weds?|thurs?|thu|fri|sat|sun";

/// A day as said: "Saturday 13th June", "the 2nd of June", "May 3rd, Sunday", "the 10th",
/// "Wednesday". A numeric date (12/10) is not read: which number is the day is not plain. A
/// short weekday stands only beside a day ("sat 14th") or, with `short`, in a take-back ("its
/// wed"): alone in a memory "sat" is as likely the verb.
fn phrase_re(short: bool) -> &'static Regex {
    static FULL: OnceLock<Regex> = OnceLock::new();
    static SHORT: OnceLock<Regex> = OnceLock::new();
    let build = |alone: &str| {
        let wd = format!("{WEEKDAYS}|{SHORT_WEEKDAYS}");
        Regex::new(&format!(
            r"(?ix)
                \b(?:
                    (?:(?P<wa>{wd})\s*,?\s+(?:the\s+)?)?
                    (?:
                        (?P<d1>[12]?\d|3[01])(?P<s1>st|nd|rd|th)?\s+(?:of\s+|o'?\s+)?(?P<m1>{MONTHS})
                        | (?P<m2>{MONTHS})\s+(?:the\s+)?(?P<d2>[12]?\d|3[01])(?P<s2>st|nd|rd|th)?
                        | (?P<d3>[12]?\d|3[01])(?P<s3>st|nd|rd|th)
                    )
                    (?:\s*,\s*(?P<wb>{WEEKDAYS}))?
                    | (?P<wo>{alone})
                )\b
            "
        ))
        .expect("restate day regex")
    };
    if short {
        SHORT.get_or_init(|| build(&format!("{WEEKDAYS}|{SHORT_WEEKDAYS}")))
    } else {
        FULL.get_or_init(|| build(WEEKDAYS))
    }
}

/// The days `text` names, in order: an ordinal alone counts only as "the 10th" (Shetland "da
/// 10th") or "on 10th" ("my 1st ever concert" names no day).
fn days_in(text: &str, short: bool) -> Vec<Day> {
    phrase_re(short)
        .captures_iter(text)
        .map(|c| Day::read(&c))
        .filter(|d| {
            d.month.is_some() || d.weekday.is_some() || {
                let before = text[..d.span.start].to_ascii_lowercase();
                before.ends_with("the ") || before.ends_with("on ") || before.ends_with(" da ")
            }
        })
        .collect()
}

/// The day's number in a day as said, and what is either side of it.
fn day_digits_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^(.*?)\b(?:[12]?\d|3[01])(?:st|nd|rd|th)?\b(.*)$").expect("day digits regex"))
}

/// One day as said, and where.
#[derive(Debug, Clone, PartialEq)]
struct Day {
    span: Range<usize>,
    weekday: Option<String>,
    day: Option<u32>,
    /// Whether the day was said as an ordinal ("13th", not "13").
    ordinal: bool,
    month: Option<String>,
}

impl Day {
    fn read(c: &Captures<'_>) -> Self {
        let get = |names: &[&str]| names.iter().find_map(|n| c.name(n)).map(|m| m.as_str().to_string());
        Day {
            span: c.get(0).expect("whole").range(),
            weekday: get(&["wa", "wb", "wo"]),
            day: get(&["d1", "d2", "d3"]).and_then(|d| d.parse().ok()),
            ordinal: get(&["s1", "s2", "s3"]).is_some(),
            month: get(&["m1", "m2"]),
        }
    }

    /// Whether two days said are the same day as far as both say it.
    fn same(&self, other: &Day) -> bool {
        // "Sept" and "September" are one month; by letters, not bytes (case folding may match
        // a letter of another width).
        let head = |s: &str| s.chars().take(3).collect::<String>().to_lowercase();
        let eq = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) => head(a) == head(b),
            _ => true,
        };
        match (self.day, other.day) {
            (Some(a), Some(b)) => a == b && eq(&self.month, &other.month),
            (None, None) => eq(&self.weekday, &other.weekday),
            _ => false,
        }
    }
}

/// Whether the words just before `at` deny what follows ("not 21", "not the 5th", Scots and
/// Shetland "no da 9th"): the old value a take-back names, not the new one.
fn denied(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end().to_ascii_lowercase();
    let mut words = before.rsplit(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty());
    let last = match words.next() {
        Some("the" | "da") => words.next(),
        w => w,
    };
    matches!(last, Some("not" | "no")) || last.is_some_and(|w| w.ends_with("n't"))
}

/// `old` with the one day it names replaced by the one day the take-back `said` gives, its
/// weekday dropped unless the take-back says one (the old weekday belonged to the old day);
/// `None` when that is not plain: `old` names no day, or two of which the take-back denies
/// neither ("not the 12th"), the take-back gives two, or only a part `old` cannot take ("the
/// 10th" for "on Friday"). What the take-back says the old day is instead ("the 12th is the
/// hen do") is left out: it is almost always why the slip happened, not news of the user.
fn restate_day(old: &str, said: &str) -> Option<Option<String>> {
    let olds = days_in(old, false);
    let (denials, mut news): (Vec<Day>, Vec<Day>) =
        days_in(said, true).into_iter().partition(|d| denied(said, d.span.start));
    for c in bare_day_re().captures_iter(said) {
        let d = c.name("d").expect("day");
        if !news.iter().chain(&denials).any(|n| n.span.contains(&d.start()))
            && !denied(said, c.get(0).expect("whole").start())
        {
            news.push(Day {
                span: d.range(),
                weekday: None,
                day: d.as_str().parse().ok(),
                ordinal: false,
                month: None,
            });
        }
    }
    if news.is_empty() {
        return Some(None);
    }
    // Of two days in the memory, the one the take-back denies is the one it moves.
    let was = match olds.as_slice() {
        [was] => was,
        _ => {
            let denied: Vec<&Day> = olds.iter().filter(|o| denials.iter().any(|d| d.same(o))).collect();
            let [was] = denied.as_slice() else { return None };
            *was
        }
    };
    news.retain(|n| !n.same(was));
    // The same new day said twice ("is the 27 of June, … the big party is the 27") is one day,
    // in its fullest form.
    news.sort_by_key(|n| std::cmp::Reverse(n.month.is_some()));
    let mut distinct: Vec<&Day> = Vec::new();
    for n in &news {
        if !distinct.iter().any(|d| d.same(n)) {
            distinct.push(n);
        }
    }
    let [new] = distinct.as_slice() else { return None };
    let replacement = match (new.day, new.month.is_some()) {
        // A whole day (or a weekday for a weekday) replaces the old one as the take-back says it.
        (Some(_), true) => said[new.span.clone()].to_string(),
        (None, _) if was.day.is_none() => said[new.span.clone()].to_string(),
        // A day of the month keeps the old month, said the old way.
        (Some(day), false) if was.day.is_some() => {
            let mut text = old[was.span.clone()].to_string();
            if let Some(wd) = &was.weekday {
                let at = text.find(wd.as_str()).unwrap_or(0);
                text = text[at + wd.len()..].trim_start_matches([',', ' ']).to_string();
                text = text.strip_prefix("the ").unwrap_or(&text).to_string();
            }
            let c = day_digits_re().captures(&text)?;
            let number = if was.ordinal { ordinal(day) } else { day.to_string() };
            let text = format!("{}{number}{}", &c[1], &c[2]);
            match &new.weekday {
                Some(wd) => format!("{wd} {text}"),
                None => text,
            }
        }
        _ => return None,
    };
    // "on the 10th" moved to "May 3rd" reads "on May 3rd".
    let mut before = &old[..was.span.start];
    if replacement.starts_with(|c: char| c.is_alphabetic()) && before.to_ascii_lowercase().ends_with("the ") {
        before = &before[..before.len() - 4];
    }
    Some(Some(format!("{before}{}{}", replacement.trim(), &old[was.span.end..])))
}

/// `old` with its one time of day replaced by the one the take-back gives (see [`restate_day`]).
fn restate_time(old: &str, said: &str) -> Option<Option<String>> {
    let news: Vec<_> = time_re().find_iter(said).filter(|m| !denied(said, m.start())).collect();
    if news.is_empty() {
        return Some(None);
    }
    let olds: Vec<_> = time_re().find_iter(old).collect();
    let [was] = olds.as_slice() else { return None };
    let news: Vec<_> = news.into_iter().filter(|m| !m.as_str().eq_ignore_ascii_case(was.as_str())).collect();
    let [new] = news.as_slice() else { return None };
    Some(Some(format!("{}{}{}", &old[..was.start()], new.as_str(), &old[was.end()..])))
}

/// "1st", "2nd", "3rd", "11th", "22nd".
fn ordinal(day: u32) -> String {
    let suffix = match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}

/// Whether the take-back says something new beyond the day or time it gives: a name or place
/// `old` does not hold ("it's the 10th, and in Ludlow now"), which a rewrite would lose. Words
/// of apology, a slip owned and where the new value was read are no news.
fn says_more(old: &str, said: &str) -> bool {
    static NAME: OnceLock<Regex> = OnceLock::new();
    static MONTH: OnceLock<Regex> = OnceLock::new();
    // A capitalised word inside a sentence: one opening it may be any word.
    let name = NAME.get_or_init(|| Regex::new(r"[^.!?\s]\s+([A-Z][a-z]+)\b").expect("name regex"));
    let month = MONTH.get_or_init(|| Regex::new(&format!("(?i)^(?:{MONTHS})$")).expect("month regex"));
    let old = old.to_lowercase();
    let known = |w: &str| {
        let lower = w.to_lowercase();
        old.split(|c: char| !c.is_alphanumeric()).any(|o| o == lower)
            || phrase_re(true).is_match(w)
            || month.is_match(w)
    };
    static COUNTED: OnceLock<Regex> = OnceLock::new();
    // A day in a calendar the rewrite does not read ("Ginbot 23, so is May 31").
    let counted = COUNTED.get_or_init(|| Regex::new(r"[^.!?\s]\s+([A-Z][a-z]+)\s+\d").expect("counted regex"));
    name.captures_iter(said).any(|c| !known(&c[1]))
        || counted.captures_iter(said).any(|c| !month.is_match(&c[1]) && !phrase_re(true).is_match(&c[1]))
}

/// `old` (a memory) with the day and time in it that a take-back corrects replaced by the new
/// ones, when the rewrite is plain; `None` keeps the old text and the correction beside it.
/// `correction` is the take-back as the extractor wrote it: the user's words, bare or as a dated
/// quote ("On 2026-05-18 User corrected: \"its the 10th\"").
pub fn restate(old: &str, correction: &str) -> Option<String> {
    let said = crate::extract::quoted_words(correction).unwrap_or(correction);
    // The user's own words are kept as said; a rewrite would misquote them.
    if old.contains("said: \"") || old.contains("corrected: \"") || says_more(old, said) {
        return None;
    }
    let after_day = restate_day(old, said)?;
    let base = after_day.clone().unwrap_or_else(|| old.to_string());
    let after_time = restate_time(&base, said)?;
    after_time.or(after_day).filter(|new| new != old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_take_back_rewrites_the_day_it_corrects() {
        for (old, said, new) in [
            (
                "Keith is having his knee replaced on the 2nd of June at the Royal Shrewsbury",
                "Sorry, 9th of June. They rang this morning and moved it.",
                "Keith is having his knee replaced on the 9th of June at the Royal Shrewsbury",
            ),
            (
                // Scots and Shetland "o" for "of"
                "User's dad's getting a heart bypass in Aberdeen, at ARI, 9th o April",
                "ach wait, mam's just phoned, dey've moved dad ta da 16th no da 9th, da surgeon's aff",
                "User's dad's getting a heart bypass in Aberdeen, at ARI, 16th o April",
            ),
            (
                "Daniel and Chloe have set the date, 3rd October at the church in Clun",
                "No sorry its the 10th , I was looking at the wrong page on the calender.",
                "Daniel and Chloe have set the date, 10th October at the church in Clun",
            ),
            (
                "User's daughter's graduation is 21 September",
                "Sorry, not 21. Is 27 September, he show me the letter.",
                "User's daughter's graduation is 27 September",
            ),
            (
                "Dato (User's grandson) is marrying in Toronto, 18 July",
                "No, I write wrong. 18 July is birthday of his bride. Wedding is 11 July, Saturday. Dato send message again.",
                "Dato (User's grandson) is marrying in Toronto, 11 July, Saturday",
            ),
            (
                "Priya's NEET exam is on the 10th",
                "Sorry sorry, I told wrong. NEET is May 3rd, Sunday. 10th is her cousin's exam.",
                "Priya's NEET exam is on May 3rd, Sunday",
            ),
            (
                "The fatiha will be Saturday 13th June in the family house",
                "sorry its the 20th",
                "The fatiha will be 20th June in the family house",
            ),
            ("Sam's party is on Friday", "oops not Friday, Saturday!", "Sam's party is on Saturday"),
            // a short weekday beside its day is part of it
            (
                "User booked in for sat 14th at a studio",
                "its sun 15th not sat",
                "User booked in for sun 15th at a studio",
            ),
            // of two days, the one denied moves
            (
                "They're off the 12th thru the 26th",
                "i'm off the 16th not the 12th, tool pusher switched crews on us.",
                "They're off the 16th thru the 26th",
            ),
            ("The christening is sunday 15 march", "wait its the 22", "The christening is 22 march"),
            ("Band practice is at 7pm on Thursday", "sorry, 8pm not 7pm", "Band practice is at 8pm on Thursday"),
            (
                "Keith is having his knee replaced on the 2nd of June",
                "On 2026-05-10 User corrected: \"9th of June.\"",
                "Keith is having his knee replaced on the 9th of June",
            ),
        ] {
            assert_eq!(restate(old, said).as_deref(), Some(new), "{said}");
        }
    }

    #[test]
    fn what_is_not_plain_keeps_the_correction_beside_the_old_text() {
        for (old, said) in [
            // the user's words are quoted as said
            ("On 2026-03-02 User said: \"the derby is on tues\"", "oops not tues, the derby is sat"),
            // two days in the memory: which one moved is not plain
            ("The trip runs from 3rd May to 10th May", "sorry, the 12th"),
            // two new days
            ("The party is on the 3rd", "its the 4th or the 5th"),
            // a day of the month for a weekday
            ("Sam's party is on Friday", "sorry, the 10th"),
            // something new besides the day
            (
                "The fatiha will be Saturday 13th June",
                "they have shifted it to 20th June because our uncle from Saudi cannot come",
            ),
            // nothing said that corrects a day or a time
            ("The party is on the 3rd", "sorry, I meant Cambridge"),
            // an ordinal that is no day
            ("User's 1st ever concert, they're literally shaking", "its the 14th i can't read"),
            // a day in a calendar the rewrite does not read
            (
                "Selam's wedding is Ginbot 16 in their calendar (May 24)",
                "they change to Ginbot 23, so is May 31, Sunday.",
            ),
        ] {
            assert_eq!(restate(old, said), None, "{old} / {said}");
        }
    }

    #[test]
    fn what_the_old_day_is_instead_is_left_out() {
        for (old, said, new) in [
            (
                "Raquel is going to marry in Valladolid, the 20 of June",
                "Raquel say me is the 27 of June, the 20 is the civil part only in the town hall, the big party is the 27.",
                "Raquel is going to marry in Valladolid, the 27 of June",
            ),
            (
                "Sian is getting married 23rd may in aberaeron",
                "its the 30th, the 23rd is the hen do in cardiff",
                "Sian is getting married 30th may in aberaeron",
            ),
            // a weekday after the day, shortened, is no part of it
            (
                "User signed up for a bootcamp, starts 3 march, tues and thurs nights",
                "its 10 august start not the 3rd",
                "User signed up for a bootcamp, starts 10 august, tues and thurs nights",
            ),
        ] {
            assert_eq!(restate(old, said).as_deref(), Some(new), "{said}");
        }
    }

    proptest::proptest! {
        #[test]
        fn restate_is_total_on_arbitrary_text(old in "\\PC{0,80}", said in "\\PC{0,80}") {
            let _ = restate(&old, &said);
        }

        #[test]
        fn restate_is_total_on_day_shaped_text(
            old in "(on the |the |Saturday |sat )?([0-3]?[0-9])(st|nd|rd|th)?( of)? (May|june|ſept|août)?",
            said in "(not the |its the |sorry )?([0-3]?[0-9])(st|nd|rd|th)?( March| JULY)?(, tues| not the 5th)?",
        ) {
            let _ = restate(&old, &said);
        }
    }

    #[test]
    fn ordinals_read_as_said() {
        assert_eq!(
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "31st"],
            [1, 2, 3, 4, 11, 12, 13, 21, 22, 31].map(ordinal)
        );
    }
}
