//! `mnemo bench extract`: what extraction keeps, judged against LoCoMo's own annotations.
//!
//! Each conversation is ingested exactly as the retrieval benchmark does; then the active
//! memories are compared with the dataset authors' `observation`s (facts per speaker, each with
//! the turns it came from) and `event_summary` (dated events per session). A memory *states* a
//! reference when the all-MiniLM-L6-v2 cosine between the two texts is at least
//! [`MATCH_COSINE`]. With the speakers split (`--speaker-as`) the reference's speaker is renamed
//! "User" first (memories speak of the user that way); in the default rendering every turn is
//! labelled with its speaker, memories drawn from it name that speaker, and references are
//! compared as written. The threshold is part of the measure's contract; the distribution of best cosines
//! is reported beside it so a reader can see how much hangs on it.
//!
//! - `observation_recall`: observations stated by an active memory whose provenance includes
//!   one of the observation's turns;
//! - `event_recall`: events stated by an active memory sourced in the event's session, and
//!   `event_date_accuracy`: matched events one of whose matching memories is dated (valid from)
//!   within a day of the annotated date;
//! - `precision`: active memories stating some observation of their own source sessions (a lower
//!   bound: the annotations are not exhaustive, so unmatched memories are listed for a person);
//! - `memories_per_100_turns` and the extractor's own time per message.
//!
//! Turns are ingested with the roles the rendering gives them. With the speakers split
//! (`--speaker-as`), memories can only be about the one speaker ingested as the user (the other
//! is the assistant, whose messages extraction does not read as facts about the user), so all
//! three figures are taken against that speaker's observations and events alone: the other
//! speaker's annotations are not expected of extraction, and a memory matching one of them
//! (renamed "User") would state another person's fact as the user's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, NaiveDate};
use mnemo::models::{Embedder, cosine};
use mnemo::store::ListFilter;
use mnemo::{Config, ExtractorKind};
use mnemo_core::extract::{Extractor, HeuristicExtractor};
use mnemo_core::{Kind, Memory as Row, Message, MessageId, StatusKind};
use serde::Serialize;

use super::baselines::embed_in_batches;
use super::data::{Conversation, Dataset, EventNote, Observation, TurnRendering};
use super::error::LocomoError;
use super::harness::{Progress, chat_scope, engine_error, ingest_conversation};
use super::metrics::Summary;

/// Cosine (all-MiniLM-L6-v2) at or above which a memory states a reference fact.
pub const MATCH_COSINE: f32 = 0.6;

/// Which conversations to measure and how to feed them in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtractionOptions {
    /// Conversations skipped from the start of the file (a held-out split starts past them).
    pub skip: usize,
    /// Then at most this many (all when `None`).
    pub conversations: Option<usize>,
    /// How turns become message text (as in the retrieval benchmark).
    pub rendering: TurnRendering,
    /// How many unmatched memories and missed observations the report lists for a person.
    pub listed: usize,
}

impl Default for ExtractionOptions {
    fn default() -> Self {
        Self { skip: 0, conversations: None, rendering: TurnRendering::default(), listed: 20 }
    }
}

/// A share with what it is a share of, so every rate can be checked by hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Share {
    /// The rate, 0..1 (0 when there is nothing to count).
    pub rate: f64,
    /// Counted.
    pub hits: usize,
    /// Out of.
    pub of: usize,
}

impl Share {
    fn new(hits: usize, of: usize) -> Self {
        Self { rate: if of == 0 { 0.0 } else { hits as f64 / of as f64 }, hits, of }
    }

    fn add(self, other: Self) -> Self {
        Self::new(self.hits + other.hits, self.of + other.of)
    }
}

/// One conversation's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationExtraction {
    /// The sample id.
    pub sample_id: String,
    /// Turns ingested.
    pub turns: usize,
    /// Active memories counted (see [`counted`]).
    pub memories: usize,
    /// Observations stated by a memory sourced in one of their turns.
    pub observations: Share,
    /// Events stated by a memory sourced in their session.
    pub events: Share,
    /// Matched events whose memory carries the date (±1 day).
    pub event_dates: Share,
    /// Memories stating an observation of their source sessions.
    pub precision: Share,
}

/// A memory listed for a person to judge, with the observation of its sessions closest to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedMemory {
    /// The conversation.
    pub conversation: String,
    /// Its kind.
    pub kind: Kind,
    /// The rule that proposed it, when one was recorded.
    pub rule: Option<String>,
    /// Its content.
    pub content: String,
    /// The turns it came from.
    pub sources: Vec<String>,
    /// How much extraction judged it to matter (0..1): what a reader weighs a miss by.
    pub salience: f32,
    /// The closest observation of its sessions and the cosine to it.
    pub closest: Option<(String, f32)>,
}

/// An observation no memory sourced in its turns states, for a person to judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissedObservation {
    /// The conversation.
    pub conversation: String,
    /// The observation (speaker renamed "User" when the speakers are split).
    pub text: String,
    /// Its turns.
    pub dia_ids: Vec<String>,
    /// The closest memory sourced in those turns and the cosine to it.
    pub closest: Option<(String, f32)>,
}

/// A matched event none of whose matching memories carries its date, for a person to judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MisdatedEvent {
    /// The conversation.
    pub conversation: String,
    /// The event (speaker renamed "User" when the speakers are split).
    pub text: String,
    /// The annotated date.
    pub date: NaiveDate,
    /// The memories stating it, each with the day it is valid from (none when undated).
    pub memories: Vec<(String, Option<NaiveDate>)>,
}

/// Everything `mnemo bench extract` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractionReport {
    /// "extract".
    pub benchmark: &'static str,
    /// The cosine a match needs.
    pub match_cosine: f32,
    /// Share of observations stated by an active memory sourced in one of their turns.
    pub observation_recall: f64,
    /// Share of events stated by an active memory sourced in their session.
    pub event_recall: f64,
    /// Share of matched events whose memory carries the event's date within a day.
    pub event_date_accuracy: f64,
    /// Share of active memories stating an observation of their own source sessions.
    pub precision: f64,
    /// Active memories per 100 ingested turns.
    pub memories_per_100_turns: f64,
    /// The extractor's own time per message in ms (heuristic: each turn extracted alone; LLM:
    /// ingest and flush wall time per turn).
    pub extraction_ms_per_message: Summary,
    /// The counts behind the rates.
    pub observations: Share,
    /// See `observations`.
    pub events: Share,
    /// See `observations`.
    pub event_dates: Share,
    /// See `observations`.
    pub memories: Share,
    /// Turns ingested.
    pub turns: usize,
    /// For every observation, the best cosine of a memory sourced in its turns (0 without one):
    /// its percentiles and a histogram by tenths.
    pub observation_best_cosine: CosineDistribution,
    /// Active memories counted, per kind.
    pub memories_by_kind: BTreeMap<String, Share>,
    /// Active memories counted, per rule that proposed them ("none" when no rule was recorded):
    /// which rules' memories state what the annotators saw.
    pub memories_by_rule: BTreeMap<String, Share>,
    /// Per conversation.
    pub per_conversation: Vec<ConversationExtraction>,
    /// Memories that state nothing annotated (as many as the options list).
    pub unmatched_memories: Vec<ListedMemory>,
    /// Memories that state an observation, with the one they state (as many as the options
    /// list): what a filter of captures would lose, read beside what it would drop.
    pub matched_memories: Vec<ListedMemory>,
    /// Observations nothing states (as many as the options list).
    pub missed_observations: Vec<MissedObservation>,
    /// Matched events whose memories miss the date (as many as the options list).
    pub misdated_events: Vec<MisdatedEvent>,
    /// The extractor configured.
    pub extractor: String,
    /// The embedder measuring the cosines.
    pub embedder: String,
    /// The options it ran with.
    pub options: ExtractionOptions,
    /// Wall time of the whole run.
    pub seconds: f64,
}

/// Percentiles and a histogram of cosines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CosineDistribution {
    /// Percentiles (p50 is the median observation's best cosine).
    pub summary: Summary,
    /// Counts per bucket "[0.0,0.1)" .. "[0.9,1.0]".
    pub histogram: BTreeMap<String, usize>,
}

impl CosineDistribution {
    fn of(values: &[f64]) -> Self {
        // Tenths; the last bucket is closed so a cosine of exactly 1.0 has a home.
        let label =
            |b: i64| format!("[{:.1},{:.1}{}", b as f64 / 10.0, (b + 1) as f64 / 10.0, if b == 9 { "]" } else { ")" });
        let mut histogram: BTreeMap<String, usize> = (0..10).map(|b| (label(b), 0)).collect();
        for &v in values {
            *histogram.entry(label(((v * 10.0).floor() as i64).clamp(0, 9))).or_default() += 1;
        }
        Self { summary: Summary::of(values), histogram }
    }
}

/// The kinds that are what extraction kept; chat memos, job-written syntheses and authored
/// policies are not.
pub fn counted(kind: Kind) -> bool {
    kind.is_extractable()
}

/// `text` with every whole-word `name` (also in "Name's") replaced by "User".
pub fn as_user(text: &str, name: &str) -> String {
    if name.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(name) {
        let before_ok = rest[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = &rest[i + name.len()..];
        let after_ok = after.chars().next().is_none_or(|c| !c.is_alphanumeric());
        out.push_str(&rest[..i]);
        out.push_str(if before_ok && after_ok { "User" } else { name });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The session number of a dialog id ("D3:12" → 3).
fn session_of(dia_id: &str) -> Option<u32> {
    dia_id.strip_prefix('D')?.split_once(':')?.0.parse().ok()
}

/// Embeds texts in batches of 64 (the model's sweet spot here).
fn embed_all(embedder: &dyn Embedder, texts: &[String], conversation: &str) -> Result<Vec<Vec<f32>>, LocomoError> {
    embed_in_batches(embedder, texts, 64)
        .map_err(|e| engine_error(conversation, "embedding for the match")(mnemo::Error::from(e)))
}

/// Runs the extraction benchmark over `dataset` with the engine configured by `config` (its
/// store settings are ignored, as in the retrieval benchmark); `embedder` both serves the engine
/// and measures the cosines.
pub fn run_extraction(
    dataset: &Dataset,
    config: &Config,
    embedder: &Arc<dyn Embedder>,
    options: &ExtractionOptions,
    progress: Progress<'_>,
) -> Result<ExtractionReport, LocomoError> {
    let started = Instant::now();
    let chosen: Vec<&Conversation> =
        dataset.conversations.iter().skip(options.skip).take(options.conversations.unwrap_or(usize::MAX)).collect();
    if chosen.is_empty() {
        return Err(LocomoError::Options(format!(
            "--skip {} leaves no conversation of the {} in the file",
            options.skip,
            dataset.conversations.len()
        )));
    }
    let mut per_conversation = Vec::new();
    let mut best_cosines = Vec::new();
    let mut by_kind: BTreeMap<String, Share> = BTreeMap::new();
    let mut by_rule: BTreeMap<String, Share> = BTreeMap::new();
    let mut unmatched_memories = Vec::new();
    let mut matched_memories = Vec::new();
    let mut missed_observations = Vec::new();
    let mut misdated_events = Vec::new();
    let mut extraction_ms = Vec::new();
    for conv in chosen {
        let ingested = ingest_conversation(conv, config, Arc::clone(embedder), options.rendering, progress)?;
        if config.extractor == ExtractorKind::Heuristic {
            extraction_ms.extend(time_heuristic(conv, options.rendering));
        } else {
            let per = ingested.stats.ingest_seconds * 1e3 / ingested.stats.turns.max(1) as f64;
            extraction_ms.extend(std::iter::repeat_n(per, ingested.stats.turns));
        }
        let id = conv.sample_id.as_str();
        let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
        let memories: Vec<Row> = ingested
            .memory
            .list(&chat_scope(conv, None)?, &active)
            .map_err(engine_error(id, "listing memories"))?
            .into_iter()
            .filter(|m| counted(m.kind))
            .collect();
        let user = options.rendering.user_speaker(conv);
        let c = measure(conv, user, &memories, embedder.as_ref(), &mut best_cosines, &mut by_kind, &mut by_rule)?;
        for (listed, found) in [(&mut unmatched_memories, c.unmatched), (&mut matched_memories, c.matched)] {
            let room = options.listed.saturating_sub(listed.len());
            listed.extend(found.into_iter().take(room).map(|(m, closest)| ListedMemory {
                conversation: id.to_string(),
                kind: m.kind,
                rule: m.provenance.rule.clone(),
                content: m.content.clone(),
                sources: m.provenance.sources.iter().map(|s| s.as_str().to_string()).collect(),
                salience: m.salience,
                closest,
            }));
        }
        let room = options.listed.saturating_sub(missed_observations.len());
        missed_observations.extend(c.missed.into_iter().take(room));
        let room = options.listed.saturating_sub(misdated_events.len());
        misdated_events.extend(c.misdated.into_iter().take(room));
        progress(&format!(
            "{id}: observations {}/{}, events {}/{} (dated {}/{}), precision {}/{}",
            c.figures.observations.hits,
            c.figures.observations.of,
            c.figures.events.hits,
            c.figures.events.of,
            c.figures.event_dates.hits,
            c.figures.event_dates.of,
            c.figures.precision.hits,
            c.figures.precision.of
        ));
        per_conversation.push(c.figures);
    }
    let sum =
        |f: fn(&ConversationExtraction) -> Share| per_conversation.iter().map(f).fold(Share::default(), Share::add);
    let observations = sum(|c| c.observations);
    let events = sum(|c| c.events);
    let event_dates = sum(|c| c.event_dates);
    let memories = sum(|c| c.precision);
    let turns: usize = per_conversation.iter().map(|c| c.turns).sum();
    let counted_memories: usize = per_conversation.iter().map(|c| c.memories).sum();
    Ok(ExtractionReport {
        benchmark: "extract",
        match_cosine: MATCH_COSINE,
        observation_recall: observations.rate,
        event_recall: events.rate,
        event_date_accuracy: event_dates.rate,
        precision: memories.rate,
        memories_per_100_turns: if turns == 0 { 0.0 } else { counted_memories as f64 * 100.0 / turns as f64 },
        extraction_ms_per_message: Summary::of(&extraction_ms),
        observations,
        events,
        event_dates,
        memories,
        turns,
        observation_best_cosine: CosineDistribution::of(&best_cosines),
        memories_by_kind: by_kind,
        memories_by_rule: by_rule,
        per_conversation,
        unmatched_memories,
        matched_memories,
        missed_observations,
        misdated_events,
        extractor: serde_json::to_value(config.extractor)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        embedder: embedder.id().to_string(),
        options: options.clone(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The heuristic extractor's own time on each turn alone (after a warm-up pass), in ms; each
/// turn in the role it is ingested as.
fn time_heuristic(conv: &Conversation, rendering: TurnRendering) -> Vec<f64> {
    let scope = mnemo_core::Scope::parse("bench", None, Some("u"), Some("c")).expect("a valid scope");
    let messages: Vec<Message> = conv
        .turns()
        .filter_map(|(s, t)| {
            Some(Message {
                id: MessageId::new(t.dia_id.clone()).ok()?,
                scope: scope.clone(),
                role: rendering.role(conv, t),
                content: t.render(rendering),
                at: s.at,
            })
        })
        .collect();
    let x = HeuristicExtractor;
    for m in &messages {
        std::hint::black_box(x.extract(std::slice::from_ref(m)));
    }
    messages
        .iter()
        .map(|m| {
            let t = Instant::now();
            std::hint::black_box(x.extract(std::slice::from_ref(m)));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// One conversation's comparison.
struct Compared<'a> {
    figures: ConversationExtraction,
    unmatched: Vec<(&'a Row, Option<(String, f32)>)>,
    matched: Vec<(&'a Row, Option<(String, f32)>)>,
    missed: Vec<MissedObservation>,
    misdated: Vec<MisdatedEvent>,
}

/// The annotations about `user` (all of them when `None`: both speakers are the user).
fn about<'c>(conv: &'c Conversation, user: Option<&str>) -> (Vec<&'c Observation>, Vec<&'c EventNote>) {
    let theirs = |speaker: &str| user.is_none_or(|u| u == speaker);
    (
        conv.observations.iter().filter(|o| theirs(&o.speaker)).collect(),
        conv.events.iter().filter(|e| theirs(&e.speaker)).collect(),
    )
}

/// Compares `memories` with the annotations about `user` (see [`about`]).
fn measure<'a>(
    conv: &Conversation,
    user: Option<&str>,
    memories: &'a [Row],
    embedder: &dyn Embedder,
    best_cosines: &mut Vec<f64>,
    by_kind: &mut BTreeMap<String, Share>,
    by_rule: &mut BTreeMap<String, Share>,
) -> Result<Compared<'a>, LocomoError> {
    let id = conv.sample_id.as_str();
    let (observations, events) = about(conv, user);
    // With the speakers split the user's memories say "User"; in the default rendering every
    // turn names its speaker, and so does each memory drawn from it: the references keep names.
    let named = |text: &str, speaker: &str| if user.is_some() { as_user(text, speaker) } else { text.to_string() };
    let obs_texts: Vec<String> = observations.iter().map(|o| named(&o.text, &o.speaker)).collect();
    let event_texts: Vec<String> = events.iter().map(|e| named(&e.text, &e.speaker)).collect();
    let mem_texts: Vec<String> = memories.iter().map(|m| m.content.clone()).collect();
    let obs_v = embed_all(embedder, &obs_texts, id)?;
    let event_v = embed_all(embedder, &event_texts, id)?;
    let mem_v = embed_all(embedder, &mem_texts, id)?;
    let sources: Vec<Vec<&str>> =
        memories.iter().map(|m| m.provenance.sources.iter().map(MessageId::as_str).collect()).collect();
    let sessions: Vec<Vec<u32>> = sources.iter().map(|s| s.iter().filter_map(|d| session_of(d)).collect()).collect();

    // Observations: the best memory sourced in one of its turns.
    let mut observed = 0;
    let mut missed = Vec::new();
    for (o, (ov, text)) in observations.iter().zip(obs_v.iter().zip(&obs_texts)) {
        let best = (0..memories.len())
            .filter(|&m| sources[m].iter().any(|s| o.dia_ids.iter().any(|d| d == s)))
            .map(|m| (m, cosine(ov, &mem_v[m])))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let score = best.map_or(0.0, |b| b.1);
        best_cosines.push(f64::from(score));
        if score >= MATCH_COSINE {
            observed += 1;
        } else {
            missed.push(MissedObservation {
                conversation: id.to_string(),
                text: text.clone(),
                dia_ids: o.dia_ids.clone(),
                closest: best.map(|(m, c)| (memories[m].content.clone(), c)),
            });
        }
    }

    // Events: any memory sourced in the session stating it; dated if one of those carries the date.
    let (mut evented, mut dated) = (0, 0);
    let mut misdated = Vec::new();
    for (e_index, (e, ev)) in events.iter().zip(&event_v).enumerate() {
        let matching: Vec<usize> = (0..memories.len())
            .filter(|&m| sessions[m].contains(&e.session) && cosine(ev, &mem_v[m]) >= MATCH_COSINE)
            .collect();
        if matching.is_empty() {
            continue;
        }
        evented += 1;
        let near = |d: NaiveDate| (d - e.date).abs() <= Duration::days(1);
        if matching.iter().any(|&m| memories[m].valid_from.is_some_and(|v| near(v.date_naive()))) {
            dated += 1;
        } else {
            misdated.push(MisdatedEvent {
                conversation: id.to_string(),
                text: event_texts[e_index].clone(),
                date: e.date,
                memories: matching
                    .iter()
                    .map(|&m| (memories[m].content.clone(), memories[m].valid_from.map(|v| v.date_naive())))
                    .collect(),
            });
        }
    }

    // Precision: a memory stating any observation of its own source sessions.
    let mut precise = 0;
    let mut unmatched = Vec::new();
    let mut matched = Vec::new();
    for (m, row) in memories.iter().enumerate() {
        let best = observations
            .iter()
            .enumerate()
            .filter(|(_, o)| sessions[m].contains(&o.session))
            .map(|(i, _)| (i, cosine(&mem_v[m], &obs_v[i])))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let hit = best.is_some_and(|b| b.1 >= MATCH_COSINE);
        for (map, key) in
            [(&mut *by_kind, row.kind.as_str()), (&mut *by_rule, row.provenance.rule.as_deref().unwrap_or("none"))]
        {
            let entry = map.entry(key.to_string()).or_default();
            *entry = entry.add(Share::new(usize::from(hit), 1));
        }
        let closest = best.map(|(i, c)| (obs_texts[i].clone(), c));
        if hit {
            precise += 1;
            matched.push((row, closest));
        } else {
            unmatched.push((row, closest));
        }
    }
    Ok(Compared {
        figures: ConversationExtraction {
            sample_id: id.to_string(),
            turns: conv.turns().count(),
            memories: memories.len(),
            observations: Share::new(observed, observations.len()),
            events: Share::new(evented, events.len()),
            event_dates: Share::new(dated, evented),
            precision: Share::new(precise, memories.len()),
        },
        unmatched,
        matched,
        missed,
        misdated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speaker_becomes_the_user_only_as_a_whole_word() {
        assert_eq!(as_user("Caroline's dog met Caroline.", "Caroline"), "User's dog met User.");
        assert_eq!(as_user("Carolines and Caroline", "Caroline"), "Carolines and User");
        assert_eq!(as_user("Jon met Jonah", "Jon"), "User met Jonah");
        assert_eq!(as_user("nothing here", ""), "nothing here");
    }

    #[test]
    fn shares_and_distributions_add_up() {
        assert_eq!(Share::new(1, 4).add(Share::new(2, 4)), Share::new(3, 8));
        assert_eq!(Share::new(0, 0).rate, 0.0);
        let d = CosineDistribution::of(&[0.05, 0.61, 0.65, 1.0]);
        assert_eq!(d.histogram["[0.0,0.1)"], 1);
        assert_eq!(d.histogram["[0.6,0.7)"], 2);
        assert_eq!(d.histogram["[0.9,1.0]"], 1);
        assert_eq!(d.histogram.values().sum::<usize>(), 4);
        assert_eq!(session_of("D12:3"), Some(12));
    }

    #[test]
    fn split_speakers_are_measured_against_the_users_annotations_only() {
        let text = r#"[{"sample_id": "c1",
            "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I ran a 5k"},
                              {"speaker": "Bo", "dia_id": "D1:2", "text": "I swim"}]},
            "observation": {"session_1_observation": {"Ann": [["Ann ran a 5k.", "D1:1"]], "Bo": [["Bo swims.", "D1:2"]]}},
            "event_summary": {"events_session_1": {"Ann": ["Ann runs a 5k."], "Bo": ["Bo swims."], "date": "8 May, 2023"}}}]"#;
        let data = Dataset::parse(std::path::Path::new("x.json"), text).unwrap();
        let c = &data.conversations[0];
        let count = |user| {
            let (o, e) = about(c, user);
            (o.len(), e.len(), o.first().map(|o| o.speaker.clone()))
        };
        assert_eq!(count(None), (2, 2, Some("Ann".into())));
        assert_eq!(count(Some("Bo")), (1, 1, Some("Bo".into())));
    }

    #[test]
    fn only_what_extraction_kept_is_counted() {
        assert!(counted(Kind::Event) && counted(Kind::Profile) && counted(Kind::OpenLoop));
        assert!(!counted(Kind::Memo) && !counted(Kind::Summary) && !counted(Kind::Knowledge));
    }
}
