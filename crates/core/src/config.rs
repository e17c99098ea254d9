//! Every default number of the architecture in one place, each overridable from `mnemo.toml`
//! or `MNEMO_*` environment variables (the engine does the loading; this module stays pure).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::kind::Kind;

/// All tunable numbers. Nothing else in the code base holds a threshold or a weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Tuning {
    /// Input limits.
    pub ingest: IngestTuning,
    /// Write gate thresholds.
    pub gate: GateTuning,
    /// Recall: fusion, composite ranking, tiers.
    pub ranking: RankingTuning,
    /// Power-law decay.
    pub decay: DecayTuning,
    /// Lifecycle periods (used by the jobs).
    pub lifecycle: LifecycleTuning,
    /// Context assembly.
    pub assembly: AssemblyTuning,
    /// What one request may ask of the server.
    pub limits: LimitsTuning,
    /// Stored documents: size limits, overview budget, the similarity threshold.
    pub documents: crate::document::DocumentsTuning,
    /// Context-window management of agent sessions: shedding thresholds, the rotation bundle.
    pub sessions: crate::window::WindowTuning,
}

/// Limits on what callers may send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestTuning {
    /// Longest accepted message, in characters.
    pub max_message_chars: usize,
    /// Longest accepted message, in tokens: text without spaces (CJK, emoji) is far more tokens
    /// per character than prose, and costs the pipeline accordingly.
    pub max_message_tokens: usize,
    /// Most messages in one ingest call.
    pub max_batch: usize,
    /// Most characters in one ingest call, all messages together, so that no single request
    /// keeps the server busy for minutes; a larger conversation is sent in several calls.
    pub max_batch_chars: usize,
}

impl Default for IngestTuning {
    fn default() -> Self {
        Self { max_message_chars: 32_000, max_message_tokens: 8_000, max_batch: 1_000, max_batch_chars: 100_000 }
    }
}

/// Bounds on one read request, each refused with a message naming the field (never clamped
/// silently, never an overflow): the work of a recall or context call grows with the query's
/// length and with `top_k`, and an MCP session is held in memory until it idles out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsTuning {
    /// Longest recall query or context message, in characters.
    pub max_query_chars: usize,
    /// Longest recall query or context message, in tokens.
    pub max_query_tokens: usize,
    /// Most distinct search terms taken from one query (the rest are ignored).
    pub max_query_terms: usize,
    /// Largest `top_k` of a recall.
    pub max_top_k: usize,
    /// Largest `budget_tokens` of a context call.
    pub max_budget_tokens: usize,
    /// Largest `offset` when listing memories.
    pub max_offset: usize,
    /// Longest `args_summary` or `text` of one observation (`POST /v1/observations`), in
    /// characters: an observation is a summary of what an agent did, not the tool's output
    /// (keep that as a document).
    pub max_observation_chars: usize,
    /// Most messages in one JSON-RPC batch sent to `/mcp`.
    pub mcp_max_batch: usize,
    /// Most live MCP sessions of one tenant; opening one more ends that tenant's longest-idle
    /// session, never another tenant's.
    pub mcp_sessions_per_tenant: usize,
    /// Most live MCP sessions in all; past it new sessions are refused (503) until some idle out.
    pub mcp_max_sessions: usize,
    /// An MCP session unused for this long ends.
    pub mcp_session_idle_secs: u64,
    /// Requests per second one tenant may make through the HTTP API and MCP, on average (a
    /// token bucket refilled at this rate); past it a request is answered 429 with
    /// `Retry-After`. On by default, and generous (50): an app answering people does not come
    /// near it, while a runaway loop in one tenant's app stops short of taking the server's
    /// time from the others. 0 sets no limit.
    pub requests_per_second: f64,
    /// Requests one tenant may make at once above the average (the bucket's size, 200 by
    /// default, so a page load or a batch job's start passes whole); at least 1.
    pub request_burst: usize,
    /// Requests of one tenant doing heavy work (ingest, storing a document, export, clear,
    /// erase) that run at once; more wait for one of them to finish. The engine's threads are
    /// shared by every tenant, so one tenant's burst of writes queues behind its own cap
    /// instead of in front of everyone's reads. By default half the machine's cores (at least
    /// one, at most eight): bulk work is CPU-bound and the store takes one write at a time, so
    /// more at once than that gains the tenant nothing, and every one more is a thread that
    /// shares the cores another tenant's reads run on ([`default_heavy_requests`]).
    pub heavy_requests_per_tenant: usize,
    /// Largest client key-value data on one memory (mem0's `metadata`), in bytes of its JSON:
    /// it travels with the memory into every listing and export, so a page of memories stays
    /// a page (16 KiB by default).
    pub max_metadata_bytes: usize,
}

impl Default for LimitsTuning {
    fn default() -> Self {
        Self {
            max_query_chars: 16_000,
            max_query_tokens: 4_000,
            max_query_terms: 512,
            max_top_k: 100,
            max_budget_tokens: 32_000,
            max_offset: 1_000_000,
            max_observation_chars: 2_000,
            mcp_max_batch: 32,
            mcp_sessions_per_tenant: 64,
            mcp_max_sessions: 10_000,
            mcp_session_idle_secs: 3_600,
            requests_per_second: 50.0,
            request_burst: 200,
            heavy_requests_per_tenant: default_heavy_requests(),
            max_metadata_bytes: 16 * 1024,
        }
    }
}

/// Half the cores this process may use, at least one and at most eight: the default of
/// `limits.heavy_requests_per_tenant`.
///
/// Why: on two cores, one tenant's twelve clients storing documents with eight places took
/// another tenant's recall p95 from 3.8 ms to 21 ms, though the work ran at a lower priority;
/// with one place, 7.6 ms (BENCHMARKS.md, fairness between tenants).
pub fn default_heavy_requests() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get() / 2).clamp(1, 8)
}

/// The write gate: "extraction loose, gate strict".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateTuning {
    /// Shortest content worth keeping, in characters (catches non-memories like "ok").
    pub min_content_chars: usize,
    /// Longest content a memory may hold.
    pub max_content_chars: usize,
    /// Confidence floor for every kind...
    pub min_confidence: f32,
    /// ...except kinds whose [`crate::kind::KindSpec::confidence_floor`] is raised (facts),
    /// which must be surer.
    pub fact_min_confidence: f32,
    /// Salience floor for every kind...
    pub min_salience: f32,
    /// ...except kinds whose [`crate::kind::KindSpec::salience_floor`] is raised (ephemeral
    /// context), cheap to regenerate and expensive to keep.
    pub ephemeral_min_salience: f32,
    /// Cosine at or above which a same-kind memory in scope counts as the same statement.
    pub dedup_cosine: f32,
}

impl Default for GateTuning {
    fn default() -> Self {
        Self {
            min_content_chars: 8,
            max_content_chars: 2_000,
            min_confidence: 0.4,
            fact_min_confidence: 0.7,
            min_salience: 0.2,
            ephemeral_min_salience: 0.6,
            dedup_cosine: 0.90,
        }
    }
}

/// Path B ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingTuning {
    /// Weight of query similarity in the composite.
    pub w_similarity: f32,
    /// Weight of salience.
    pub w_salience: f32,
    /// Weight of the pinned flag.
    pub w_pinned: f32,
    /// Weight of open-loop urgency.
    pub w_urgency: f32,
    /// Weight of confidence.
    pub w_confidence: f32,
    /// Weight of recency.
    pub w_recency: f32,
    /// Share of the lexical signal when both signals fire.
    pub lexical_weight: f32,
    /// Share of the vector signal when both signals fire.
    pub vector_weight: f32,
    /// Fused relevance below which a candidate is dropped: the long weak tail hurts more than it
    /// helps. Calibrated for raw cosine of sentence embeddings (unrelated ≈ 0.0–0.17, paraphrased
    /// questions ≈ 0.25+ with all-MiniLM-L6-v2).
    pub min_relevance: f32,
    /// Relevance at or above which a result is tier "high".
    pub tier_high: f32,
    /// Relevance at or above which a result is tier "standard".
    pub tier_standard: f32,
    /// Candidates taken from each half (lexical, vector) before fusion.
    pub candidates: usize,
    /// Half-life of the recency signal, in days.
    pub recency_half_life_days: f32,
    /// Open loops due within this many days are loaded by path A.
    pub due_soon_days: f32,
    /// Urgency rises linearly over this many days before the due date.
    pub urgency_horizon_days: f32,
    /// Urgency of an open loop without a due date.
    pub undated_loop_urgency: f32,
    /// Default number of items `recall` returns.
    pub default_top_k: usize,
    /// Best archival excerpts whose neighbouring turns (the question a hit answers, the answer
    /// it got) become excerpts too; 0 turns the neighbourhood off.
    pub neighbour_seeds: usize,
    /// A neighbour's relevance as a share of its hit's: close behind it, ahead of weak hits.
    pub neighbour_weight: f32,
    /// The same share for the turn after a hit that ends by asking: that turn is the answer
    /// the question was found for, so by default it is worth the question itself.
    pub reply_weight: f32,
    /// How far a message's archival vector leans toward the turn before it in its chat (0 = not
    /// at all, 1 = as much as toward its own words). A reply rarely names its topic ("A sunset
    /// over the lake.", "Yes, last Friday!"); the question it answers does, and that is what a
    /// later query names. Applied when a message is indexed, so a change reaches new messages.
    pub turn_context: f32,
    /// Relevance added to a memory or an excerpt said within the period a query asks about
    /// ("on 7 July", "the week before 16 November", "last weekend"; [`crate::period`]); 0 turns
    /// the period off. A lift, not a filter: a question's date narrows what it is about, and
    /// the words still decide.
    pub period_boost: f32,
    /// Archival candidates drawn from within the period a query asks about, by vector, beside
    /// the whole archive's best; 0 draws none. The lift cannot reach evidence neither half
    /// shortlisted, and "what did I watch on 1 May?" rarely shares words with the answer.
    pub period_candidates: usize,
    /// Relevance added to an excerpt for other strong hits in its own chat, at most this much
    /// ([`crate::archive::with_cohesion`]); 0 turns it off. A topic is talked through in one
    /// conversation, so hits that cluster are more likely on topic than a lone word match.
    pub session_cohesion: f32,
    /// Share of its relevance an excerpt keeps when it was said by someone other than the
    /// person the query asks about, where the messages tell who that is (a transcript's
    /// labels, or which side calls that person by name: [`crate::archive::Asked::said_by_others`]);
    /// 1 turns it off. What a person
    /// did is told in their own lines far more often than in others' (LoCoMo's conversations
    /// 0–4: 96% of the evidence for a question naming one speaker is that speaker's), so the
    /// other speaker's line that shares the question's words ("I had a rough hike") is weaker
    /// evidence than the asked person's line that only shares its meaning.
    pub other_speaker_weight: f32,
    /// Most passages of one message that get a vector of their own beside the whole message's
    /// ([`crate::passage`]); 0 (or 1) gives every message one vector. A turn that talks about two
    /// things ("Thanks! Last week I adopted a puppy.") has a whole-message vector halfway
    /// between them, and a question about either finds the passage's own vector closer.
    /// Applied when a message is indexed, so a change reaches new messages.
    pub max_passages: usize,
    /// Share of a user's messages a query word must stand in to count as common
    /// ([`crate::common`]): the dense half then embeds the query with and without it, averaged,
    /// so a speaker label or the name of the person a whole conversation is with no longer
    /// outweighs the words that tell messages apart; 0 turns it off. One message in ten: an
    /// assistant that calls the user by name ("Wow, Joanna, …") does so in 5–30% of a long
    /// chat, so at the earlier 30% the user's own name still pulled every such reply forward.
    pub common_term_share: f32,
    /// Messages a user needs before any word counts as common: in a short history a share is a
    /// topic, not a label.
    pub common_term_min_messages: usize,
}

impl Default for RankingTuning {
    fn default() -> Self {
        Self {
            w_similarity: 0.35,
            w_salience: 0.20,
            w_pinned: 0.15,
            w_urgency: 0.20,
            w_confidence: 0.10,
            w_recency: 0.10,
            lexical_weight: 0.3,
            vector_weight: 0.7,
            min_relevance: 0.2,
            tier_high: 0.7,
            tier_standard: 0.5,
            candidates: 50,
            recency_half_life_days: 14.0,
            due_soon_days: 3.0,
            urgency_horizon_days: 14.0,
            undated_loop_urgency: 0.3,
            default_top_k: 10,
            neighbour_seeds: 5,
            neighbour_weight: 0.7,
            reply_weight: 1.0,
            turn_context: 0.5,
            period_boost: 0.3,
            period_candidates: 10,
            session_cohesion: 0.1,
            other_speaker_weight: 0.8,
            max_passages: 8,
            common_term_share: 0.1,
            common_term_min_messages: 50,
        }
    }
}

/// Per-kind power-law decay exponents (λ in `t^-λ`, t in days). In `mnemo.toml` a table keyed
/// by kind name (`[decay.lambda] event = 0.3`); a kind left out keeps its row's default
/// ([`crate::kind::KindSpec::decay_lambda`]), an unknown name is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct KindRates(BTreeMap<Kind, f32>);

impl Default for KindRates {
    fn default() -> Self {
        Self(Kind::ALL.iter().map(|k| (*k, k.spec().decay_lambda)).collect())
    }
}

impl KindRates {
    /// The exponent for a kind.
    pub fn get(&self, kind: Kind) -> f32 {
        self.0.get(&kind).copied().unwrap_or(kind.spec().decay_lambda)
    }

    /// Overrides the exponent for a kind.
    pub fn set(&mut self, kind: Kind, lambda: f32) {
        self.0.insert(kind, lambda);
    }
}

impl Serialize for KindRates {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(Kind::ALL.iter().map(|k| (k.as_str(), self.get(*k))))
    }
}

impl<'de> Deserialize<'de> for KindRates {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut rates = KindRates::default();
        for (name, lambda) in BTreeMap::<String, f32>::deserialize(d)? {
            let kind: Kind = name.parse().map_err(serde::de::Error::custom)?;
            rates.set(kind, lambda);
        }
        Ok(rates)
    }
}

/// Power-law decay with reinforcement and a spacing bonus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecayTuning {
    /// Exponents per kind.
    pub lambda: KindRates,
    /// Gain per doubling of the access count.
    pub access_gain: f32,
    /// Gain per doubling of distinct sessions (spacing beats cramming).
    pub session_gain: f32,
    /// Strength never falls below this, so decay ranks but never silently deletes.
    pub min_strength: f32,
}

impl Default for DecayTuning {
    fn default() -> Self {
        Self { lambda: KindRates::default(), access_gain: 0.25, session_gain: 0.5, min_strength: 0.05 }
    }
}

/// Lifecycle periods, in days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LifecycleTuning {
    /// Ephemeral rows go stale after this long unreferenced.
    pub ephemeral_stale_days: f32,
    /// Events go stale after this long without reinforcement.
    pub event_stale_days: f32,
    /// Open loops close after this long of silence.
    pub open_loop_silence_days: f32,
    /// Open loops stay open this long past their due date (overdue loops are worth raising).
    pub open_loop_overdue_days: f32,
    /// Stale rows are archived after this long.
    pub stale_archive_days: f32,
    /// Most active memories one user may hold; the weakest are archived beyond it.
    pub max_active_per_user: usize,
}

impl Default for LifecycleTuning {
    fn default() -> Self {
        Self {
            ephemeral_stale_days: 3.0,
            event_stale_days: 30.0,
            open_loop_silence_days: 60.0,
            open_loop_overdue_days: 2.0,
            stale_archive_days: 90.0,
            max_active_per_user: 500,
        }
    }
}

/// The per-turn prompt block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AssemblyTuning {
    /// Token budget when the caller gives none.
    pub default_budget_tokens: usize,
    /// Raw message pairs of the current chat placed at the tail.
    pub recent_pairs: usize,
    /// Memos included.
    pub memos_in_prompt: usize,
    /// An item surfaced in each of this many most recent turns of a chat is held back.
    pub over_reference_turns: usize,
    /// Ranked (path B) items considered for the block.
    pub ranked_items: usize,
    /// Archival excerpts (past messages, verbatim) considered for the block.
    pub excerpts: usize,
    /// Approved skills placed in the block at the start of a session (a chat with no messages
    /// yet), the strongest first.
    pub skills_at_session_start: usize,
}

impl Default for AssemblyTuning {
    fn default() -> Self {
        Self {
            default_budget_tokens: 1_000,
            recent_pairs: 8,
            memos_in_prompt: 15,
            over_reference_turns: 2,
            ranked_items: 20,
            excerpts: 50,
            skills_at_session_start: 10,
        }
    }
}

impl Tuning {
    /// Rejects settings that would make the engine misbehave, naming the key.
    pub fn validate(&self) -> Result<()> {
        let unit = [
            ("gate.min_confidence", self.gate.min_confidence),
            ("gate.fact_min_confidence", self.gate.fact_min_confidence),
            ("gate.min_salience", self.gate.min_salience),
            ("gate.ephemeral_min_salience", self.gate.ephemeral_min_salience),
            ("gate.dedup_cosine", self.gate.dedup_cosine),
            ("ranking.lexical_weight", self.ranking.lexical_weight),
            ("ranking.vector_weight", self.ranking.vector_weight),
            ("ranking.min_relevance", self.ranking.min_relevance),
            ("ranking.tier_high", self.ranking.tier_high),
            ("ranking.tier_standard", self.ranking.tier_standard),
            ("ranking.neighbour_weight", self.ranking.neighbour_weight),
            ("ranking.reply_weight", self.ranking.reply_weight),
            ("ranking.turn_context", self.ranking.turn_context),
            ("ranking.period_boost", self.ranking.period_boost),
            ("ranking.session_cohesion", self.ranking.session_cohesion),
            ("ranking.other_speaker_weight", self.ranking.other_speaker_weight),
            ("ranking.common_term_share", self.ranking.common_term_share),
            ("decay.min_strength", self.decay.min_strength),
            ("documents.similar_threshold", self.documents.similar_threshold),
        ];
        for (key, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                return Err(CoreError::InvalidConfig { key: key.into(), reason: format!("{v} is outside 0..=1") });
            }
        }
        let positive = [
            ("ranking.recency_half_life_days", self.ranking.recency_half_life_days),
            ("ranking.urgency_horizon_days", self.ranking.urgency_horizon_days),
        ];
        for (key, v) in positive {
            if v.is_nan() || v <= 0.0 {
                return Err(CoreError::InvalidConfig { key: key.into(), reason: format!("{v} must be > 0") });
            }
        }
        let counts = [
            ("ingest.max_message_chars", self.ingest.max_message_chars),
            ("ingest.max_message_tokens", self.ingest.max_message_tokens),
            ("ingest.max_batch", self.ingest.max_batch),
            ("ingest.max_batch_chars", self.ingest.max_batch_chars),
            ("limits.max_query_chars", self.limits.max_query_chars),
            ("limits.max_query_tokens", self.limits.max_query_tokens),
            ("limits.max_query_terms", self.limits.max_query_terms),
            ("limits.max_top_k", self.limits.max_top_k),
            ("limits.max_budget_tokens", self.limits.max_budget_tokens),
            ("limits.mcp_max_batch", self.limits.mcp_max_batch),
            ("limits.mcp_sessions_per_tenant", self.limits.mcp_sessions_per_tenant),
            ("limits.mcp_max_sessions", self.limits.mcp_max_sessions),
            ("limits.mcp_session_idle_secs", self.limits.mcp_session_idle_secs as usize),
            ("ranking.candidates", self.ranking.candidates),
            ("ranking.default_top_k", self.ranking.default_top_k),
            ("gate.max_content_chars", self.gate.max_content_chars),
            ("documents.max_chars", self.documents.max_chars),
            ("documents.max_source_chars", self.documents.max_source_chars),
            ("documents.overview_tokens", self.documents.overview_tokens),
            ("limits.max_observation_chars", self.limits.max_observation_chars),
            ("limits.request_burst", self.limits.request_burst),
            ("limits.heavy_requests_per_tenant", self.limits.heavy_requests_per_tenant),
        ];
        for (key, v) in counts {
            if v == 0 {
                return Err(CoreError::InvalidConfig { key: key.into(), reason: "must be at least 1".into() });
            }
        }
        let rate = self.limits.requests_per_second;
        if !rate.is_finite() || rate < 0.0 {
            return Err(CoreError::InvalidConfig {
                key: "limits.requests_per_second".into(),
                reason: format!("{rate} must be a number ≥ 0 (0 sets no limit)"),
            });
        }
        // Offsets and counts reach SQL as signed 64-bit integers.
        if self.limits.max_offset > i64::MAX as usize / 2 {
            return Err(CoreError::InvalidConfig {
                key: "limits.max_offset".into(),
                reason: format!("{} is above {}", self.limits.max_offset, i64::MAX / 2),
            });
        }
        if self.limits.mcp_sessions_per_tenant > self.limits.mcp_max_sessions {
            return Err(CoreError::InvalidConfig {
                key: "limits.mcp_sessions_per_tenant".into(),
                reason: format!(
                    "{} is above limits.mcp_max_sessions {}",
                    self.limits.mcp_sessions_per_tenant, self.limits.mcp_max_sessions
                ),
            });
        }
        self.sessions.validate()?;
        if self.ranking.tier_standard > self.ranking.tier_high {
            return Err(CoreError::InvalidConfig {
                key: "ranking.tier_standard".into(),
                reason: format!("{} is above ranking.tier_high {}", self.ranking.tier_standard, self.ranking.tier_high),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_architecture_numbers_and_valid() {
        let t = Tuning::default();
        t.validate().unwrap();
        let r = &t.ranking;
        assert_eq!((r.w_similarity, r.w_salience, r.w_pinned, r.w_urgency), (0.35, 0.20, 0.15, 0.20));
        assert_eq!((r.w_confidence, r.w_recency), (0.10, 0.10));
        assert_eq!((t.gate.min_confidence, t.gate.fact_min_confidence, t.gate.min_salience), (0.4, 0.7, 0.2));
        assert_eq!(t.lifecycle.max_active_per_user, 500);
        assert_eq!(t.assembly.recent_pairs, 8);
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        let mut t = Tuning::default();
        t.gate.min_confidence = 1.5;
        assert!(t.validate().unwrap_err().to_string().contains("gate.min_confidence"));
        let mut t = Tuning::default();
        t.ranking.tier_standard = 0.9;
        assert!(t.validate().unwrap_err().to_string().contains("tier_standard"));
        let mut t = Tuning::default();
        t.ranking.neighbour_weight = 1.2;
        assert!(t.validate().unwrap_err().to_string().contains("ranking.neighbour_weight"));
        let mut t = Tuning::default();
        t.ranking.turn_context = -0.1;
        assert!(t.validate().unwrap_err().to_string().contains("ranking.turn_context"));
        for rate in [-1.0, f64::NAN, f64::INFINITY] {
            let mut t = Tuning::default();
            t.limits.requests_per_second = rate;
            assert!(t.validate().unwrap_err().to_string().contains("limits.requests_per_second"), "{rate}");
        }
        let mut t = Tuning::default();
        t.limits.request_burst = 0;
        assert!(t.validate().unwrap_err().to_string().contains("limits.request_burst"));
    }

    #[test]
    fn partial_toml_keeps_other_defaults_and_unknown_keys_fail() {
        let t: Tuning = toml_like(r#"{"gate": {"min_confidence": 0.5}}"#);
        assert_eq!(t.gate.min_confidence, 0.5);
        assert_eq!(t.gate.min_salience, 0.2);
        assert!(serde_json::from_str::<Tuning>(r#"{"gate": {"min_confidense": 0.5}}"#).is_err());
    }

    #[test]
    fn decay_rates_default_to_the_table_and_override_by_kind_name() {
        let t = Tuning::default();
        for k in Kind::ALL {
            assert_eq!(t.decay.lambda.get(*k), k.spec().decay_lambda, "{k}");
        }
        let json = serde_json::to_value(&t.decay.lambda).unwrap();
        assert_eq!(json.as_object().unwrap().len(), Kind::ALL.len(), "every kind is a key: {json}");
        assert_eq!(serde_json::from_value::<KindRates>(json).unwrap(), t.decay.lambda, "round trip");
        let t: Tuning = toml_like(r#"{"decay": {"lambda": {"event": 0.5, "open-loop": 0.1}}}"#);
        assert_eq!((t.decay.lambda.get(Kind::Event), t.decay.lambda.get(Kind::OpenLoop)), (0.5, 0.1));
        assert_eq!(t.decay.lambda.get(Kind::Profile), Kind::Profile.spec().decay_lambda);
        let err = serde_json::from_str::<Tuning>(r#"{"decay": {"lambda": {"evnt": 0.5}}}"#).unwrap_err();
        assert!(err.to_string().contains("evnt"), "{err}");
    }

    fn toml_like(json: &str) -> Tuning {
        serde_json::from_str(json).unwrap()
    }
}
