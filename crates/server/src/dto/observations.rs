//! Wire types of `/v1/observations`: what a coding agent did in a session, recorded so that
//! patterns recurring across sessions become skill candidates (`/v1/candidates`).

use chrono::{DateTime, Utc};
use mnemo::core::{Observation, Outcome};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// How an action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeName {
    /// It did what was wanted.
    Success,
    /// It failed (an error, a failing test, a refused command).
    Failure,
    /// A person corrected it; `text` says what was right. Patterns of corrections become
    /// skill candidates after fewer sessions and rank first.
    Corrected,
}

impl From<OutcomeName> for Outcome {
    fn from(o: OutcomeName) -> Self {
        match o {
            OutcomeName::Success => Outcome::Success,
            OutcomeName::Failure => Outcome::Failure,
            OutcomeName::Corrected => Outcome::Corrected,
        }
    }
}

impl From<Outcome> for OutcomeName {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Success => OutcomeName::Success,
            Outcome::Failure => OutcomeName::Failure,
            Outcome::Corrected => OutcomeName::Corrected,
        }
    }
}

/// `POST /v1/observations`: one action of an agent in one session.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveRequest {
    /// The user the agent works for, if any (a paused or disabled user's actions are refused).
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent; skills mined from its observations belong to it (to the tenant without one).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The session: observations in distinct chats are what makes a pattern recur.
    pub chat_id: String,
    /// The tool or action (`edit_file`, `run_tests`), at most 128 characters.
    pub tool: String,
    /// What it was applied to, in a few words; at most `limits.max_observation_chars`.
    pub args_summary: String,
    /// How it ended.
    pub outcome: OutcomeName,
    /// What was learned: the correction a person made, the error seen. PII is redacted.
    #[serde(default)]
    pub text: Option<String>,
}

/// One stored observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ObservationOut {
    /// Its id.
    pub id: String,
    /// The user, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The agent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The session.
    pub chat_id: String,
    /// The tool.
    pub tool: String,
    /// What it was applied to (redacted).
    pub args_summary: String,
    /// How it ended.
    pub outcome: OutcomeName,
    /// What was learned (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// When it was recorded.
    pub at: DateTime<Utc>,
}

impl From<&Observation> for ObservationOut {
    fn from(o: &Observation) -> Self {
        Self {
            id: o.id.to_string(),
            user_id: o.owner.user.as_ref().map(ToString::to_string),
            agent_id: o.owner.agent.as_ref().map(ToString::to_string),
            chat_id: o.owner.chat.as_ref().map(ToString::to_string).unwrap_or_default(),
            tool: o.tool.clone(),
            args_summary: o.args_summary.clone(),
            outcome: o.outcome.into(),
            text: o.text.clone(),
            at: o.at,
        }
    }
}

/// The answer to `POST /v1/observations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StoredObservationOut {
    /// The observation as stored.
    pub observation: ObservationOut,
    /// Set when it was stored without a vector (the embedder failed): it is then mined by its
    /// words only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
}

/// Query of `GET /v1/observations`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ObservationQuery {
    /// The user (without it: observations recorded without a user).
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent (without it: observations recorded without an agent).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Only this session.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// Page size, 1..=500 (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Observations skipped.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// A page of observations, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ObservationList {
    /// Newest first.
    pub items: Vec<ObservationOut>,
}
