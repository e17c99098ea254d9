//! Snapshot tests of the background jobs: a scope's whole state (`Memory::render_state`) after
//! `maintain`, compared with committed text under `tests/snapshots/`. A change in behaviour
//! shows as a readable diff; `MNEMO_UPDATE_SNAPSHOTS=1` rewrites the files after a deliberate one.

use chrono::{DateTime, Duration, Utc};
use mnemo::core::{ChatId, Kind, Memory as Row, MessageId, Provenance, Scope, Status, StatusKind};
use mnemo::store::{Change, ChangeSet, Embedding};

use crate::common::{self, Fixture, t0};

/// Compares `actual` with `tests/snapshots/<name>.txt`, or rewrites it when asked to.
fn assert_snapshot(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(format!("{name}.txt"));
    if std::env::var("MNEMO_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!("no snapshot {}; run with MNEMO_UPDATE_SNAPSHOTS=1 to write it, then review it", path.display())
    });
    if expected != actual {
        let first = expected.lines().zip(actual.lines()).position(|(a, b)| a != b);
        panic!(
            "snapshot {name} differs (first differing line {first:?}); rerun with MNEMO_UPDATE_SNAPSHOTS=1 if the \
             change is intended.\n--- expected\n{expected}\n--- actual\n{actual}"
        );
    }
}

fn dana() -> Scope {
    Scope::parse("acme", None, Some("dana"), None).unwrap()
}

fn unit(axis: usize, mix: f32) -> Vec<f32> {
    let mut v = [0.0f32; 8];
    v[axis] = 1.0;
    v[(axis + 1) % 8] = mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// A row as an extractor would have written it: created `days` before `t0`, from chat `chat`.
fn row(owner: &Scope, kind: Kind, content: &str, days: i64, chat: &str) -> Row {
    let mut m = Row::new(owner.clone(), kind, content, t0() - Duration::days(days));
    m.provenance = Provenance {
        sources: vec![MessageId::new(format!("msg-{}", &m.content_hash[..8])).unwrap()],
        chat: Some(ChatId::new(chat).unwrap()),
        extractor: "llm".into(),
        extractor_version: "1".into(),
        rule: None,
    };
    m
}

fn insert(f: &Fixture, rows: Vec<(Row, Option<Vec<f32>>)>) {
    let changes = rows
        .into_iter()
        .map(|(memory, v)| Change::Insert {
            memory,
            embedding: v.map(|vector| Embedding { model: "test:8".into(), vector }),
            reason: "seeded".into(),
        })
        .collect();
    f.memory.store().apply(&ChangeSet { tenant: dana().tenant, at: t0() - Duration::days(200), changes }).unwrap();
}

fn at(days: i64) -> DateTime<Utc> {
    t0() + Duration::days(days)
}

#[test]
fn every_lifecycle_transition_in_one_snapshot() {
    let f = common::with_embedder(None);
    let owner = dana();
    let mut mood = row(&owner, Kind::Ephemeral, "User is exhausted after a brutal week", 1, "c1");
    mood.expires_at = Some(t0() + Duration::days(2));
    let tired = row(&owner, Kind::Ephemeral, "User feels a little under the weather", 0, "c1");
    let trip = row(&owner, Kind::Event, "User went to a jazz concert in Porto", 10, "c1");
    let mut old = row(&owner, Kind::Event, "User moved flats last winter", 120, "c1");
    old.status = Status::Stale;
    let mut dentist = row(&owner, Kind::OpenLoop, "User needs to book the dentist", 3, "c1");
    dentist.due_at = Some(t0() + Duration::days(5));
    let sink = row(&owner, Kind::OpenLoop, "User wants to fix the kitchen sink", 50, "c1");
    let mut pinned = row(&owner, Kind::Ephemeral, "User is nervous about flying", 90, "c1");
    pinned.pinned = true;
    let name = row(&owner, Kind::Profile, "User's name is Dana", 300, "c1");
    insert(&f, [mood, tired, trip, old, dentist, sink, pinned, name].into_iter().map(|m| (m, None)).collect());

    let mut snapshot = String::new();
    for day in [1, 4, 10, 30] {
        f.clock.set(at(day));
        let report = f.memory.maintain().unwrap();
        snapshot.push_str(&format!("== maintain at day {day}: {:?}\n", report.summary()));
    }
    snapshot.push_str(&f.memory.render_state(&owner).unwrap());
    assert_snapshot("lifecycle", &snapshot);
    // Idempotent: the same time again changes nothing.
    let again = f.memory.maintain().unwrap();
    assert!(again.transitions.is_empty() && again.summary().is_empty(), "{:?}", again.summary());
}

#[test]
fn consolidation_merges_duplicates_derives_knowledge_and_proposes_candidates() {
    let f = common::with_embedder(None);
    let owner = dana();
    let coder = Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap();
    // Two near-duplicate facts (as two racing writers would leave them): one merge.
    let mut strong = row(&owner, Kind::Fact, "User's team uses Postgres 16", 20, "c1");
    strong.reinforcements = 2;
    let weak = row(&owner, Kind::Fact, "User's team uses PostgreSQL 16", 10, "c2");
    // The same assertion across two sessions in other words, with a superseded member that
    // must never win even though it is the newest: knowledge in the newest active wording.
    let climb1 = row(&owner, Kind::Event, "User went climbing at the bouldering gym on Saturday", 14, "c1");
    let climb2 = row(&owner, Kind::Event, "User went climbing at the bouldering gym again on Saturday", 7, "c2");
    let mut climb3 = row(&owner, Kind::Event, "User went climbing at the bouldering gym on Sunday", 1, "c3");
    climb3.status = Status::Superseded { by: climb2.id };
    // An agent's recurring episode: a crystallization candidate at the agent layer.
    let deploy1 = row(&coder, Kind::Episode, "Deployed the billing service with blue-green deployment", 12, "c4");
    let deploy2 = row(&coder, Kind::Episode, "Deployed the search service with blue-green deployment", 2, "c5");
    insert(
        &f,
        vec![
            (strong, Some(unit(0, 0.0))),
            (weak, Some(unit(0, 0.1))),
            (climb1, Some(unit(2, 0.0))),
            (climb2, Some(unit(2, 0.5))),
            (climb3, Some(unit(2, 0.1))),
            (deploy1, Some(unit(4, 0.0))),
            (deploy2, Some(unit(4, 0.8))),
        ],
    );
    f.clock.set(t0());
    let report = f.memory.maintain().unwrap();
    assert_eq!(report.consolidation.merged.len(), 1, "{report:?}");
    assert_eq!(report.consolidation.knowledge.len(), 2, "{report:?}");
    let candidates = f.memory.list_candidates(&coder).unwrap();
    assert_eq!(candidates.len(), 1);
    assert_eq!(candidates[0].owner, Scope::parse("acme", Some("coder"), None, None).unwrap());
    assert!(f.memory.list_candidates(&dana()).unwrap().is_empty(), "another agent's candidate is not dana's");
    let mut snapshot = format!("== maintain: {:?}\n", report.summary());
    snapshot.push_str(&f.memory.render_state(&coder).unwrap());
    assert_snapshot("consolidation", &snapshot);

    // A second run at the same time has nothing left to do.
    let again = f.memory.maintain().unwrap();
    assert!(again.summary().is_empty(), "{:?}", again.summary());

    // A person approves the candidate: active, in the agent's CONVENTIONS.md; approving twice
    // is refused with a reason.
    let approved = f.memory.approve(&coder, candidates[0].id).unwrap();
    assert_eq!(approved.status, Status::Active);
    let conventions = f.memory.export(&coder, mnemo::core::export::ExportFormat::Conventions).unwrap();
    assert!(conventions.contains("blue-green"), "{conventions}");
    let err = f.memory.approve(&coder, candidates[0].id).unwrap_err().to_string();
    assert!(err.contains("not a candidate"), "{err}");
    // Rejecting is final and the same wording is not proposed again.
    assert!(f.memory.reject(&coder, candidates[0].id).is_err());
}

#[test]
fn a_rejected_candidate_is_archived_and_not_proposed_again() {
    let f = common::with_embedder(None);
    let coder = Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap();
    insert(
        &f,
        vec![
            (
                row(&coder, Kind::Episode, "Fixed the flaky login test by pinning the clock", 9, "c1"),
                Some(unit(1, 0.0)),
            ),
            (
                row(&coder, Kind::Episode, "Fixed another flaky login test by pinning the clock", 3, "c2"),
                Some(unit(1, 0.3)),
            ),
        ],
    );
    let first = f.memory.maintain().unwrap();
    assert_eq!(first.consolidation.knowledge.len(), 1);
    let id = first.consolidation.knowledge[0].id;
    assert_eq!(first.consolidation.knowledge[0].status, StatusKind::Provisional);
    let rejected = f.memory.reject(&coder, id).unwrap();
    assert_eq!(rejected.status, Status::Archived);
    f.clock.set(at(1));
    assert!(f.memory.maintain().unwrap().consolidation.knowledge.is_empty(), "rejected wording comes back");
    assert!(f.memory.list_candidates(&coder).unwrap().is_empty());
}

#[test]
fn retention_sweeps_old_traces_and_keeps_memories() {
    let f = common::with_embedder(None);
    let chat = dana().with_chat(ChatId::new("c1").unwrap());
    f.memory.ingest(&chat, vec![mnemo::core::NewMessage::user("My name is Dana and I live in Lisbon.", t0())]).unwrap();
    let ctx = f.memory.context(&chat, "Where do I live?", None).unwrap();
    assert!(f.memory.trace(&chat, &ctx.turn_id).unwrap().is_some());
    f.clock.set(at(10));
    let young = f.memory.maintain().unwrap();
    assert_eq!(young.swept.get("context"), Some(&0));
    f.clock.set(at(31));
    let report = f.memory.maintain().unwrap();
    assert_eq!(report.swept.get("context"), Some(&1), "{:?}", report.swept);
    assert_eq!(report.swept.get("ingest"), Some(&0), "ingest traces keep 90 days");
    assert!(f.memory.trace(&chat, &ctx.turn_id).unwrap().is_none());
    let rows = f.memory.list(&dana(), &Default::default()).unwrap();
    assert!(rows.iter().any(|m| m.content.contains("Lisbon") && m.status == Status::Active), "{rows:?}");
}
