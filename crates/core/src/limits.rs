//! Bounds on what one request may ask: each check refuses with an error naming the field, the
//! value, the limit and the setting that holds it, so a client knows what to change.

use crate::config::LimitsTuning;
use crate::error::{CoreError, Result};
use crate::text::query_terms;
use crate::tokens;

/// Refuses a recall query or context message (`field`) longer than the limits in characters
/// or tokens, or with more distinct search terms than one request may search for. Characters
/// are checked first and tokens counted only up to the limit, so even a refused text costs
/// little.
pub fn check_query(field: &'static str, text: &str, l: &LimitsTuning) -> Result<()> {
    let chars = text.chars().count();
    if chars > l.max_query_chars {
        return Err(too_long(field, chars, "characters", l.max_query_chars, "limits.max_query_chars"));
    }
    if tokens::count_at_most(text, l.max_query_tokens).is_none() {
        return Err(too_long(field, l.max_query_tokens + 1, "tokens", l.max_query_tokens, "limits.max_query_tokens"));
    }
    let terms = query_terms(text).len();
    if terms > l.max_query_terms {
        return Err(CoreError::OutOfRange {
            field,
            reason: format!(
                "{terms} distinct search terms; the limit is {} (limits.max_query_terms): ask a shorter question",
                l.max_query_terms
            ),
        });
    }
    Ok(())
}

/// Refuses a number from a client outside `min..=max` (`key` names the setting behind `max`).
pub fn check_count(field: &'static str, value: usize, min: usize, max: usize, key: &str) -> Result<()> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(CoreError::OutOfRange { field, reason: format!("{value} is outside {min}..={max} ({key})") })
}

fn too_long(field: &'static str, got: usize, unit: &str, limit: usize, key: &str) -> CoreError {
    let got = if unit == "tokens" { format!("more than {limit}") } else { got.to_string() };
    CoreError::OutOfRange {
        field,
        reason: format!("{got} {unit}; the limit is {limit} ({key}): shorten it, or raise the setting"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_queries_and_numbers_out_of_range_name_the_field() {
        let l = LimitsTuning { max_query_chars: 20, max_query_tokens: 5, max_query_terms: 3, ..Default::default() };
        assert!(check_query("query", "where do I live", &l).is_ok());
        let e = check_query("query", &"a".repeat(21), &l).unwrap_err().to_string();
        assert!(e.contains("query") && e.contains("21 characters") && e.contains("max_query_chars"), "{e}");
        let e = check_query("message", "猫猫猫猫猫猫猫猫猫猫猫猫", &l).unwrap_err().to_string();
        assert!(e.contains("message") && e.contains("tokens"), "{e}");
        let e = check_query("query", "cats dogs bees owls", &l).unwrap_err().to_string();
        assert!(e.contains("4 distinct search terms"), "{e}");
        let e = check_count("offset", usize::MAX, 0, 10, "limits.max_offset").unwrap_err().to_string();
        assert!(e.contains("offset") && e.contains("0..=10"), "{e}");
    }
}
