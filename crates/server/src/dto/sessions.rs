//! Wire types of `/v1/sessions/{chat_id}`: a coding agent's context window — how full it is and
//! what it holds (`/usage`), and the rotation of a full segment into a continuation bundle
//! (`/rotate`). The session is the chat: its id never changes.

use mnemo::core::detail::Detail;
use mnemo::core::window::{Bundle, HeldKind, ItemAdvice, Protection, ShedAction, Stage, UsageAdvice, WindowTuning};
use mnemo::{HeldItem, HeldRef, Rotation};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;

/// What a held item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeldKindName {
    /// A memory, by `id`.
    Memory,
    /// A stored document, by `id`.
    Document,
    /// Messages of this session, by their `ids`.
    Messages,
}

impl From<HeldKind> for HeldKindName {
    fn from(k: HeldKind) -> Self {
        match k {
            HeldKind::Memory => Self::Memory,
            HeldKind::Document => Self::Document,
            HeldKind::Messages => Self::Messages,
        }
    }
}

/// One item in the agent's window.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeldItemIn {
    /// What it is.
    pub kind: HeldKindName,
    /// The memory's or document's id.
    #[serde(default)]
    pub id: Option<String>,
    /// The messages' ids (`kind: messages`), each a message of this session.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// The level it is held at: `L0` (a gist), `L1` (an overview or focus) or `L2` (whole, the
    /// default).
    #[serde(default)]
    pub level: Option<String>,
    /// What it costs in the window, by the agent's own count; counted from the text when absent.
    #[serde(default)]
    pub tokens: Option<usize>,
}

/// The level a request names (`L0`, `l1`, ...), else L2.
pub(crate) fn level(raw: Option<&str>, index: usize) -> Result<Detail, ApiError> {
    raw.map_or(Ok(Detail::Full), |l| {
        l.parse().map_err(|_| ApiError::Invalid(format!("items[{index}].level {l:?} is not L0, L1 or L2")))
    })
}

impl HeldItemIn {
    /// The engine's item: ids parsed, the fields the kind needs present and no others.
    pub(crate) fn parse(self, index: usize) -> Result<HeldItem, ApiError> {
        let level = level(self.level.as_deref(), index)?;
        let item = match (self.kind, self.id, self.ids) {
            (HeldKindName::Memory, Some(id), None) => HeldRef::Memory(id.parse()?),
            (HeldKindName::Document, Some(id), None) => HeldRef::Document(id.parse()?),
            (HeldKindName::Messages, None, Some(ids)) => {
                HeldRef::Messages(ids.iter().map(|i| i.parse()).collect::<Result<_, _>>()?)
            }
            (HeldKindName::Messages, ..) => {
                return Err(ApiError::Invalid(format!("items[{index}]: messages are named by `ids`, not `id`")));
            }
            (kind, ..) => {
                let kind = serde_json::to_value(kind).unwrap_or_default();
                return Err(ApiError::Invalid(format!("items[{index}]: a {kind} is named by `id`, not `ids`")));
            }
        };
        Ok(HeldItem { item, level, tokens: self.tokens })
    }
}

/// `POST /v1/sessions/{chat_id}/usage`: how full the agent's window is and what it holds.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageRequest {
    /// The user the agent works for.
    pub user_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Tokens in the window now, everything included (at most `capacity_tokens`).
    pub used_tokens: usize,
    /// The window's size in tokens (at least 1, at most `sessions.max_capacity_tokens`).
    pub capacity_tokens: usize,
    /// What the window holds that mnemo can give back (at most `sessions.max_items`, message ids
    /// counted one by one).
    #[serde(default)]
    pub items: Vec<HeldItemIn>,
}

/// How full the window is, by the thresholds it has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StageName {
    /// Below `sessions.step_down_at`: keep everything.
    Ok,
    /// Past `step_down_at`: step items down to L1.
    StepDown,
    /// Past `shed_at`: step items down to L0, then release them.
    Shed,
    /// Past `rotate_at`: shed, and rotate the segment.
    Rotate,
}

impl From<Stage> for StageName {
    fn from(s: Stage) -> Self {
        match s {
            Stage::Ok => Self::Ok,
            Stage::StepDown => Self::StepDown,
            Stage::Shed => Self::Shed,
            Stage::Rotate => Self::Rotate,
        }
    }
}

/// What to do with one held item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShedActionName {
    /// Keep it as held.
    Keep,
    /// Put `text` (its text at level `to`) in its place.
    StepDown,
    /// Drop it from the window; it stays one call away.
    Release,
}

impl From<ShedAction> for ShedActionName {
    fn from(a: ShedAction) -> Self {
        match a {
            ShedAction::Keep => Self::Keep,
            ShedAction::StepDown => Self::StepDown,
            ShedAction::Release => Self::Release,
        }
    }
}

/// Why an item is kept whatever the pressure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProtectionName {
    /// A pinned memory.
    Pinned,
    /// A boundary, or anything else surfaced as "do not raise unless the user does".
    Boundary,
}

impl From<Protection> for ProtectionName {
    fn from(p: Protection) -> Self {
        match p {
            Protection::Pinned => Self::Pinned,
            Protection::Boundary => Self::Boundary,
        }
    }
}

/// The advice for one held item.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ItemAdviceOut {
    /// Its position in the request's `items`.
    pub index: usize,
    /// What it is.
    pub kind: HeldKindName,
    /// Its id (for messages, the first and last ids joined by `..`).
    pub id: String,
    /// What to do.
    pub action: ShedActionName,
    /// The level it is held at (`l0`, `l1`, `l2`).
    pub from: String,
    /// The level to hold it at; absent when released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Tokens the action frees.
    pub saves: usize,
    /// Its text at level `to`, to put in its place (step-downs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why it is kept whatever the pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<ProtectionName>,
}

impl From<&ItemAdvice> for ItemAdviceOut {
    fn from(a: &ItemAdvice) -> Self {
        Self {
            index: a.index,
            kind: a.kind.into(),
            id: a.id.clone(),
            action: a.action.into(),
            from: a.from.to_string(),
            to: a.to.map(|l| l.to_string()),
            saves: a.saves,
            text: a.text.clone(),
            protected: a.protected.map(Into::into),
        }
    }
}

/// The thresholds in force, as shares of the window.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ThresholdsOut {
    /// Step items down to L1 from this share.
    pub step_down_at: f32,
    /// Step down to L0 and release from this share.
    pub shed_at: f32,
    /// Rotate from this share.
    pub rotate_at: f32,
}

impl From<&WindowTuning> for ThresholdsOut {
    fn from(t: &WindowTuning) -> Self {
        Self { step_down_at: t.step_down_at, shed_at: t.shed_at, rotate_at: t.rotate_at }
    }
}

/// What to do at the reported usage.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsageOut {
    /// The thresholds passed.
    pub stage: StageName,
    /// `used_tokens / capacity_tokens`.
    pub usage: f32,
    /// What the advice aims at: tokens under the first threshold.
    pub target_tokens: usize,
    /// Tokens in use once the advice is followed.
    pub projected_tokens: usize,
    /// Past the last threshold: call `POST /v1/sessions/{chat_id}/rotate`.
    pub rotate: bool,
    /// Every held item, least valuable first; pinned items and boundaries last, always kept.
    pub items: Vec<ItemAdviceOut>,
    /// The thresholds in force.
    pub thresholds: ThresholdsOut,
}

impl UsageOut {
    /// The advice as the API answers it.
    pub fn new(a: &UsageAdvice, t: &WindowTuning) -> Self {
        Self {
            stage: a.stage.into(),
            usage: a.usage,
            target_tokens: a.target_tokens,
            projected_tokens: a.projected_tokens,
            rotate: a.rotate,
            items: a.items.iter().map(ItemAdviceOut::from).collect(),
            thresholds: t.into(),
        }
    }
}

/// `POST /v1/sessions/{chat_id}/rotate`: start a new segment of the session.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateRequest {
    /// The user the agent works for.
    pub user_id: String,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Token budget of the bundle; `sessions.bundle_tokens` (2,000) when absent.
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// One part of the bundle.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BundlePartOut {
    /// `pinned`, `memory_md`, `continuity` or `recent`.
    pub name: String,
    /// Its text, heading included.
    pub text: String,
    /// Its tokens (cl100k).
    pub tokens: usize,
    /// Memories it carries.
    pub memory_ids: Vec<String>,
}

/// What the new segment starts from.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BundleOut {
    /// The parts joined: put it at the start of the new segment.
    pub text: String,
    /// Tokens of `text`, at most `budget`.
    pub tokens: usize,
    /// The budget it was built for.
    pub budget: usize,
    /// The parts placed, in rendering order.
    pub parts: Vec<BundlePartOut>,
    /// Memories that did not fit, each one call away.
    pub held_back: Vec<String>,
}

impl From<&Bundle> for BundleOut {
    fn from(b: &Bundle) -> Self {
        Self {
            text: b.text.clone(),
            tokens: b.tokens,
            budget: b.budget,
            parts: b
                .parts
                .iter()
                .map(|p| BundlePartOut {
                    name: p.name.to_string(),
                    text: p.text.clone(),
                    tokens: p.tokens,
                    memory_ids: p.memories.iter().map(|m| m.to_string()).collect(),
                })
                .collect(),
            held_back: b.held_back.iter().map(|m| m.to_string()).collect(),
        }
    }
}

/// What a rotation did.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RotationOut {
    /// The session: the same chat id, before and after.
    pub chat_id: String,
    /// Messages of the segment extracted now, before the bundle was built.
    pub extracted: usize,
    /// Extraction batches run now.
    pub batches: usize,
    /// The continuation bundle.
    pub bundle: BundleOut,
    /// Trace turn recording the rotation (`GET /v1/traces/{turn_id}`).
    pub turn_id: String,
    /// Wall time of the call, in microseconds.
    pub micros: u64,
    /// Of which draining extraction.
    pub extract_micros: u64,
}

impl From<&Rotation> for RotationOut {
    fn from(r: &Rotation) -> Self {
        Self {
            chat_id: r.scope.chat.as_ref().map(|c| c.to_string()).unwrap_or_default(),
            extracted: r.extracted,
            batches: r.batches,
            bundle: (&r.bundle).into(),
            turn_id: r.turn_id.clone(),
            micros: r.micros,
            extract_micros: r.extract_micros,
        }
    }
}
