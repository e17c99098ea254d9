//! What talking to a model cost: calls, retries, tokens in and out, and wall time, summable so
//! a batch, a job or a whole day can be accounted for with `+` and `.sum()`.

use std::iter::Sum;
use std::ops::{Add, AddAssign};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The cost of one or more chat completions.
///
/// Kept in traces and shown by `mnemo show`, so the price of LLM extraction is visible per
/// batch. Token counts come from the server's `usage` field; when a server sends none they are
/// estimated (about four characters a token) and `estimated_calls` says how many calls that
/// concerns, so nobody mistakes an estimate for a bill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// HTTP requests made, retries and format fallbacks included.
    pub calls: u32,
    /// Requests that repeated an earlier one after a transient failure.
    pub retries: u32,
    /// Tokens sent (the prompt).
    pub prompt_tokens: u64,
    /// Tokens received (the completion).
    pub completion_tokens: u64,
    /// Calls whose token counts are estimates because the server reported none.
    pub estimated_calls: u32,
    /// Wall time spent, backoff waits included, in microseconds.
    pub micros: u64,
}

impl Usage {
    /// Tokens in and out together.
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// [`Usage::micros`] as a duration.
    pub fn latency(&self) -> Duration {
        Duration::from_micros(self.micros)
    }

    /// True when nothing was spent (no call made).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(mut self, rhs: Usage) -> Usage {
        self += rhs;
        self
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.calls = self.calls.saturating_add(rhs.calls);
        self.retries = self.retries.saturating_add(rhs.retries);
        self.prompt_tokens = self.prompt_tokens.saturating_add(rhs.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(rhs.completion_tokens);
        self.estimated_calls = self.estimated_calls.saturating_add(rhs.estimated_calls);
        self.micros = self.micros.saturating_add(rhs.micros);
    }
}

impl Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

impl<'a> Sum<&'a Usage> for Usage {
    fn sum<I: Iterator<Item = &'a Usage>>(iter: I) -> Usage {
        iter.copied().sum()
    }
}

/// Rough token count of a text: a quarter of its characters, rounded up, the usual rule of
/// thumb for English with BPE tokenisers. Only used when a server reports no usage.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_field_by_field() {
        let a =
            Usage { calls: 1, retries: 0, prompt_tokens: 100, completion_tokens: 20, estimated_calls: 0, micros: 5 };
        let b = Usage { calls: 3, retries: 2, prompt_tokens: 50, completion_tokens: 5, estimated_calls: 1, micros: 7 };
        let total: Usage = [a, b].iter().sum();
        assert_eq!(
            total,
            Usage { calls: 4, retries: 2, prompt_tokens: 150, completion_tokens: 25, estimated_calls: 1, micros: 12 }
        );
        assert_eq!(total.total_tokens(), 175);
        assert_eq!(total.latency(), Duration::from_micros(12));
        assert_eq!(a + b, total);
        assert!(Usage::default().is_empty() && !a.is_empty());
        let max = Usage { micros: u64::MAX, ..a };
        assert_eq!((max + max).micros, u64::MAX, "saturates instead of overflowing");
    }

    #[test]
    fn estimates_a_quarter_of_the_characters() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("ééééé"), 2, "characters, not bytes");
    }
}
