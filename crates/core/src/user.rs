//! Per-user privacy switches: whether mnemo may learn from, and recall for, one user.

use crate::kind::text_enum;

text_enum!(
    /// What mnemo may do for one user of a tenant. A user nobody switched is `Active`; the
    /// switches are the user's (or the operator's on their behalf) and survive restarts, so an
    /// application can honour "stop remembering me" without deleting anything yet.
    UserState, "user state" {
        /// The default: conversations are stored, memories extracted and recalled.
        Active => "active",
        /// Memories are kept but nothing new is learned and nothing is recalled: messages still
        /// enter the trace (the conversation goes on) but are never extracted or quoted back.
        Paused => "paused",
        /// Nothing is stored at all: ingest writes nothing and recall returns nothing.
        Disabled => "disabled",
    }
);

impl UserState {
    /// Whether mnemo may extract memories from, and recall memories for, this user.
    pub fn learns(self) -> bool {
        self == UserState::Active
    }

    /// Whether this user's messages may be stored at all.
    pub fn stores(self) -> bool {
        self != UserState::Disabled
    }
}

#[cfg(test)]
mod tests {
    use super::UserState;

    #[test]
    fn text_form_round_trips_and_unknown_is_refused() {
        for s in UserState::ALL {
            assert_eq!(s.as_str().parse::<UserState>().unwrap(), *s);
        }
        let err = "sleeping".parse::<UserState>().unwrap_err().to_string();
        assert!(err.contains("active paused disabled"), "{err}");
        assert!(UserState::Active.learns() && !UserState::Paused.learns() && !UserState::Disabled.learns());
        assert!(UserState::Paused.stores() && !UserState::Disabled.stores());
    }
}
