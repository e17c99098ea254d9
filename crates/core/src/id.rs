//! Identifiers: memory ids are generated here (time-ordered ULIDs), message ids come from callers.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};

/// A time-ordered ULID the engine generates: ids sort by creation (stable listings) and
/// callers never choose them, so two writers cannot collide.
macro_rules! ulid_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(ulid::Ulid);

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }

        impl $name {
            /// A fresh id.
            pub fn new() -> Self {
                Self(ulid::Ulid::new())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0.to_string().to_lowercase())
            }
        }

        impl FromStr for $name {
            type Err = CoreError;
            fn from_str(s: &str) -> Result<Self> {
                ulid::Ulid::from_string(&s.to_uppercase()).map(Self).map_err(|e| CoreError::InvalidId {
                    field: $field,
                    reason: format!(concat!("{:?} is not a ", $field, " ({}); ids look like 01jd3k8x5q7m2n4p6r8t0v2w4y"), s, e),
                })
            }
        }
    };
}

ulid_id!(
    /// Identity of one memory row. Time-ordered so ids sort by creation, which keeps listings stable.
    MemoryId, "memory id"
);

ulid_id!(
    /// Identity of one stored document (a research result, tool output, file summary).
    DocumentId, "document id"
);

ulid_id!(
    /// Identity of one recorded observation of an agent (a tool it used, how it ended).
    ObservationId, "observation id"
);

/// Validates a caller-supplied identifier: non-empty, at most 128 bytes, no control characters.
///
/// Ids end up in SQL parameters, file names of exports and log lines; keeping them plain text
/// with a bound length is what makes all of those safe.
pub(crate) fn validate_id(field: &'static str, s: &str) -> Result<()> {
    let reason = if s.is_empty() {
        "must not be empty".to_string()
    } else if s.len() > 128 {
        format!("is {} bytes long; the limit is 128", s.len())
    } else if s.chars().any(char::is_control) {
        "must not contain control characters".to_string()
    } else if s.trim() != s {
        "must not start or end with whitespace".to_string()
    } else {
        return Ok(());
    };
    Err(CoreError::InvalidId { field, reason })
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Validates and wraps an identifier.
            pub fn new(s: impl Into<String>) -> Result<Self> {
                let s = s.into();
                validate_id($field, &s)?;
                Ok(Self(s))
            }
            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = CoreError;
            fn from_str(s: &str) -> Result<Self> {
                Self::new(s)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::new(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

string_id!(
    /// An organisation: the hardest isolation boundary; nothing crosses tenants.
    TenantId, "tenant"
);
string_id!(
    /// A bot or project inside a tenant; memories may be shared by all users of one agent.
    AgentId, "agent"
);
string_id!(
    /// An end user of the application.
    UserId, "user_id"
);
string_id!(
    /// One conversation thread; chat-scoped rows never leave it.
    ChatId, "chat"
);
string_id!(
    /// A message id chosen by the application, which makes re-sending a message a no-op.
    MessageId, "message id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_ids_round_trip_and_sort_by_time() {
        let a = MemoryId::new();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = MemoryId::new();
        assert!(a < b);
        assert_eq!(a.to_string().parse::<MemoryId>().unwrap(), a);
        assert!("nope".parse::<MemoryId>().is_err());
    }

    #[test]
    fn string_ids_reject_bad_input() {
        assert!(UserId::new("").is_err());
        assert!(UserId::new(" dana").is_err());
        assert!(UserId::new("da\nna").is_err());
        assert!(UserId::new("x".repeat(129)).is_err());
        assert_eq!(UserId::new("dana").unwrap().as_str(), "dana");
        let err = serde_json::from_str::<UserId>("\"\"").unwrap_err().to_string();
        assert!(err.contains("user_id"), "{err}");
    }
}
