//! PostgreSQL-specific behaviour: row-level security holding when a query forgets its tenant,
//! the HNSW index serving scope-filtered searches, advisory job locks, fail points between write
//! and commit, migrations.
//!
//! Needs a running server: `scripts/pg.sh start`, then
//! `MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url) cargo nextest run -p mnemo-store --features postgres`.
//! Each test gets a database of its own (created from that URL, dropped afterwards), so tests
//! run in parallel. Without the variable they skip, except under CI (`CI` set), where they fail.
#![cfg(feature = "postgres")]

use mnemo_core::{Kind, Memory, MemoryId, Message, MessageId, Role, Scope, StatusKind};
use mnemo_store::prelude::*;
use mnemo_store::{Change, ChangeSet, Embedding, PostgresStore, Store, TempDatabase};
use postgres::{Client, NoTls};

use mnemo_core::trace::TraceOp;

use crate::conformance::{axis, changes, envelope, insert, insertion, memory, scope, t0};

/// A database of this test (dropped when the guard goes) on the server of
/// MNEMO_TEST_DATABASE_URL; `None`, after saying so, when that is unset outside CI (a workspace
/// build turns this crate's `postgres` feature on, so these tests are in every `scripts/test`).
/// Under CI an unset variable fails the test instead.
fn temp_db() -> Option<TempDatabase> {
    let db = TempDatabase::from_env().unwrap_or_else(|e| panic!("{e}"));
    if db.is_none() {
        eprintln!(
            "skipped: MNEMO_TEST_DATABASE_URL is not set; the postgres tests need a server. Run `scripts/pg.sh start` \
             and `export MNEMO_TEST_DATABASE_URL=$(scripts/pg.sh url)`"
        );
    }
    db
}

/// A raw connection to the test database as the connecting (owner) role.
fn raw(db: &TempDatabase) -> Client {
    db.client().unwrap()
}

/// A fresh store in a database of its own (`None`: no server, see [`temp_db`]).
pub(crate) fn open_temp() -> Option<(TempDatabase, Box<dyn Store>)> {
    let (db, store) = open_pg()?;
    Some((db, Box::new(store)))
}

fn open_pg() -> Option<(TempDatabase, PostgresStore)> {
    let db = temp_db()?;
    let store = PostgresStore::connect(db.url()).unwrap();
    Some((db, store))
}

/// What the server said (the driver's own message is only "db error").
fn server_message(e: &postgres::Error) -> String {
    e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string())
}

fn msg(scope: &Scope, id: &str, text: &str) -> Message {
    Message { id: MessageId::new(id).unwrap(), scope: scope.clone(), role: Role::User, content: text.into(), at: t0() }
}

/// Tables with tenant rows, each of which the tests below fill for two tenants.
const TENANT_TABLES: &[&str] = &[
    "messages",
    "memories",
    "links",
    "history",
    "memory_sessions",
    "policies",
    "traces",
    "partitions",
    "observations",
];

/// Fills every tenant table for `acme` and `evil`.
fn two_tenants(store: &PostgresStore) {
    for tenant in ["acme", "evil"] {
        let s = scope(tenant, Some("dana"), Some("c1"));
        store.append_messages(&[msg(&s, "m1", "Dana keeps bees")]).unwrap();
        let owner = scope(tenant, Some("dana"), None);
        let a = memory(&owner, Kind::Profile, "Dana keeps bees in the garden");
        let b = memory(&owner, Kind::Profile, "Dana keeps bees on the roof");
        insert(store, &a, Some(axis(0, 1, 0.1)));
        insert(store, &b, Some(axis(0, 2, 0.1)));
        let cs = ChangeSet {
            tenant: owner.tenant.clone(),
            at: t0(),
            changes: vec![
                Change::Link(mnemo_core::Link {
                    from: a.id,
                    to: b.id,
                    kind: mnemo_core::LinkKind::Supersedes,
                    at: t0(),
                }),
                Change::Reinforce { id: a.id, sources: vec![], session: Some("c1".into()), reason: "again".into() },
            ],
        };
        store.apply(&cs).unwrap();
        let p = mnemo_core::Policy {
            tenant: owner.tenant.clone(),
            agent: None,
            key: "refunds".into(),
            text: "Refunds within 30 days".into(),
            value: serde_json::json!({}),
            version: 0,
            effective_from: t0(),
            effective_until: None,
        };
        store.put_policy(&p).unwrap();
        let env = envelope(&format!("turn-{tenant}"), &s, TraceOp::Context, t0(), vec![a.id]);
        store.record_turn(&env, &[]).unwrap();
        let seen =
            mnemo_core::Observation::new(s.clone(), "edit_file", "view", mnemo_core::Outcome::Failure, None, t0());
        store.put_observation(&seen.unwrap(), None).unwrap();
    }
}

/// The acceptance test of the isolation: with the tenant predicate removed from the query,
/// row-level security alone keeps every other tenant's rows out.
#[test]
fn row_level_security_hides_other_tenants_from_a_query_without_tenant_predicate() {
    let Some((db, store)) = open_pg() else { return };
    two_tenants(&store);
    // As the owner (a superuser here) every row is there: both tenants filled every table.
    let mut owner = raw(&db);
    for table in TENANT_TABLES {
        let tenants: i64 = owner.query_one(&format!("SELECT count(DISTINCT tenant) FROM {table}"), &[]).unwrap().get(0);
        assert_eq!(tenants, 2, "{table} should hold both tenants");
    }
    let acme: mnemo_core::TenantId = "acme".parse().unwrap();
    for table in TENANT_TABLES {
        // No WHERE clause at all: the query "forgot" its tenant.
        let tenants: Vec<String> = store
            .with_tenant(&acme, |tx| {
                Ok(tx.query(&format!("SELECT tenant FROM {table}"), &[])?.iter().map(|r| r.get(0)).collect())
            })
            .unwrap();
        assert!(!tenants.is_empty(), "{table}: acme's own rows are visible");
        assert!(tenants.iter().all(|t| t == "acme"), "{table}: another tenant's row leaked: {tenants:?}");
    }
    // Lexical, vector and substring search with a tenant predicate are of course scoped too.
    let s = scope("acme", Some("dana"), None);
    assert_eq!(store.vector(&s, "test:8", &axis(0, 1, 0.1), 10).unwrap().len(), 2);
    assert_eq!(store.lexical(&s, &["bees".into()], 10).unwrap().len(), 2);
}

/// Writes are checked too: a transaction bound to one tenant can neither move its rows to
/// another tenant nor insert rows for one.
#[test]
fn row_level_security_refuses_writes_into_another_tenant() {
    let Some((db, store)) = open_pg() else { return };
    two_tenants(&store);
    let mut raw = raw(&db);
    let bind = "SELECT set_config('role', 'mnemo_app', true), set_config('mnemo.tenant', 'acme', true)";
    let mut tx = raw.transaction().unwrap();
    tx.execute(bind, &[]).unwrap();
    let err = server_message(&tx.execute("UPDATE memories SET tenant = 'evil'", &[]).unwrap_err());
    assert!(err.contains("row-level security"), "{err}");
    tx.rollback().unwrap();
    let mut tx = raw.transaction().unwrap();
    tx.execute(bind, &[]).unwrap();
    let err = server_message(
        &tx.execute(
            "INSERT INTO messages (tenant, agent, user_id, chat, id, role, content, at) \
             VALUES ('evil', '', '', '', 'x', 'user', 'planted', 0)",
            &[],
        )
        .unwrap_err(),
    );
    assert!(err.contains("row-level security"), "{err}");
    tx.rollback().unwrap();
    // Deleting "everything" deletes only acme's rows.
    let mut tx = raw.transaction().unwrap();
    tx.execute(bind, &[]).unwrap();
    tx.execute("DELETE FROM messages", &[]).unwrap();
    tx.commit().unwrap();
    let left: Vec<String> = raw.query("SELECT tenant FROM messages", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(left, vec!["evil".to_string()]);
}

/// A transaction that never set a tenant sees nothing; the jobs role reads memories only.
#[test]
fn without_a_tenant_the_application_role_sees_nothing() {
    let Some((db, store)) = open_pg() else { return };
    two_tenants(&store);
    let mut raw = raw(&db);
    let mut tx = raw.transaction().unwrap();
    tx.execute("SET LOCAL ROLE mnemo_app", &[]).unwrap();
    for table in TENANT_TABLES {
        let n: i64 = tx.query_one(&format!("SELECT count(*) FROM {table}"), &[]).unwrap().get(0);
        assert_eq!(n, 0, "{table} visible without a tenant");
    }
    // An empty tenant (what a reset setting reads as) matches nothing either.
    tx.execute("SELECT set_config('mnemo.tenant', '', true)", &[]).unwrap();
    let n: i64 = tx.query_one("SELECT count(*) FROM memories", &[]).unwrap().get(0);
    assert_eq!(n, 0);
    tx.rollback().unwrap();
    let mut tx = raw.transaction().unwrap();
    tx.execute("SET LOCAL ROLE mnemo_jobs", &[]).unwrap();
    let n: i64 = tx.query_one("SELECT count(*) FROM memories", &[]).unwrap().get(0);
    assert_eq!(n, 4, "jobs scan every tenant's memories");
    let err = server_message(&tx.query_one("SELECT count(*) FROM messages", &[]).unwrap_err());
    assert!(err.contains("permission denied"), "{err}");
    tx.rollback().unwrap();
    // And the roles the store switches to can never bypass row-level security.
    let bypass: bool = raw
        .query_one(
            "SELECT bool_or(rolsuper OR rolbypassrls) FROM pg_roles WHERE rolname IN ('mnemo_app', 'mnemo_jobs')",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(!bypass);
}

#[test]
fn scan_walks_every_tenant_in_id_order() {
    let Some((_db, store)) = open_pg() else { return };
    two_tenants(&store);
    let all = store.scan(&[StatusKind::Active], None, 100).unwrap();
    assert_eq!(all.len(), 4);
    assert!(all.windows(2).all(|w| w[0].id.to_string() < w[1].id.to_string()));
    let rest = store.scan(&[StatusKind::Active], Some(all[1].id), 100).unwrap();
    assert_eq!(rest.iter().map(|m| m.id).collect::<Vec<_>>(), all[2..].iter().map(|m| m.id).collect::<Vec<_>>());
}

/// A deterministic unit vector in 8 dimensions.
fn pseudo_vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f32> = (0..8)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter().map(|a| a / n).collect()
}

fn bulk(store: &PostgresStore, owner: &Scope, n: usize, seed: u64) -> Vec<(Memory, Vec<f32>)> {
    let rows: Vec<(Memory, Vec<f32>)> = (0..n)
        .map(|i| (memory(owner, Kind::Fact, &format!("fact {seed} {i}")), pseudo_vector(seed * 100_000 + i as u64)))
        .collect();
    let cs = ChangeSet {
        tenant: owner.tenant.clone(),
        at: t0(),
        changes: rows
            .iter()
            .map(|(m, v)| Change::Insert {
                memory: m.clone(),
                embedding: Some(Embedding { model: "test:8".into(), vector: v.clone() }),
                reason: "bulk".into(),
            })
            .collect(),
    };
    store.apply(&cs).unwrap();
    rows
}

/// The model's first vector creates its partial HNSW index; a scope-filtered search uses it,
/// and iterative scans still fill `limit` when the scope keeps a small share of the rows.
#[test]
fn hnsw_index_serves_scope_filtered_vector_search() {
    let Some((db, store)) = open_pg() else { return };
    let big = scope("acme", None, None);
    let small = scope("evil", None, None);
    bulk(&store, &big, 3000, 1);
    let theirs = bulk(&store, &small, 60, 2);
    let mut owner = raw(&db);
    let indexes: Vec<String> = owner
        .query("SELECT indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%hnsw%'", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(indexes.len(), 1, "{indexes:?}");
    assert!(indexes[0].contains("vector(8)") && indexes[0].contains("'test:8'"), "{indexes:?}");
    owner.batch_execute("ANALYZE memories").unwrap();

    let q = pseudo_vector(7);
    let plan = store.explain_vector(&big, "test:8", &q, 10).unwrap();
    assert!(plan.contains("memories_hnsw_"), "the HNSW index is not used:\n{plan}");
    let dot = |v: &[f32]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
    let mut want: Vec<(MemoryId, f32)> = theirs.iter().map(|(m, v)| (m.id, dot(v))).collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    want.truncate(20);

    // The small tenant is 2% of the rows, so the planner rightly reads its rows by tenant and
    // scores them exactly.
    let got = store.vector(&small, "test:8", &q, 20).unwrap();
    assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), want.iter().map(|x| x.0).collect::<Vec<_>>());
    for ((_, g), (_, w)) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "cosine {g} vs {w}");
    }
    // The big scope comes back in order, with `limit` rows, all its own.
    let got = store.vector(&big, "test:8", &q, 50).unwrap();
    assert_eq!(got.len(), 50);
    assert!(got.windows(2).all(|w| w[0].1 >= w[1].1));
    let small_ids: std::collections::HashSet<MemoryId> = theirs.iter().map(|(m, _)| m.id).collect();
    assert!(got.iter().all(|(id, _)| !small_ids.contains(id)));

    // Now make sorting look prohibitive, so the small scope goes through the index too: with
    // ef_search at 40 a plain index scan would find about one row of the 2%; the iterative scan
    // keeps walking the graph until the limit is filled.
    owner.batch_execute(&format!("ALTER DATABASE {} SET enable_sort = off", db.name())).unwrap();
    let forced = PostgresStore::connect(db.url()).unwrap();
    forced.set_exact_scan_max(0);
    let plan = forced.explain_vector(&small, "test:8", &q, 20).unwrap();
    assert!(plan.contains("memories_hnsw_"), "the HNSW index is not used:\n{plan}");
    let got = forced.vector(&small, "test:8", &q, 20).unwrap();
    assert_eq!(got.len(), 20, "the iterative scan must fill the limit");
    assert!(got.iter().all(|(id, _)| small_ids.contains(id)));
    assert!(got.windows(2).all(|w| w[0].1 >= w[1].1));
    let exact: std::collections::HashSet<MemoryId> = want.iter().map(|x| x.0).collect();
    let recall = got.iter().filter(|(id, _)| exact.contains(id)).count();
    assert!(recall >= 18, "approximate search found only {recall} of the true top 20");
}

/// Small scopes are scored exactly, bigger ones go through the index; both give the true top
/// results here, and a scope that grows past the limit switches to the index.
#[test]
fn small_scopes_are_searched_exactly_and_big_ones_through_the_index() {
    let Some((_db, store)) = open_pg() else { return };
    let big = scope("acme", None, None);
    let small = scope("evil", None, None);
    let theirs = bulk(&store, &big, 3000, 1);
    bulk(&store, &small, 60, 2);
    let q = pseudo_vector(11);
    let dot = |v: &[f32]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
    let mut want: Vec<(MemoryId, f32)> = theirs.iter().map(|(m, v)| (m.id, dot(v))).collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<MemoryId> = want.iter().take(10).map(|x| x.0).collect();

    let exact = store.vector(&big, "test:8", &q, 10).unwrap();
    assert_eq!(exact.iter().map(|x| x.0).collect::<Vec<_>>(), top, "3,000 rows are under the default limit");
    for ((_, g), (_, w)) in exact.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "cosine {g} vs {w}");
    }
    store.set_exact_scan_max(1000);
    let indexed = store.vector(&big, "test:8", &q, 10).unwrap();
    assert_eq!(indexed.len(), 10);
    assert!(indexed.windows(2).all(|w| w[0].1 >= w[1].1));
    let found = indexed.iter().filter(|x| top.contains(&x.0)).count();
    assert!(found >= 9, "the index found {found} of the true top 10");
    // The small scope still fits, and never sees the big one's rows.
    let mine = store.vector(&small, "test:8", &q, 100).unwrap();
    assert_eq!(mine.len(), 60);
}

/// Exact search keeps a scope's vectors in process while the partition's version stands: a
/// write through another handle (another server process) moves the version, and this handle's
/// next search sees the write; after an erasure the user's recreated partition is never taken
/// for the erased one, whatever versions this handle still holds.
#[test]
fn a_cached_scope_follows_writes_and_erasures_made_elsewhere() {
    let Some((db, a)) = open_pg() else { return };
    let b = PostgresStore::connect(db.url()).unwrap();
    let dana = scope("acme", Some("dana"), None);
    let rows = bulk(&a, &dana, 200, 3);
    let q = pseudo_vector(42);
    let first = a.vector(&dana, "test:8", &q, 5).unwrap();
    assert_eq!(first.len(), 5);
    assert_eq!(a.vector(&dana, "test:8", &q, 5).unwrap(), first, "the cached part answers the same");

    // Through the other handle: the best hit is archived, and a row equal to the query added.
    let exact = memory(&dana, Kind::Fact, "the query itself");
    let cs = ChangeSet {
        tenant: dana.tenant.clone(),
        at: t0(),
        changes: vec![
            Change::SetStatus {
                id: first[0].0,
                status: mnemo_core::Status::Archived,
                event: mnemo_core::HistoryEvent::Closed,
                reason: "test".into(),
                sources: vec![],
            },
            Change::Insert {
                memory: exact.clone(),
                embedding: Some(Embedding { model: "test:8".into(), vector: q.clone() }),
                reason: "test".into(),
            },
        ],
    };
    b.apply(&cs).unwrap();
    let after = a.vector(&dana, "test:8", &q, 5).unwrap();
    assert_eq!(after[0].0, exact.id, "{after:?}");
    assert!((after[0].1 - 1.0).abs() < 1e-5);
    assert!(after.iter().all(|(id, _)| *id != first[0].0), "an archived row is still found");

    // Erased through the other handle, then written again: only the new row is found.
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    b.erase_user(&dana.tenant, dana.user.as_ref().unwrap(), &event).unwrap();
    assert!(a.vector(&dana, "test:8", &q, 5).unwrap().is_empty());
    let again = bulk(&b, &dana, 1, 4);
    let found = a.vector(&dana, "test:8", &q, 5).unwrap();
    assert_eq!(found.iter().map(|x| x.0).collect::<Vec<_>>(), [again[0].0.id], "{found:?}");
    assert!(rows.iter().all(|(m, _)| found.iter().all(|(id, _)| *id != m.id)));
}

/// The tuples of one relation's files (main fork, every 1 GiB segment) as they are on disk: for
/// each 8 KiB page, the bytes each line pointer with storage points at (a live tuple, a dead
/// one not yet removed, an index entry). Free space, which PostgreSQL never zeroes, is not read:
/// only what the relation still references.
fn tuples_on_disk(file: &std::path::Path) -> Vec<Vec<u8>> {
    const PAGE: usize = 8192;
    let mut out = Vec::new();
    let segments = std::iter::once(file.to_path_buf())
        .chain((1..).map(|n| std::path::PathBuf::from(format!("{}.{n}", file.display()))))
        .take_while(|p| p.exists());
    for segment in segments {
        let bytes = std::fs::read(&segment).unwrap();
        for page in bytes.chunks_exact(PAGE) {
            let lower = u16::from_le_bytes([page[12], page[13]]) as usize;
            // Line pointers from the end of the 24-byte header to pd_lower, 4 bytes each:
            // lp_off (15 bits), lp_flags (2), lp_len (15). A metapage's pd_lower covers other
            // data; the bounds checks leave it be.
            for lp in page[24..lower.clamp(24, PAGE)].chunks_exact(4) {
                let v = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]);
                let (off, flags, len) = ((v & 0x7fff) as usize, (v >> 15) & 3, (v >> 17) as usize);
                if flags != 0 && flags != 2 && len > 0 && off >= 24 && off + len <= PAGE {
                    out.push(page[off..off + len].to_vec());
                }
            }
        }
    }
    out
}

/// After an erasure no tuple of any table, TOAST table or index of the store still holds the
/// user's words, while another user's are there: the erasure vacuums what it deleted from (a
/// DELETE alone leaves the dead rows, text and tsvector included, in their pages, and their
/// entries in the lexical indexes, until autovacuum gets round to it).
///
/// The relations' files are read from the server's data directory after a CHECKPOINT, so this
/// needs the server on this machine and its files readable (as `scripts/pg.sh` runs it); pages
/// are parsed here because `pageinspect` is not in every installation (the server of
/// `scripts/pg.sh` lacks it). Bytes left in a page's free space are not checked: PostgreSQL
/// never zeroes them (see `PostgresStore::purge`).
#[test]
fn erasure_leaves_no_tuple_of_the_user_in_any_table_or_index() {
    let Some((db, store)) = open_pg() else { return };
    let (dana, eve) = (scope("acme", Some("dana"), Some("c1")), scope("acme", Some("eve"), Some("c1")));
    // Several rows per user on shared pages, as in any busy store.
    for i in 0..20 {
        store.append_messages(&[msg(&dana, &format!("d{i}"), &format!("Our dog Qwrtzplkbnm{i} sleeps"))]).unwrap();
        store.append_messages(&[msg(&eve, &format!("e{i}"), &format!("Our cat Vhgkdfrtwx{i} sleeps"))]).unwrap();
    }
    insert(&store, &memory(&dana.without_chat(), Kind::Profile, "User has a dog named Qwrtzplkbnm"), None);
    insert(&store, &memory(&eve.without_chat(), Kind::Profile, "User has a cat named Vhgkdfrtwx"), None);
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    store.erase_user(&dana.tenant, dana.user.as_ref().unwrap(), &event).unwrap();
    assert_no_tuple_holds(&db, b"vhgkdfrtwx", b"qwrtzplkbnm");
}

/// [`erasure_leaves_no_tuple_of_the_user_in_any_table_or_index`] for a tenant's reset: 50 users
/// erased in one [`Users::erase_users`](mnemo_store::Users::erase_users) (two transactions, one
/// VACUUM), with a user of the tenant not named and another tenant's user of the same name kept.
#[test]
fn users_erased_together_leave_no_tuple_of_theirs_in_any_table_or_index() {
    let Some((db, store)) = open_pg() else { return };
    let users: Vec<String> = (0..50).map(|i| format!("user{i:02}")).collect();
    for (tenant, user, word) in users
        .iter()
        .map(|u| ("acme", u.as_str(), "Qwrtzplkbnm"))
        .chain([("acme", "keeper", "Vhgkdfrtwx"), ("globex", "user00", "Vhgkdfrtwx")])
    {
        let chat = scope(tenant, Some(user), Some("c1"));
        for i in 0..3 {
            store.append_messages(&[msg(&chat, &format!("m{i}"), &format!("Our pet {word}{i} sleeps"))]).unwrap();
        }
        insert(&store, &memory(&chat.without_chat(), Kind::Profile, &format!("User has a pet named {word}")), None);
    }
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let erasures: Vec<_> = users.iter().map(|u| (mnemo_core::UserId::new(u).unwrap(), event.clone())).collect();
    let tenant = scope("acme", None, None).tenant;
    let counts = store.erase_users(&tenant, &erasures).unwrap();
    assert!(counts.iter().all(|c| c["messages"] == 3 && c["memories"] == 1), "{counts:?}");
    assert_no_tuple_holds(&db, b"vhgkdfrtwx", b"qwrtzplkbnm");
}

/// Reads every relation of the store from the server's files after a CHECKPOINT and asserts
/// that `kept` is found (in `messages` and its lexical index: the scan works) and `erased` in
/// none. Returns early, saying so, when the server's files are not readable here.
fn assert_no_tuple_holds(db: &TempDatabase, kept: &[u8], erased: &[u8]) {
    let mut admin = raw(db);
    admin.batch_execute("CHECKPOINT").unwrap();
    let data: String = admin.query_one("SELECT current_setting('data_directory')", &[]).unwrap().get(0);
    let data = std::path::PathBuf::from(data);
    if std::fs::read_dir(data.join("base")).is_err() {
        let why = format!("the server's data directory {} is not readable here", data.display());
        assert!(std::env::var_os("CI").is_none(), "{why}: run the server on this machine (scripts/pg.sh)");
        eprintln!("skipped: {why}");
        return;
    }
    // Every table of the store's schema, its TOAST table, and their indexes.
    let relations: Vec<(String, String)> = admin
        .query(
            "SELECT c.oid::regclass::text, pg_relation_filepath(c.oid) FROM pg_class c \
             WHERE pg_relation_filepath(c.oid) IS NOT NULL AND (c.relnamespace = current_schema()::regnamespace \
               OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = current_schema()::regnamespace) \
               OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.reltoastrelid = i.indrelid \
                            WHERE t.relnamespace = current_schema()::regnamespace))",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let holding = |word: &[u8]| -> Vec<String> {
        relations
            .iter()
            .filter(|(_, file)| {
                tuples_on_disk(&data.join(file))
                    .iter()
                    .any(|t| t.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word)))
            })
            .map(|(name, _)| name.clone())
            .collect()
    };
    assert!(holding(kept).iter().any(|r| r == "messages"), "the scan must see the kept words");
    assert!(holding(kept).iter().any(|r| r == "messages_lexical"), "and in the lexical index");
    let left = holding(erased);
    assert!(left.is_empty(), "tuples holding the erased words remain in {left:?}");
}

fn hnsw_indexes(owner: &mut Client) -> Vec<String> {
    owner
        .query("SELECT indexname FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%hnsw%'", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// A bulk load drops the HNSW index while rows pour in (searches stay exact, only slower) and
/// builds it once at the end; a load that died half-way gets its index back at the next open.
#[test]
fn a_bulk_load_builds_the_vector_index_once_at_the_end() {
    let Some((db, store)) = open_pg() else { return };
    let owner_scope = scope("acme", None, None);
    bulk(&store, &owner_scope, 10, 1);
    let mut owner = raw(&db);
    let before = hnsw_indexes(&mut owner);
    assert_eq!(before.len(), 1, "{before:?}");

    store.begin_bulk_load().unwrap();
    assert!(hnsw_indexes(&mut owner).is_empty());
    let rows = bulk(&store, &owner_scope, 3000, 2);
    let (id, v) = (rows[123].0.id, rows[123].1.clone());
    assert_eq!(store.vector(&owner_scope, "test:8", &v, 1).unwrap()[0].0, id, "exact without the index");
    store.finish_bulk_load().unwrap();
    assert_eq!(hnsw_indexes(&mut owner), before);
    store.finish_bulk_load().unwrap(); // idempotent
    owner.batch_execute("ANALYZE memories").unwrap();
    assert!(store.explain_vector(&owner_scope, "test:8", &v, 10).unwrap().contains("memories_hnsw_"));
    assert_eq!(store.vector(&owner_scope, "test:8", &v, 1).unwrap()[0].0, id);

    // Interrupted: the index is dropped and nobody finishes; the next open rebuilds it.
    store.begin_bulk_load().unwrap();
    drop(store);
    assert!(hnsw_indexes(&mut owner).is_empty());
    let _reopened = PostgresStore::connect(db.url()).unwrap();
    assert_eq!(hnsw_indexes(&mut owner), before);
}

#[test]
fn cosines_are_exact_and_follow_the_ids() {
    let Some((_db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    let a = memory(&owner, Kind::Profile, "User's name is Dana");
    let b = memory(&owner, Kind::Profile, "User lives in Lisbon");
    let no_vector = memory(&owner, Kind::Profile, "User likes tea");
    insert(&store, &a, Some(axis(0, 1, 0.0)));
    insert(&store, &b, Some(axis(1, 0, 0.0)));
    insert(&store, &no_vector, None);
    let got = store.cosines(&owner, "test:8", &axis(1, 0, 0.0), &[b.id, no_vector.id, a.id]).unwrap();
    assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), vec![b.id, a.id]);
    assert!((got[0].1 - 1.0).abs() < 1e-6 && got[1].1.abs() < 1e-6, "{got:?}");
    assert!(store.cosines(&scope("evil", Some("dana"), None), "test:8", &axis(1, 0, 0.0), &[a.id]).unwrap().is_empty());
}

#[test]
fn mixing_vector_dimensions_is_refused_across_tenants() {
    let Some((db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    insert(&store, &memory(&owner, Kind::Profile, "User's name is Dana"), Some(axis(0, 1, 0.0)));
    let other = scope("evil", Some("eve"), None);
    let m = memory(&other, Kind::Profile, "User lives in Lisbon");
    let cs = ChangeSet {
        tenant: other.tenant.clone(),
        at: t0(),
        changes: vec![Change::Insert {
            memory: m.clone(),
            embedding: Some(Embedding { model: "test:8".into(), vector: vec![1.0; 3] }),
            reason: "w".into(),
        }],
    };
    let err = store.apply(&cs).unwrap_err().to_string();
    assert!(err.contains("dimension 3") && err.contains("`mnemo maintain`") && !err.contains("reembed"), "{err}");
    assert!(store.get(&other.tenant, m.id).unwrap().is_none());
    let err = store.vector(&owner, "test:8", &[1.0; 3], 5).unwrap_err().to_string();
    assert!(err.contains("dimension 3"), "{err}");
    // A second handle (another server) refuses it too, from the stored registry.
    let fresh = PostgresStore::connect(db.url()).unwrap();
    assert!(fresh.apply(&cs).unwrap_err().to_string().contains("dimension 3"));
}

#[test]
fn a_new_model_registered_by_a_failed_apply_leaves_no_trace() {
    let Some((db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User's name is Dana");
    let pin_missing = Change::SetPinned { id: MemoryId::new(), pinned: true };
    let cs = changes(&owner, vec![insertion(&m, Some(("other:3", vec![1.0, 0.0, 0.0]))), pin_missing]);
    assert!(store.apply(&cs).is_err());
    let mut owner_conn = raw(&db);
    let n: i64 = owner_conn
        .query_one("SELECT count(*) FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%other:3%'", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "the index of a rolled-back model stays out");
    // So the model is free to take another dimension.
    let cs = ChangeSet {
        tenant: owner.tenant,
        at: t0(),
        changes: vec![Change::Insert {
            memory: m,
            embedding: Some(Embedding { model: "other:3".into(), vector: vec![0.0, 1.0] }),
            reason: "w".into(),
        }],
    };
    store.apply(&cs).unwrap();
}

#[test]
fn job_locks_are_held_once_across_handles() {
    let Some((db, store)) = open_pg() else { return };
    let other = PostgresStore::connect(db.url()).unwrap();
    let held = store.try_job_lock("decay").unwrap().expect("free lock");
    assert_eq!(held.name(), "decay");
    assert!(store.try_job_lock("decay").unwrap().is_none());
    assert!(other.try_job_lock("decay").unwrap().is_none(), "another server must not run the job too");
    let reembed = other.try_job_lock("reembed").unwrap();
    assert!(reembed.is_some(), "locks are per job");
    drop(held);
    assert!(other.try_job_lock("decay").unwrap().is_some());
}

#[test]
fn reconnecting_keeps_everything_and_refuses_a_future_schema() {
    let Some((db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    let m = memory(&owner, Kind::Profile, "User's name is Dana");
    insert(&store, &m, Some(axis(0, 1, 0.0)));
    drop(store);
    let again = PostgresStore::connect(db.url()).unwrap();
    assert!(again.get(&owner.tenant, m.id).unwrap().is_some());
    assert_eq!(again.vector(&owner, "test:8", &axis(0, 1, 0.0), 5).unwrap().len(), 1);
    drop(again);
    raw(&db).batch_execute("INSERT INTO schema_migrations (version) VALUES (99)").unwrap();
    let err = PostgresStore::connect(db.url()).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
}

/// Memories stored before constraints were kept (version 16) get theirs from the migration, in
/// pages, so the safety half finds an allergy said long before the upgrade.
#[test]
fn upgrading_to_version_16_keeps_the_constraints_of_earlier_memories() {
    let Some((db, store)) = open_pg() else { return };
    let dana = scope("acme", Some("dana"), None);
    let peanuts = memory(&dana, Kind::Profile, "User is allergic to peanuts");
    let tea = memory(&dana, Kind::Preference, "User likes green tea");
    insert(&store, &peanuts, None);
    insert(&store, &tea, None);
    drop(store);
    raw(&db)
        .batch_execute(
            "ALTER TABLE memories DROP COLUMN constraints; DELETE FROM schema_migrations WHERE version >= 16",
        )
        .unwrap();
    let again = PostgresStore::connect(db.url()).unwrap();
    let found = again.constraints(&dana, mnemo_core::safety::query_domains("a dessert for the party"), 10).unwrap();
    assert_eq!(found.into_iter().map(|m| m.id).collect::<Vec<_>>(), vec![peanuts.id]);
}

#[test]
fn servers_starting_together_migrate_once() {
    let Some(db) = temp_db() else { return };
    let url = db.url().to_string();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PostgresStore::connect(&url).map(|_| ()))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    // Every version applied exactly once: as many rows as the latest version.
    let row = raw(&db).query_one("SELECT count(*), max(version) FROM schema_migrations", &[]).unwrap();
    let (rows, latest): (i64, i64) = (row.get(0), row.get(1));
    assert!(latest >= 2);
    assert_eq!(rows, latest);
}

#[test]
fn user_text_never_breaks_the_lexical_query() {
    let Some((_db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    insert(&store, &memory(&owner, Kind::Profile, "Dana's cat is called Miso & she's 3"), None);
    for term in ["miso", "!", "&", "a | b", "'quoted'", "(", "the", "", "cat:*", "\\"] {
        store.lexical(&owner, &[term.to_string(), "miso".to_string()], 10).unwrap();
    }
    assert_eq!(store.lexical(&owner, &["cats".into(), "(".into()], 10).unwrap().len(), 1);
}

/// A word few of the user's rows hold weighs more than one most of them share, as BM25 weighs
/// it on SQLite, for memories and messages alike; a row with both words ranks above either.
#[test]
fn a_rarer_word_weighs_more_within_a_users_rows() {
    let Some((_db, store)) = open_pg() else { return };
    let dana = scope("acme", Some("dana"), None);
    let chat = scope("acme", Some("dana"), Some("c1"));
    let texts = [
        "Dana takes bread to her oboe lesson",
        "Dana plays the oboe",
        "Dana bakes bread weekly",
        "Dana buys bread at the market on Saturdays",
        "Dana shares bread with neighbours",
        "Dana lives in Porto",
    ];
    let memories: Vec<Memory> = texts.iter().map(|t| memory(&dana, Kind::Event, t)).collect();
    for m in &memories {
        insert(&store, m, None);
    }
    let messages: Vec<Message> = texts.iter().enumerate().map(|(i, t)| msg(&chat, &format!("d{i}"), t)).collect();
    store.append_messages(&messages).unwrap();
    let terms = vec!["bread".to_string(), "oboe".to_string()];
    let hits = store.lexical(&dana, &terms, 10).unwrap();
    let ids: Vec<MemoryId> = hits.iter().map(|h| h.0).collect();
    assert_eq!(ids[..2], [memories[0].id, memories[1].id], "{hits:?}");
    assert_eq!(hits.len(), 5, "{hits:?}");
    assert!(hits[1].1 > hits[2].1, "the oboe alone outweighs the bread alone: {hits:?}");
    let found: Vec<String> =
        store.search_messages(&dana, &terms, 10).unwrap().into_iter().map(|h| h.0.to_string()).collect();
    assert_eq!(found[..2], ["d0", "d1"], "{found:?}");
    assert_eq!(found.len(), 5);
}

#[test]
fn keyed_memories_are_found_by_the_words_their_key_stands_for() {
    let Some((_db, store)) = open_pg() else { return };
    let owner = scope("acme", Some("dana"), None);
    let mut m = memory(&owner, Kind::Profile, "User works in product design");
    m.key = Some("job".into());
    insert(&store, &m, None);
    let hits = store.lexical(&owner, &["occupation".into()], 10).unwrap();
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![m.id]);
    assert_eq!(store.get(&owner.tenant, m.id).unwrap().unwrap().content, "User works in product design");
}

#[test]
fn a_batch_of_messages_may_span_tenants() {
    let Some((_db, store)) = open_pg() else { return };
    let a = scope("acme", Some("dana"), Some("c1"));
    let e = scope("evil", Some("dana"), Some("c1"));
    let batch = vec![msg(&a, "m1", "one"), msg(&e, "m1", "two"), msg(&a, "m2", "three")];
    assert_eq!(store.append_messages(&batch).unwrap(), vec![true, true, true]);
    assert_eq!(store.recent_messages(&a, 10).unwrap().len(), 2);
    assert_eq!(store.recent_messages(&e, 10).unwrap()[0].content, "two");
}

/// The deployment most managed services allow: the store connects as a plain role that owns
/// its database (pgvector installed and the two roles granted by an administrator). Forced
/// row-level security then binds that owner too.
#[test]
fn a_non_superuser_owner_runs_the_store_and_sees_no_rows_itself() {
    let Some((bootstrap_db, _roles_exist)) = open_pg() else { return };
    let Some(db) = temp_db() else { return };
    let user = format!("owner_{}", MemoryId::new());
    let mut admin = Client::connect(db.admin_url(), NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {user} LOGIN NOSUPERUSER; GRANT mnemo_app, mnemo_jobs TO {user} WITH INHERIT FALSE; \
             ALTER DATABASE {db} OWNER TO {user}",
            db = db.name()
        ))
        .unwrap();
    raw(&db).batch_execute("CREATE EXTENSION vector").unwrap();
    let (scheme, rest) = db.url().split_once("://").unwrap();
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let url = format!("{scheme}://{user}@{host}");
    let store = PostgresStore::connect(&url).unwrap();
    crate::conformance::search::every_read_is_scoped(&store);
    let mut owner = Client::connect(&url, NoTls).unwrap();
    let n: i64 = owner.query_one("SELECT count(*) FROM memories", &[]).unwrap().get(0);
    assert_eq!(n, 0, "the owner itself reads nothing: row-level security is forced");
    // So whole-store work (a copy) is refused with what to do, rather than counting nothing.
    let err = store.counts().unwrap_err().to_string();
    assert!(err.contains("BYPASSRLS") && err.contains(&user), "{err}");
    assert!(store.export(&mut |_| Ok(())).unwrap_err().to_string().contains("BYPASSRLS"));
    assert!(store.import().err().expect("refused").to_string().contains("BYPASSRLS"));
    drop((store, owner, bootstrap_db));
    drop(db);
    admin.batch_execute(&format!("DROP ROLE IF EXISTS {user}")).unwrap();
}

#[test]
fn connect_explains_a_bad_url() {
    let err = PostgresStore::connect("postgres://nobody:secret@127.0.0.1:1/none").unwrap_err().to_string();
    assert!(err.contains("cannot open the store at postgres://nobody@127.0.0.1:1/none"), "{err}");
    assert!(!err.contains("secret"), "{err}");
}

/// Moving up: a SQLite store copied into PostgreSQL loses nothing (every table, row for row,
/// and every read path answers alike), and the model's HNSW index comes with the vectors.
#[test]
fn a_copy_from_sqlite_to_postgres_loses_nothing() {
    let (_dir, source) = crate::sqlite::open_temp();
    crate::conformance::transfer::fill_every_table(&*source);
    let Some((db, target)) = open_pg() else { return };
    crate::conformance::transfer::copy_all(&*source, &target, 7);
    crate::conformance::transfer::assert_copied(&*source, &target);
    let indexes: i64 = raw(&db)
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%hnsw%test:8%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexes, 1, "the imported model's HNSW index");
    // A second server on the copy sees the same (the model registry was committed too).
    let other = PostgresStore::connect(db.url()).unwrap();
    crate::conformance::transfer::assert_copied(&*source, &other);
}
