//! Assembly: path A and path B results become a token-budgeted, cache-stable prompt block.
//!
//! Sections follow surface policy. Reserved slots (policies, pinned, boundaries, preferences,
//! loops due soon) are placed first and whole, or held back whole; ranked memories and archival
//! excerpts next, best first, each whole or at its focus ([`crate::detail`]), never cut to a
//! fragment; the recent raw window last. Stable sections come first in an order that depends
//! only on state, so a provider's prompt cache keeps hitting.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDate;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::archive::Excerpt;
use crate::config::AssemblyTuning;
use crate::detail::{self, Detail, Terms};
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
        /// The agent's approved skills, at the start of a session: rules learned from what it
        /// did before.
        Skill => "skill",
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
            SectionName::Skill => "SKILLS (learned in past sessions; follow them)",
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
    /// How much of a ranked memory or an excerpt the line carries; absent for items that are
    /// always whole (policies, path A, memos, the recent window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Detail>,
    /// The day an excerpt was said. The block writes each day once, above that day's
    /// excerpts (they read oldest first), instead of on every line: a conversation's turns
    /// share their day, so the budget buys more evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<NaiveDate>,
}

/// An item placed below full detail to fit the budget: the level it got and what that saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shed {
    /// Its id (memory id or message id).
    pub id: String,
    /// The level it was placed at.
    pub detail: Detail,
    /// Tokens of the line as placed.
    pub tokens: usize,
    /// Tokens it would have cost whole.
    pub full_tokens: usize,
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
        /// It restates turns that compete for the block verbatim: they carry it instead.
        InSourceTurn => "in_source_turn",
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
    /// What was placed below full detail to make room (progressive shedding).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shed: Vec<Shed>,
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
    /// This chat's latest memos, oldest first: the chat's timeline in
    /// highlights, placed whole before any ranked item and kept newest-first under a tight budget.
    pub memos: &'a [Memory],
    /// Memories placed in this chat's last turns.
    pub surfaced_recently: &'a HashSet<MemoryId>,
    /// Token budget.
    pub budget: usize,
    /// The query's content words ([`crate::text::query_terms`]): an excerpt's focus is the
    /// sentences that share them.
    pub query_terms: &'a [String],
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
    let (memories, excerpts) = merge_into_source_turns(&mut plan, &input, &placed_memos, t.excerpts);
    let (mut ranked, mut excerpts) = (memories.into_iter().peekable(), excerpts.into_iter().peekable());
    let mut contenders = Vec::new();
    loop {
        let take_memory = match (ranked.peek(), excerpts.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(m), Some((e, lifted))) => relevance(m) >= lifted.max(e.relevance),
        };
        if take_memory {
            let item = ranked.next().expect("peeked");
            let section = ranked_section(&item.memory);
            if section == SectionName::Speak && input.surfaced_recently.contains(&item.memory.id) {
                plan.held_back.push(HeldBack { id: item.memory.id.to_string(), reason: HoldReason::SurfacedRecently });
                continue;
            }
            contenders.push(Contender::Memory(item, section));
        } else {
            contenders.push(Contender::Excerpt(excerpts.next().expect("peeked").0));
        }
    }
    let terms = Terms::weighted(input.query_terms, contenders.iter().map(Contender::text));
    // Each contender's three levels (its focus, gist and their token counts) are most of
    // assembly's time and independent of each other: spread over the cores the embedding model
    // has just let go of.
    let contenders = contenders.into_par_iter().map(|c| c.tiered(&terms)).collect();
    let placed = shed(&mut plan, contenders, reserve);
    // Excerpts read oldest first, as a story.
    if let Some((_, items, _)) = plan.sections.iter_mut().find(|(n, _, _)| *n == SectionName::Excerpt) {
        let at = |i: &BlockItem| placed.get(&i.id).map(|m| m.at);
        items.sort_by(|a, b| at(a).cmp(&at(b)).then_with(|| a.id.cmp(&b.id)));
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

/// The ranked memories and the archival excerpts that compete for the block, each best first,
/// once every memory whose source turns are all among the excerpts has been folded into them.
///
/// Why: a captured memory ([`crate::extract::CAPTURE_RULE`]) restates what its turn said in
/// the third person, so placing both spends the budget twice on one fact, and of the two the
/// turn is what the user actually said (with its day). Such a memory is held back as
/// `in_source_turn` and its turns compete at the memory's relevance when that is higher (the
/// second value of each excerpt pair). A typed memory (a name, a pet, a plan, a boundary) is
/// never folded: its section tells the model how to use it and the over-reference guard counts
/// it; nor is one flagged possibly outdated, whose warning is the point. Memos already placed
/// are skipped.
fn merge_into_source_turns<'a>(
    plan: &mut Plan,
    input: &AssemblyInput<'a>,
    placed_memos: &[MemoryId],
    excerpts: usize,
) -> (Vec<&'a RecallItem>, Vec<(&'a Excerpt, f32)>) {
    let mut pool: Vec<(&Excerpt, f32)> = input.excerpts.iter().take(excerpts).map(|e| (e, e.relevance)).collect();
    let at: HashMap<&str, usize> = pool.iter().enumerate().map(|(i, (e, _))| (e.message.id.as_str(), i)).collect();
    let mut memories = Vec::new();
    for item in input.ranked {
        if placed_memos.contains(&item.memory.id) {
            continue;
        }
        let sources = &item.memory.provenance.sources;
        let turns: Option<Vec<usize>> = sources.iter().map(|s| at.get(s.as_str()).copied()).collect();
        let restates = item.memory.provenance.rule.as_deref() == Some(crate::extract::CAPTURE_RULE)
            && item.memory.surface != Surface::Avoid
            && item.possibly_outdated.is_none();
        match turns.filter(|t| !t.is_empty() && restates) {
            Some(turns) => {
                let r = item.score.map_or(f32::INFINITY, |s| s.relevance);
                for i in turns {
                    pool[i].1 = pool[i].1.max(r);
                }
                plan.held_back.push(HeldBack { id: item.memory.id.to_string(), reason: HoldReason::InSourceTurn });
            }
            None => memories.push(item),
        }
    }
    // Stable: excerpts of equal standing keep the archive's order.
    pool.sort_by(|a, b| b.1.total_cmp(&a.1));
    (memories, pool)
}

/// A ranked memory (with its section) or an archival excerpt, in the order they compete.
enum Contender<'a> {
    Memory(&'a RecallItem, SectionName),
    Excerpt(&'a Excerpt),
}

impl<'a> Contender<'a> {
    fn text(&self) -> &'a str {
        match self {
            Contender::Memory(item, _) => &item.memory.content,
            Contender::Excerpt(e) => &e.message.content,
        }
    }

    fn tiered(self, terms: &Terms) -> Tiered<'a> {
        match self {
            Contender::Memory(item, section) => Tiered::memory(item, section),
            Contender::Excerpt(e) => Tiered::excerpt(e, terms),
        }
    }
}

/// A ranked memory or an archival excerpt competing for what the budget leaves, rendered at
/// each level of detail it can take: its focus (whole sentences that bear on the message) and
/// its whole text. There is no cut below that: a line the model reads is never a fragment.
struct Tiered<'a> {
    section: SectionName,
    /// The message behind an excerpt, which must leave the recent window its share.
    message: Option<&'a Message>,
    /// The focus, then the whole text (the order of [`Detail`] from `Focus`).
    levels: [BlockItem; 2],
}

impl<'a> Tiered<'a> {
    /// A memory is one statement: its focus is itself.
    fn memory(item: &RecallItem, section: SectionName) -> Self {
        let full = memory_item(item);
        Self { section, message: None, levels: [full.clone(), full] }
    }

    fn excerpt(e: &'a Excerpt, terms: &Terms) -> Self {
        let full = excerpt_item(e);
        let focus = match detail::focus(&e.message.content, terms) {
            Some(body) => {
                let text = excerpt_text(&e.message, &body);
                let tokens = tokens::line_cost(&format!("- {text}"));
                // A focus that saves nothing ("A … C" against "A. B. C") is the whole text.
                match tokens < full.tokens {
                    true => BlockItem { text, tokens, ..full.clone() },
                    false => full.clone(),
                }
            }
            None => full.clone(),
        };
        Self { section: SectionName::Excerpt, message: Some(&e.message), levels: [focus, full] }
    }

    fn level(&self, level: Detail) -> &BlockItem {
        match level {
            Detail::Full => &self.levels[1],
            _ => &self.levels[0],
        }
    }

    fn cost(&self, level: Detail) -> usize {
        self.level(level).tokens
    }
}

/// Packing: places contenders best first, each whole when it fits and else at its focus
/// (whole sentences that bear on the message), and holds back what fits neither way.
///
/// Why whole first: the model reads text, and what it needs is the best turns as they were
/// said; placing every contender as a shortened line first and giving detail back later spread
/// a block over many cut lines and lost the words the question was about (on LoCoMo's first
/// five conversations at 1,000 tokens, 59% of answers in the block against 93% packed this way;
/// BENCHMARKS.md). A contender that no longer fits whole still brings its focus, and an item
/// placed at its focus is raised to its whole text, best first, if room is left at the end.
/// Excerpts never take the `reserve` the recent window needs. Returns the messages behind the
/// placed excerpts, by id.
fn shed<'a>(plan: &mut Plan, contenders: Vec<Tiered<'a>>, reserve: usize) -> HashMap<String, &'a Message> {
    let headroom = |c: &Tiered<'_>| if c.message.is_some() { reserve } else { 0 };
    let mut used = plan.used;
    let mut opened: HashSet<SectionName> =
        plan.sections.iter().filter(|(_, items, _)| !items.is_empty()).map(|(n, _, _)| *n).collect();
    let mut days = plan.days.clone();
    let mut taken: Vec<(Tiered<'a>, Detail)> = Vec::new();
    for c in contenders {
        let heading = if opened.contains(&c.section) { 0 } else { plan.heading_cost(c.section) };
        let day = c.levels[0].day.filter(|d| !days.contains(d));
        let fixed = heading + day.map_or(0, |d| tokens::line_cost(&day_line(d)));
        let fits = |level: &Detail| used + fixed + c.cost(*level) + headroom(&c) <= plan.budget;
        match [Detail::Full, Detail::Focus].into_iter().find(fits) {
            Some(level) => {
                used += fixed + c.cost(level);
                opened.insert(c.section);
                days.extend(day);
                taken.push((c, level));
            }
            None => plan.held_back.push(HeldBack { id: c.levels[0].id.clone(), reason: HoldReason::Budget }),
        }
    }
    for (c, at) in taken.iter_mut().filter(|(_, at)| *at == Detail::Focus) {
        let more = c.cost(Detail::Full) - c.cost(Detail::Focus);
        if used + more + headroom(c) <= plan.budget {
            used += more;
            *at = Detail::Full;
        }
    }
    let mut placed = HashMap::new();
    for (c, at) in taken {
        let Tiered { section, message, levels } = c;
        let [focus, full] = levels;
        let full_tokens = full.tokens;
        let mut item = if at == Detail::Full { full } else { focus };
        let shortened = item.tokens < full_tokens;
        item.detail = Some(if shortened { Detail::Focus } else { Detail::Full });
        if shortened {
            plan.shed.push(Shed { id: item.id.clone(), detail: Detail::Focus, tokens: item.tokens, full_tokens });
        }
        if let Some(m) = message {
            placed.insert(item.id.clone(), m);
        }
        plan.offer(section, item, false);
    }
    placed
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
        Some(ExactReason::Skill) => SectionName::Skill,
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

/// The date a memory's line carries after its content: an open loop's due date, an event's day.
fn stamp(m: &Memory) -> String {
    // A date the text already writes ("On 2023-10-23 User said: …") is not written twice.
    let day = |at: &chrono::DateTime<chrono::Utc>| at.format("%Y-%m-%d").to_string();
    let unsaid = |d: &String| !m.content.contains(d.as_str());
    if let Some(due) = m.due_at.filter(|_| m.kind == Kind::OpenLoop) {
        return Some(day(&due)).filter(unsaid).map(|d| format!(" (due {d})")).unwrap_or_default();
    }
    let Some(at) = m.valid_from.filter(|_| m.kind == Kind::Event) else { return String::new() };
    // An event told with a period ("last week") is dated when it was told: the model reads the
    // period from that day, as the user meant it.
    let told = crate::extract::when::past(&m.content, at).is_some_and(|p| p.vague);
    Some(day(&at)).filter(unsaid).map(|d| format!(" ({} {d})", if told { "told on" } else { "on" })).unwrap_or_default()
}

/// A ranked or exact memory's line with `content` (the memory's, or a gist of it): its date,
/// and a warning when the user's message may just have outdated it.
fn memory_text(item: &RecallItem, content: &str) -> String {
    let mut text = format!("{content}{}", stamp(&item.memory));
    if let Some(said) = &item.possibly_outdated {
        text.push_str(&format!(" [possibly outdated: the user just said \"{said}\"; confirm before relying on it]"));
    }
    text
}

fn memory_item(item: &RecallItem) -> BlockItem {
    let text = memory_text(item, &item.memory.content);
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
        detail: None,
        day: None,
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
        detail: None,
        day: None,
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
        detail: None,
        day: None,
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
        detail: None,
        day: None,
    }
}

/// A past message's line with `body` (the message, its focus or its gist), saying who spoke
/// unless it was the user; its day is written above it ([`day_line`]).
fn excerpt_text(m: &Message, body: &str) -> String {
    match m.role {
        Role::User => body.to_owned(),
        other => format!("{other}: {body}"),
    }
}

/// The line that dates the excerpts under it.
fn day_line(day: NaiveDate) -> String {
    format!("[{}]", day.format("%Y-%m-%d"))
}

fn excerpt_item(e: &Excerpt) -> BlockItem {
    let m = &e.message;
    let text = excerpt_text(m, &m.content);
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
        detail: None,
        day: Some(m.at.date_naive()),
    }
}

/// Budget bookkeeping while sections fill up.
struct Plan {
    budget: usize,
    used: usize,
    sections: Vec<(SectionName, Vec<BlockItem>, bool)>,
    /// Days whose line is already paid for (see [`BlockItem::day`]).
    days: HashSet<NaiveDate>,
    held_back: Vec<HeldBack>,
    shed: Vec<Shed>,
}

impl Plan {
    fn new(budget: usize) -> Self {
        Self {
            budget,
            used: tokens::line_cost(HEADER),
            sections: Vec::new(),
            days: HashSet::new(),
            held_back: Vec::new(),
            shed: Vec::new(),
        }
    }

    /// What dating `item` adds: its day's line, unless an item of that day is already placed.
    fn day_cost(&self, item: &BlockItem) -> usize {
        match item.day {
            Some(day) if !self.days.contains(&day) => tokens::line_cost(&day_line(day)),
            _ => 0,
        }
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
        let cost = item.tokens + self.day_cost(&item);
        if !self.fits(section, cost) {
            self.held_back.push(HeldBack { id: item.id, reason: HoldReason::Budget });
            return false;
        }
        self.reserve(section, cost);
        self.days.extend(item.day);
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
        ContextBlock {
            tokens: tokens::count(&text),
            sections,
            text,
            budget: self.budget,
            held_back: self.held_back,
            shed: self.shed,
        }
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
        let mut day = None;
        for i in &s.items {
            if let Some(d) = i.day.filter(|d| day != Some(*d)) {
                day = Some(d);
                out.push_str(&day_line(d));
                out.push('\n');
            }
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
        assert_eq!(
            format!("{}{}", e.content, stamp(&e)),
            "User went camping with the kids last week (told on 2026-03-10)"
        );
        e.content = "User ran a half marathon in Porto".into();
        assert_eq!(format!("{}{}", e.content, stamp(&e)), "User ran a half marathon in Porto (on 2026-03-10)");
        // A quote dated in its own words is not dated again.
        e.content = "On 2026-03-10 User said: \"Take a look at the finish line!\"".into();
        assert_eq!(stamp(&e), "");
        let mut l = mem(Kind::OpenLoop, "User plans to renew their passport");
        l.due_at = Some(now());
        assert_eq!(stamp(&l), " (due 2026-03-10)");
        l.content = "User must renew their passport by 2026-03-10".into();
        assert_eq!(stamp(&l), "");
    }

    fn build(exact: Vec<Memory>, ranked: Vec<Memory>, budget: usize, surfaced: &HashSet<MemoryId>) -> ContextBlock {
        let t = Tuning::default();
        let set = select_exact(exact, vec![], now(), &t);
        let cands =
            ranked.into_iter().map(|m| Candidate { memory: m, lexical: Some(1.0), vector: Some(0.8) }).collect();
        let r = rank(cands, &HashSet::new(), 20, now(), None, &t);
        assemble(
            AssemblyInput {
                exact: &set,
                ranked: &r.items,
                recent: &[],
                excerpts: &[],
                memos: &[],
                surfaced_recently: surfaced,
                budget,
                query_terms: &[],
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
        let r = rank(vec![weak], &HashSet::new(), 20, now(), None, &t);
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
            period: None,
        };
        let later = Excerpt {
            message: msg("e2", "The boat needs new sails", 60),
            lexical: None,
            vector: None,
            relevance: 0.5,
            period: None,
        };
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
                query_terms: &[],
            };
            assemble(input, &t.assembly)
        };
        let block = go(1000, &[]);
        let ex = block.section(SectionName::Excerpt).unwrap();
        // Read oldest first.
        assert_eq!(ex.items.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), vec!["e1", "e2"]);
        // Both were said on one day: it is written once, above them, not on each line.
        assert!(ex.items[0].text.starts_with("We named the boat"), "{:?}", ex.items[0]);
        assert!(block.text.contains("[2026-03-10]\n- We named the boat"), "{}", block.text);
        assert_eq!(block.text.matches("[2026-03-10]").count(), 1, "{}", block.text);
        // Tight: the stronger excerpt wins the budget over the weaker memory.
        let tight = go(45, &[]);
        assert!(tight.text.contains("Albatross"), "{}", tight.text);
        assert!(!tight.text.contains("User likes tea"), "{}", tight.text);
        // With a recent window, excerpts leave it its share.
        let with_recent = go(90, &recent);
        assert!(with_recent.section(SectionName::Recent).is_some_and(|s| !s.items.is_empty()), "{}", with_recent.text);
        assert!(with_recent.tokens <= 90);
    }

    /// The `rank`-th best of a list of lexical hits, said by `role` at `at`.
    fn hit(id: String, role: Role, content: String, at: DateTime<Utc>, rank: usize) -> Excerpt {
        Excerpt {
            message: Message {
                id: crate::id::MessageId::new(id).unwrap(),
                scope: Scope::parse("acme", None, Some("dana"), Some("c0")).unwrap(),
                role,
                content,
                at,
            },
            lexical: Some(1.0),
            vector: None,
            relevance: 0.9 - rank as f32 * 0.01,
            period: None,
        }
    }

    /// A block of excerpts alone.
    fn excerpts_only<'a>(
        exact: &'a ExactSet,
        excerpts: &'a [Excerpt],
        none: &'a HashSet<MemoryId>,
        budget: usize,
        query_terms: &'a [String],
    ) -> AssemblyInput<'a> {
        AssemblyInput {
            exact,
            ranked: &[],
            recent: &[],
            excerpts,
            memos: &[],
            surfaced_recently: none,
            budget,
            query_terms,
        }
    }

    #[test]
    fn the_best_read_whole_and_the_next_bring_their_focus_before_any_is_dropped() {
        let t = Tuning::default();
        let set = select_exact(vec![], vec![], now(), &t);
        let excerpts: Vec<Excerpt> = (0..12)
            .map(|i| {
                let text = format!(
                    "Busy week at the shop again, the usual chaos with deliveries and stock. \
                     Trip {i} to the lake with the kayak was the best part. Anyway, back to work tomorrow."
                );
                hit(format!("m{i}"), Role::User, text, now() - chrono::Duration::days(30 - i as i64), i)
            })
            .collect();
        let terms = crate::text::query_terms("When did I take the kayak to the lake?");
        let none = HashSet::new();
        let go = |budget: usize| assemble(excerpts_only(&set, &excerpts, &none, budget, &terms), &t.assembly);
        // Room for everything whole: nothing is shed.
        let roomy = go(2000);
        assert_eq!(roomy.section(SectionName::Excerpt).unwrap().items.len(), 12);
        assert!(roomy.shed.is_empty());
        assert!(roomy.section(SectionName::Excerpt).unwrap().items.iter().all(|i| i.detail == Some(Detail::Full)));
        // Tight: the best read whole, and once whole no longer fits the next bring their focus.
        let tight = go(330);
        let items = &tight.section(SectionName::Excerpt).unwrap().items;
        assert!(tight.tokens <= tight.budget);
        let level = |id: &str| items.iter().find(|i| i.id == id).map(|i| i.detail.unwrap());
        assert_eq!(level("m0"), Some(Detail::Full), "{}", tight.text);
        let focused: Vec<&BlockItem> = items.iter().filter(|i| i.detail == Some(Detail::Focus)).collect();
        assert!(!focused.is_empty(), "{}", tight.text);
        for i in &focused {
            let n = i.id.trim_start_matches('m');
            assert_eq!(
                i.text,
                format!("… Trip {n} to the lake with the kayak was the best part. …"),
                "whole sentences"
            );
            // The trace says what each shortened item got and what it would have cost.
            let shed = tight.shed.iter().find(|s| s.id == i.id).unwrap();
            assert!(shed.tokens < shed.full_tokens && shed.detail == Detail::Focus);
        }
        // Whatever is held back ranks below everything placed.
        let worst_placed = items.iter().map(|i| i.id[1..].parse::<usize>().unwrap()).max().unwrap();
        for h in &tight.held_back {
            assert!(h.id[1..].parse::<usize>().unwrap() > worst_placed, "{h:?} held back before m{worst_placed}");
        }
        // So tight that even the focus runs out: the weakest are held back, never the best.
        let tiny = go(80);
        let kept: Vec<&str> = tiny.section(SectionName::Excerpt).unwrap().items.iter().map(|i| i.id.as_str()).collect();
        assert!(kept.contains(&"m0") && !kept.contains(&"m11"), "{}", tiny.text);
        assert!(tiny.tokens <= 80);
    }

    #[test]
    fn a_focus_never_costs_more_than_the_whole() {
        let e = hit(
            "m1".into(),
            Role::User,
            "A long sentence about kayaks. Ok. Another long sentence about kayaks.".into(),
            now(),
            0,
        );
        let terms = Terms::weighted(&crate::text::query_terms("kayaks"), []);
        // Both long sentences bear on it: "A … C" costs what "A. Ok. C" does, so it is the whole.
        let t = Tiered::excerpt(&e, &terms);
        assert!(t.cost(Detail::Focus) <= t.cost(Detail::Full));
        assert!(t.cost(Detail::Focus) < t.cost(Detail::Full) || t.levels[0].text == t.levels[1].text);
    }

    #[test]
    fn a_memory_restated_by_a_competing_turn_gives_way_to_it() {
        let t = Tuning::default();
        let set = select_exact(vec![], vec![], now(), &t);
        let source = hit("t1".into(), Role::User, "Btw my sister Lucia is getting married in June!".into(), now(), 5);
        let other = hit("t2".into(), Role::User, "Work was fine.".into(), now(), 1);
        let mut told = mem(Kind::Event, "User's sister Lucia is getting married in June");
        told.provenance.sources = vec![crate::id::MessageId::new("t1").unwrap()];
        told.provenance.rule = Some(crate::extract::CAPTURE_RULE.into());
        // A typed memory of the same turn stays: its section is how the model should use it.
        let mut typed = mem(Kind::Profile, "User's sister is called Lucia");
        typed.provenance.sources = told.provenance.sources.clone();
        typed.provenance.rule = Some("identity.relative".into());
        let mut boundary = mem(Kind::Protocol, "Never bring up the wedding");
        boundary.surface = Surface::Avoid;
        boundary.provenance.sources = vec![crate::id::MessageId::new("t1").unwrap()];
        boundary.provenance.rule = Some(crate::extract::CAPTURE_RULE.into());
        let cands = vec![
            Candidate { memory: told.clone(), lexical: Some(1.0), vector: Some(0.95) },
            Candidate { memory: boundary, lexical: Some(1.0), vector: Some(0.9) },
            Candidate { memory: typed, lexical: Some(1.0), vector: Some(0.7) },
        ];
        let r = rank(cands, &HashSet::new(), 20, now(), None, &t);
        let excerpts = [other, source];
        let none = HashSet::new();
        let terms = crate::text::query_terms("when is the wedding?");
        let block = assemble(
            AssemblyInput { ranked: &r.items, ..excerpts_only(&set, &excerpts, &none, 1000, &terms) },
            &t.assembly,
        );
        // The turn carries the fact once, verbatim; the memory is held back and says why.
        assert!(block.text.contains("Lucia is getting married in June!"), "{}", block.text);
        assert!(!block.text.contains("User's sister Lucia"), "{}", block.text);
        assert!(block.text.contains("User's sister is called Lucia"), "{}", block.text);
        let why = block.held_back.iter().find(|h| h.id == told.id.to_string()).expect("held back");
        assert_eq!(why.reason, HoldReason::InSourceTurn);
        // A boundary is never folded: its instruction is the point.
        assert!(block.text.contains("Never bring up the wedding"), "{}", block.text);
        // The turn competes at the memory's rank: with room for one line, it is the one.
        let tight = assemble(
            AssemblyInput { ranked: &r.items[..1], ..excerpts_only(&set, &excerpts, &none, 40, &terms) },
            &t.assembly,
        );
        assert!(tight.text.contains("Lucia"), "{}", tight.text);
    }

    #[test]
    fn whole_items_are_dropped_when_the_budget_is_tight() {
        // Path A items are placed whole or not at all.
        let mut long = mem(Kind::Preference, &"word ".repeat(200));
        long.key = Some("style".into());
        let short = mem(Kind::Profile, "User's name is Dana");
        let block = build(vec![long.clone()], vec![short], 40, &HashSet::new());
        assert!(block.tokens <= 40);
        assert!(block.text.contains("User's name is Dana"));
        assert!(block.held_back.iter().any(|h| h.id == long.id.to_string() && h.reason == HoldReason::Budget));
        // A ranked memory is one statement: never cut to a fragment, held back instead.
        let block = build(vec![], vec![long.clone()], 40, &HashSet::new());
        assert!(block.tokens <= 40, "{}", block.text);
        assert!(!block.text.contains("word"), "{}", block.text);
        assert!(block.shed.is_empty());
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
                query_terms: &[],
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
            AssemblyInput {
                exact: set,
                ranked,
                recent: &[],
                excerpts: &[],
                memos,
                surfaced_recently: none,
                budget,
                query_terms: &[],
            }
        }
        let recalled = rank(
            vec![Candidate { memory: memos[3].clone(), lexical: Some(1.0), vector: Some(0.9) }],
            &HashSet::new(),
            5,
            now(),
            None,
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

        /// Excerpts from a few days, any budget: the block stays within it (day lines are
        /// paid for), each placed day is written once, and every excerpt sits under its day.
        #[test]
        fn excerpts_sit_under_their_day_written_once(
            budget in 0usize..600,
            said in proptest::collection::vec((0i64..4, 0i64..600, 1usize..40), 0..25),
        ) {
            let t = Tuning::default();
            let set = select_exact(vec![], vec![], now(), &t);
            let excerpts: Vec<Excerpt> = said
                .iter()
                .enumerate()
                .map(|(i, (day, minute, words))| {
                    let role = if i % 3 == 0 { Role::Assistant } else { Role::User };
                    let at = now() - chrono::Duration::days(*day * 7) - chrono::Duration::minutes(*minute);
                    hit(format!("x{i}"), role, format!("trip {i} {}", "by the lake ".repeat(*words)), at, i)
                })
                .collect();
            let none = HashSet::new();
            let block = assemble(excerpts_only(&set, &excerpts, &none, budget, &[]), &t.assembly);
            prop_assert!(block.tokens <= budget, "{} > {}\n{}", block.tokens, budget, block.text);
            let Some(section) = block.section(SectionName::Excerpt) else { return Ok(()) };
            let mut days: Vec<NaiveDate> = section.items.iter().filter_map(|i| i.day).collect();
            prop_assert_eq!(days.len(), section.items.len());
            days.dedup();
            for day in &days {
                prop_assert_eq!(block.text.matches(&day_line(*day)).count(), 1, "{}", block.text);
            }
            for item in &section.items {
                let line = block.text.find(&format!("- {}\n", item.text)).unwrap();
                let heading = block.text[..line].rfind("\n[").map(|at| &block.text[at + 1..at + 13]);
                let want = day_line(item.day.unwrap());
                prop_assert_eq!(heading, Some(want.as_str()), "{}", block.text);
            }
        }
    }
}
