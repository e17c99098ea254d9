//! Path B ranking: fused relevance, composite score times decay
//! strength, and relevance tiers. Pure; every part is reported to callers.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::Tuning;
use crate::decay::{days_between, strength};
use crate::kind::{Kind, text_enum};
use crate::memory::Memory;

/// Fuses the two retrieval signals into one relevance in 0..=1.
///
/// When both fire the two are blended, the cosine carrying the larger share by default (on a
/// conversation's turns sentence embeddings rank better than shared words: LoCoMo's tuning
/// split, 0.3 / 0.7 against 0.6 / 0.4, in docs/bench-history.md); when only the vector fires its cosine
/// alone counts.
pub fn fuse(lexical: Option<f32>, vector: Option<f32>, t: &Tuning) -> f32 {
    let r = &t.ranking;
    match (lexical, vector) {
        (Some(l), Some(v)) if l > 0.0 => r.lexical_weight * l + r.vector_weight * v.max(0.0),
        (_, Some(v)) => v.max(0.0),
        (Some(l), None) => l,
        (None, None) => 0.0,
    }
    .clamp(0.0, 1.0)
}

/// Urgency of an open loop: 1 when overdue, rising over the horizon before the due date.
pub fn urgency(kind: Kind, due_at: Option<DateTime<Utc>>, now: DateTime<Utc>, t: &Tuning) -> f32 {
    if kind != Kind::OpenLoop {
        return 0.0;
    }
    let r = &t.ranking;
    match due_at {
        None => r.undated_loop_urgency,
        Some(due) if due <= now => 1.0,
        Some(due) => (1.0 - days_between(now, due) / r.urgency_horizon_days).clamp(r.undated_loop_urgency, 1.0),
    }
}

/// Recency of the last time the memory was written or reinforced, halving every half-life.
pub fn recency(m: &Memory, now: DateTime<Utc>, t: &Tuning) -> f32 {
    0.5f32.powf(days_between(m.updated_at, now) / t.ranking.recency_half_life_days)
}

text_enum!(
    /// Calibrated relevance, so the model need not interpret bare scores.
    Tier, "tier" {
        /// Strongly relevant.
        High => "high",
        /// Relevant.
        Standard => "standard",
        /// Weakly relevant.
        Low => "low",
    }
);

/// The tier of a fused relevance.
pub fn tier(relevance: f32, t: &Tuning) -> Tier {
    if relevance >= t.ranking.tier_high {
        Tier::High
    } else if relevance >= t.ranking.tier_standard {
        Tier::Standard
    } else {
        Tier::Low
    }
}

/// Every part of a ranked item's score, so any ranking can be explained.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScoreParts {
    /// Normalised lexical (BM25) signal, if the row matched lexically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<f32>,
    /// Cosine with the query, if vectors were available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f32>,
    /// Fused relevance.
    pub relevance: f32,
    /// Salience.
    pub salience: f32,
    /// 1 if pinned.
    pub pinned: f32,
    /// Open-loop urgency.
    pub urgency: f32,
    /// Confidence.
    pub confidence: f32,
    /// Recency.
    pub recency: f32,
    /// Decay strength multiplier.
    pub strength: f32,
    /// Relevance added because the memory was said within the period the query asks about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f32>,
    /// Final score.
    pub total: f32,
}

/// The composite score of a memory for a query whose signals are `lexical` and `vector`.
pub fn composite(m: &Memory, lexical: Option<f32>, vector: Option<f32>, now: DateTime<Utc>, t: &Tuning) -> ScoreParts {
    let r = &t.ranking;
    let relevance = fuse(lexical, vector, t);
    let mut p = ScoreParts {
        lexical,
        vector,
        relevance,
        salience: m.salience.clamp(0.0, 1.0),
        pinned: if m.pinned { 1.0 } else { 0.0 },
        urgency: urgency(m.kind, m.due_at, now, t),
        confidence: m.confidence.clamp(0.0, 1.0),
        recency: recency(m, now, t),
        strength: strength(m, now, &t.decay),
        period: None,
        total: 0.0,
    };
    p.total = p.weighed(r);
    p
}

impl ScoreParts {
    /// The parts with relevance lifted by `boost` (at most to 1), the total weighed again: the
    /// memory was said within the period the query asks about ([`crate::period`]).
    pub fn lifted(mut self, boost: f32, t: &Tuning) -> Self {
        self.relevance = (self.relevance + boost).min(1.0);
        self.period = Some(boost);
        self.total = self.weighed(&t.ranking);
        self
    }

    fn weighed(&self, r: &crate::config::RankingTuning) -> f32 {
        let weighted = r.w_similarity * self.relevance
            + r.w_salience * self.salience
            + r.w_pinned * self.pinned
            + r.w_urgency * self.urgency
            + r.w_confidence * self.confidence
            + r.w_recency * self.recency;
        weighted * self.strength
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scope::Scope;
    use proptest::prelude::*;

    pub(crate) fn memory(kind: Kind, at: DateTime<Utc>) -> Memory {
        Memory::new(Scope::parse("t", None, Some("u"), None).unwrap(), kind, "x", at)
    }

    fn now() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn fusion_blends_both_signals_when_both_fire() {
        let t = Tuning::default();
        // 0.3 × 1.0 + 0.7 × 0.5: a word match lifts a middling cosine.
        assert!((fuse(Some(1.0), Some(0.5), &t) - 0.65).abs() < 1e-6);
        assert_eq!(fuse(None, Some(0.5), &t), 0.5);
        assert_eq!(fuse(Some(0.7), None, &t), 0.7);
        assert_eq!(fuse(None, Some(-0.2), &t), 0.0);
        assert_eq!(fuse(None, None, &t), 0.0);
    }

    #[test]
    fn urgency_rises_towards_the_due_date() {
        let t = Tuning::default();
        let n = now();
        assert_eq!(urgency(Kind::Profile, Some(n), n, &t), 0.0);
        assert_eq!(urgency(Kind::OpenLoop, None, n, &t), 0.3);
        assert_eq!(urgency(Kind::OpenLoop, Some(n - chrono::Duration::days(1)), n, &t), 1.0);
        let soon = urgency(Kind::OpenLoop, Some(n + chrono::Duration::days(1)), n, &t);
        let later = urgency(Kind::OpenLoop, Some(n + chrono::Duration::days(10)), n, &t);
        assert!(soon > later, "{soon} {later}");
    }

    #[test]
    fn tiers_follow_thresholds() {
        let t = Tuning::default();
        assert_eq!(tier(0.75, &t), Tier::High);
        assert_eq!(tier(0.55, &t), Tier::Standard);
        assert_eq!(tier(0.2, &t), Tier::Low);
    }

    #[test]
    fn relevant_fresh_memories_outrank_stale_irrelevant_ones() {
        let t = Tuning::default();
        let fresh = memory(Kind::Profile, now());
        let old = memory(Kind::Event, now() - chrono::Duration::days(200));
        let a = composite(&fresh, Some(1.0), Some(0.7), now(), &t);
        let b = composite(&old, None, Some(0.35), now(), &t);
        assert!(a.total > b.total);
        assert!(a.strength > b.strength);
    }

    proptest! {
        #[test]
        fn composite_is_finite_and_bounded(l in proptest::option::of(0.0f32..1.0), v in proptest::option::of(-1.0f32..1.0),
                                           days in 0i64..3000, sal in 0.0f32..1.0, conf in 0.0f32..1.0) {
            let t = Tuning::default();
            let mut m = memory(Kind::OpenLoop, now() - chrono::Duration::days(days));
            m.salience = sal;
            m.confidence = conf;
            let p = composite(&m, l, v, now(), &t);
            prop_assert!(p.total.is_finite() && p.total >= 0.0 && p.total <= 1.1);
            prop_assert!((0.0..=1.0).contains(&p.relevance));
        }
    }
}
