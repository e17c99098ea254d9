//! Assembly: path A and path B results become a token-budgeted, cache-stable prompt block.
//!
//! Sections follow surface policy. Reserved slots (policies, pinned, boundaries, preferences,
//! loops due soon) are placed first, ranked items next, the recent raw window last; an item that
//! does not fit is held back whole, never cut. Stable sections come first in an order that
//! depends only on state, so a provider's prompt cache keeps hitting.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::archive::Excerpt;
use crate::config::AssemblyTuning;
use crate::id::MemoryId;
use crate::kind::{Kind, Surface, text_enum};
use crate::memory::{Memory, Provenance};
use crate::message::Message;
use crate::message::Role;
use crate::policy::Policy;
use crate::recall::{ExactReason, ExactSet, RecallItem};
use crate::score::{ScoreParts, Tier};
use crate::tokens;

text_enum!(
    /// The sections of a context block, in rendering order.
    SectionName, "section" {
        /// Pinned memories: always known.
        Pinned => "pinned",
        /// Tenant policies in force.
        Policy => "policy",
        /// Preferences and protocols: shape the answer silently.
        Preference => "preference",
        /// Boundaries and sensitive items: never raise unless the user does.
        Avoid => "avoid",
        /// Memos and summaries of this chat.
        Memo => "memo",
        /// Ranked items to use silently.
        Adapt => "adapt",
        /// Facts not to contradict.
        FactCheck => "fact_check",
        /// Ranked items to mention naturally.
        Speak => "speak",
        /// Open threads to pick up.
        Continue => "continue",
        /// Past messages of the user's other turns and chats that bear on this one, verbatim.
        Excerpt => "excerpt",
        /// The last raw messages of this chat.
        Recent => "recent",
    }
);

impl SectionName {
    /// The heading the model reads.
    pub fn title(self) -> &'static str {
        match self {
            SectionName::Pinned => "ALWAYS-KNOWN",
            SectionName::Policy => "POLICY (always follow)",
            SectionName::Preference => "PREFERENCES (use silently)",
            SectionName::Avoid => "DO NOT SURFACE UNLESS THE USER DOES",
            SectionName::Memo => "EARLIER IN THIS CHAT",
            SectionName::Adapt => "USE SILENTLY",
            SectionName::FactCheck => "DO NOT CONTRADICT",
            SectionName::Speak => "RELEVANT NOW",
            SectionName::Continue => "OPEN THREADS",
            SectionName::Excerpt => "FROM PAST CONVERSATIONS (verbatim, dated)",
            SectionName::Recent => "RECENT MESSAGES",
        }
    }
}

/// One line of a section, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockItem {
    /// Memory id, `policy:<key>@v<version>`, or the message id.
    pub id: String,
    /// Memory kind, `policy` or `message`.
    pub kind: String,
    /// The rendered line, without the leading dash.
    pub text: String,
    /// Surface policy of a memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// Why path A included it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactReason>,
    /// Path B score parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreParts>,
    /// Path B tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Tokens this line costs.
    pub tokens: usize,
}

/// A section of the block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Which section.
    pub name: SectionName,
    /// Its heading.
    pub title: String,
    /// True when its content depends only on stored state, not on the query: safe to cache.
    pub cacheable: bool,
    /// Its lines.
    pub items: Vec<BlockItem>,
}

text_enum!(
    /// Why something relevant was left out of the block.
    HoldReason, "hold reason" {
        /// It did not fit the token budget.
        Budget => "budget",
        /// It was surfaced in the last turns of this chat (over-reference guard).
        SurfacedRecently => "surfaced_recently",
    }
);

/// Something left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldBack {
    /// Its id.
    pub id: String,
    /// Why.
    pub reason: HoldReason,
}

/// The per-turn prompt block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextBlock {
    /// Sections in rendering order; empty sections are omitted.
    pub sections: Vec<Section>,
    /// The block rendered as text.
    pub text: String,
    /// Tokens of `text` (cl100k).
    pub tokens: usize,
    /// The budget it was assembled for.
    pub budget: usize,
    /// What was left out, and why.
    pub held_back: Vec<HeldBack>,
}

impl ContextBlock {
    /// Ids of the memories placed in the block.
    pub fn memory_ids(&self) -> Vec<MemoryId> {
        self.sections.iter().flat_map(|s| &s.items).filter_map(|i| i.id.parse().ok()).collect()
    }

    /// A section by name.
    pub fn section(&self, name: SectionName) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
}

/// What assembly works from.
#[derive(Debug, Clone, Copy)]
pub struct AssemblyInput<'a> {
    /// Path A.
    pub exact: &'a ExactSet,
    /// Path B, best first.
    pub ranked: &'a [RecallItem],
    /// This chat's latest messages, oldest first.
    pub recent: &'a [Message],
    /// Archival excerpts, best first: they fill what the budget has left.
    pub excerpts: &'a [Excerpt],
    /// This chat's latest memos, oldest first (document 003): the chat's timeline in
    /// highlights, placed whole before any ranked item and kept newest-first under a tight budget.
    pub memos: &'a [Memory],
    /// Memories placed in this chat's last turns.
    pub surfaced_recently: &'a HashSet<MemoryId>,
    /// Token budget.
    pub budget: usize,
}

const HEADER: &str = "=== USER MEMORY ===";

/// Builds the block. Deterministic: the same input gives the same bytes.
pub fn assemble(input: AssemblyInput<'_>, t: &AssemblyTuning) -> ContextBlock {
    let mut plan = Plan::new(input.budget);
    for p in &input.exact.policies {
        plan.offer(SectionName::Policy, policy_item(p), true);
    }
    for item in &input.exact.items {
        plan.offer(exact_section(item), memory_item(item), true);
    }
    // Newest first, so a tight budget keeps the most recent stretch of the timeline; read
    // oldest first, as a story.
    let mut placed_memos = Vec::new();
    for m in input.memos.iter().rev() {
        if plan.offer(SectionName::Memo, memo_item(m), true) {
            placed_memos.push(m.id);
        }
    }
    if let Some((_, items, _)) = plan.sections.iter_mut().find(|(n, _, _)| *n == SectionName::Memo) {
        items.reverse();
    }
    // Ranked memories and archival excerpts compete on one relevance scale (both fuse the same
    // two signals), each list keeping its own order; excerpts never take the share of the budget
    // the chat's recent window needs.
    let window = t.recent_pairs * 2;
    let recent: Vec<BlockItem> =
        input.recent[input.recent.len().saturating_sub(window)..].iter().rev().map(message_item).collect();
    let recent_cost: usize = match recent.is_empty() {
        true => 0,
        false => recent.iter().map(|l| l.tokens).sum::<usize>() + plan.heading_cost(SectionName::Recent),
    };
    let reserve = recent_cost.min(input.budget.saturating_sub(plan.used) / 2);
    let relevance = |i: &RecallItem| i.score.map_or(f32::INFINITY, |s| s.relevance);
    let (mut ranked, mut excerpts) =
        (input.ranked.iter().peekable(), input.excerpts.iter().take(t.excerpts).peekable());
    let mut placed = Vec::new();
    loop {
        let take_memory = match (ranked.peek(), excerpts.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(m), Some(e)) => relevance(m) >= e.relevance,
        };
        if take_memory {
            let item = ranked.next().expect("peeked");
            if placed_memos.contains(&item.memory.id) {
                continue;
            }
            let section = ranked_section(&item.memory);
            let line = memory_item(item);
            if section == SectionName::Speak && input.surfaced_recently.contains(&item.memory.id) {
                plan.held_back.push(HeldBack { id: line.id, reason: HoldReason::SurfacedRecently });
                continue;
            }
            plan.offer(section, line, false);
        } else {
            let e = excerpts.next().expect("peeked");
            let line = excerpt_item(e);
            if plan.fits(SectionName::Excerpt, line.tokens + reserve) {
                plan.offer(SectionName::Excerpt, line, false);
                placed.push(e);
            } else {
                plan.held_back.push(HeldBack { id: line.id, reason: HoldReason::Budget });
            }
        }
    }
    // Excerpts read oldest first, as a story.
    if let Some((_, items, _)) = plan.sections.iter_mut().find(|(n, _, _)| *n == SectionName::Excerpt) {
        placed.sort_by(|a, b| a.message.at.cmp(&b.message.at).then_with(|| a.message.id.cmp(&b.message.id)));
        *items = placed.into_iter().map(excerpt_item).collect();
    }
    for line in recent {
        if !plan.fits(SectionName::Recent, line.tokens) {
            // Older messages are worth less than newer ones: stop at the first that does not fit.
            plan.held_back.push(HeldBack { id: line.id, reason: HoldReason::Budget });
            break;
        }
        plan.offer(SectionName::Recent, line, false);
    }
    if let Some((_, items, _)) = plan.sections.iter_mut().find(|(n, _, _)| *n == SectionName::Recent) {
        items.reverse();
    }
    plan.finish()
}

fn exact_section(item: &RecallItem) -> SectionName {
    if item.memory.surface == Surface::Avoid {
        return SectionName::Avoid;
    }
    match item.exact {
        Some(ExactReason::Pinned) => SectionName::Pinned,
        Some(ExactReason::DueSoon | ExactReason::Planning) => SectionName::Continue,
        // A constraint the request bears on shapes the answer: a recipe without the allergen.
        Some(ExactReason::Safety) => SectionName::Adapt,
        _ => SectionName::Preference,
    }
}

fn ranked_section(m: &Memory) -> SectionName {
    match m.surface {
        Surface::Speak => SectionName::Speak,
        Surface::Adapt => SectionName::Adapt,
        Surface::Avoid => SectionName::Avoid,
        Surface::Continue => SectionName::Continue,
        Surface::FactCheck => SectionName::FactCheck,
    }
}

fn render_memory(m: &Memory) -> String {
    let mut s = m.content.clone();
    if let Some(due) = m.due_at.filter(|_| m.kind == Kind::OpenLoop) {
        s.push_str(&format!(" (due {})", due.format("%Y-%m-%d")));
    } else if let Some(at) = m.valid_from.filter(|_| m.kind == Kind::Event) {
        // An event told with a period ("last week") is dated when it was told: the model reads
        // the period from that day, as the user meant it.
        let told = crate::extract::when::past(&m.content, at).is_some_and(|p| p.vague);
        s.push_str(&format!(" ({} {})", if told { "told on" } else { "on" }, at.format("%Y-%m-%d")));
    }
    s
}

fn memory_item(item: &RecallItem) -> BlockItem {
    let mut text = render_memory(&item.memory);
    if let Some(said) = &item.possibly_outdated {
        text.push_str(&format!(" [possibly outdated: the user just said \"{said}\"; confirm before relying on it]"));
    }
    BlockItem {
        id: item.memory.id.to_string(),
        kind: item.memory.kind.as_str().into(),
        tokens: tokens::line_cost(&format!("- {text}")),
        text,
        surface: Some(item.memory.surface),
        exact: item.exact,
        score: item.score,
        tier: item.tier,
        provenance: Some(item.memory.provenance.clone()),
    }
}

fn memo_item(m: &Memory) -> BlockItem {
    let text = match m.valid_from {
        Some(at) => format!("[{}] {}", at.format("%Y-%m-%d"), m.content),
        None => m.content.clone(),
    };
    BlockItem {
        id: m.id.to_string(),
        kind: m.kind.as_str().into(),
        tokens: tokens::line_cost(&format!("- {text}")),
        text,
        surface: Some(m.surface),
        exact: None,
        score: None,
        tier: None,
        provenance: Some(m.provenance.clone()),
    }
}

fn policy_item(p: &Policy) -> BlockItem {
    BlockItem {
        id: format!("policy:{}@v{}", p.key, p.version),
        kind: "policy".into(),
        tokens: tokens::line_cost(&format!("- {}", p.text)),
        text: p.text.clone(),
        surface: None,
        exact: None,
        score: None,
        tier: None,
        provenance: None,
    }
}

fn message_item(m: &Message) -> BlockItem {
    let text = format!("{}: {}", m.role, m.content);
    BlockItem {
        id: m.id.to_string(),
        kind: "message".into(),
        tokens: tokens::line_cost(&format!("- {text}")),
        text,
        surface: None,
        exact: None,
        score: None,
        tier: None,
        provenance: None,
    }
}

fn excerpt_item(e: &Excerpt) -> BlockItem {
    let m = &e.message;
    let who = match m.role {
        Role::User => String::new(),
        other => format!("{other}: "),
    };
    let text = format!("[{}] {who}{}", m.at.format("%Y-%m-%d"), m.content);
    BlockItem {
        id: m.id.to_string(),
        kind: "message".into(),
        tokens: tokens::line_cost(&format!("- {text}")),
        text,
        surface: None,
        exact: None,
        score: None,
        tier: None,
        provenance: None,
    }
}

/// Budget bookkeeping while sections fill up.
struct Plan {
    budget: usize,
    used: usize,
    sections: Vec<(SectionName, Vec<BlockItem>, bool)>,
    held_back: Vec<HeldBack>,
}

impl Plan {
    fn new(budget: usize) -> Self {
        Self { budget, used: tokens::line_cost(HEADER), sections: Vec::new(), held_back: Vec::new() }
    }

    fn heading_cost(&self, section: SectionName) -> usize {
        if self.sections.iter().any(|(n, items, _)| *n == section && !items.is_empty()) {
            0
        } else {
            tokens::line_cost(&format!("{}:", section.title())) + 1
        }
    }

    fn fits(&self, section: SectionName, cost: usize) -> bool {
        self.used + self.heading_cost(section) + cost <= self.budget
    }

    fn reserve(&mut self, section: SectionName, cost: usize) {
        self.used += self.heading_cost(section) + cost;
    }

    /// Places the item if it fits, else records it as held back; says which.
    fn offer(&mut self, section: SectionName, item: BlockItem, exact: bool) -> bool {
        if !self.fits(section, item.tokens) {
            self.held_back.push(HeldBack { id: item.id, reason: HoldReason::Budget });
            return false;
        }
        self.reserve(section, item.tokens);
        match self.sections.iter_mut().find(|(n, _, _)| *n == section) {
            Some((_, items, all_exact)) => {
                items.push(item);
                *all_exact &= exact;
            }
            None => self.sections.push((section, vec![item], exact)),
        }
        true
    }

    fn finish(mut self) -> ContextBlock {
        self.sections.sort_by_key(|(n, _, _)| *n);
        let sections: Vec<Section> = self
            .sections
            .into_iter()
            .filter(|(_, items, _)| !items.is_empty())
            .map(|(name, items, exact)| Section {
                name,
                title: name.title().into(),
                cacheable: exact && name != SectionName::Recent,
                items,
            })
            .collect();
        let text = if sections.is_empty() { String::new() } else { render(&sections) };
        ContextBlock { tokens: tokens::count(&text), sections, text, budget: self.budget, held_back: self.held_back }
    }
}

fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    out.push_str(HEADER);
    out.push('\n');
    for s in sections {
        out.push('\n');
        out.push_str(&s.title);
        out.push_str(":\n");
        for i in &s.items {
            out.push_str("- ");
            out.push_str(&i.text);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Tuning;

    use crate::recall::{Candidate, rank, select_exact};
    use crate::scope::Scope;
    use chrono::{DateTime, Utc};
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    fn mem(kind: Kind, content: &str) -> Memory {
        let m = Memory::new(Scope::parse("acme", None, Some("dana"), None).unwrap(), kind, content, now());
        Memory { confidence: 0.9, salience: 0.6, ..m }
    }

    #[test]
    fn an_event_told_with_a_period_says_when_it_was_told() {
        let mut e = mem(Kind::Event, "User went camping with the kids last week");
        e.valid_from = Some(now());
        assert_eq!(render_memory(&e), "User went camping with the kids last week (told on 2026-03-10)");
        e.content = "User ran a half marathon in Porto".into();
        assert_eq!(render_memory(&e), "User ran a half marathon in Porto (on 2026-03-10)");
    }

    fn build(exact: Vec<Memory>, ranked: Vec<Memory>, budget: usize, surfaced: &HashSet<MemoryId>) -> ContextBlock {
        let t = Tuning::default();
        let set = select_exact(exact, vec![], now(), &t);
        let cands =
            ranked.into_iter().map(|m| Candidate { memory: m, lexical: Some(1.0), vector: Some(0.8) }).collect();
        let r = rank(cands, &HashSet::new(), 20, now(), &t);
        assemble(
            AssemblyInput {
                exact: &set,
                ranked: &r.items,
                recent: &[],
                excerpts: &[],
                memos: &[],
                surfaced_recently: surfaced,
                budget,
            },
            &t.assembly,
        )
    }

    #[test]
    fn sections_follow_surface_policy_and_stable_ones_come_first() {
        let mut boundary = mem(Kind::Protocol, "Never mention the user's ex");
        boundary.surface = Surface::Avoid;
        let mut pref = mem(Kind::Preference, "User prefers short answers");
        pref.key = Some("answer_length".into());
        let name = mem(Kind::Profile, "User's name is Dana");
        let fact = mem(Kind::Fact, "User's stack is Rust");
        let block = build(vec![boundary, pref], vec![name, fact], 1000, &HashSet::new());
        let names: Vec<_> = block.sections.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            vec![SectionName::Preference, SectionName::Avoid, SectionName::FactCheck, SectionName::Speak]
        );
        assert!(block.section(SectionName::Avoid).unwrap().cacheable);
        assert!(!block.section(SectionName::Speak).unwrap().cacheable);
        assert!(block.text.starts_with("=== USER MEMORY ===\n\nPREFERENCES"));
        assert!(block.text.contains("DO NOT SURFACE UNLESS THE USER DOES:\n- Never mention the user's ex\n"));
        assert_eq!(block.tokens, tokens::count(&block.text));
    }

    #[test]
    fn excerpts_compete_with_memories_on_relevance_and_leave_the_recent_window_its_share() {
        let t = Tuning::default();
        let set = select_exact(vec![], vec![], now(), &t);
        let weak = Candidate { memory: mem(Kind::Fact, "User likes tea"), lexical: None, vector: Some(0.3) };
        let r = rank(vec![weak], &HashSet::new(), 20, now(), &t);
        let msg = |id: &str, text: &str, minutes: i64| Message {
            id: crate::id::MessageId::new(id).unwrap(),
            scope: Scope::parse("acme", None, Some("dana"), Some("c0")).unwrap(),
            role: Role::User,
            content: text.into(),
            at: now() - chrono::Duration::minutes(minutes),
        };
        let strong = Excerpt {
            message: msg("e1", "We named the boat Albatross", 90),
            lexical: None,
            vector: None,
            relevance: 0.9,
        };
        let later =
            Excerpt { message: msg("e2", "The boat needs new sails", 60), lexical: None, vector: None, relevance: 0.5 };
        let recent: Vec<Message> =
            (0..4).map(|i| msg(&format!("r{i}"), "still here, talking about boats", 4 - i)).collect();
        let excerpts = [strong, later];
        let none = HashSet::new();
        let go = |budget: usize, recent: &[Message]| {
            let input = AssemblyInput {
                exact: &set,
                ranked: &r.items,
                recent,
                excerpts: &excerpts,
                memos: &[],
                surfaced_recently: &none,
                budget,
            };
            assemble(input, &t.assembly)
        };
        let block = go(1000, &[]);
        let ex = block.section(SectionName::Excerpt).unwrap();
        // Read oldest first.
        assert_eq!(ex.items.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), vec!["e1", "e2"]);
        assert!(ex.items[0].text.starts_with("[2026-03-10] We named the boat"), "{:?}", ex.items[0]);
        // Tight: the stronger excerpt wins the budget over the weaker memory.
        let tight = go(45, &[]);
        assert!(tight.text.contains("Albatross"), "{}", tight.text);
        assert!(!tight.text.contains("User likes tea"), "{}", tight.text);
        // With a recent window, excerpts leave it its share.
        let with_recent = go(90, &recent);
        assert!(with_recent.section(SectionName::Recent).is_some_and(|s| !s.items.is_empty()), "{}", with_recent.text);
        assert!(with_recent.tokens <= 90);
    }

    #[test]
    fn whole_items_are_dropped_when_the_budget_is_tight() {
        let long = mem(Kind::Profile, &"word ".repeat(200));
        let short = mem(Kind::Profile, "User's name is Dana");
        let block = build(vec![], vec![long.clone(), short], 40, &HashSet::new());
        assert!(block.tokens <= 40);
        assert!(block.text.contains("User's name is Dana"));
        assert!(block.held_back.iter().any(|h| h.id == long.id.to_string() && h.reason == HoldReason::Budget));
    }

    #[test]
    fn recently_surfaced_speak_items_are_held_back() {
        let name = mem(Kind::Profile, "User's name is Dana");
        let block = build(vec![], vec![name.clone()], 1000, &HashSet::from([name.id]));
        assert!(!block.text.contains("Dana"));
        assert_eq!(block.held_back[0].reason, HoldReason::SurfacedRecently);
    }

    #[test]
    fn the_recent_window_keeps_the_newest_messages_in_order() {
        let t = Tuning::default();
        let scope = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
        let msgs: Vec<Message> = (0..20)
            .map(|i| Message {
                id: crate::id::MessageId::new(format!("m{i}")).unwrap(),
                scope: scope.clone(),
                role: if i % 2 == 0 { Role::User } else { Role::Assistant },
                content: format!("message number {i}"),
                at: now(),
            })
            .collect();
        let set = ExactSet::default();
        let block = assemble(
            AssemblyInput {
                exact: &set,
                ranked: &[],
                recent: &msgs,
                excerpts: &[],
                memos: &[],
                surfaced_recently: &HashSet::new(),
                budget: 1000,
            },
            &t.assembly,
        );
        let recent = block.section(SectionName::Recent).unwrap();
        assert_eq!(recent.items.len(), 16);
        assert_eq!(recent.items[0].id, "m4");
        assert_eq!(recent.items[15].id, "m19");
    }

    #[test]
    fn memos_read_oldest_first_and_a_tight_budget_keeps_the_newest() {
        let t = Tuning::default();
        let memos: Vec<Memory> = (0..4)
            .map(|i| {
                let mut m = mem(Kind::Memo, &format!("Highlight number {i} of the story so far"));
                m.valid_from = Some(now() + chrono::Duration::days(i));
                m
            })
            .collect();
        let set = ExactSet::default();
        let none = HashSet::new();
        fn input<'a>(
            set: &'a ExactSet,
            none: &'a HashSet<MemoryId>,
            memos: &'a [Memory],
            ranked: &'a [RecallItem],
            budget: usize,
        ) -> AssemblyInput<'a> {
            AssemblyInput { exact: set, ranked, recent: &[], excerpts: &[], memos, surfaced_recently: none, budget }
        }
        let recalled = rank(
            vec![Candidate { memory: memos[3].clone(), lexical: Some(1.0), vector: Some(0.9) }],
            &HashSet::new(),
            5,
            now(),
            &t,
        );
        let block = assemble(input(&set, &none, &memos, &recalled.items, 1000), &t.assembly);
        let section = block.section(SectionName::Memo).unwrap();
        assert!(section.cacheable);
        let ids: Vec<String> = section.items.iter().map(|i| i.id.clone()).collect();
        assert_eq!(ids, memos.iter().map(|m| m.id.to_string()).collect::<Vec<_>>());
        assert!(section.items[0].text.starts_with("[2026-03-10] Highlight number 0"));
        assert_eq!(block.memory_ids().iter().filter(|id| **id == memos[3].id).count(), 1, "not twice");
        let tight = assemble(input(&set, &none, &memos, &[], 40), &t.assembly);
        let kept = &tight.section(SectionName::Memo).unwrap().items;
        assert!(kept.len() < 4 && kept.last().unwrap().id == memos[3].id.to_string());
    }

    #[test]
    fn an_empty_state_gives_an_empty_block() {
        let block = build(vec![], vec![], 1000, &HashSet::new());
        assert!(block.sections.is_empty() && block.text.is_empty() && block.tokens == 0);
    }

    proptest! {
        #[test]
        fn never_over_budget_and_deterministic(budget in 0usize..400, lens in proptest::collection::vec(1usize..60, 0..15)) {
            let ranked: Vec<Memory> = lens.iter().map(|n| mem(Kind::Profile, &"fact ".repeat(*n))).collect();
            let a = build(vec![], ranked.clone(), budget, &HashSet::new());
            prop_assert!(a.tokens <= budget, "{} > {}", a.tokens, budget);
            let b = build(vec![], ranked, budget, &HashSet::new());
            prop_assert_eq!(a.text, b.text);
        }
    }
}
