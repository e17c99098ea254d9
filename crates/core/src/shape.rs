//! The shape of a value a sentence names: a date or a clock time.
//!
//! A take-back in a message of its own often names only the value that holds ("No sorry, it's
//! the 10th", "naw wait, its the wednesday"): the old one is in a memory written a moment
//! before, and the shape says which (a memory that names a date, for a date). The engine
//! resolves such a target to the user's latest memory of that shape, said shortly before
//! ([`recent_enough`]); nothing here reads a store. Pure text functions.

use std::sync::OnceLock;

use chrono::{DateTime, Duration, Utc};
use regex::Regex;

use crate::kind::text_enum;

text_enum!(
    /// What kind of value a take-back names, so the memory it corrects names one of the same.
    ValueShape, "value shape" {
        /// A day: "the 10th", "19 September", "Wednesday", "12/10".
        Date => "date",
        /// A time of day: "7pm", "18:30", "10 o'clock", "noon".
        Time => "time",
    }
);

/// How long before a take-back the memory it corrects may have been said: a take-back that
/// names no old value answers what was said a moment before, not last month.
pub const TAKE_BACK_WINDOW_HOURS: i64 = 48;

/// The weekdays in full, lower case and sorted: the short forms are words too ("the sun", "sat
/// down"), so only these say a day wherever they stand.
pub const WEEKDAY_NAMES: &[&str] = &["friday", "monday", "saturday", "sunday", "thursday", "tuesday", "wednesday"];

/// Months by name; "may" and "march" only with a day beside them, where they cannot be verbs.
pub(crate) const MONTHS: &str = r"jan(?:uary)?|feb(?:ruary)?|march|mar|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";

fn date_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?ix)
                \b(?:
                    # an ordinal day: the 10th, 22nd, 1st
                    (?:[12]?\d|3[01])(?:st|nd|rd|th)
                    # a day and a month either way round: 19 September, Sept 19
                    | (?:[12]?\d|3[01])\s+(?:of\s+)?(?:{MONTHS})
                    | (?:{MONTHS})\s+(?:[12]?\d|3[01])
                    # a weekday, whole
                    | monday | tuesday | wednesday | thursday | friday | saturday | sunday
                    # a numeric date: 12/10, 3.4.
                    | (?:[12]?\d|3[01])[/.](?:1[0-2]|0?[1-9])(?:[/.](?:\d{{2}}|\d{{4}}))?
                )\b
            "
        ))
        .expect("date shape regex")
    })
}

fn short_weekday_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Short forms are also words ("sat", "wed"): only where the take-back itself says them.
    RE.get_or_init(|| Regex::new(r"(?i)\b(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)\b").expect("weekday"))
}

/// A day said as a bare number where a date is expected, as learners say it: "is the 27",
/// "it's the 9". Only a take-back is read this way; a memory names its date in full.
pub(crate) fn bare_day_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b(?:is|it'?s|it\s+is|on)\s+the\s+(?P<d>[12]?\d|3[01])\s*(?:$|[,.!;:)]|not\b|and\b|but\b)")
            .expect("bare day regex")
    })
}

pub(crate) fn time_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?ix)
                \b(?:
                    (?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)
                    | (?:[01]?\d|2[0-3])[:h][0-5]\d
                    | (?:1[0-2]|0?[1-9]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+o'?clock
                    | noon | midday | midnight
                )
            ",
        )
        .expect("time shape regex")
    })
}

impl ValueShape {
    /// The shape of the value a take-back names, a date before a time ("it's the 10th at 3pm"
    /// moves the day); `None` when it names neither.
    pub fn of(text: &str) -> Option<Self> {
        if date_re().is_match(text) || short_weekday_re().is_match(text) || bare_day_re().is_match(text) {
            Some(Self::Date)
        } else if time_re().is_match(text) {
            Some(Self::Time)
        } else {
            None
        }
    }

    /// Whether `text` (a memory) names a value of this shape, in full forms only: "sat" in a
    /// memory is as likely the verb.
    pub fn named_in(self, text: &str) -> bool {
        match self {
            Self::Date => date_re().is_match(text),
            Self::Time => time_re().is_match(text),
        }
    }
}

/// Whether a memory said at `said` is recent enough for a take-back at `at` to be of it: at or
/// before the take-back, within [`TAKE_BACK_WINDOW_HOURS`].
pub fn recent_enough(said: DateTime<Utc>, at: DateTime<Utc>) -> bool {
    said <= at && at - said <= Duration::hours(TAKE_BACK_WINDOW_HOURS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_take_back_names_a_date_or_a_time() {
        for (said, shape) in [
            ("No sorry its the 10th , I was looking at the wrong page", Some(ValueShape::Date)),
            ("naw wait, its the wednesday, 22nd", Some(ValueShape::Date)),
            ("its on weds not", Some(ValueShape::Date)),
            ("The wedding is 19 September, the 12 is the bachelor party.", Some(ValueShape::Date)),
            ("it's Oct 3", Some(ValueShape::Date)),
            ("it is 12/10 in fact", Some(ValueShape::Date)),
            ("sorry, it starts at 7pm", Some(ValueShape::Time)),
            ("it's half past at 18:30", Some(ValueShape::Time)),
            ("ten o'clock, not nine", Some(ValueShape::Time)),
            ("sorry, I meant Cambridge", None),
            ("it's 150 now", None),
            ("Sorry I am wrong, is the 27.", Some(ValueShape::Date)),
            ("no its the 9, not the 2", Some(ValueShape::Date)),
            ("we're on the 27 bus", None),
            ("it is the 3 of us", None),
        ] {
            assert_eq!(ValueShape::of(said), shape, "{said}");
        }
    }

    #[test]
    fn a_memory_names_a_date_only_in_full_forms() {
        assert!(ValueShape::Date.named_in("Kofi and Ama set the date, 3rd October at the chapel"));
        assert!(ValueShape::Date.named_in("User's dentist appointment is on Thursday"));
        assert!(ValueShape::Date.named_in("User's exam is March 14"));
        assert!(!ValueShape::Date.named_in("User sat on the bench in the sun"));
        assert!(!ValueShape::Date.named_in("User may come over"));
        assert!(!ValueShape::Date.named_in("User marches with the band"));
        assert!(ValueShape::Time.named_in("The match starts at 8pm"));
        assert!(!ValueShape::Time.named_in("User has 8 hens"));
    }

    #[test]
    fn only_what_was_said_shortly_before_is_recent_enough() {
        let at: DateTime<Utc> = "2026-05-18T19:10:00Z".parse().unwrap();
        assert!(recent_enough(at - Duration::minutes(3), at));
        assert!(recent_enough(at, at));
        assert!(!recent_enough(at - Duration::days(3), at));
        assert!(!recent_enough(at + Duration::minutes(1), at));
    }
}
