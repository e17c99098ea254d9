//! Context window management for long agent sessions: what to shed when the window fills, and
//! the continuation bundle a rotated segment leaves behind.
//!
//! A coding agent reports how full its window is and what it holds (memories, documents,
//! message ranges, each at a level of [`crate::detail`]). Past configurable thresholds of the
//! capacity ([`WindowTuning`]: 60 / 75 / 90 % by default) the advice steps held items down
//! L2 → L1 → L0 and then releases them, least valuable first, the way assembly sheds a block
//! (the best keep the most detail); past the last threshold it also says to rotate: start a new
//! segment of the same session from a [`Bundle`] (MEMORY.md of what is known, pinned items and
//! boundaries, the recent tail, a continuity note). Nothing the agent sheds is lost to mnemo: a
//! memory or document is one call away at any level, and messages stay in the trace, where
//! archival recall finds them.
//!
//! Pure: the engine resolves ids and texts, this module decides.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::detail::{Detail, gist};
use crate::error::{CoreError, Result};
use crate::export::memory_md;
use crate::kind::text_enum;
use crate::memory::Memory;
use crate::message::Message;
use crate::tokens;

/// Thresholds and budgets of context-window management (`[sessions]` in `mnemo.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WindowTuning {
    /// Share of the capacity from which held items are stepped down to L1 (overviews, focus).
    pub step_down_at: f32,
    /// Share from which items are stepped down to L0 and then released.
    pub shed_at: f32,
    /// Share from which the segment should rotate (`POST /v1/sessions/{chat_id}/rotate`).
    pub rotate_at: f32,
    /// Token budget of a rotation's continuation bundle when the call gives none.
    pub bundle_tokens: usize,
    /// Most messages of the recent tail a bundle carries (fewer when the budget is short).
    pub tail_messages: usize,
    /// Open loops and settled items the continuity note lists, each.
    pub continuity_items: usize,
    /// Most held items one usage report may list.
    pub max_items: usize,
    /// Largest window (`capacity_tokens`) a report may claim.
    pub max_capacity_tokens: usize,
}

impl Default for WindowTuning {
    fn default() -> Self {
        Self {
            step_down_at: 0.60,
            shed_at: 0.75,
            rotate_at: 0.90,
            bundle_tokens: 2_000,
            tail_messages: 12,
            continuity_items: 8,
            max_items: 1_000,
            max_capacity_tokens: 10_000_000,
        }
    }
}

impl WindowTuning {
    /// Rejects thresholds that are not ascending shares of the window, and zero budgets.
    pub fn validate(&self) -> Result<()> {
        let shares = [
            ("sessions.step_down_at", self.step_down_at),
            ("sessions.shed_at", self.shed_at),
            ("sessions.rotate_at", self.rotate_at),
        ];
        for (key, v) in shares {
            if !(v > 0.0 && v <= 1.0) {
                return Err(CoreError::InvalidConfig { key: key.into(), reason: format!("{v} is outside (0, 1]") });
            }
        }
        for pair in shares.windows(2) {
            let ((lower, a), (upper, b)) = (pair[0], pair[1]);
            if a >= b {
                return Err(CoreError::InvalidConfig {
                    key: upper.into(),
                    reason: format!("{b} must be above {lower} {a}: the thresholds ascend"),
                });
            }
        }
        let counts = [
            ("sessions.bundle_tokens", self.bundle_tokens),
            ("sessions.max_items", self.max_items),
            ("sessions.max_capacity_tokens", self.max_capacity_tokens),
        ];
        for (key, v) in counts {
            if v == 0 {
                return Err(CoreError::InvalidConfig { key: key.into(), reason: "must be at least 1".into() });
            }
        }
        Ok(())
    }
}

text_enum!(
    /// What a held item is.
    HeldKind, "held item kind" {
        /// A memory, by id.
        Memory => "memory",
        /// A stored document, by id.
        Document => "document",
        /// Messages of this session, by their ids.
        Messages => "messages",
    }
);

text_enum!(
    /// How full the window is, by the thresholds it has passed.
    Stage, "stage" {
        /// Below the first threshold: keep everything.
        Ok => "ok",
        /// Past `step_down_at`: step items down to L1.
        StepDown => "step_down",
        /// Past `shed_at`: step items down to L0, then release them.
        Shed => "shed",
        /// Past `rotate_at`: shed, and rotate the segment.
        Rotate => "rotate",
    }
);

text_enum!(
    /// Why an item is never shed.
    Protection, "protection" {
        /// A pinned memory: always known.
        Pinned => "pinned",
        /// A boundary or anything else surfaced as "do not raise unless the user does": the
        /// agent must keep it in view to keep it.
        Boundary => "boundary",
    }
);

text_enum!(
    /// What to do with one held item.
    ShedAction, "shed action" {
        /// Keep it as held.
        Keep => "keep",
        /// Replace it with its text at a lower level.
        StepDown => "step_down",
        /// Drop it from the window; it stays one call away.
        Release => "release",
    }
);

/// One held item as the engine resolved it: its texts at every level, whether it is protected,
/// and how valuable it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// Its position in the report.
    pub index: usize,
    /// What it is.
    pub kind: HeldKind,
    /// Its id (for messages, the first and last ids joined by "..").
    pub id: String,
    /// The level the agent holds it at.
    pub level: Detail,
    /// Its text at L0, L1 and L2.
    pub levels: [String; 3],
    /// Tokens it costs the agent now: the agent's own count when it sent one, else the text at
    /// its level counted here.
    pub tokens: usize,
    /// Set for pinned memories and boundaries, which are never shed.
    pub protected: Option<Protection>,
    /// How much it is worth keeping, 0..=1 (salience times decay strength for a memory,
    /// recency for documents and messages; 0 for a memory no longer active).
    pub value: f32,
}

impl Held {
    /// Its text at a level.
    pub fn at(&self, level: Detail) -> &str {
        &self.levels[rank(level)]
    }
}

fn rank(level: Detail) -> usize {
    match level {
        Detail::Gist => 0,
        Detail::Focus => 1,
        Detail::Full => 2,
    }
}

/// Shedding order between kinds: a document comes back whole with one call and a message range
/// through archival recall, while a memory is what the agent knows; so documents go first,
/// then messages, then memories.
fn class(kind: HeldKind) -> u8 {
    match kind {
        HeldKind::Document => 0,
        HeldKind::Messages => 1,
        HeldKind::Memory => 2,
    }
}

/// The advice for one held item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemAdvice {
    /// Its position in the report.
    pub index: usize,
    /// What it is.
    pub kind: HeldKind,
    /// Its id (for messages, the first and last ids joined by "..").
    pub id: String,
    /// What to do.
    pub action: ShedAction,
    /// The level it is held at.
    pub from: Detail,
    /// The level to hold it at; absent when released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Detail>,
    /// Tokens the action frees (0 to keep).
    pub saves: usize,
    /// Its text at the new level, to put in place of the old (step-downs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why it is kept whatever the pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<Protection>,
}

/// What to do at the reported usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageAdvice {
    /// The thresholds passed.
    pub stage: Stage,
    /// `used_tokens / capacity_tokens`.
    pub usage: f32,
    /// Tokens the advice aims at: below the first threshold.
    pub target_tokens: usize,
    /// Tokens in use once the advice is followed.
    pub projected_tokens: usize,
    /// Past the last threshold: rotate the segment (after following the advice or instead).
    pub rotate: bool,
    /// Every held item, least valuable first, protected ones last.
    pub items: Vec<ItemAdvice>,
}

/// Refuses a usage report the advice cannot mean anything for: no capacity, a capacity beyond
/// `max_capacity_tokens`, more in use than the window holds, more items than `max_items`.
pub fn check_usage(used: usize, capacity: usize, items: usize, t: &WindowTuning) -> Result<()> {
    crate::limits::check_count("capacity_tokens", capacity, 1, t.max_capacity_tokens, "sessions.max_capacity_tokens")?;
    if used > capacity {
        return Err(CoreError::OutOfRange {
            field: "used_tokens",
            reason: format!("{used} is above capacity_tokens {capacity}: a window cannot hold more than it fits"),
        });
    }
    crate::limits::check_count("items", items, 0, t.max_items, "sessions.max_items")
}

/// The stage a usage share has reached.
pub fn stage(usage: f32, t: &WindowTuning) -> Stage {
    match usage {
        u if u >= t.rotate_at => Stage::Rotate,
        u if u >= t.shed_at => Stage::Shed,
        u if u >= t.step_down_at => Stage::StepDown,
        _ => Stage::Ok,
    }
}

/// One move of progressive shedding: to a level, or out of the window.
#[derive(Clone, Copy)]
enum Round {
    To(Detail),
    Release,
}

/// The advice for `used` of `capacity` tokens with `held` in the window (checked with
/// [`check_usage`] first).
///
/// From `step_down_at` every unprotected item is stepped down to L1, least valuable first,
/// until the projected use is back under `step_down_at`; from `shed_at` the rounds go on to L0
/// and then release. An item moves one level per round, so the most valuable keep the most
/// detail; a step that frees nothing (a memory's L1 is itself) is not advised. Pinned items and
/// boundaries are always kept, no level is ever raised, and a fuller window never gets a
/// milder advice (the rounds of a lower stage are a prefix of a higher one's).
pub fn advise(used: usize, capacity: usize, held: &[Held], t: &WindowTuning) -> UsageAdvice {
    let usage = used as f32 / capacity.max(1) as f32;
    let stage = stage(usage, t);
    let target = (t.step_down_at as f64 * capacity as f64).floor() as usize;
    let rounds: &[Round] = match stage {
        Stage::Ok => &[],
        Stage::StepDown => &[Round::To(Detail::Focus)],
        Stage::Shed | Stage::Rotate => &[Round::To(Detail::Focus), Round::To(Detail::Gist), Round::Release],
    };
    let mut order: Vec<&Held> = held.iter().collect();
    order.sort_by(|a, b| {
        a.protected
            .is_some()
            .cmp(&b.protected.is_some())
            .then(class(a.kind).cmp(&class(b.kind)))
            .then(a.value.partial_cmp(&b.value).unwrap_or(Ordering::Equal))
            .then(a.index.cmp(&b.index))
    });
    // Per item, in `order`: the level it ends at (None: released) and what it costs then.
    let mut now: Vec<(Option<Detail>, usize)> = order.iter().map(|h| (Some(h.level), h.tokens)).collect();
    let mut projected = used;
    'rounds: for round in rounds {
        for (i, h) in order.iter().enumerate() {
            if projected <= target {
                break 'rounds;
            }
            if h.protected.is_some() {
                continue;
            }
            let (level, cost) = now[i];
            let Some(level) = level else { continue };
            let next = match *round {
                Round::To(to) if to < level => Some(to),
                Round::To(_) => continue,
                Round::Release => None,
            };
            let next_cost = next.map_or(0, |l| tokens::count(h.at(l)).min(cost));
            if next_cost >= cost {
                continue;
            }
            // The agent's count of the window and ours of an item may disagree: never below 0.
            projected = projected.saturating_sub(cost - next_cost);
            now[i] = (next, next_cost);
        }
    }
    let items = order
        .iter()
        .zip(&now)
        .map(|(h, &(to, cost))| {
            let action = match to {
                Some(l) if l == h.level => ShedAction::Keep,
                Some(_) => ShedAction::StepDown,
                None => ShedAction::Release,
            };
            ItemAdvice {
                index: h.index,
                kind: h.kind,
                id: h.id.clone(),
                action,
                from: h.level,
                to,
                saves: h.tokens - cost,
                text: (action == ShedAction::StepDown).then(|| to.map(|l| h.at(l).to_string())).flatten(),
                protected: h.protected,
            }
        })
        .collect();
    UsageAdvice {
        stage,
        usage,
        target_tokens: target,
        projected_tokens: projected,
        rotate: stage == Stage::Rotate,
        items,
    }
}

/// The texts of a memory at L0, L1 and L2: a memory is one statement, so its L1 is itself.
pub fn memory_levels(content: &str) -> [String; 3] {
    [gist(content), content.to_string(), content.to_string()]
}

/// The texts of a run of messages at L0, L1 and L2: one gist line for the run, a gist line per
/// message, every message whole.
pub fn message_levels(messages: &[Message]) -> [String; 3] {
    let line = |m: &Message, text: &str| format!("{}: {}", m.role, text.trim());
    let full = messages.iter().map(|m| line(m, &m.content)).collect::<Vec<_>>().join("\n");
    let focus = messages.iter().map(|m| line(m, &gist(&m.content))).collect::<Vec<_>>().join("\n");
    let first = messages.iter().find(|m| m.role == crate::message::Role::User).or(messages.first());
    let whole = match (first, messages.len()) {
        (Some(m), n) => format!("{n} messages: {}", gist(&m.content)),
        (None, _) => String::new(),
    };
    [whole, focus, full]
}

text_enum!(
    /// The parts of a continuation bundle, in the order the bundle renders them.
    PartName, "bundle part" {
        /// Pinned memories and boundaries.
        Pinned => "pinned",
        /// MEMORY.md of what is known.
        MemoryMd => "memory_md",
        /// What the agent was working on: its last request, open loops, what was settled.
        Continuity => "continuity",
        /// The last messages of the session, closest to the next turn.
        Recent => "recent",
    }
);

/// One part of a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundlePart {
    /// Which part.
    pub name: PartName,
    /// Its text, heading included.
    pub text: String,
    /// Tokens of `text` (cl100k).
    pub tokens: usize,
    /// Memories it carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<crate::id::MemoryId>,
}

/// What a new segment starts from, within a token budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// The parts placed, in rendering order; an empty part is left out.
    pub parts: Vec<BundlePart>,
    /// The parts joined: what the new segment's prompt starts with.
    pub text: String,
    /// Tokens of `text`, at most `budget`.
    pub tokens: usize,
    /// The budget it was built for.
    pub budget: usize,
    /// Memories that did not fit (pinned items and boundaries are placed whole or held back
    /// whole; MEMORY.md rows are dropped least valuable first). Each is one call away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_back: Vec<crate::id::MemoryId>,
}

/// What a bundle is built from, gathered by the engine.
#[derive(Debug, Clone, Copy)]
pub struct BundleInput<'a> {
    /// Who MEMORY.md is about ("user dana").
    pub subject: &'a str,
    /// Pinned memories and boundaries, in the order they should be kept.
    pub pinned: &'a [Memory],
    /// Every other active memory of the scope, most valuable first.
    pub knowledge: &'a [Memory],
    /// The session's open loops, soonest due first.
    pub open_loops: &'a [Memory],
    /// Memories the session settled (decisions, corrections, facts), newest first.
    pub settled: &'a [Memory],
    /// The session's last messages, oldest first.
    pub recent: &'a [Message],
    /// When, for MEMORY.md's header.
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Builds the continuation bundle within `budget` tokens.
///
/// Room is given in order of need: pinned items and boundaries, each whole or held back whole;
/// the continuity note (the last request, where the rest of the session is, open loops, what
/// was settled); the recent tail, newest messages first, within half of what is left; MEMORY.md
/// of the remaining knowledge with as many of the most valuable rows as fit. The parts render
/// stable first (pinned, MEMORY.md, continuity, recent tail next to the new turn). The whole is
/// counted again at the end and trimmed from the least needed part until it fits.
pub fn bundle(input: BundleInput<'_>, budget: usize, t: &WindowTuning) -> Bundle {
    let mut held_back = Vec::new();
    let sep = 1; // the blank line between parts
    let mut left = budget;

    let mut pinned_lines = Vec::new();
    let mut pinned_ids = Vec::new();
    let heading = "## Always known (pinned and boundaries)";
    let mut pinned_cost = tokens::count(heading) + sep;
    for m in input.pinned {
        let line = pinned_line(m);
        let cost = tokens::line_cost(&line);
        if pinned_cost + cost <= left {
            pinned_cost += cost;
            pinned_lines.push(line);
            pinned_ids.push(m.id);
        } else {
            held_back.push(m.id);
        }
    }
    let pinned = part(PartName::Pinned, heading, &pinned_lines, pinned_ids);
    left = left.saturating_sub(pinned.as_ref().map_or(0, |p| p.tokens + sep));

    let continuity_lines = continuity_lines(&input, t);
    let mut placed = Vec::new();
    let mut ids = Vec::new();
    let heading = "## Continuity";
    let mut cost_so_far = tokens::count(heading) + sep;
    for (line, id) in continuity_lines {
        let cost = tokens::line_cost(&line);
        if cost_so_far + cost > left {
            break;
        }
        cost_so_far += cost;
        placed.push(line);
        ids.extend(id);
    }
    let continuity = part(PartName::Continuity, heading, &placed, ids);
    left = left.saturating_sub(continuity.as_ref().map_or(0, |p| p.tokens + sep));

    let heading = "## Recent messages";
    let tail_budget = if input.knowledge.is_empty() { left } else { left / 2 };
    let mut tail = Vec::new();
    let mut cost_so_far = tokens::count(heading) + sep;
    for m in input.recent.iter().rev().take(t.tail_messages) {
        let line = format!("{}: {}", m.role, m.content.trim());
        let cost = tokens::line_cost(&line);
        if cost_so_far + cost > tail_budget {
            break;
        }
        cost_so_far += cost;
        tail.push(line);
    }
    tail.reverse();
    let recent = part(PartName::Recent, heading, &tail, Vec::new());
    left = left.saturating_sub(recent.as_ref().map_or(0, |p| p.tokens + sep));

    let (mut md, mut kept) = knowledge_part(&input, left);
    let mut parts: Vec<BundlePart> = [pinned, continuity, recent].into_iter().flatten().collect();
    loop {
        let mut all: Vec<&BundlePart> = parts.iter().chain(md.as_ref()).collect();
        all.sort_by_key(|p| p.name);
        let text = render(&all);
        let total = tokens::count(&text);
        if total <= budget {
            held_back.extend(input.knowledge[kept..].iter().map(|m| m.id));
            parts.extend(md);
            parts.sort_by_key(|p| p.name);
            return Bundle { parts, text, tokens: total, budget, held_back };
        }
        // Over by the few tokens parts cost together: trim the least needed part by one row.
        if kept > 0 {
            (md, kept) = knowledge_part_of(&input, kept - 1);
        } else if let Some(p) = parts.pop() {
            held_back.extend(p.memories);
        } else {
            return Bundle { parts: Vec::new(), text: String::new(), tokens: 0, budget, held_back };
        }
    }
}

fn render(parts: &[&BundlePart]) -> String {
    parts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n\n")
}

fn part(name: PartName, heading: &str, lines: &[String], memories: Vec<crate::id::MemoryId>) -> Option<BundlePart> {
    if lines.is_empty() {
        return None;
    }
    let text = format!("{heading}\n{}", lines.join("\n"));
    Some(BundlePart { name, tokens: tokens::count(&text), text, memories })
}

fn pinned_line(m: &Memory) -> String {
    match m.surface {
        crate::kind::Surface::Avoid if m.kind != crate::kind::Kind::Protocol => {
            format!("- {} — do not raise unless the user does", m.content.trim())
        }
        _ => format!("- {}", m.content.trim()),
    }
}

/// The continuity note's lines, most needed first, each with the memory it carries.
fn continuity_lines(input: &BundleInput<'_>, t: &WindowTuning) -> Vec<(String, Option<crate::id::MemoryId>)> {
    let mut lines = Vec::new();
    let last_request = input.recent.iter().rev().find(|m| m.role == crate::message::Role::User);
    if let Some(m) = last_request {
        lines.push((format!("Last request: {}", gist(&m.content)), None));
    }
    lines.push((
        "Earlier turns of this session stay in mnemo: recall or context finds them, and every memory is one call away."
            .to_string(),
        None,
    ));
    if !input.open_loops.is_empty() {
        lines.push(("Open loops:".to_string(), None));
        for m in input.open_loops.iter().take(t.continuity_items) {
            let due = m.due_at.map(|d| format!(" (due {})", d.format("%Y-%m-%d"))).unwrap_or_default();
            lines.push((format!("- {}{due}", m.content.trim()), Some(m.id)));
        }
    }
    if !input.settled.is_empty() {
        lines.push(("Settled in this session (newest first):".to_string(), None));
        for m in input.settled.iter().take(t.continuity_items) {
            lines.push((format!("- {}", m.content.trim()), Some(m.id)));
        }
    }
    lines
}

/// MEMORY.md of the most valuable knowledge rows that fit `budget`, and how many rows it holds.
fn knowledge_part(input: &BundleInput<'_>, budget: usize) -> (Option<BundlePart>, usize) {
    if input.knowledge.is_empty() || budget == 0 {
        return (None, 0);
    }
    // Tokens grow with the rows kept, so the most that fit is found by bisection, over no more
    // rows than their contents alone could fill (a row's line holds its content, give or take
    // a token where "- " merges): a scope of thousands renders only what can fit.
    let fits = |k: usize| knowledge_part_of(input, k).0.is_some_and(|p| p.tokens < budget);
    let mut filled = 0;
    let most = input
        .knowledge
        .iter()
        .position(|m| {
            filled += tokens::count(&m.content).saturating_sub(1);
            filled > budget
        })
        .unwrap_or(input.knowledge.len());
    let (mut lo, mut hi) = (0, most);
    if fits(hi) {
        return knowledge_part_of(input, hi);
    }
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    knowledge_part_of(input, lo)
}

/// MEMORY.md of the `k` most valuable knowledge rows (`None` for none).
fn knowledge_part_of(input: &BundleInput<'_>, k: usize) -> (Option<BundlePart>, usize) {
    if k == 0 {
        return (None, 0);
    }
    let rows = &input.knowledge[..k];
    let text = memory_md(input.subject, rows, input.at).trim_end().to_string();
    let memories = rows.iter().map(|m| m.id).collect();
    (Some(BundlePart { name: PartName::MemoryMd, tokens: tokens::count(&text), text, memories }), k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{Kind, Surface};
    use crate::message::Role;
    use crate::scope::Scope;
    use chrono::{DateTime, Utc};
    use proptest::prelude::*;

    fn held(index: usize, kind: HeldKind, level: Detail, words: usize, value: f32) -> Held {
        let full = (0..words).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ") + ".";
        let focus = (0..words / 3).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ") + ".";
        let levels = [gist(&full), focus, full];
        let tokens = tokens::count(&levels[rank(level)]);
        Held { index, kind, id: format!("id{index}"), level, levels, tokens, protected: None, value }
    }

    fn at() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn defaults_are_valid_and_thresholds_must_ascend() {
        WindowTuning::default().validate().unwrap();
        let t = WindowTuning { shed_at: 0.95, ..Default::default() };
        let e = t.validate().unwrap_err().to_string();
        assert!(e.contains("sessions.rotate_at") && e.contains("ascend"), "{e}");
        let t = WindowTuning { step_down_at: 0.0, ..Default::default() };
        assert!(t.validate().unwrap_err().to_string().contains("sessions.step_down_at"));
        let t = WindowTuning { rotate_at: 1.5, ..Default::default() };
        assert!(t.validate().unwrap_err().to_string().contains("sessions.rotate_at"));
        let t = WindowTuning { bundle_tokens: 0, ..Default::default() };
        assert!(t.validate().unwrap_err().to_string().contains("sessions.bundle_tokens"));
    }

    #[test]
    fn bad_reports_name_their_field() {
        let t = WindowTuning::default();
        assert!(check_usage(0, 0, 0, &t).unwrap_err().to_string().contains("capacity_tokens"));
        assert!(check_usage(11, 10, 0, &t).unwrap_err().to_string().contains("used_tokens"));
        assert!(check_usage(1, 10_000_001, 0, &t).unwrap_err().to_string().contains("max_capacity_tokens"));
        assert!(check_usage(1, 10, 1_001, &t).unwrap_err().to_string().contains("sessions.max_items"));
        check_usage(10, 10, 1_000, &t).unwrap();
    }

    #[test]
    fn stages_follow_the_thresholds() {
        let t = WindowTuning::default();
        assert_eq!(stage(0.59, &t), Stage::Ok);
        assert_eq!(stage(0.60, &t), Stage::StepDown);
        assert_eq!(stage(0.80, &t), Stage::Shed);
        assert_eq!(stage(0.90, &t), Stage::Rotate);
        assert_eq!(stage(1.0, &t), Stage::Rotate);
    }

    #[test]
    fn below_the_first_threshold_everything_is_kept() {
        let items = vec![held(0, HeldKind::Document, Detail::Full, 300, 0.1)];
        let a = advise(500, 1_000, &items, &WindowTuning::default());
        assert_eq!((a.stage, a.rotate, a.projected_tokens), (Stage::Ok, false, 500));
        assert_eq!(a.items[0].action, ShedAction::Keep);
        assert_eq!(a.items[0].saves, 0);
    }

    #[test]
    fn documents_step_down_before_memories_and_the_least_valuable_first() {
        let items = vec![
            held(0, HeldKind::Memory, Detail::Full, 200, 0.1),
            held(1, HeldKind::Document, Detail::Full, 200, 0.9),
            held(2, HeldKind::Document, Detail::Full, 200, 0.2),
        ];
        // 65 % of 1,000: a little must go, and the cheapest document to lose goes first.
        let a = advise(650, 1_000, &items, &WindowTuning::default());
        assert_eq!(a.stage, Stage::StepDown);
        let order: Vec<usize> = a.items.iter().map(|i| i.index).collect();
        assert_eq!(order, [2, 1, 0], "documents first, least valuable first");
        assert_eq!(a.items[0].action, ShedAction::StepDown);
        assert_eq!(a.items[0].to, Some(Detail::Focus));
        assert_eq!(a.items[0].text.as_deref(), Some(items[2].at(Detail::Focus)));
        assert_eq!(a.items[1].action, ShedAction::Keep, "enough was freed");
        assert!(a.projected_tokens <= a.target_tokens, "{a:?}");
        assert_eq!(a.projected_tokens, 650 - a.items[0].saves);
    }

    #[test]
    fn step_down_never_goes_below_l1_and_shed_releases_last() {
        let items = vec![held(0, HeldKind::Document, Detail::Full, 100, 0.5)];
        let a = advise(700, 1_000, &items, &WindowTuning::default());
        assert_eq!((a.items[0].action, a.items[0].to), (ShedAction::StepDown, Some(Detail::Focus)));
        let a = advise(1_000, 1_000, &items, &WindowTuning::default());
        assert!(a.rotate);
        assert_eq!((a.items[0].action, a.items[0].to), (ShedAction::Release, None));
        assert_eq!(a.items[0].saves, items[0].tokens);
        assert_eq!(a.items[0].text, None);
    }

    #[test]
    fn items_counted_above_the_reported_use_never_underflow() {
        let items = vec![held(0, HeldKind::Document, Detail::Full, 100, 0.5)];
        let a = advise(90, 100, &items, &WindowTuning::default());
        assert_eq!(a.stage, Stage::Rotate);
        assert_eq!(a.projected_tokens, 0, "{a:?}");
        assert_ne!(a.items[0].action, ShedAction::Keep);
    }

    #[test]
    fn pinned_items_and_boundaries_are_kept_and_listed_last() {
        let mut pinned = held(0, HeldKind::Memory, Detail::Full, 400, 0.0);
        pinned.protected = Some(Protection::Pinned);
        let mut boundary = held(1, HeldKind::Memory, Detail::Full, 400, 0.0);
        boundary.protected = Some(Protection::Boundary);
        let a = advise(1_000, 1_000, &[pinned, boundary], &WindowTuning::default());
        assert!(a.items.iter().all(|i| i.action == ShedAction::Keep && i.saves == 0));
        assert_eq!(a.items[0].protected, Some(Protection::Pinned));
        assert_eq!(a.projected_tokens, 1_000, "nothing else to shed");
    }

    #[test]
    fn a_step_that_frees_nothing_is_not_advised() {
        let levels = memory_levels("User prefers tabs over spaces in every Rust file of the project, always.");
        let tokens = tokens::count(&levels[2]);
        let m = Held {
            index: 0,
            kind: HeldKind::Memory,
            id: "m".into(),
            level: Detail::Full,
            levels,
            tokens,
            protected: None,
            value: 0.5,
        };
        let a = advise(700, 1_000, std::slice::from_ref(&m), &WindowTuning::default());
        assert_eq!(a.items[0].action, ShedAction::Keep, "a memory's L1 is itself");
        let a = advise(800, 1_000, &[m], &WindowTuning::default());
        assert_eq!(a.items[0].to, None, "past shed_at it goes to L0, then out: {a:?}");
    }

    #[test]
    fn message_levels_shorten_and_say_who_spoke() {
        let owner = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
        let msg = |i: usize, role: Role, text: &str| Message {
            id: format!("m{i}").parse().unwrap(),
            scope: owner.clone(),
            role,
            content: text.to_string(),
            at: at(),
        };
        let ms = vec![
            msg(
                1,
                Role::User,
                "Please refactor the parser module so that every error carries its byte offset and line.",
            ),
            msg(2, Role::Assistant, "Done: the parser now reports offsets and lines for every error it raises today."),
        ];
        let [l0, l1, l2] = message_levels(&ms);
        assert!(l2.starts_with("user: Please refactor") && l2.contains("\nassistant: Done"), "{l2}");
        assert!(l1.lines().count() == 2 && tokens::count(&l1) < tokens::count(&l2), "{l1}");
        assert!(l0.starts_with("2 messages: Please refactor"), "{l0}");
        assert!(message_levels(&[])[0].is_empty());
    }

    fn mem(kind: Kind, content: &str) -> Memory {
        Memory::new(Scope::parse("acme", None, Some("dana"), None).unwrap(), kind, content, at())
    }

    fn msgs(n: usize) -> Vec<Message> {
        let owner = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
        (0..n)
            .map(|i| Message {
                id: format!("m{i}").parse().unwrap(),
                scope: owner.clone(),
                role: if i % 2 == 0 { Role::User } else { Role::Assistant },
                content: format!("Message number {i} about the migration of the billing service to the new queue."),
                at: at(),
            })
            .collect()
    }

    #[test]
    fn a_bundle_holds_every_part_within_its_budget() {
        let mut pinned = mem(Kind::Fact, "User is allergic to penicillin");
        pinned.pinned = true;
        let mut boundary = mem(Kind::Protocol, "Never mention the user's ex");
        boundary.surface = Surface::Avoid;
        let knowledge: Vec<Memory> =
            (0..40).map(|i| mem(Kind::Fact, &format!("User's service number {i} runs on port {}", 8000 + i))).collect();
        let mut open = mem(Kind::OpenLoop, "User will finish the queue migration");
        open.due_at = Some("2026-03-12T00:00:00Z".parse().unwrap());
        let settled = vec![mem(Kind::Protocol, "Use nextest for every test run")];
        let recent = msgs(30);
        let input = BundleInput {
            subject: "user dana",
            pinned: &[pinned.clone(), boundary],
            knowledge: &knowledge,
            open_loops: &[open],
            settled: &settled,
            recent: &recent,
            at: at(),
        };
        let t = WindowTuning::default();
        let b = bundle(input, 2_000, &t);
        assert!(b.tokens <= 2_000 && b.tokens == tokens::count(&b.text), "{} tokens", b.tokens);
        let names: Vec<PartName> = b.parts.iter().map(|p| p.name).collect();
        assert_eq!(names, [PartName::Pinned, PartName::MemoryMd, PartName::Continuity, PartName::Recent]);
        assert!(b.text.contains("penicillin") && b.text.contains("Never mention the user's ex"), "{}", b.text);
        assert!(b.text.contains("Last request: Message number 28"), "{}", b.text);
        assert!(b.text.contains("User will finish the queue migration (due 2026-03-12)"), "{}", b.text);
        assert!(b.text.contains("Use nextest for every test run"), "{}", b.text);
        assert!(b.text.contains("Message number 29"), "the newest message is in the tail");
        assert!(b.held_back.is_empty(), "2,000 tokens hold it all: {:?}", b.held_back);
        assert_eq!(b.parts.iter().find(|p| p.name == PartName::Recent).unwrap().text.lines().count(), 1 + 12);

        // A small budget drops MEMORY.md rows, least valuable (last) first, and keeps the pinned.
        let small = bundle(input, 300, &t);
        assert!(small.tokens <= 300, "{}", small.tokens);
        assert!(small.text.contains("penicillin"));
        assert!(small.held_back.contains(&knowledge[39].id) && !small.held_back.contains(&pinned.id));
        // A budget smaller than the pinned items holds them back whole.
        let tiny = bundle(input, 5, &t);
        assert!(tiny.tokens <= 5 && tiny.held_back.contains(&pinned.id), "{tiny:?}");
    }

    proptest! {
        #[test]
        fn advice_never_sheds_protected_never_raises_and_is_monotone_in_usage(
            specs in proptest::collection::vec((0u8..3, 0u8..3, 3usize..60, 0.0f32..1.0, 0u8..4), 0..12),
            capacity in 100usize..4_000,
            a in 0.0f64..=1.0,
            b in 0.0f64..=1.0,
        ) {
            let items: Vec<Held> = specs
                .iter()
                .enumerate()
                .map(|(i, &(k, l, words, value, p))| {
                    let kind = [HeldKind::Memory, HeldKind::Document, HeldKind::Messages][k as usize];
                    let level = [Detail::Gist, Detail::Focus, Detail::Full][l as usize];
                    let mut h = held(i, kind, level, words, value);
                    h.protected = match p { 0 => Some(Protection::Pinned), 1 => Some(Protection::Boundary), _ => None };
                    h
                })
                .collect();
            let t = WindowTuning::default();
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (lo, hi) = ((lo * capacity as f64) as usize, (hi * capacity as f64) as usize);
            let low = advise(lo, capacity, &items, &t);
            let high = advise(hi, capacity, &items, &t);
            for (advice, used) in [(&low, lo), (&high, hi)] {
                prop_assert_eq!(advice.items.len(), items.len());
                for i in &advice.items {
                    let h = &items[i.index];
                    if h.protected.is_some() {
                        prop_assert_eq!(i.action, ShedAction::Keep);
                        prop_assert_eq!(i.to, Some(h.level));
                    }
                    prop_assert!(i.to.is_none_or(|to| to <= h.level), "raised: {:?}", i);
                    prop_assert!(i.saves <= h.tokens);
                }
                let saved: usize = advice.items.iter().map(|i| i.saves).sum();
                prop_assert_eq!(advice.projected_tokens, used.saturating_sub(saved));
            }
            prop_assert!(low.stage <= high.stage);
            let level_of = |adv: &UsageAdvice, index: usize| adv.items.iter().find(|i| i.index == index).unwrap().to;
            for h in &items {
                prop_assert!(level_of(&high, h.index) <= level_of(&low, h.index), "fuller window, milder advice for {}", h.index);
            }
        }

        #[test]
        fn a_bundle_never_exceeds_its_budget(budget in 1usize..1_500, rows in 0usize..60, tail in 0usize..40) {
            let mut pinned = mem(Kind::Fact, "User is allergic to penicillin");
            pinned.pinned = true;
            let knowledge: Vec<Memory> =
                (0..rows).map(|i| mem(Kind::Fact, &format!("User's service {i} listens on port {}", 9000 + i))).collect();
            let recent = msgs(tail);
            let input = BundleInput {
                subject: "user dana",
                pinned: &[pinned],
                knowledge: &knowledge,
                open_loops: &[],
                settled: &[],
                recent: &recent,
                at: at(),
            };
            let b = bundle(input, budget, &WindowTuning::default());
            prop_assert!(b.tokens <= budget, "{} > {}", b.tokens, budget);
            prop_assert_eq!(b.tokens, tokens::count(&b.text));
        }
    }
}
