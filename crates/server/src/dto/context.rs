//! `POST /v1/context`: the token-budgeted block, both as prompt text and as sections.
//!
//! Sections say which lines are cacheable and what was held back, so an application can place
//! the stable prefix where a prompt cache keeps it and see what the budget cost.

use mnemo::ContextResult;
use mnemo::core::assemble::{BlockItem, HeldBack, Section};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::UserStateName;

/// `POST /v1/context`: the token-budgeted memory block for the next turn.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// The end user.
    pub user_id: String,
    /// The agent, if any.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The conversation.
    pub chat_id: String,
    /// The user's new message.
    pub message: String,
    /// Token budget for the block; the configured default if absent.
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// One line of a context section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BlockItemOut {
    /// Memory id, `policy:<key>@v<version>`, or a message id.
    pub id: String,
    /// Memory kind, `policy` or `message`.
    pub kind: String,
    /// The rendered line.
    pub text: String,
    /// Surface policy of a memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// Total score of a ranked memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// Tokens this line costs.
    pub tokens: usize,
    /// How much of a ranked memory or a past message the line carries: `l2` whole, `l1` the
    /// sentences that bear on the message, `l0` a gist; stepped down only to fit the budget,
    /// the whole text stays retrievable by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The day a past message was said (`YYYY-MM-DD`); the block writes it once, above that
    /// day's lines, so `text` does not repeat it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
}

impl From<&BlockItem> for BlockItemOut {
    fn from(i: &BlockItem) -> Self {
        Self {
            id: i.id.clone(),
            kind: i.kind.clone(),
            text: i.text.clone(),
            surface: i.surface.map(|s| s.to_string()),
            score: i.score.map(|s| s.total),
            tokens: i.tokens,
            detail: i.detail.map(|d| d.to_string()),
            day: i.day.map(|d| d.format("%Y-%m-%d").to_string()),
        }
    }
}

/// One section of the block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SectionOut {
    /// `pinned`, `policy`, `preference`, `avoid`, `memo`, `adapt`, `fact_check`, `speak`,
    /// `continue`, `excerpt` (past messages, verbatim), `recent`.
    pub name: String,
    /// The heading the model reads.
    pub title: String,
    /// Depends only on stored state, not on the message: safe to prompt-cache.
    pub cacheable: bool,
    /// Its lines.
    pub items: Vec<BlockItemOut>,
}

impl From<&Section> for SectionOut {
    fn from(s: &Section) -> Self {
        Self {
            name: s.name.to_string(),
            title: s.title.clone(),
            cacheable: s.cacheable,
            items: s.items.iter().map(BlockItemOut::from).collect(),
        }
    }
}

/// Something relevant left out of the block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeldBackOut {
    /// Its id.
    pub id: String,
    /// `budget`, `surfaced_recently` or `in_source_turn` (a memory whose own turns are in the block verbatim).
    pub reason: String,
}

impl From<&HeldBack> for HeldBackOut {
    fn from(h: &HeldBack) -> Self {
        Self { id: h.id.clone(), reason: h.reason.to_string() }
    }
}

/// What `POST /v1/context` assembled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ContextOut {
    /// The block as text, ready for the prompt.
    pub text: String,
    /// The same block as sections, in rendering order.
    pub sections: Vec<SectionOut>,
    /// Tokens of `text`.
    pub tokens: usize,
    /// The budget it was assembled for.
    pub budget: usize,
    /// What was left out, and why.
    pub held_back: Vec<HeldBackOut>,
    /// Trace turn of this call (empty when the user is disabled: nothing was recorded).
    pub turn_id: String,
    /// Retrieval signals used.
    pub mode: String,
    /// Present when the user is paused or disabled: the block holds policies and the chat's
    /// recent window only, no memories, excerpts or memos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<UserStateName>,
}

impl From<&ContextResult> for ContextOut {
    fn from(r: &ContextResult) -> Self {
        let b = &r.block;
        Self {
            text: b.text.clone(),
            sections: b.sections.iter().map(SectionOut::from).collect(),
            tokens: b.tokens,
            budget: b.budget,
            held_back: b.held_back.iter().map(HeldBackOut::from).collect(),
            turn_id: r.turn_id.clone(),
            mode: r.mode.to_string(),
            user_state: r.user_state.map(UserStateName::from),
        }
    }
}
