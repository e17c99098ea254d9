//! Lifecycle transitions: which status a memory should move to as time passes.
//!
//! Pure: the jobs ask [`next`] about each active or stale memory and apply what it says. Nothing
//! is deleted; every transition becomes a history row. Pinned memories never move.

use chrono::{DateTime, Utc};

use crate::config::{DecayTuning, LifecycleTuning};
use crate::decay::{days_between, strength};
use crate::id::MemoryId;
use crate::kind::{Aging, Status};
use crate::memory::{HistoryEvent, Memory};

/// A transition the jobs should apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// The new status.
    pub to: Status,
    /// The history event to record.
    pub event: HistoryEvent,
    /// Why, in words.
    pub reason: String,
}

fn last_reference(m: &Memory) -> DateTime<Utc> {
    m.last_accessed.map_or(m.updated_at, |a| a.max(m.updated_at))
}

/// Whether a memory may be recalled at `now`: active, and not one [`next`] would archive now
/// (past its TTL, or an open loop overdue or silent past its limit). The jobs apply [`next`] on
/// a schedule; a block must not raise "due 2023-03-01" in October because the job has not run.
pub fn is_live(m: &Memory, now: DateTime<Utc>, t: &LifecycleTuning) -> bool {
    // Only a TTL or an open loop's aging archives an active row; asking `next` about the rest
    // (it words a reason for every event gone stale) would cost each recalled candidate.
    let may_archive = m.expires_at.is_some() || matches!(m.kind.spec().aging, Aging::ClosesWhenOverdueOrSilent);
    m.status == Status::Active && (!may_archive || next(m, now, t).is_none_or(|tr| tr.to != Status::Archived))
}

/// The transition due for `m` at `now`, if any.
pub fn next(m: &Memory, now: DateTime<Utc>, t: &LifecycleTuning) -> Option<Transition> {
    if m.pinned {
        return None;
    }
    let mv = |to: Status, event: HistoryEvent, reason: String| Some(Transition { to, event, reason });
    match m.status {
        Status::Active => {
            if let Some(exp) = m.expires_at.filter(|e| *e <= now) {
                return mv(Status::Archived, HistoryEvent::Transitioned, format!("expired at {}", exp.to_rfc3339()));
            }
            match m.kind.spec().aging {
                Aging::StaleWhenUnreferenced => {
                    let idle = days_between(last_reference(m), now);
                    (idle >= t.ephemeral_stale_days).then(|| Transition {
                        to: Status::Stale,
                        event: HistoryEvent::Transitioned,
                        reason: format!(
                            "{}, unreferenced for {idle:.0} days (limit {})",
                            m.kind, t.ephemeral_stale_days
                        ),
                    })
                }
                Aging::StaleWhenUnreinforced => {
                    let idle = days_between(m.updated_at, now);
                    (idle >= t.event_stale_days).then(|| Transition {
                        to: Status::Stale,
                        event: HistoryEvent::Transitioned,
                        reason: format!("{}, not reinforced for {idle:.0} days (limit {})", m.kind, t.event_stale_days),
                    })
                }
                Aging::ClosesWhenOverdueOrSilent => {
                    if let Some(due) = m.due_at {
                        let over = days_between(due, now);
                        if due < now && over >= t.open_loop_overdue_days {
                            return mv(
                                Status::Archived,
                                HistoryEvent::Closed,
                                format!("due {} passed {over:.0} days ago", due.format("%Y-%m-%d")),
                            );
                        }
                    }
                    let silent = days_between(last_reference(m), now);
                    (silent >= t.open_loop_silence_days).then(|| Transition {
                        to: Status::Archived,
                        event: HistoryEvent::Closed,
                        reason: format!("open loop silent for {silent:.0} days (limit {})", t.open_loop_silence_days),
                    })
                }
                Aging::Durable => None,
            }
        }
        Status::Stale => {
            let idle = days_between(m.updated_at, now);
            (idle >= t.stale_archive_days).then(|| Transition {
                to: Status::Archived,
                event: HistoryEvent::Transitioned,
                reason: format!("stale for {idle:.0} days (limit {})", t.stale_archive_days),
            })
        }
        _ => None,
    }
}

/// A memory's claim to stay active under the per-user cap: its decay strength weighted by
/// salience, and its age for ties. Strength is clamped at 1, so every memory that is fresh or
/// well reinforced weighs the same; among those the older one yields, so the order does not
/// hang on the random part of ids written in the same millisecond.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapWeight {
    /// Strength × (0.5 + 0.5 × salience), in `(0, 1]`.
    pub weight: f32,
    /// When the memory was written: the older of two equal weights is archived first.
    pub created_at: DateTime<Utc>,
}

/// A memory's [`CapWeight`]. `None` when the cap never archives it: pinned memories, and
/// kinds whose row says they are not capped ([`crate::kind::KindSpec::capped`]: protocols and
/// policies).
pub fn cap_weight(m: &Memory, now: DateTime<Utc>, t: &DecayTuning) -> Option<CapWeight> {
    if m.pinned || !m.kind.spec().capped {
        return None;
    }
    let weight = strength(m, now, t) * (0.5 + 0.5 * m.salience.clamp(0.0, 1.0));
    Some(CapWeight { weight, created_at: m.created_at })
}

/// Which of one user's active memories to archive so that at most `max` stay active: the
/// weakest first, the older of equal weights first, then by id, so reruns agree. Exempt
/// memories (`None`) count toward the total but are never chosen.
pub fn over_cap(mut weights: Vec<(MemoryId, Option<CapWeight>)>, max: usize) -> Vec<(MemoryId, f32)> {
    let excess = weights.len().saturating_sub(max);
    if excess == 0 {
        return Vec::new();
    }
    let mut candidates: Vec<(MemoryId, CapWeight)> =
        weights.drain(..).filter_map(|(id, w)| w.map(|w| (id, w))).collect();
    candidates.sort_by(|a, b| {
        a.1.weight.total_cmp(&b.1.weight).then(a.1.created_at.cmp(&b.1.created_at)).then(a.0.cmp(&b.0))
    });
    candidates.truncate(excess);
    candidates.into_iter().map(|(id, w)| (id, w.weight)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kind::Kind;
    use crate::scope::Scope;
    use chrono::Duration;
    use proptest::prelude::*;

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn mem(kind: Kind) -> Memory {
        let m = Memory::new(Scope::parse("t", None, Some("u"), None).unwrap(), kind, "x", t0());
        Memory { confidence: 0.9, salience: 0.7, ..m }
    }

    fn at(days: i64) -> DateTime<Utc> {
        t0() + Duration::days(days)
    }

    fn to(m: &Memory, days: i64) -> Option<Status> {
        next(m, at(days), &LifecycleTuning::default()).map(|t| t.to)
    }

    #[test]
    fn ephemeral_goes_stale_after_three_unreferenced_days() {
        let mut m = mem(Kind::Ephemeral);
        assert_eq!(to(&m, 2), None);
        assert_eq!(to(&m, 3), Some(Status::Stale));
        m.last_accessed = Some(at(2));
        assert_eq!(to(&m, 4), None, "a reference restarts the clock");
    }

    #[test]
    fn events_go_stale_after_thirty_days_without_reinforcement() {
        let mut m = mem(Kind::Event);
        assert_eq!(to(&m, 29), None);
        assert_eq!(to(&m, 30), Some(Status::Stale));
        m.updated_at = at(20);
        assert_eq!(to(&m, 30), None);
    }

    #[test]
    fn open_loops_close_when_overdue_or_silent() {
        let mut m = mem(Kind::OpenLoop);
        m.due_at = Some(at(5));
        assert_eq!(to(&m, 5), None, "due today is still open");
        assert_eq!(to(&m, 7), Some(Status::Archived));
        let undated = mem(Kind::OpenLoop);
        assert_eq!(to(&undated, 59), None);
        assert_eq!(to(&undated, 60), Some(Status::Archived));
        assert_eq!(next(&undated, at(60), &LifecycleTuning::default()).unwrap().event, HistoryEvent::Closed);
    }

    #[test]
    fn what_the_job_would_archive_is_not_live_before_it_runs() {
        let t = LifecycleTuning::default();
        let mut overdue = mem(Kind::OpenLoop);
        overdue.due_at = Some(at(5));
        assert!(is_live(&overdue, at(6), &t) && !is_live(&overdue, at(7), &t));
        overdue.pinned = true;
        assert!(is_live(&overdue, at(700), &t), "pinned rows never move");
        let event = mem(Kind::Event);
        assert_eq!(to(&event, 40), Some(Status::Stale));
        assert!(is_live(&event, at(40), &t), "going stale is the job's to decide; only archiving hides a row early");
    }

    #[test]
    fn stale_rows_are_archived_later_and_ttl_expires() {
        let mut m = mem(Kind::Event);
        m.status = Status::Stale;
        assert_eq!(to(&m, 89), None);
        assert_eq!(to(&m, 90), Some(Status::Archived));
        let mut e = mem(Kind::Profile);
        e.expires_at = Some(at(1));
        let t = LifecycleTuning::default();
        assert!(is_live(&e, at(0), &t) && !is_live(&e, at(1), &t));
        assert_eq!(to(&e, 1), Some(Status::Archived));
    }

    #[test]
    fn pinned_and_durable_kinds_never_move() {
        let mut m = mem(Kind::Ephemeral);
        m.pinned = true;
        assert_eq!(to(&m, 400), None);
        assert_eq!(to(&mem(Kind::Profile), 4000), None);
        let mut archived = mem(Kind::Event);
        archived.status = Status::Archived;
        assert_eq!(to(&archived, 4000), None);
    }

    #[test]
    fn the_cap_archives_the_weakest_and_never_pinned_or_protocols() {
        let t = crate::config::Tuning::default();
        let now: DateTime<Utc> = "2026-06-01T00:00:00Z".parse().unwrap();
        let owner = crate::scope::Scope::parse("acme", None, Some("dana"), None).unwrap();
        let at = |days: i64| now - chrono::Duration::days(days);
        let mut fresh = Memory::new(owner.clone(), Kind::Fact, "fresh", at(1));
        fresh.salience = 0.8;
        let mut old = Memory::new(owner.clone(), Kind::Event, "old event", at(200));
        old.salience = 0.3;
        let mut older_pinned = Memory::new(owner.clone(), Kind::Event, "pinned", at(400));
        older_pinned.pinned = true;
        let boundary = Memory::new(owner.clone(), Kind::Protocol, "never mention the ex", at(400));
        let mid = Memory::new(owner, Kind::Fact, "mid", at(60));
        let rows = [&fresh, &old, &older_pinned, &boundary, &mid];
        let weights: Vec<_> = rows.iter().map(|m| (m.id, cap_weight(m, now, &t.decay))).collect();
        assert_eq!(weights[2].1, None);
        assert_eq!(weights[3].1, None);
        let out = over_cap(weights.clone(), 3);
        assert_eq!(out.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![old.id, mid.id]);
        assert!(over_cap(weights.clone(), 5).is_empty());
        // Only exempt rows left to choose from: the cap cannot be met, nothing else is touched.
        assert_eq!(over_cap(weights, 0).len(), 3);
    }

    #[test]
    fn of_equal_weights_the_older_memory_yields_whatever_its_id() {
        let now = at(100);
        let owner = Scope::parse("t", None, Some("u"), None).unwrap();
        // Two ids in whatever order the same millisecond gave them; each in turn is the older.
        let first = Memory::new(owner.clone(), Kind::Fact, "first", at(90));
        let second = Memory::new(owner, Kind::Fact, "second", at(90));
        // Fresh enough that strength is clamped at 1, so the weights tie exactly; the older
        // one goes, whichever id is the smaller.
        for (older, newer) in [(&first, &second), (&second, &first)] {
            // Said in two sessions, as a real write is at least in one.
            let older = Memory { created_at: at(90), distinct_sessions: 2, ..older.clone() };
            let newer = Memory { created_at: at(95), distinct_sessions: 2, ..newer.clone() };
            let w = |m: &Memory| cap_weight(m, now, &DecayTuning::default());
            assert_eq!(w(&older).unwrap().weight, w(&newer).unwrap().weight);
            let out = over_cap(vec![(newer.id, w(&newer)), (older.id, w(&older))], 1);
            assert_eq!(out.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![older.id]);
        }
    }

    proptest! {
        #[test]
        fn only_kinds_whose_row_ages_them_leave_the_pool(kind in proptest::sample::select(Kind::ALL), days in 0i64..4000) {
            let t = LifecycleTuning::default();
            let moved = to(&mem(kind), days);
            let longest = t.ephemeral_stale_days.max(t.event_stale_days).max(t.open_loop_silence_days);
            match kind.spec().aging {
                Aging::Durable => prop_assert_eq!(moved, None),
                _ if days as f32 >= longest => prop_assert!(moved.is_some(), "{kind} still active after {days} days"),
                _ => {}
            }
            let weight = cap_weight(&mem(kind), at(days), &DecayTuning::default());
            prop_assert_eq!(weight.is_some(), kind.spec().capped);
        }
    }
}
