//! A store of aged memories that maintenance has much to do on: built straight through the
//! store (no model, no clock) so a test can kill or compare maintenance runs over it.

use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use mnemo::core::{ChatId, Kind, Memory as Row, MessageId, Provenance, Scope, Status};
use mnemo::store::{Change, ChangeSet, Embedding, Memories, SqliteStore};

/// Users of the default store.
pub(crate) const USERS: usize = 3;
/// Memories per user: with three users, three pages of the job.
pub(crate) const PER_USER: usize = 700;
/// Lower than the default so the cap archives some of every user's rows.
pub(crate) const CAP: &str = "60";

pub(crate) fn t0() -> DateTime<Utc> {
    "2026-01-01T09:00:00Z".parse().unwrap()
}

/// The moment the rows are aged against: maintenance run at it (or later) finds them due.
pub(crate) fn at() -> DateTime<Utc> {
    "2026-06-01T00:00:00Z".parse().unwrap()
}

fn unit(i: usize, mix: f32) -> Vec<f32> {
    let mut v = [0.0f32; 16];
    v[i % 16] = 1.0;
    v[(i + 1) % 16] = mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

pub(crate) fn scope(u: usize) -> Scope {
    Scope::parse("acme", None, Some(&format!("user-{u}")), None).unwrap()
}

/// 700 memories for each of the users numbered `users` (three users make three pages of the
/// job): due and not-due transitions of every kind, near-duplicate pairs, recurring events
/// across chats, over the cap of 60.
pub(crate) fn build(dir: &Path, users: std::ops::Range<usize>) {
    let store = SqliteStore::open(dir.join("mnemo.db")).unwrap();
    for u in users {
        let owner = scope(u);
        let mut changes = Vec::new();
        for i in 0..PER_USER {
            let (kind, status, days_ago) = match i % 10 {
                0 => (Kind::Ephemeral, Status::Active, 10),
                1 => (Kind::Event, Status::Active, 45),
                2 => (Kind::OpenLoop, Status::Active, 70),
                3 => (Kind::Event, Status::Stale, 120),
                4 => (Kind::Fact, Status::Active, 20),
                5 => (Kind::Fact, Status::Active, (i % 50) as i64),
                6 => (Kind::Event, Status::Active, 5),
                7 => (Kind::Preference, Status::Active, (i % 90) as i64),
                8 => (Kind::Profile, Status::Active, (i % 30) as i64),
                _ => (Kind::Lore, Status::Active, (i % 200) as i64),
            };
            // Rows i and i+10 share a vector: near-duplicates where the kind is the same and
            // still active. Facts of class 5 repeat a sentence across two chats (merged, and
            // knowledge); events of class 6 recur across two chats (knowledge).
            let content = match i % 10 {
                5 => format!("User {u} keeps fact number {} about the garden shed", i / 20),
                6 => format!("User {u} went climbing at the gym with group {}", i / 20),
                _ => format!("User {u} memory {i} of kind {kind}"),
            };
            let created = at() - Duration::days(days_ago) - Duration::minutes(i as i64);
            let mut m = Row::new(owner.clone(), kind, content, created.max(t0()));
            m.status = status;
            if i % 10 == 4 {
                m.expires_at = Some(m.created_at + Duration::days(1));
            }
            m.salience = 0.3 + (i % 7) as f32 / 10.0;
            m.provenance = Provenance {
                sources: vec![MessageId::new(format!("m{u}-{i}")).unwrap()],
                chat: Some(ChatId::new(format!("c{}", (i / 10) % 2)).unwrap()),
                extractor: "test".into(),
                extractor_version: "1".into(),
                rule: None,
            };
            let vector = unit(i / 20, if i % 20 < 10 { 0.0 } else { 0.05 });
            changes.push(Change::Insert {
                memory: m,
                embedding: Some(Embedding { model: "test:16".into(), vector }),
                reason: "seed".into(),
            });
        }
        store.apply(&ChangeSet { tenant: owner.tenant.clone(), at: t0(), changes }).unwrap();
    }
}
