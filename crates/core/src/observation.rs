//! Observations: what a coding agent did in one session — the tool it used, a summary of the
//! arguments, how it ended — recorded so that patterns recurring across sessions can become
//! skills (see [`crate::skill`]).
//!
//! An observation is a short summary, never a tool's output (that is a document): its texts are
//! bounded by `limits.max_observation_chars` and checked before any work is done.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::LimitsTuning;
use crate::error::{CoreError, Result};
use crate::id::ObservationId;
use crate::kind::text_enum;
use crate::scope::Scope;

/// Longest tool name, in characters: a tool is named like an id (`edit_file`, `cargo test`).
pub const MAX_TOOL_CHARS: usize = 128;

text_enum!(
    /// How an action ended. A correction is the strongest signal: a person said what was wrong.
    Outcome, "outcome" {
        /// It did what was wanted.
        Success => "success",
        /// It failed (an error, a failing test, a refused command).
        Failure => "failure",
        /// A person corrected it; the observation's `text` says what was right.
        Corrected => "corrected",
    }
);

/// One recorded action of an agent in one session (the scope's chat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Its id, time-ordered.
    pub id: ObservationId,
    /// Tenant, agent (if any), user (if any) and the session's chat (always).
    pub owner: Scope,
    /// The tool or action (`edit_file`, `run_tests`).
    pub tool: String,
    /// What it was applied to, in a few words (`SwiftUI view ProfileView.swift`).
    pub args_summary: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What was learned, in words: the correction a person made, the error seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// When it happened.
    pub at: DateTime<Utc>,
}

impl Observation {
    /// A new observation of `owner`'s session, after [`check`] has accepted its texts.
    pub fn new(
        owner: Scope,
        tool: &str,
        args_summary: &str,
        outcome: Outcome,
        text: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<Self> {
        owner.require_chat()?;
        Ok(Self {
            id: ObservationId::new(),
            owner,
            tool: tool.trim().to_string(),
            args_summary: args_summary.trim().to_string(),
            outcome,
            text: text.map(str::trim).filter(|t| !t.is_empty()).map(str::to_string),
            at,
        })
    }

    /// The text an observation is embedded and clustered by: the situation (tool and
    /// arguments) and what was learned.
    pub fn embedding_text(&self) -> String {
        match &self.text {
            Some(t) => format!("{} {}. {t}", self.tool, self.args_summary),
            None => format!("{} {}", self.tool, self.args_summary),
        }
    }
}

/// Refuses an observation whose tool, arguments or text are empty where required, too long, or
/// (the tool) hold a control character, naming the field and the setting.
pub fn check(tool: &str, args_summary: &str, text: Option<&str>, l: &LimitsTuning) -> Result<()> {
    let tool_chars = tool.trim().chars().count();
    if tool_chars == 0 || tool_chars > MAX_TOOL_CHARS || tool.chars().any(char::is_control) {
        return Err(CoreError::OutOfRange {
            field: "tool",
            reason: format!(
                "{tool_chars} characters or a control character; a tool is named in 1 to {MAX_TOOL_CHARS} characters"
            ),
        });
    }
    if args_summary.trim().is_empty() {
        return Err(CoreError::OutOfRange { field: "args_summary", reason: "must not be empty".into() });
    }
    for (field, value) in [("args_summary", Some(args_summary)), ("text", text)] {
        let chars = value.map_or(0, |v| v.chars().count());
        if chars > l.max_observation_chars {
            return Err(CoreError::OutOfRange {
                field,
                reason: format!(
                    "{chars} characters; the limit is {} (limits.max_observation_chars): summarise it, or keep the \
                     whole output as a document",
                    l.max_observation_chars
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_name_the_field_and_the_setting() {
        let l = LimitsTuning { max_observation_chars: 10, ..LimitsTuning::default() };
        assert!(check("edit_file", "view.swift", Some("add labels"), &l).is_ok());
        let e = check("", "x", None, &l).unwrap_err().to_string();
        assert!(e.contains("tool"), "{e}");
        let e = check("a\u{7}b", "x", None, &l).unwrap_err().to_string();
        assert!(e.contains("control"), "{e}");
        let e = check("t", "  ", None, &l).unwrap_err().to_string();
        assert!(e.contains("args_summary") && e.contains("empty"), "{e}");
        let e = check("t", &"a".repeat(11), None, &l).unwrap_err().to_string();
        assert!(e.contains("args_summary") && e.contains("max_observation_chars"), "{e}");
        let e = check("t", "x", Some(&"é".repeat(11)), &l).unwrap_err().to_string();
        assert!(e.contains("text") && e.contains("11 characters"), "{e}");
    }

    #[test]
    fn an_observation_belongs_to_a_session() {
        let at = "2026-03-02T09:00:00Z".parse().unwrap();
        let no_chat = Scope::parse("t", Some("coder"), Some("u"), None).unwrap();
        assert!(Observation::new(no_chat.clone(), "t", "x", Outcome::Success, None, at).is_err());
        let o =
            Observation::new(no_chat.with_chat("s1".parse().unwrap()), " t ", " x ", Outcome::Failure, Some(" "), at)
                .unwrap();
        assert_eq!((o.tool.as_str(), o.args_summary.as_str(), o.text), ("t", "x", None));
        assert_eq!("corrected".parse::<Outcome>().unwrap(), Outcome::Corrected);
    }
}
