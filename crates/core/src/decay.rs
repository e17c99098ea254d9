//! Power-law decay with reinforcement and a cross-session spacing bonus.
//!
//! `strength = (1 + t)^-λ(kind) × (1 + a·log2(1 + uses)) × (1 + b·log2(1 + sessions))`,
//! clamped to `[min_strength, 1]`. The `1 +` in front of each log keeps a never-recalled memory
//! at full base strength instead of zero (log2(0 + 1) = 0). Pinned memories do not decay.

use chrono::{DateTime, Utc};

use crate::config::DecayTuning;
use crate::kind::Kind;
use crate::memory::Memory;

/// Seconds in a day, for converting ages.
const DAY: f32 = 86_400.0;

/// Days between two instants, never negative (clocks of callers may disagree slightly).
pub fn days_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f32 {
    ((to - from).num_seconds() as f32 / DAY).max(0.0)
}

/// Strength of a memory at `now`, in `[min_strength, 1]`.
pub fn strength(m: &Memory, now: DateTime<Utc>, t: &DecayTuning) -> f32 {
    if m.pinned {
        return 1.0;
    }
    strength_of(m.kind, days_between(m.created_at, now), m.access_count + m.reinforcements, m.distinct_sessions, t)
}

/// The formula on plain numbers, for tests and benchmarks.
pub fn strength_of(kind: Kind, age_days: f32, uses: u32, sessions: u32, t: &DecayTuning) -> f32 {
    let base = (1.0 + age_days).powf(-t.lambda.get(kind));
    let reinforcement = 1.0 + t.access_gain * (1.0 + uses as f32).log2();
    let spacing = 1.0 + t.session_gain * (1.0 + sessions as f32).log2();
    (base * reinforcement * spacing).clamp(t.min_strength, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t() -> DecayTuning {
        DecayTuning::default()
    }

    #[test]
    fn fresh_memories_are_at_full_strength() {
        for k in Kind::ALL {
            assert_eq!(strength_of(*k, 0.0, 0, 0, &t()), 1.0);
        }
    }

    #[test]
    fn events_fade_faster_than_profile_facts_and_knowledge_slowest() {
        let ev = strength_of(Kind::Event, 60.0, 0, 0, &t());
        let pr = strength_of(Kind::Profile, 60.0, 0, 0, &t());
        let kn = strength_of(Kind::Knowledge, 60.0, 0, 0, &t());
        assert!(ev < pr && pr < kn, "{ev} {pr} {kn}");
    }

    #[test]
    fn spacing_beats_cramming() {
        let crammed = strength_of(Kind::Event, 90.0, 10, 1, &t());
        let spaced = strength_of(Kind::Event, 90.0, 10, 8, &t());
        assert!(spaced > crammed, "{spaced} <= {crammed}");
    }

    #[test]
    fn power_law_survivors_resist_further_forgetting() {
        // The loss over the next 10 days shrinks as the memory ages (unlike exponential decay's constant rate).
        let r = |d: f32| strength_of(Kind::Event, d + 10.0, 0, 0, &t()) / strength_of(Kind::Event, d, 0, 0, &t());
        assert!(r(100.0) > r(10.0));
    }

    proptest! {
        #[test]
        fn strength_is_bounded_and_monotone_in_age(
            age in 0.0f32..5000.0,
            uses in 0u32..1000,
            s in 0u32..100,
            kind in proptest::sample::select(Kind::ALL),
        ) {
            let a = strength_of(kind, age, uses, s, &t());
            let b = strength_of(kind, age + 1.0, uses, s, &t());
            prop_assert!((t().min_strength..=1.0).contains(&a));
            prop_assert!(b <= a + 1e-6);
            prop_assert!(strength_of(kind, age, uses + 1, s, &t()) >= a - 1e-6);
        }

        #[test]
        fn each_kind_decays_at_its_rows_rate(age in 1.0f32..5000.0, kind in proptest::sample::select(Kind::ALL)) {
            let bare = DecayTuning { min_strength: 0.0, ..t() };
            let expected = (1.0 + age).powf(-kind.spec().decay_lambda);
            prop_assert!((strength_of(kind, age, 0, 0, &bare) - expected).abs() < 1e-6);
        }
    }
}
