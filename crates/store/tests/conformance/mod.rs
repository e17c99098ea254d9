//! The store contract, one module per trait of it, written against `&dyn Store` so every
//! backend runs the same checks. A backend adds one line to `backends!` below.

pub(crate) mod documents;
pub(crate) mod job_locks;
pub(crate) mod memories;
pub(crate) mod messages;
pub(crate) mod observations;
pub(crate) mod policies;
pub(crate) mod queue;
pub(crate) mod search;
pub(crate) mod traces;
pub(crate) mod transfer;
pub(crate) mod users;

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{
    HistoryEvent, Kind, Link, LinkKind, Memory, MemoryId, Message, MessageId, Provenance, RecallMode, Role, Scope,
    Status,
};
use mnemo_store::{Change, ChangeSet, Embedding, Store};

pub(crate) fn t0() -> DateTime<Utc> {
    "2026-03-02T09:00:00Z".parse().unwrap()
}

pub(crate) fn scope(tenant: &str, user: Option<&str>, chat: Option<&str>) -> Scope {
    Scope::parse(tenant, None, user, chat).unwrap()
}

pub(crate) fn memory(owner: &Scope, kind: Kind, content: &str) -> Memory {
    let mut m = Memory::new(owner.clone(), kind, content, t0());
    m.confidence = 0.9;
    m.salience = 0.6;
    m.provenance = Provenance {
        sources: vec![MessageId::new("m1").unwrap()],
        chat: None,
        extractor: "test".into(),
        extractor_version: "1".into(),
        rule: None,
    };
    m
}

/// A unit vector along one axis, with a little of a second, so cosines are predictable.
pub(crate) fn axis(i: usize, j: usize, mix: f32) -> Vec<f32> {
    let mut v = [0.0; 8];
    v[i] = 1.0;
    v[j] += mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

pub(crate) fn insert(store: &dyn Store, m: &Memory, vector: Option<Vec<f32>>) {
    store.apply(&changes(&m.owner, vec![insertion(m, vector.map(|v| ("test:8", v)))])).unwrap();
}

/// The insert of `m`, with a vector of a model when given.
pub(crate) fn insertion(m: &Memory, vector: Option<(&str, Vec<f32>)>) -> Change {
    Change::Insert {
        memory: m.clone(),
        embedding: vector.map(|(model, vector)| Embedding { model: model.into(), vector }),
        reason: "written".into(),
    }
}

/// `changes` as one change set of `owner`'s tenant at [`t0`].
pub(crate) fn changes(owner: &Scope, changes: Vec<Change>) -> ChangeSet {
    ChangeSet { tenant: owner.tenant.clone(), at: t0(), changes }
}

pub(crate) fn msg(scope: &Scope, id: &str, text: &str, at: DateTime<Utc>) -> Message {
    Message { id: MessageId::new(id).unwrap(), scope: scope.clone(), role: Role::User, content: text.into(), at }
}

/// A correction as the engine writes it: `new` (with `vector`) replaces `old`, caused by message
/// `source`, and a link records which replaced which.
pub(crate) fn correction(old: &Memory, new: &Memory, vector: Vec<f32>, source: &str) -> Vec<Change> {
    vec![
        Change::Insert {
            memory: new.clone(),
            embedding: Some(Embedding { model: "test:8".into(), vector }),
            reason: "correction".into(),
        },
        Change::SetStatus {
            id: old.id,
            status: Status::Superseded { by: new.id },
            event: HistoryEvent::Superseded,
            reason: "corrected by the user".into(),
            sources: vec![MessageId::new(source).unwrap()],
        },
        Change::Link(Link { from: new.id, to: old.id, kind: LinkKind::Supersedes, at: t0() }),
    ]
}

/// The envelope of one call: only what the store reads is set (the rest is the engine's).
pub(crate) fn envelope(
    turn: &str,
    scope: &Scope,
    op: TraceOp,
    at: DateTime<Utc>,
    surfaced: Vec<MemoryId>,
) -> TraceEnvelope {
    TraceEnvelope {
        turn_id: turn.into(),
        scope: scope.clone(),
        op,
        at,
        query: "q".into(),
        mode: Some(RecallMode::Hybrid),
        retrieved: vec![],
        surfaced,
        below_floor: vec![],
        held_back: vec![],
        shed: vec![],
        degraded: None,
        tokens: None,
        budget: None,
        micros: 1,
        embed_micros: 0,
        verdicts: vec![],
        llm: vec![],
    }
}

/// Generates one `#[test]` per (backend, trait, check): `conformance::<backend>::<trait>::<check>`.
macro_rules! backends {
    ($($backend:ident => $open:expr;)+) => {
        $(
            mod $backend {
                backends!(@concern $open; messages:
                    messages_are_idempotent_and_chat_scoped,
                    messages_are_searchable_within_their_user,
                    each_language_is_searched_with_its_own_stems,
                    adjacent_messages_stay_in_their_chat,
                    message_ids_are_scoped_to_user_and_chat,
                    a_message_is_as_close_as_its_closest_passage,
                    terms_are_counted_over_the_users_latest_messages,
                );
                backends!(@concern $open; memories:
                    memories_round_trip,
                    status_changes_history_and_links,
                    a_failed_change_set_writes_nothing,
                    reinforcement_counts_sessions_distinctly,
                    recorded_turns_move_the_statistics_of_what_they_touched,
                    exact_candidates_are_pinned_exact_kinds_and_due_loops,
                    constraints_are_looked_up_by_the_domains_they_bear_on,
                    fail_points_before_commit_leave_nothing_half_written,
                    metadata_round_trips_and_is_replaced_and_owners_are_listed,
                );
                backends!(@concern $open; search: every_read_is_scoped);
                backends!(@concern $open; policies: policies_are_versioned);
                backends!(@concern $open; documents:
                    documents_round_trip_and_are_scoped,
                    erasure_deletes_the_users_documents_only,
                );
                backends!(@concern $open; observations:
                    observations_round_trip_and_are_scoped,
                    erasure_deletes_the_users_observations_only,
                );
                backends!(@concern $open; traces:
                    traces_round_trip_and_feed_the_over_reference_guard,
                    a_users_latest_traces_are_listed_newest_first,
                    retention_sweeps_only_old_envelopes_of_one_class,
                );
                backends!(@concern $open; users:
                    erasure_removes_one_user_and_nothing_else,
                    user_states_round_trip_and_are_isolated,
                    the_subject_key_is_made_once_for_the_installation,
                    erasing_many_users_at_once_erases_each_and_nothing_else,
                    known_users_include_those_without_memories,
                );
                backends!(@concern $open; queue: background_queue_is_durable_idempotent_and_scoped);
                backends!(@concern $open; transfer:
                    export_import_round_trip,
                    import_into_a_non_empty_store_is_refused,
                );
                backends!(@concern $open; job_locks: job_locks_are_exclusive_per_name);
            }
        )+
    };
    (@concern $open:expr; $concern:ident: $($check:ident),+ $(,)?) => {
        mod $concern {
            $(
                #[test]
                fn $check() {
                    // `None`: the backend's server is not configured here (outside CI); skip.
                    let Some((_guard, store)) = $open else { return };
                    crate::conformance::$concern::$check(&*store);
                }
            )+
        }
    };
}

backends! {
    sqlite => Some(crate::sqlite::open_temp());
}

// Only built with `--features postgres`, and then needs MNEMO_TEST_DATABASE_URL (scripts/pg.sh).
#[cfg(feature = "postgres")]
backends! {
    postgres => crate::postgres::open_temp();
}
