//! PII and secret detection: card numbers (Luhn-checked), SSNs, API keys, passwords.
//!
//! Such content never reaches storage: the gate rejects memories containing it and the engine
//! redacts it from messages before they enter the trace.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::kind::text_enum;

text_enum!(
    /// The kind of sensitive data found.
    PiiKind, "pii kind" {
        /// A payment card number that passes the Luhn check.
        CardNumber => "card_number",
        /// A US social security number.
        Ssn => "ssn",
        /// An API key, token or private key.
        Secret => "secret",
        /// A password or PIN stated in text.
        Password => "password",
    }
);

/// One finding: what and where (byte range), so it can be redacted precisely.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PiiFinding {
    /// What was found.
    pub kind: PiiKind,
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset one past the end.
    pub end: usize,
}

struct Patterns {
    card: Regex,
    ssn: Regex,
    secrets: Vec<Regex>,
    password: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        card: Regex::new(r"\b\d(?:[ -]?\d){12,18}\b").expect("card regex"),
        ssn: Regex::new(r"\b(\d{3})[- ](\d{2})[- ](\d{4})\b").expect("ssn regex"),
        secrets: [
            r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
            r"\bAIza[0-9A-Za-z_\-]{30,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
            r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
            r"(?i)\b(?:api[_ \-]?key|secret(?:[_ \-]?key)?|access[_ \-]?token|auth[_ \-]?token|bearer)\b\s*(?:is|:|=)?\s*[A-Za-z0-9_\-./+]{16,}",
        ]
        .iter()
        .map(|p| Regex::new(p).expect("secret regex"))
        .collect(),
        password: Regex::new(
            r"(?i)\b(?:password|passwd|passcode|pwd|pin(?:\s+code)?)\b(?:\s+(?:for|to)\s+[\w .'-]{1,30}?)?\s*(?:is|was|:|=)\s*\S+",
        )
        .expect("password regex"),
    })
}

/// Luhn checksum over the digits of `s`; what separates a card number from any long number.
pub fn luhn_valid(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

/// Every sensitive span in a text, in order of position.
pub fn detect(text: &str) -> Vec<PiiFinding> {
    let p = patterns();
    let mut out = Vec::new();
    for m in p.card.find_iter(text) {
        if luhn_valid(m.as_str()) {
            out.push(PiiFinding { kind: PiiKind::CardNumber, start: m.start(), end: m.end() });
        }
    }
    for c in p.ssn.captures_iter(text) {
        let area: u32 = c[1].parse().unwrap_or(0);
        let group: u32 = c[2].parse().unwrap_or(0);
        let serial: u32 = c[3].parse().unwrap_or(0);
        if area != 0 && area != 666 && area < 900 && group != 0 && serial != 0 {
            let m = c.get(0).expect("whole match");
            out.push(PiiFinding { kind: PiiKind::Ssn, start: m.start(), end: m.end() });
        }
    }
    for re in &p.secrets {
        for m in re.find_iter(text) {
            out.push(PiiFinding { kind: PiiKind::Secret, start: m.start(), end: m.end() });
        }
    }
    for m in p.password.find_iter(text) {
        out.push(PiiFinding { kind: PiiKind::Password, start: m.start(), end: m.end() });
    }
    out.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    out
}

/// The text with every finding replaced by `[redacted <kind>]`; overlapping findings merge.
pub fn redact(text: &str) -> String {
    let findings = detect(text);
    if findings.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for f in findings {
        if f.start < pos {
            pos = pos.max(f.end);
            continue;
        }
        out.push_str(&text[pos..f.start]);
        out.push_str("[redacted ");
        out.push_str(f.kind.as_str());
        out.push(']');
        pos = f.end;
    }
    out.push_str(&text[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &str) -> Vec<PiiKind> {
        detect(t).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn cards_need_a_valid_luhn_checksum() {
        assert_eq!(kinds("my card is 4111 1111 1111 1111 thanks"), vec![PiiKind::CardNumber]);
        assert_eq!(kinds("card 4111-1111-1111-1111"), vec![PiiKind::CardNumber]);
        assert!(kinds("order number 4111 1111 1111 1112").is_empty());
        assert!(kinds("I was born in 1990 and have 3 kids").is_empty());
    }

    #[test]
    fn ssns_secrets_and_passwords_are_found() {
        assert_eq!(kinds("ssn 123-45-6789"), vec![PiiKind::Ssn]);
        assert!(kinds("call 000-12-3456").is_empty());
        assert_eq!(kinds("key sk-abcdefghijklmnopqrstuvwx1234"), vec![PiiKind::Secret]);
        assert_eq!(kinds("AKIAIOSFODNN7EXAMPLE is the id"), vec![PiiKind::Secret]);
        assert_eq!(kinds("my password is hunter2"), vec![PiiKind::Password]);
        assert_eq!(kinds("the wifi password: correct-horse"), vec![PiiKind::Password]);
        assert!(kinds("I forgot my password again, ugh").is_empty());
    }

    #[test]
    fn redaction_keeps_the_rest_of_the_text() {
        assert_eq!(redact("pay with 4111 1111 1111 1111 please"), "pay with [redacted card_number] please");
        assert_eq!(redact("nothing here"), "nothing here");
    }
}
