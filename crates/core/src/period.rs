//! The period a query asks about ("on 7 July, 2023", "in May", "the week before 16 November",
//! "last weekend"), so recall can favour what was said then.
//!
//! People ask memory about time as often as about topics: "what did we talk about on Monday?",
//! "where was I the second week of November?". The words of such a question name the topic only
//! loosely; the date narrows it. Recall reads the period here and lifts the excerpts and memories
//! that were said within it (or just after: events are told a few days after they happen — "last
//! night", "on Friday"). Nothing is excluded: a period is evidence, not a filter.
//!
//! Conventions, chosen once and tested below (everything in UTC, days start at midnight):
//! - a day is that day; "May 2023" the month; "in May" the latest May that has begun by now;
//!   "2023" the year; "summer 2022" June to August (winter: December to February);
//! - "between A and B" runs from A's start to B's end, A taking B's year when it names none;
//! - "N days/weeks/months before A" is the N units before A's start ("the week before", one unit;
//!   "the Sunday before", a week), "… after A" the N units after A's end;
//! - "first/second/third/fourth/last week of A", "first/second half of A", "early/mid/late A"
//!   narrow a month (or a year) to that part;
//! - relative to now: "yesterday", "last night", "today", "this/last week|weekend|month|year",
//!   "last <weekday>", "last summer", "N days/weeks/months/years ago";
//! - a bare month or season counts only after a word that makes it a time ("in May", "during the
//!   summer"), so "you may" and "summer dresses" are not periods; the first period named wins.

use std::sync::OnceLock;

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, TimeZone, Utc, Weekday};
use regex::{Captures, Regex};

/// How long after a period a message still tells of it: people report a day's events within a
/// few days ("last night", "on Friday", "last week").
pub const REPORTING_LAG_DAYS: i64 = 3;

/// A span of time a query asks about: `from` inclusive, `to` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// First instant inside the period.
    pub from: DateTime<Utc>,
    /// First instant after it.
    pub to: DateTime<Utc>,
}

impl Period {
    /// Whether something said at `at` was said within the period or within the reporting lag
    /// after it.
    pub fn covers(&self, at: DateTime<Utc>) -> bool {
        self.said().contains(&at)
    }

    /// When something said about the period was said: within it or within the reporting lag
    /// after it (what [`Period::covers`] accepts), for a store to draw candidates from.
    pub fn said(&self) -> std::ops::Range<DateTime<Utc>> {
        self.from..self.to + Duration::days(REPORTING_LAG_DAYS)
    }

    fn days(from: NaiveDate, to_exclusive: NaiveDate) -> Option<Self> {
        let start = |d: NaiveDate| -> Option<DateTime<Utc>> { Some(Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?)) };
        let (from, to) = (start(from)?, start(to_exclusive)?);
        (from < to).then_some(Period { from, to })
    }

    fn length(&self) -> Duration {
        self.to - self.from
    }
}

/// The period `query` asks about, read relative to `now`, or `None` when it names no time.
pub fn asked(query: &str, now: DateTime<Utc>) -> Option<Period> {
    let q = query.to_lowercase();
    absolute(&q, now.date_naive()).or_else(|| relative(&q, now.date_naive()))
}

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|\
                      jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec";

/// A date as written: any of day, month, year, season may be missing until resolved.
#[derive(Debug, Clone, Copy, Default)]
struct Written {
    day: Option<u32>,
    month: Option<u32>,
    year: Option<i32>,
    season: Option<u32>,
    start: usize,
    end: usize,
}

fn date_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?x)
            \b(?:
                (?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{MONTHS})\b(?:,?\s*(?P<y1>(?:19|20)\d\d)\b)?
              | (?P<m2>{MONTHS})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s*(?P<y2>(?:19|20)\d\d)\b)?
              | (?P<m3>{MONTHS})\b(?:,?\s+(?:of\s+)?(?P<y3>(?:19|20)\d\d)\b)?
              | (?P<s4>spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?(?P<y4>(?:19|20)\d\d)\b)?
              | (?P<y5>(?:19|20)\d\d)\b
            )"
        ))
        .expect("valid date pattern")
    })
}

/// Words that make a following bare month or season a time ("in May", "during the summer").
fn time_word_before(q: &str, at: usize) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?x)\b(?:in|during|of|since|until|till|through|by|early|late|mid|around|last|this|
               between|and|from|to|before|after|beginning|start|end|middle)(?:\s+the)?[\s-]+$",
        )
        .expect("valid time-word pattern")
    });
    re.is_match(&q[..at])
}

fn month_number(s: &str) -> Option<u32> {
    let prefix: String = s.chars().take(3).collect();
    let n = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        .iter()
        .position(|m| *m == prefix)?;
    Some(n as u32 + 1)
}

fn season_number(s: &str) -> Option<u32> {
    match s {
        "spring" => Some(0),
        "summer" => Some(1),
        "autumn" | "fall" => Some(2),
        "winter" => Some(3),
        _ => None,
    }
}

fn written(c: &Captures<'_>) -> Option<Written> {
    let whole = c.get(0)?;
    let num = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
    let year = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<i32>().ok());
    let month = |name: &str| c.name(name).and_then(|m| month_number(m.as_str()));
    let mut w = Written { start: whole.start(), end: whole.end(), ..Written::default() };
    if c.name("m1").is_some() {
        (w.day, w.month, w.year) = (num("d1"), month("m1"), year("y1"));
    } else if c.name("m2").is_some() {
        (w.day, w.month, w.year) = (num("d2"), month("m2"), year("y2"));
    } else if c.name("m3").is_some() {
        (w.month, w.year) = (month("m3"), year("y3"));
    } else if let Some(s) = c.name("s4") {
        (w.season, w.year) = (season_number(s.as_str()), year("y4"));
    } else {
        w.year = year("y5");
    }
    Some(w)
}

/// The dates written in `q`, in order, leaving out a bare month, season or year no time word
/// leads to ("you may", "2000 dollars").
fn dates(q: &str) -> Vec<Written> {
    date_pattern()
        .captures_iter(q)
        .filter_map(|c| written(&c))
        .filter(|w| {
            let full = w.day.is_some() || (w.year.is_some() && (w.month.is_some() || w.season.is_some()));
            full || time_word_before(q, w.start)
        })
        .collect()
}

/// The span a written date stands for, its missing year taken from `year` or else the latest
/// one that has begun by `today`.
fn resolve(w: &Written, year: Option<i32>, today: NaiveDate) -> Option<Period> {
    let latest = |candidate: &dyn Fn(i32) -> Option<Period>| match w.year.or(year) {
        Some(y) => candidate(y),
        None => {
            candidate(today.year()).filter(|p| p.from.date_naive() <= today).or_else(|| candidate(today.year() - 1))
        }
    };
    match (w.day, w.month, w.season) {
        (Some(d), Some(m), _) => latest(&|y| {
            let day = NaiveDate::from_ymd_opt(y, m, d)?;
            Period::days(day, day.succ_opt()?)
        }),
        (None, Some(m), _) => latest(&|y| month_span(y, m, 1)),
        (_, None, Some(s)) => latest(&|y| {
            // Winter is the one that begins in December of the year named.
            let first = NaiveDate::from_ymd_opt(y, [3, 6, 9, 12][s as usize], 1)?;
            Period::days(first, first.checked_add_months(Months::new(3))?)
        }),
        _ => {
            let y = w.year?;
            Period::days(NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y + 1, 1, 1)?)
        }
    }
}

fn month_span(y: i32, m: u32, months: u32) -> Option<Period> {
    let first = NaiveDate::from_ymd_opt(y, m, 1)?;
    Period::days(first, first.checked_add_months(Months::new(months))?)
}

fn absolute(q: &str, today: NaiveDate) -> Option<Period> {
    let found = dates(q);
    let first = found.first()?;
    // "between August 11 and August 15 2023", "from May to July".
    if let Some(second) = found.get(1) {
        let joined = range_joint().is_match(&q[first.end..second.start]);
        if joined && range_lead().is_match(&q[..first.start]) {
            let end = resolve(second, None, today)?;
            let start = resolve(first, second.year.or(Some(end.from.year())), today)?;
            return (start.from < end.to).then_some(Period { from: start.from, to: end.to });
        }
    }
    let year = found.iter().find_map(|w| w.year);
    let period = resolve(first, year, today)?;
    Some(narrowed(&q[..first.start], period))
}

fn range_joint() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\s*(?:and|to|until|till|through|-|–)\s*(?:the\s+)?$").expect("valid range joint"))
}

fn range_lead() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\b(?:between|from)\s+(?:the\s+)?$").expect("valid range lead"))
}

/// `period` as the words just before it shape it: "the week before …", "the second week of …",
/// "early …".
fn narrowed(before: &str, period: Period) -> Period {
    static OFFSET: OnceLock<Regex> = OnceLock::new();
    static PART: OnceLock<Regex> = OnceLock::new();
    let offset = OFFSET.get_or_init(|| {
        Regex::new(
            r"(?x)(?:(?P<n>\d+|a|an|one|two|three|four|five|six|few|a\s+few|couple\s+of|a\s+couple\s+of)\s+)?
              (?P<unit>days?|nights?|weeks?|weekends?|months?|monday|tuesday|wednesday|thursday|friday|saturday|sunday)
              \s+(?P<dir>before|after|prior\s+to|following)\s+(?:on\s+|the\s+)?$",
        )
        .expect("valid offset pattern")
    });
    let part = PART.get_or_init(|| {
        Regex::new(
            r"(?x)(?:
                (?P<week>first|second|third|fourth|last)\s+week\s+of
              | (?P<half>first|second)\s+half\s+of
              | (?P<part>beginning|start|early|middle|mid|end|late)(?:\s+of)?
            )(?:\s+the)?[\s-]+$",
        )
        .expect("valid part pattern")
    });
    if let Some(c) = offset.captures(before) {
        let n = c.name("n").map_or(1, |m| count(m.as_str()));
        let unit = c.name("unit").map_or("", |m| m.as_str());
        let step = match unit.trim_end_matches('s') {
            "day" | "night" => Duration::days(1),
            "month" => Duration::days(30),
            _ => Duration::weeks(1),
        } * n as i32;
        return match c.name("dir").map_or("", |m| m.as_str()) {
            "before" | "prior to" => Period { from: period.from - step, to: period.from },
            _ => Period { from: period.to, to: period.to + step },
        };
    }
    let Some(c) = part.captures(before) else { return period };
    let len = period.length();
    let slice =
        |from: Duration, to: Duration| Period { from: period.from + from, to: (period.from + to).min(period.to) };
    if let Some(w) = c.name("week") {
        return match w.as_str() {
            "last" => Period { from: period.to - Duration::weeks(1), to: period.to },
            which => {
                let i = ["first", "second", "third", "fourth"].iter().position(|x| *x == which).unwrap_or(0) as i32;
                slice(Duration::weeks(i.into()), Duration::weeks(i as i64 + 1))
            }
        };
    }
    if let Some(h) = c.name("half") {
        return if h.as_str() == "first" { slice(Duration::zero(), len / 2) } else { slice(len / 2, len) };
    }
    match c.name("part").map_or("", |m| m.as_str()) {
        "beginning" | "start" | "early" => slice(Duration::zero(), len / 3),
        "middle" | "mid" => slice(len / 3, len * 2 / 3),
        _ => slice(len * 2 / 3, len),
    }
}

fn count(word: &str) -> i64 {
    match word {
        "a" | "an" | "one" => 1,
        "two" | "couple of" | "a couple of" => 2,
        "three" | "few" | "a few" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        n => n.parse().unwrap_or(1),
    }
}

fn relative(q: &str, today: NaiveDate) -> Option<Period> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?x)\b(?:
                (?P<yesterday>yesterday|last\s+night)
              | (?P<today>today|tonight|this\s+morning|this\s+afternoon|this\s+evening)
              | (?P<which>this|last|past|previous)\s+(?P<unit>week|weekend|month|year)
              | last\s+(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)
              | last\s+(?P<season>spring|summer|autumn|fall|winter)
              | (?P<n>\d+|a|an|one|two|three|four|five|six|few|a\s+few|couple\s+of|a\s+couple\s+of)\s+
                (?P<ago>days?|weeks?|months?|years?)\s+ago
            )\b",
        )
        .expect("valid relative pattern")
    });
    let c = re.captures(q)?;
    let day = |d: NaiveDate| Period::days(d, d.succ_opt()?);
    if c.name("yesterday").is_some() {
        return day(today.pred_opt()?);
    }
    if c.name("today").is_some() {
        return day(today);
    }
    if let Some(unit) = c.name("unit") {
        let this = c.name("which").is_some_and(|w| w.as_str() == "this");
        return match unit.as_str() {
            "week" | "weekend" => {
                let monday = today - Duration::days(today.weekday().num_days_from_monday() as i64);
                let monday = if this { monday } else { monday - Duration::weeks(1) };
                if unit.as_str() == "weekend" {
                    let saturday = monday + Duration::days(5);
                    Period::days(saturday, saturday + Duration::days(2))
                } else {
                    Period::days(monday, monday + Duration::weeks(1))
                }
            }
            "month" => {
                let first = today.with_day(1)?;
                let first = if this { first } else { first.checked_sub_months(Months::new(1))? };
                Period::days(first, first.checked_add_months(Months::new(1))?)
            }
            _ => {
                let y = if this { today.year() } else { today.year() - 1 };
                Period::days(NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y + 1, 1, 1)?)
            }
        };
    }
    if let Some(w) = c.name("weekday") {
        let target: Weekday = w.as_str().parse().ok()?;
        let back = (today.weekday().num_days_from_monday() as i64 - target.num_days_from_monday() as i64 + 7) % 7;
        return day(today - Duration::days(if back == 0 { 7 } else { back }));
    }
    if let Some(s) = c.name("season") {
        let season = season_number(s.as_str())?;
        let w = Written { season: Some(season), ..Written::default() };
        // The latest such season that has ended by today.
        let this_year = resolve(&w, Some(today.year()), today)?;
        return if this_year.to.date_naive() <= today {
            Some(this_year)
        } else {
            resolve(&w, Some(today.year() - 1), today)
        };
    }
    let n = count(c.name("n")?.as_str());
    let unit = c.name("ago")?.as_str().trim_end_matches('s');
    let (back, slack) = match unit {
        "day" => (Duration::days(n), Duration::days(1)),
        "week" => (Duration::weeks(n), Duration::weeks(1)),
        "month" => (Duration::days(30 * n), Duration::days(30)),
        _ => (Duration::days(365 * n), Duration::days(183)),
    };
    let centre = today - back;
    Period::days(centre - slack, centre + slack + Duration::days(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Tuesday 2023-11-21, noon.
    fn now() -> DateTime<Utc> {
        "2023-11-21T12:00:00Z".parse().unwrap()
    }

    fn span(q: &str) -> Option<(String, String)> {
        asked(q, now()).map(|p| (p.from.date_naive().to_string(), p.to.date_naive().to_string()))
    }

    fn is(q: &str, from: &str, to: &str) {
        assert_eq!(span(q), Some((from.to_string(), to.to_string())), "{q}");
    }

    #[test]
    fn a_written_day_in_any_order_is_that_day() {
        is("What did Joanna watch on 1 May, 2022?", "2022-05-01", "2022-05-02");
        is("What did Nate do for her on May 25, 2022?", "2022-05-25", "2022-05-26");
        is("which book did he finish on 8th December, 2023", "2023-12-08", "2023-12-09");
        is("Where was the picture shared on December 1,2023 taken?", "2023-12-01", "2023-12-02");
        is("anything from the 3rd of march 2021?", "2021-03-03", "2021-03-04");
        is("What did I say on Sept. 9?", "2023-09-09", "2023-09-10");
    }

    #[test]
    fn months_years_and_seasons_are_their_whole_span() {
        is("What setback did she face in October 2023?", "2023-10-01", "2023-11-01");
        is("what happened in 2022", "2022-01-01", "2023-01-01");
        is("What state did she visit in summer 2021?", "2021-06-01", "2021-09-01");
        is("plans for the winter of 2022", "2022-12-01", "2023-03-01");
    }

    #[test]
    fn a_month_without_a_year_is_the_latest_one_begun() {
        is("When did Melanie go camping in June?", "2023-06-01", "2023-07-01");
        is("what did we do in November", "2023-11-01", "2023-12-01");
        is("any trips in December?", "2022-12-01", "2023-01-01");
        // A year named elsewhere in the question wins.
        is("between the 3rd of june and july 2020", "2020-06-03", "2020-08-01");
    }

    #[test]
    fn a_bare_month_or_season_needs_a_time_word() {
        assert_eq!(span("You may want to rest"), None);
        assert_eq!(span("What summer dresses do I like?"), None);
        assert_eq!(span("What did Mel say about March madness?"), None);
        assert_eq!(span("I spent 2000 dollars on it"), None);
        is("Which outdoor spot did she visit in May?", "2023-05-01", "2023-06-01");
        is("what did I do during the summer", "2023-06-01", "2023-09-01");
    }

    #[test]
    fn ranges_offsets_and_parts_shape_the_date_they_lead() {
        is("Where was John between August 11 and August 15 2023?", "2023-08-11", "2023-08-16");
        is("Where was Tim in the week before 16 November 2023?", "2023-11-09", "2023-11-16");
        is("What did she do two weeks before August 11, 2023?", "2023-07-28", "2023-08-11");
        is("What was shown on the Sunday before October 25, 2022?", "2022-10-18", "2022-10-25");
        is("the day after 4 july 2023", "2023-07-05", "2023-07-06");
        is("Which country was Tim visiting in the second week of November?", "2023-11-08", "2023-11-15");
        is("the last week of march 2023", "2023-03-25", "2023-04-01");
        is("Was the first half of September 2022 a good month?", "2022-09-01", "2022-09-16");
        is("Which tournament did he win in the beginning of November 2022?", "2022-11-01", "2022-11-11");
        is("in late 2021", "2021-09-01", "2022-01-01");
        is("mid-june 2023", "2023-06-11", "2023-06-21");
    }

    #[test]
    fn relative_phrases_count_back_from_now() {
        is("what did I eat yesterday", "2023-11-20", "2023-11-21");
        is("what did I tell you last night?", "2023-11-20", "2023-11-21");
        is("anything new today?", "2023-11-21", "2023-11-22");
        is("what did we discuss last week", "2023-11-13", "2023-11-20");
        is("what did I do last weekend", "2023-11-18", "2023-11-20");
        is("my plans this week", "2023-11-20", "2023-11-27");
        is("last month's trip", "2023-10-01", "2023-11-01");
        is("what happened last year", "2022-01-01", "2023-01-01");
        is("what did I say last Tuesday", "2023-11-14", "2023-11-15");
        is("what did I say last Monday", "2023-11-20", "2023-11-21");
        is("where did we go last summer", "2023-06-01", "2023-09-01");
        is("the book I mentioned two weeks ago", "2023-10-31", "2023-11-15");
        is("the cafe from 3 days ago", "2023-11-17", "2023-11-20");
    }

    #[test]
    fn questions_without_time_ask_no_period() {
        for q in ["What is Jon's favorite style of dance?", "How long has Nate had his turtles?", "Who is Mel?", ""] {
            assert_eq!(span(q), None, "{q}");
        }
    }

    #[test]
    fn covers_includes_the_reporting_lag_after_the_period() {
        let p = asked("on 1 May, 2022", now()).unwrap();
        assert!(p.covers("2022-05-01T20:00:00Z".parse().unwrap()));
        assert!(p.covers("2022-05-03T09:00:00Z".parse().unwrap()), "told two days later");
        assert!(!p.covers("2022-05-05T00:00:00Z".parse().unwrap()));
        assert!(!p.covers("2022-04-30T23:59:59Z".parse().unwrap()), "not before it");
    }

    proptest! {
        #[test]
        fn any_text_gives_no_period_or_a_nonempty_one(q in "\\PC{0,80}") {
            if let Some(p) = asked(&q, now()) {
                prop_assert!(p.from < p.to);
            }
        }

        #[test]
        fn any_written_day_parses_to_that_day(y in 1990i32..2060, m in 1u32..=12, d in 1u32..=28) {
            let name = ["January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December"][m as usize - 1];
            let day = NaiveDate::from_ymd_opt(y, m, d).unwrap();
            for q in [format!("on {d} {name}, {y}?"), format!("on {name} {d}, {y}")] {
                let p = asked(&q, now()).unwrap();
                prop_assert_eq!(p.from.date_naive(), day);
                prop_assert_eq!(p.to.date_naive(), day.succ_opt().unwrap());
            }
        }
    }
}
