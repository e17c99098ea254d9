//! Due dates from the way people say them ("on Friday", "this weekend", "by March 15", "in two
//! weeks"), resolved against the time the message was sent.
//!
//! Everything is UTC: the message time is the only clock the extractor knows. A phrase that names
//! a day resolves to the end of that day (23:59:59), so a loop "due Friday" is not overdue on
//! Friday morning; an explicit clock time ("at 3pm") sets the time of day instead. Conventions,
//! chosen once and tested below:
//!
//! - a bare weekday ("Friday", "on Friday") is its next occurrence strictly after today;
//!   "this Friday" may be today; "next Friday" is the Friday of next week when this week's
//!   Friday is still ahead, otherwise the next one;
//! - "this weekend" ends on the coming Sunday (today when said on a Sunday); "next weekend" a week
//!   later;
//! - "next week" is Monday of next week; "end of the week"/"this week" is this week's Friday
//!   (Sunday once Friday has passed); "end of next week" is next week's Friday;
//! - "March 15" without a year is the next March 15 (today included); a February 29 that does not
//!   exist this year is the next one that does;
//! - "the 15th" is the next 15th of a month that has one; "in June" is the end of June, "by June"
//!   its first day, next year once the month has passed;
//! - "end of the month", "next month" (its first day), "end of the year", "next year" (January 1).

use std::sync::OnceLock;

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use regex::{Captures, Regex};

/// A time phrase located in a sentence, with the instant it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct TimePhrase {
    /// Byte offset where the phrase starts (its preposition included: "by March 15").
    pub start: usize,
    /// Byte offset one past its end.
    pub end: usize,
    /// The resolved instant.
    pub at: DateTime<Utc>,
    /// The phrase names a period rather than a day ("last week", "a few months ago"): `at` is a
    /// guess inside it, and a reader should keep the phrase with the day it was said.
    pub vague: bool,
}

/// Weekdays as written in full or nearly (a place is never one: "moved to Wednesdays").
pub(super) const WEEKDAYS: &str = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues|thurs|weds";
/// Texting's short weekdays ("sat", "wed"), dates only where a weekday is meant: after "next",
/// "this", "on", "by", before "morning" or "night", or ending the sentence ("call mum sat"),
/// never alone mid-sentence ("I sat down", "the sun").
const SHORT_WEEKDAYS: &str = "mon|tue|wed|thu|fri|sat|sun";
const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|\
                      jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec";
const NUMBERS: &str = r"a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,3}|a\s+couple(?:\s+of)?|a\s+few|few|several";

fn date_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let p = format!(
            r"(?ix)\b(?:(?P<prep>on|by|before|until|till|til|for|due|in|during|over|at|around|sometime|no\s+later\s+than)\s+)?(?:
              (?P<dat>(?:the\s+)?day\s+after\s+tomorrow)
            | (?P<tom>tomorrow|tmrw|tmr|tomorow|tommorow|tommorrow)(?:\s+(?:morning|afternoon|evening|night))?
            | (?P<today>tonight|today|this\s+(?:evening|afternoon|morning)|later\s+today|end\s+of\s+(?:the\s+)?day|eod|close\s+of\s+business)
            | (?P<nwe>next\s+weekend)
            | (?P<we>(?:this\s+coming|this|the|this\s+next)\s+weekend)
            | (?P<eonw>(?:the\s+)?end\s+of\s+next\s+week)
            | (?P<eow>(?:the\s+)?end\s+of\s+(?:the|this)\s+week|this\s+week)
            | (?P<lnw>(?:later|late)\s+next\s+week)
            | (?P<nw>(?:early\s+)?next\s+week)
            | (?P<nwd>next\s+(?P<wd1>{WEEKDAYS}|{SHORT_WEEKDAYS}))
            | (?P<twd>(?:this\s+(?:coming\s+)?|coming\s+)(?P<wd2>{WEEKDAYS}|{SHORT_WEEKDAYS}))
            | (?P<wd>(?P<wd3>{WEEKDAYS}))(?:\s+(?:morning|afternoon|evening|night))?
            | (?P<swd>(?:on|by|before|until|till|til)\s+(?P<wd4>{SHORT_WEEKDAYS})|(?P<wd5>{SHORT_WEEKDAYS})\s+(?:morning|afternoon|evening|night|am|pm)|(?P<wd6>{SHORT_WEEKDAYS})[.!?]*$)
            | (?P<rel>(?:in|within)\s+(?:the\s+next\s+)?(?P<n>{NUMBERS})\s+(?P<unit>minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?))
            | (?P<from>(?P<n2>{NUMBERS})\s+(?P<unit2>days?|weeks?|months?)\s+from\s+(?:now|today))
            | (?P<md>(?P<mon1>{MONTHS})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y1>\d{{4}}))?)
            | (?P<dm>(?:the\s+)?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{MONTHS})\b(?:,?\s+(?P<y2>\d{{4}}))?)
            | (?P<iso>(?P<y3>\d{{4}})-(?P<m3>\d{{2}})-(?P<d3>\d{{2}}))
            | (?P<eonm>(?:the\s+)?end\s+of\s+next\s+month)
            | (?P<eom>(?:the\s+)?end\s+of\s+(?:the|this)\s+month|this\s+month|(?:the\s+)?month\s+ends|month(?:'s)?\s+end|(?:the\s+)?end\s+of\s+month)
            | (?P<nm>(?:early\s+)?next\s+month)
            | (?P<eoy>(?:the\s+)?end\s+of\s+(?:the|this)\s+year|this\s+year)
            | (?P<ny>next\s+year)
            | (?P<dom>the\s+(?P<d4>\d{{1,2}})(?:st|nd|rd|th))
            | (?P<mo>(?P<mon4>january|february|march|april|may|june|july|august|september|october|november|december))
            )\b"
        );
        Regex::new(&p).expect("date regex")
    })
}

fn clock_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?ix)
              \b(?:at|by|around|before)\s+(?P<h>\d{1,2})(?::(?P<mi>\d{2}))?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)?(?:\b|$)
            | \b(?P<h2>\d{1,2})(?::(?P<mi2>\d{2}))?\s*(?P<ap2>am|pm)\b
            | \b(?:at|by|around|before)\s+(?P<named>noon|midday|midnight)\b",
        )
        .expect("clock regex")
    })
}

/// Resolves a whole time phrase ("next Friday", "by March 15 at 3pm") against `at`.
///
/// The phrase must be nothing but a time expression; use [`find`] to locate one in a sentence.
pub fn resolve(phrase: &str, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let p = phrase.trim().trim_end_matches(['.', '!', '?', ',']).trim();
    if p.is_empty() {
        return None;
    }
    let found = find(p, at)?;
    let rest = format!("{} {}", &p[..found.start], &p[found.end..]);
    let leftover = clock_re().replace_all(&rest, "");
    (found.start == 0 || clock_re().is_match(&p[..found.start]))
        .then_some(())
        .filter(|_| leftover.trim().is_empty())
        .map(|_| found.at)
}

/// Finds the first time phrase in `text` and resolves it against `at`.
///
/// The span covers the date phrase (or the clock time when there is no date); a clock time
/// elsewhere in the text sets the time of day of the date.
pub fn find(text: &str, at: DateTime<Utc>) -> Option<TimePhrase> {
    let today = at.date_naive();
    let clock = clock_re().captures(text).and_then(|c| clock_of(&c).map(|t| (c.get(0).expect("whole"), t)));
    let found: Vec<Captures<'_>> = date_re().captures_iter(text).collect();
    for (i, c) in found.iter().enumerate() {
        // A weekday before the date it names ("Saturday 8 August", "Friday, the 22nd of May") is
        // that date, not the coming Saturday.
        let dated = found.get(i + 1).filter(|next| {
            c.name("wd3").is_some()
                && (next.name("md").is_some() || next.name("dm").is_some() || next.name("dom").is_some())
                && text[c.get(0).expect("whole").end()..next.get(0).expect("whole").start()]
                    .chars()
                    .all(|ch| ch.is_whitespace() || ch == ',')
        });
        let start = c.get(0).expect("whole").start();
        let day_of =
            |c: &Captures<'_>| date_of(c, c.name("prep").map(|m| m.as_str().to_ascii_lowercase()).as_deref(), today);
        // After a weekday "the 15th" is a day, as after "on".
        let Some((c, day)) =
            dated.and_then(|next| Some((next, date_of(next, Some("on"), today)?))).or_else(|| Some((c, day_of(c)?)))
        else {
            continue;
        };
        let whole = c.get(0).expect("whole match");
        let (instant, end) = match clock {
            Some((m, t)) => (Utc.from_utc_datetime(&day.and_time(t)), whole.end().max(adjacent_end(text, whole, m))),
            None => (end_of(day), whole.end()),
        };
        // Only "rel" with minutes/hours carries its own time of day.
        let instant = exact_offset(c, at).unwrap_or(instant);
        return Some(TimePhrase { start, end, at: instant, vague: false });
    }
    let (m, t) = clock?;
    let mut day = today;
    if Utc.from_utc_datetime(&day.and_time(t)) <= at {
        day = day.succ_opt()?;
    }
    Some(TimePhrase { start: m.start(), end: m.end(), at: Utc.from_utc_datetime(&day.and_time(t)), vague: false })
}

fn past_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let p = format!(
            r"(?ix)\b(?:
              (?P<dby>(?:the\s+)?day\s+before\s+yesterday)
            | (?P<yday>yesterday|last\s+night|yday)
            | (?P<today>this\s+(?:morning|afternoon|evening)|earlier\s+today|today|tonight|just\s+now)
            | (?P<lwe>last\s+weekend|over\s+the\s+weekend|this\s+past\s+weekend)
            | (?P<lwd>(?:last|this\s+past)\s+(?P<wd>{WEEKDAYS})(?:\s+(?:morning|afternoon|evening|night))?)
            | (?P<lw>last\s+week|the\s+other\s+week|a\s+week\s+ago)
            | (?P<lm>last\s+month|a\s+month\s+ago)
            | (?P<ly>last\s+year|a\s+year\s+ago)
            | (?P<ago>(?P<n>{NUMBERS})\s+(?P<unit>days?|weeks?|months?|years?)\s+ago)
            )\b"
        );
        Regex::new(&p).expect("past date regex")
    })
}

/// Whether `text` says something happens again and again ("every Tuesday", "each morning",
/// "twice a week", "on weekdays", "daily"): a routine, which no single day closes.
pub fn recurring(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let p = format!(
            r"(?ix)
            \b(?:every|each)\s+(?:other\s+|single\s+|\d+\s+|few\s+|couple\s+of\s+)?
              (?:day|days|morning|mornings|afternoon|evening|evenings|night|nights|week|weeks|weekend|weekends
                 |month|months|year|years|shift|shifts|weekday|weekdays|{WEEKDAYS}|{SHORT_WEEKDAYS})\b
            | \b(?:once|twice|\d+\s+times|three\s+times|four\s+times)\s+(?:a|an|per|every)\s+(?:day|week|month|year|night|fortnight)\b
            # Learners' and workers' counts of a week: four night in one week, 3 days a week.
            | \b(?:\d|one|two|three|four|five|six|seven)\s+(?:days?|nights?|shifts?|mornings?|evenings?|times?)\s+
              (?:a|an|per|each|every|in\s+(?:a|one|the|each)|in)\s+(?:week|weeks|month|fortnight)\b
            | \btwo\s+times?\s+(?:in|a|per)\s+(?:the\s+)?day\b
            | \b(?:daily|nightly|weekly|fortnightly|monthly|yearly|annually)\b
            | \bon\s+(?:weekdays|weekends|(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b
            "
        );
        Regex::new(&p).expect("recurrence regex")
    })
    .is_match(text)
}

/// Finds the first phrase dating something that already happened ("yesterday", "last
/// Saturday", "two weeks ago", "over the weekend") and resolves it against `at`, the time the
/// message was sent. Conventions: a weekday is its latest occurrence before today; "last
/// weekend" is the Saturday of the latest weekend before today; a bare weekday is not read (it may
/// be a habit: "every Sunday"); weeks, months and years count
/// back from today, and the phrase is marked [`TimePhrase::vague`]. The instant keeps the
/// message's time of day.
pub fn past(text: &str, at: DateTime<Utc>) -> Option<TimePhrase> {
    let today = at.date_naive();
    let c = past_re().captures(text)?;
    let whole = c.get(0).expect("whole match");
    let has = |name: &str| c.name(name).is_some();
    let back_days = |d: i64| plus(today, -d);
    // Weeks, months and years back name a period; days and weekdays name a day.
    let vague = has("lw")
        || has("lm")
        || has("ly")
        || c.name("unit").is_some_and(|u| !u.as_str().to_ascii_lowercase().starts_with("day"));
    let day = if has("dby") {
        back_days(2)?
    } else if has("yday") {
        back_days(1)?
    } else if has("today") {
        today
    } else if has("lwe") {
        // Days back to the latest Saturday strictly before today's weekend.
        let since_sat = (i64::from(today.weekday().num_days_from_monday()) - 5).rem_euclid(7);
        back_days(if since_sat <= 1 { since_sat + 7 } else { since_sat })?
    } else if has("lwd") {
        let wd = weekday(c.name("wd")?.as_str())?;
        let back =
            (i64::from(today.weekday().num_days_from_monday()) - i64::from(wd.num_days_from_monday())).rem_euclid(7);
        back_days(if back == 0 { 7 } else { back })?
    } else if has("lw") {
        back_days(7)?
    } else if has("lm") {
        today.checked_sub_months(Months::new(1))?
    } else if has("ly") {
        today.checked_sub_months(Months::new(12))?
    } else {
        let n = number(c.name("n")?.as_str())?;
        let unit = c.name("unit")?.as_str().to_ascii_lowercase();
        match unit.trim_end_matches('s') {
            "day" => back_days(n)?,
            "week" => back_days(7 * n)?,
            "month" => today.checked_sub_months(Months::new(u32::try_from(n).ok()?))?,
            _ => today.checked_sub_months(Months::new(u32::try_from(12 * n).ok()?))?,
        }
    };
    Some(TimePhrase {
        start: whole.start(),
        end: whole.end(),
        at: Utc.from_utc_datetime(&day.and_time(at.time())),
        vague,
    })
}

/// Extends a date span over a clock time right after it ("Friday at 3pm").
fn adjacent_end(text: &str, date: regex::Match<'_>, clock: regex::Match<'_>) -> usize {
    if clock.start() >= date.end() && text[date.end()..clock.start()].trim().is_empty() { clock.end() } else { 0 }
}

fn end_of(day: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&day.and_hms_opt(23, 59, 59).expect("valid time"))
}

fn clock_of(c: &Captures<'_>) -> Option<NaiveTime> {
    if let Some(named) = c.name("named") {
        return match named.as_str().to_ascii_lowercase().as_str() {
            "midnight" => NaiveTime::from_hms_opt(23, 59, 59),
            _ => NaiveTime::from_hms_opt(12, 0, 0),
        };
    }
    let (h, mi, ap) = match c.name("h") {
        Some(h) => (h, c.name("mi"), c.name("ap")),
        None => (c.name("h2")?, c.name("mi2"), c.name("ap2")),
    };
    let mut hour: u32 = h.as_str().parse().ok()?;
    let minute: u32 = mi.map_or(Some(0), |m| m.as_str().parse().ok())?;
    match ap.map(|a| a.as_str().to_ascii_lowercase().replace('.', "")) {
        Some(a) if a == "pm" && hour < 12 => hour += 12,
        Some(a) if a == "am" && hour == 12 => hour = 0,
        Some(_) => {}
        // "at 3" in conversation means the afternoon; "at 9" the morning.
        None if mi.is_none() && (1..=7).contains(&hour) => hour += 12,
        None => {}
    }
    NaiveTime::from_hms_opt(hour, minute, 0)
}

fn weekday(s: &str) -> Option<Weekday> {
    let s = s.to_ascii_lowercase();
    Some(match s.get(..3)? {
        "mon" => Weekday::Mon,
        "tue" => Weekday::Tue,
        "wed" => Weekday::Wed,
        "thu" => Weekday::Thu,
        "fri" => Weekday::Fri,
        "sat" => Weekday::Sat,
        "sun" => Weekday::Sun,
        _ => return None,
    })
}

fn month(s: &str) -> Option<u32> {
    let s = s.to_ascii_lowercase();
    let i = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        .iter()
        .position(|m| s.starts_with(m))?;
    Some(i as u32 + 1)
}

fn number(s: &str) -> Option<i64> {
    let s = s.to_ascii_lowercase();
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match s.as_str() {
        "a" | "an" | "one" => 1,
        "two" | "a couple" | "a couple of" => 2,
        "three" | "a few" | "few" | "several" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        n => n.parse().ok()?,
    })
}

/// Days from `today` to the next `wd`, 0 allowed.
fn ahead(today: NaiveDate, wd: Weekday) -> i64 {
    (i64::from(wd.num_days_from_monday()) - i64::from(today.weekday().num_days_from_monday())).rem_euclid(7)
}

fn plus(day: NaiveDate, days: i64) -> Option<NaiveDate> {
    day.checked_add_signed(Duration::days(days))
}

fn last_of_month(year: i32, month: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(year, month, 1)?.checked_add_months(Months::new(1))?.pred_opt()
}

/// The next valid `month`/`day` on or after `today` (skipping years where it does not exist).
fn next_date(today: NaiveDate, month: u32, day: u32) -> Option<NaiveDate> {
    (today.year()..today.year() + 9).filter_map(|y| NaiveDate::from_ymd_opt(y, month, day)).find(|d| *d >= today)
}

fn date_of(c: &Captures<'_>, prep: Option<&str>, today: NaiveDate) -> Option<NaiveDate> {
    let has = |name: &str| c.name(name).is_some();
    let monday_next = plus(today, 7 - i64::from(today.weekday().num_days_from_monday()))?;
    if has("dat") {
        return plus(today, 2);
    }
    if has("tom") {
        return plus(today, 1);
    }
    if has("today") {
        return Some(today);
    }
    if has("we") || has("nwe") {
        let sunday = plus(today, ahead(today, Weekday::Sun))?;
        return if has("nwe") { plus(sunday, 7) } else { Some(sunday) };
    }
    if has("eow") {
        let friday = ahead(today, Weekday::Fri);
        let to_sunday = ahead(today, Weekday::Sun);
        return plus(today, if friday <= to_sunday { friday } else { to_sunday });
    }
    if has("eonw") || has("lnw") {
        return plus(monday_next, 4);
    }
    if has("nw") {
        return Some(monday_next);
    }
    if let Some(wd) = c.name("wd1") {
        let mut d = ahead(today, weekday(wd.as_str())?);
        if d == 0 {
            d = 7;
        }
        // Still ahead within this Monday-to-Sunday week: "next" means the week after.
        if i64::from(today.weekday().num_days_from_monday()) + d <= 6 {
            d += 7;
        }
        return plus(today, d);
    }
    if let Some(wd) = c.name("wd2") {
        return plus(today, ahead(today, weekday(wd.as_str())?));
    }
    if let Some(wd) = c.name("wd3").or(c.name("wd4")).or(c.name("wd5")).or(c.name("wd6")) {
        let d = ahead(today, weekday(wd.as_str())?);
        return plus(today, if d == 0 { 7 } else { d });
    }
    if has("rel") || has("from") {
        let n = number(c.name("n").or(c.name("n2"))?.as_str())?;
        let unit = c.name("unit").or(c.name("unit2"))?.as_str().to_ascii_lowercase();
        return match unit.trim_end_matches('s') {
            "day" => plus(today, n),
            "week" => plus(today, 7 * n),
            "month" => today.checked_add_months(Months::new(u32::try_from(n).ok()?)),
            "year" => today.checked_add_months(Months::new(12 * u32::try_from(n).ok()?)),
            // Minutes and hours: the exact instant is computed by `exact_offset`.
            _ => Some(today),
        };
    }
    if has("md") || has("dm") {
        let (m, d, y) = if has("md") { ("mon1", "d1", "y1") } else { ("mon2", "d2", "y2") };
        let mo = month(c.name(m)?.as_str())?;
        let day: u32 = c.name(d)?.as_str().parse().ok()?;
        return match c.name(y) {
            Some(y) => NaiveDate::from_ymd_opt(y.as_str().parse().ok()?, mo, day),
            None => next_date(today, mo, day),
        };
    }
    if has("iso") {
        let n = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
        return NaiveDate::from_ymd_opt(i32::try_from(n("y3")?).ok()?, n("m3")?, n("d3")?);
    }
    if has("eonm") {
        let next = today.with_day(1)?.checked_add_months(Months::new(1))?;
        return last_of_month(next.year(), next.month());
    }
    if has("eom") {
        return last_of_month(today.year(), today.month());
    }
    if has("nm") {
        return today.with_day(1)?.checked_add_months(Months::new(1));
    }
    if has("eoy") {
        return NaiveDate::from_ymd_opt(today.year(), 12, 31);
    }
    if has("ny") {
        return NaiveDate::from_ymd_opt(today.year() + 1, 1, 1);
    }
    if let Some(d) = c.name("d4") {
        // "the 15th" alone is too often an ordinal ("the 2nd time"): only after a preposition.
        if !matches!(prep, Some("on" | "by" | "before" | "until" | "till" | "til" | "due" | "for")) {
            return None;
        }
        let day: u32 = d.as_str().parse().ok()?;
        let first = today.with_day(1)?;
        return (0..13)
            .filter_map(|i| first.checked_add_months(Months::new(i)))
            .filter_map(|m| m.with_day(day))
            .find(|d| *d >= today);
    }
    if let Some(m) = c.name("mon4") {
        // A month alone needs a preposition ("in May"; "may" is also a verb).
        let mo = month(m.as_str())?;
        let start = matches!(prep, Some("by" | "before" | "until" | "till" | "til"));
        if !start && !matches!(prep, Some("in" | "during" | "for" | "around" | "sometime")) {
            return None;
        }
        let year = if mo < today.month() || (start && mo == today.month()) { today.year() + 1 } else { today.year() };
        return if start { NaiveDate::from_ymd_opt(year, mo, 1) } else { last_of_month(year, mo) };
    }
    None
}

/// "in 20 minutes", "in two hours": an exact instant rather than a day.
fn exact_offset(c: &Captures<'_>, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let unit = c.name("unit")?.as_str().to_ascii_lowercase();
    let n = number(c.name("n")?.as_str())?;
    if unit.starts_with("min") {
        return at.checked_add_signed(Duration::minutes(n));
    }
    if unit.starts_with('h') {
        return at.checked_add_signed(Duration::hours(n));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routines_recur_and_single_days_do_not() {
        for t in [
            "take the bins out every tuesday",
            "be at the depot by 6 every morning",
            "take my tablets twice a day",
            "ring my mum on Sundays",
            "go to physio weekly",
            "water the plants every other day",
            "each morning before work",
            "night duty 7pm to 7am, four night in one week",
            "I work 3 days a week",
            "metformin 500 two time in day",
        ] {
            assert!(recurring(t), "{t}");
        }
        for t in
            ["take the bins out on tuesday", "everyday stuff", "the weekend", "call the bank this week", "every time"]
        {
            assert!(!recurring(t), "{t}");
        }
    }

    #[test]
    fn the_month_ending_in_other_words_is_its_last_day() {
        let at: DateTime<Utc> = "2026-11-10T09:00:00Z".parse().unwrap();
        for t in ["before the month ends", "by month end", "by end of month"] {
            assert_eq!(find(t, at).map(|p| p.at.date_naive().to_string()).as_deref(), Some("2026-11-30"), "{t}");
        }
    }

    #[test]
    fn a_weekday_before_a_date_is_that_date() {
        // Monday 2 March 2026.
        let at: DateTime<Utc> = "2026-03-02T09:00:00Z".parse().unwrap();
        for (t, day) in [
            ("The party is Saturday 8 August at the Welfare from 1pm", "2026-08-08"),
            ("the gala is Friday, the 22nd of May", "2026-05-22"),
            ("we fly Sunday the 15th", "2026-03-15"),
            ("the bins go out on Saturday", "2026-03-07"),
        ] {
            let found = find(t, at).expect(t);
            assert_eq!(found.at.date_naive().to_string(), day, "{t}");
        }
        let found = find("The party is Saturday 8 August", at).unwrap();
        assert_eq!(found.start, "The party is ".len(), "the phrase starts at its weekday");
    }

    #[test]
    fn past_phrases_resolve_backwards_from_the_message() {
        // Wednesday 3 June 2026, 14:00.
        let at: DateTime<Utc> = "2026-06-03T14:00:00Z".parse().unwrap();
        let day = |t: &str| past(t, at).map(|p| p.at.date_naive().to_string());
        assert_eq!(day("I went to a concert last night").as_deref(), Some("2026-06-02"));
        assert_eq!(day("Yesterday I ran 10k").as_deref(), Some("2026-06-02"));
        assert_eq!(day("the day before yesterday").as_deref(), Some("2026-06-01"));
        assert_eq!(day("ran a race last Saturday").as_deref(), Some("2026-05-30"));
        assert_eq!(day("last Monday we moved").as_deref(), Some("2026-06-01"));
        // A bare weekday may be a habit ("every Sunday morning"), not a date.
        assert_eq!(day("I volunteer every Sunday morning"), None);
        assert_eq!(day("we went hiking last weekend").as_deref(), Some("2026-05-30"));
        assert_eq!(day("two weeks ago I quit").as_deref(), Some("2026-05-20"));
        assert_eq!(day("a few days ago").as_deref(), Some("2026-05-31"));
        assert_eq!(day("last month").as_deref(), Some("2026-05-03"));
        assert_eq!(day("3 years ago").as_deref(), Some("2023-06-03"));
        assert_eq!(day("this morning").as_deref(), Some("2026-06-03"));
        assert_eq!(day("I like Saturdays"), None);
        assert_eq!(day("I went there once"), None);
        // On a Sunday, "last weekend" is the weekend before, not the one under way.
        let sunday: DateTime<Utc> = "2026-06-07T10:00:00Z".parse().unwrap();
        assert_eq!(past("last weekend", sunday).map(|p| p.at.date_naive().to_string()).as_deref(), Some("2026-05-30"));
        assert_eq!(past("yesterday", at).map(|p| p.at.time()), Some(at.time()));
        // Weeks, months and years back name a period; days and weekdays name a day.
        let vague = |t: &str| past(t, at).map(|p| p.vague);
        for t in ["last week", "a few weeks ago", "last month", "two months ago", "last year", "the other week"] {
            assert_eq!(vague(t), Some(true), "{t}");
        }
        for t in ["yesterday", "last Friday", "three days ago", "last weekend", "this morning"] {
            assert_eq!(vague(t), Some(false), "{t}");
        }
    }

    /// Monday 2 March 2026, 09:00 UTC.
    fn mon() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn day(s: &str) -> DateTime<Utc> {
        at(&format!("{s}T23:59:59Z"))
    }

    fn r(phrase: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        resolve(phrase, now)
    }

    #[test]
    fn relative_days() {
        assert_eq!(r("today", mon()), Some(day("2026-03-02")));
        assert_eq!(r("tonight", mon()), Some(day("2026-03-02")));
        assert_eq!(r("this evening", mon()), Some(day("2026-03-02")));
        assert_eq!(r("by end of day", mon()), Some(day("2026-03-02")));
        assert_eq!(r("tomorrow", mon()), Some(day("2026-03-03")));
        assert_eq!(r("Tomorrow morning", mon()), Some(day("2026-03-03")));
        assert_eq!(r("tmrw", mon()), Some(day("2026-03-03")));
        assert_eq!(r("the day after tomorrow", mon()), Some(day("2026-03-04")));
        // Month and year rollover.
        assert_eq!(r("tomorrow", at("2026-03-31T10:00:00Z")), Some(day("2026-04-01")));
        assert_eq!(r("tomorrow", at("2026-12-31T10:00:00Z")), Some(day("2027-01-01")));
        assert_eq!(r("day after tomorrow", at("2028-02-28T10:00:00Z")), Some(day("2028-03-01")));
        assert_eq!(r("tomorrow", at("2028-02-28T10:00:00Z")), Some(day("2028-02-29")));
    }

    #[test]
    fn weekdays_wrap_around() {
        // Bare weekday: strictly after today.
        assert_eq!(r("on Friday", mon()), Some(day("2026-03-06")));
        assert_eq!(r("friday", mon()), Some(day("2026-03-06")));
        assert_eq!(r("Monday", mon()), Some(day("2026-03-09")));
        assert_eq!(r("on sunday", mon()), Some(day("2026-03-08")));
        assert_eq!(r("Tuesday", at("2026-03-07T12:00:00Z")), Some(day("2026-03-10")));
        assert_eq!(r("by Thurs", mon()), Some(day("2026-03-05")));
        assert_eq!(r("Friday evening", mon()), Some(day("2026-03-06")));
        // "this" may be today.
        assert_eq!(r("this Monday", mon()), Some(day("2026-03-02")));
        assert_eq!(r("this coming Wednesday", mon()), Some(day("2026-03-04")));
        // "next": the week after while this week's day is still ahead.
        assert_eq!(r("next Friday", mon()), Some(day("2026-03-13")));
        assert_eq!(r("next Monday", mon()), Some(day("2026-03-09")));
        assert_eq!(r("next Friday", at("2026-03-07T12:00:00Z")), Some(day("2026-03-13")));
        assert_eq!(r("next Monday", at("2026-03-08T12:00:00Z")), Some(day("2026-03-09")));
        // Across a month and a year.
        assert_eq!(r("on Wednesday", at("2026-03-30T08:00:00Z")), Some(day("2026-04-01")));
        assert_eq!(r("Saturday", at("2026-12-29T08:00:00Z")), Some(day("2027-01-02")));
    }

    #[test]
    fn texting_short_weekdays_are_dates_where_a_weekday_is_meant() {
        assert_eq!(r("on sat", mon()), Some(day("2026-03-07")));
        assert_eq!(r("next wed", mon()), Some(day("2026-03-11")));
        assert_eq!(r("fri night", mon()), Some(day("2026-03-06")));
        assert_eq!(find("need 2 call mum sat", mon()).map(|f| f.at), Some(day("2026-03-07")));
        for s in ["I sat down with my boss", "the sun was out", "we wed young"] {
            assert!(find(s, mon()).is_none(), "{s}");
        }
    }

    #[test]
    fn weekends_and_weeks() {
        assert_eq!(r("this weekend", mon()), Some(day("2026-03-08")));
        assert_eq!(r("over the weekend", mon()), Some(day("2026-03-08")));
        assert_eq!(r("this weekend", at("2026-03-07T12:00:00Z")), Some(day("2026-03-08")));
        assert_eq!(r("this weekend", at("2026-03-08T12:00:00Z")), Some(day("2026-03-08")));
        assert_eq!(r("next weekend", mon()), Some(day("2026-03-15")));
        assert_eq!(r("next week", mon()), Some(day("2026-03-09")));
        assert_eq!(r("next week", at("2026-03-08T12:00:00Z")), Some(day("2026-03-09")));
        assert_eq!(r("early next week", at("2026-03-05T12:00:00Z")), Some(day("2026-03-09")));
        assert_eq!(r("by the end of the week", mon()), Some(day("2026-03-06")));
        assert_eq!(r("this week", at("2026-03-07T12:00:00Z")), Some(day("2026-03-08")));
        assert_eq!(r("end of next week", mon()), Some(day("2026-03-13")));
        assert_eq!(r("next week", at("2026-12-30T12:00:00Z")), Some(day("2027-01-04")));
    }

    #[test]
    fn durations() {
        assert_eq!(r("in two weeks", mon()), Some(day("2026-03-16")));
        assert_eq!(r("in 3 days", mon()), Some(day("2026-03-05")));
        assert_eq!(r("in a week", mon()), Some(day("2026-03-09")));
        assert_eq!(r("in a couple of days", mon()), Some(day("2026-03-04")));
        assert_eq!(r("in a few days", mon()), Some(day("2026-03-05")));
        assert_eq!(r("within the next 10 days", mon()), Some(day("2026-03-12")));
        assert_eq!(r("two weeks from now", mon()), Some(day("2026-03-16")));
        assert_eq!(r("in a month", at("2026-01-31T12:00:00Z")), Some(day("2026-02-28")));
        assert_eq!(r("in a year", at("2028-02-29T12:00:00Z")), Some(day("2029-02-28")));
        assert_eq!(r("in 20 minutes", mon()), Some(at("2026-03-02T09:20:00Z")));
        assert_eq!(r("in two hours", at("2026-03-02T23:00:00Z")), Some(at("2026-03-03T01:00:00Z")));
    }

    #[test]
    fn calendar_dates_roll_forward() {
        assert_eq!(r("by March 15", mon()), Some(day("2026-03-15")));
        assert_eq!(r("March 15th", mon()), Some(day("2026-03-15")));
        assert_eq!(r("on the 15th of March", mon()), Some(day("2026-03-15")));
        assert_eq!(r("15 March", mon()), Some(day("2026-03-15")));
        assert_eq!(r("Mar. 2", mon()), Some(day("2026-03-02")));
        // Passed this year: next year.
        assert_eq!(r("by March 1", mon()), Some(day("2027-03-01")));
        assert_eq!(r("Jan 5", mon()), Some(day("2027-01-05")));
        assert_eq!(r("December 31, 2026", mon()), Some(day("2026-12-31")));
        assert_eq!(r("2026-04-01", mon()), Some(day("2026-04-01")));
        // Leap day: the next one that exists; an explicit impossible date is nothing.
        assert_eq!(r("Feb 29", mon()), Some(day("2028-02-29")));
        assert_eq!(r("Feb 29", at("2028-01-10T00:00:00Z")), Some(day("2028-02-29")));
        assert_eq!(r("February 29, 2027", mon()), None);
        assert_eq!(r("April 31", mon()), None);
        // Day of month alone.
        assert_eq!(r("by the 15th", mon()), Some(day("2026-03-15")));
        assert_eq!(r("on the 1st", mon()), Some(day("2026-04-01")));
        assert_eq!(r("on the 31st", at("2026-04-05T00:00:00Z")), Some(day("2026-05-31")));
        assert_eq!(r("on the 2nd", at("2026-12-20T00:00:00Z")), Some(day("2027-01-02")));
    }

    #[test]
    fn months_and_years() {
        assert_eq!(r("end of the month", mon()), Some(day("2026-03-31")));
        assert_eq!(r("by the end of this month", at("2026-02-10T00:00:00Z")), Some(day("2026-02-28")));
        assert_eq!(r("end of the month", at("2028-02-10T00:00:00Z")), Some(day("2028-02-29")));
        assert_eq!(r("end of next month", at("2026-12-10T00:00:00Z")), Some(day("2027-01-31")));
        assert_eq!(r("next month", mon()), Some(day("2026-04-01")));
        assert_eq!(r("next month", at("2026-12-10T00:00:00Z")), Some(day("2027-01-01")));
        assert_eq!(r("in June", mon()), Some(day("2026-06-30")));
        assert_eq!(r("by June", mon()), Some(day("2026-06-01")));
        assert_eq!(r("in January", mon()), Some(day("2027-01-31")));
        assert_eq!(r("in March", mon()), Some(day("2026-03-31")));
        assert_eq!(r("end of the year", mon()), Some(day("2026-12-31")));
        assert_eq!(r("next year", mon()), Some(day("2027-01-01")));
    }

    #[test]
    fn clock_times() {
        assert_eq!(r("tomorrow at 3pm", mon()), Some(at("2026-03-03T15:00:00Z")));
        assert_eq!(r("at 3pm tomorrow", mon()), Some(at("2026-03-03T15:00:00Z")));
        assert_eq!(r("Friday at 10:30", mon()), Some(at("2026-03-06T10:30:00Z")));
        assert_eq!(r("on Friday at noon", mon()), Some(at("2026-03-06T12:00:00Z")));
        assert_eq!(r("at 5", mon()), Some(at("2026-03-02T17:00:00Z")));
        // A time already past today is tomorrow's.
        assert_eq!(r("at 8am", mon()), Some(at("2026-03-03T08:00:00Z")));
        assert_eq!(r("at 12am", mon()), Some(at("2026-03-03T00:00:00Z")));
    }

    #[test]
    fn not_dates() {
        for p in ["", "soon", "later", "someday", "may", "the 2nd", "march", "at some point", "tomorrowland"] {
            assert_eq!(r(p, mon()), None, "{p}");
        }
        assert_eq!(r("call mom on Friday", mon()), None, "resolve wants a bare phrase");
    }

    #[test]
    fn find_locates_phrases_in_sentences() {
        let s = "I need to call my mom this weekend, she misses me";
        let f = find(s, mon()).unwrap();
        assert_eq!(&s[f.start..f.end], "this weekend");
        assert_eq!(f.at, day("2026-03-08"));
        let s = "I promised to send the slides to Priya by March 15.";
        let f = find(s, mon()).unwrap();
        assert_eq!(&s[f.start..f.end], "by March 15");
        let s = "dentist on Friday at 3pm";
        let f = find(s, mon()).unwrap();
        assert_eq!(&s[f.start..f.end], "on Friday at 3pm");
        assert_eq!(f.at, at("2026-03-06T15:00:00Z"));
        // "may" the verb is no month; "the 2nd" without a preposition is no date.
        assert!(find("I may be late, it's the 2nd time", mon()).is_none());
        assert!(find("nothing here", mon()).is_none());
    }
}
