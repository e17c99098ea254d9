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

/// Refuses client key-value data on a memory larger than `limits.max_metadata_bytes` (its
/// JSON's bytes), before anything is written.
pub fn check_metadata(metadata: &crate::memory::Metadata, l: &LimitsTuning) -> Result<()> {
    let bytes = serde_json::to_string(metadata).map_or(usize::MAX, |j| j.len());
    if bytes > l.max_metadata_bytes {
        return Err(too_long("metadata", bytes, "bytes", l.max_metadata_bytes, "limits.max_metadata_bytes"));
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
    fn metadata_past_its_limit_is_refused_with_its_size_and_setting() {
        let l = LimitsTuning { max_metadata_bytes: 32, ..Default::default() };
        let small: crate::memory::Metadata = serde_json::from_str(r#"{"src": "chat"}"#).unwrap();
        assert!(check_metadata(&small, &l).is_ok());
        let big: crate::memory::Metadata =
            serde_json::from_value(serde_json::json!({"blob": "x".repeat(100)})).unwrap();
        let e = check_metadata(&big, &l).unwrap_err().to_string();
        assert!(e.contains("metadata") && e.contains("111 bytes") && e.contains("max_metadata_bytes"), "{e}");
    }

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
