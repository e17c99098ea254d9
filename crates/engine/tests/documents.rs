//! Research persistence: documents stored at three levels, read back at each, found by
//! similarity within scope, "researched before" answered by the threshold, on either backend.

use std::sync::Arc;

use mnemo::DocumentOwner;
use mnemo::core::DocumentKind;
use mnemo::core::detail::Detail;
use mnemo::models::{Embedder, EmbedderSettings, LocalEmbedder};
use mnemo::{Memory, Scope};

use crate::common::{configured, hashed};

/// Prior research as agents store it, each with a question a later session asks about the same
/// topic in other words. Paired by index: probe `i` is about document `i` and none other.
pub(crate) const RESEARCH: &[(&str, &str, &str)] = &[
    (
        "https://www.sqlite.org/wal.html",
        "# Write-ahead logging in SQLite\n\nIn WAL mode readers do not block writers and a writer does not block \
         readers: readers see the database as of the start of their transaction while one writer appends to the \
         -wal file. Checkpoints copy pages back into the database file; a long-running reader can keep the WAL \
         growing. WAL needs shared memory, so it does not work over network file systems.",
        "Can several readers query SQLite while another connection is writing to it?",
    ),
    (
        "https://tokio.rs/tokio/tutorial",
        "# Choosing an async runtime for the service\n\nTokio is the most widely used Rust async runtime: a \
         multi-threaded work-stealing scheduler, timers, TCP and UDP, and the ecosystem (hyper, axum, tonic) is \
         built on it. async-std mirrors the standard library's API but is no longer maintained. smol is small and \
         composable. Recommendation: tokio with the multi-thread runtime; use spawn_blocking for CPU-bound work.",
        "which Rust async executor should the new service use?",
    ),
    (
        "cargo test -p mnemo-core",
        "running 212 tests\ntest decay::tests::strength_is_monotone ... FAILED\n\nfailures:\n\n---- \
         decay::tests::strength_is_monotone stdout ----\nthread 'decay::tests::strength_is_monotone' panicked at \
         crates/core/src/decay.rs:88:21:\nattempt to subtract with overflow\n\ntest result: FAILED. 211 passed; 1 \
         failed",
        "the decay unit test panics with an integer overflow when subtracting",
    ),
    (
        "https://www.postgresql.org/docs/current/ddl-rowsecurity.html",
        "# Row-level security in PostgreSQL\n\nALTER TABLE ... ENABLE ROW LEVEL SECURITY turns on policies for a \
         table; FORCE makes them apply to the table owner too. CREATE POLICY ... USING (tenant = \
         current_setting('app.tenant')) restricts which rows a role can see. Superusers and roles with BYPASSRLS \
         ignore policies, so the application must connect as an ordinary role.",
        "how do we keep one customer's rows invisible to another customer in Postgres?",
    ),
    (
        "src/auth.rs",
        "use axum::http::HeaderMap;\nuse sha2::{Digest, Sha256};\n\n/// A tenant's API key, checked on every request.\n\
         pub struct Tenant(pub TenantId);\n\npub fn hash_key(key: &str) -> [u8; 32] {\n    \
         Sha256::digest(key.as_bytes()).into()\n}\n\npub fn bearer(headers: &HeaderMap) -> Option<&str> {\n    \
         headers.get(\"authorization\")?.to_str().ok()?.strip_prefix(\"Bearer \")\n}\n",
        "where does the server hash API keys and read the bearer token?",
    ),
    (
        "https://docs.rs/tower-http/latest/tower_http/cors/",
        "# CORS for the HTTP API\n\ntower-http's CorsLayer adds the Access-Control-Allow-* headers. \
         CorsLayer::new().allow_origin([\"https://app.example.com\".parse()?]).allow_methods([Method::GET, \
         Method::POST]).allow_headers([AUTHORIZATION, CONTENT_TYPE]); add it as the outermost layer of the axum \
         Router so preflight OPTIONS requests are answered before authentication.",
        "browser requests from our web app are blocked by the same-origin policy, how do we allow them in axum?",
    ),
    (
        "https://docs.python.org/3/library/asyncio-task.html",
        "# Timeouts in asyncio\n\nasyncio.wait_for(coro, timeout) cancels the task and raises TimeoutError when \
         the timeout expires; Python 3.11 adds the asyncio.timeout() context manager, which is preferred for \
         several awaits. Cancellation is delivered as CancelledError inside the task, so cleanup belongs in \
         finally blocks.",
        "how to stop an awaited Python coroutine that takes too long",
    ),
    (
        "kubectl describe pod api-7f9c",
        "State: Waiting\n  Reason: CrashLoopBackOff\nLast State: Terminated\n  Reason: OOMKilled\n  Exit Code: \
         137\nLimits:\n  memory: 256Mi\nEvents:\n  Warning  BackOff  kubelet  Back-off restarting failed container",
        "the api pod keeps restarting because it runs out of memory in Kubernetes",
    ),
    (
        "https://docs.github.com/en/actions/using-workflows/caching-dependencies",
        "# Caching in GitHub Actions\n\nactions/cache saves and restores directories keyed by a hash of the \
         lockfile, e.g. key: ${{ runner.os }}-cargo-${{ hashFiles('**/Cargo.lock') }}. Cache ~/.cargo/registry and \
         target/ for Rust. A cache is immutable once saved; use restore-keys for partial matches.",
        "our CI rebuilds every crate on each push, can we reuse compiled dependencies between workflow runs?",
    ),
];

fn model() -> Arc<dyn Embedder> {
    let dir = EmbedderSettings::default().resolved_model_dir();
    match LocalEmbedder::open(&dir) {
        Ok(e) => Arc::new(e),
        Err(e) => panic!("the local model is required for this test: {e}\nrun scripts/fetch-model.sh first"),
    }
}

fn coder(user: &str) -> Scope {
    Scope::parse("acme", Some("coder"), Some(user), None).unwrap()
}

fn store_all(memory: &Memory, scope: &Scope) -> Vec<mnemo::core::DocumentId> {
    RESEARCH
        .iter()
        .map(|(source, text, _)| {
            let kind = if source.starts_with("cargo") { DocumentKind::ToolOutput } else { DocumentKind::Research };
            let stored = memory.store_document(scope, DocumentOwner::Agent, kind, source, text).unwrap();
            assert_eq!(stored.degraded, None);
            stored.document.id
        })
        .collect()
}

/// The cosine of every probe to every stored document with the real model: the diagonal is
/// research done before (must be found), the rest unrelated (must not be). The default
/// `documents.similar_threshold` was chosen between the two from this matrix.
#[test]
fn research_done_before_is_found_and_unrelated_research_is_not_with_the_real_model() {
    let f = configured(Some(model()), |_| {});
    let ids = store_all(&f.memory, &coder("dana"));
    let threshold = f.memory.config().documents.similar_threshold;
    let (mut lowest_same, mut highest_other) = (1.0f32, -1.0f32);
    let mut found = Vec::new();
    for (i, (_, _, probe)) in RESEARCH.iter().enumerate() {
        let hits = f.memory.search_documents(&coder("sam"), probe, Some(RESEARCH.len())).unwrap();
        let row: Vec<String> = ids
            .iter()
            .map(|id| format!("{:.2}", hits.iter().find(|h| h.document.id == *id).map_or(-1.0, |h| h.score)))
            .collect();
        println!("probe {i}: {}", row.join(" "));
        for h in &hits {
            match h.document.id == ids[i] {
                true => lowest_same = lowest_same.min(h.score),
                false => highest_other = highest_other.max(h.score),
            }
        }
        let similar = f.memory.similar_documents(&coder("sam"), "", probe, None, None).unwrap();
        found.push((i, similar.iter().map(|h| h.document.id).collect::<Vec<_>>()));
    }
    println!("lowest same-topic {lowest_same:.3}, highest other-topic {highest_other:.3}, threshold {threshold}");
    for (i, similar) in found {
        assert_eq!(similar, [ids[i]], "probe {i}: {}", RESEARCH[i].2);
    }
    assert!(lowest_same >= threshold && highest_other < threshold);
}

#[test]
fn documents_are_read_back_at_each_level_and_stay_in_their_scope() {
    let f = hashed();
    let (source, text, _) = RESEARCH[0];
    let agent_wide =
        f.memory.store_document(&coder("dana"), DocumentOwner::Agent, DocumentKind::Research, source, text).unwrap();
    let mine = f
        .memory
        .store_document(
            &coder("dana"),
            DocumentOwner::User,
            DocumentKind::Note,
            "",
            "Dana prefers WAL for the CLI store.",
        )
        .unwrap()
        .document;
    let d = f.memory.document(&coder("sam"), agent_wide.document.id).unwrap().unwrap();
    assert_eq!(d.at(Detail::Gist), "Write-ahead logging in SQLite");
    assert_eq!(d.at(Detail::Full), text);
    assert!(d.owner.user.is_none() && d.owner.agent.as_ref().unwrap().as_str() == "coder");
    // A user's own document: not for another user, another agent, another tenant.
    assert!(f.memory.document(&coder("sam"), mine.id).unwrap().is_none());
    assert!(f.memory.document(&coder("dana"), mine.id).unwrap().is_some());
    let other_agent = Scope::parse("acme", Some("writer"), Some("dana"), None).unwrap();
    assert!(f.memory.document(&other_agent, agent_wide.document.id).unwrap().is_none());
    let other_tenant = Scope::parse("globex", Some("coder"), Some("dana"), None).unwrap();
    assert!(f.memory.documents(&other_tenant, 50, 0).unwrap().is_empty());
    assert!(f.memory.search_documents(&other_tenant, "SQLite readers and writers", None).unwrap().is_empty());
    assert_eq!(f.memory.documents(&coder("dana"), 50, 0).unwrap().len(), 2);
    assert_eq!(f.memory.documents(&coder("sam"), 50, 0).unwrap().len(), 1);
    // Deleted by a scope that sees it, once.
    assert!(!f.memory.delete_document(&coder("sam"), mine.id).unwrap());
    assert!(f.memory.delete_document(&coder("dana"), mine.id).unwrap());
    assert!(f.memory.document(&coder("dana"), mine.id).unwrap().is_none());
}

#[test]
fn bad_documents_are_refused_before_anything_is_written() {
    let f = configured(Some(Arc::new(mnemo::models::HashEmbedder::new(384))), |c| c.documents.max_chars = 100);
    let s = coder("dana");
    let refuse = |source: &str, text: &str| {
        let e = f.memory.store_document(&s, DocumentOwner::Agent, DocumentKind::Note, source, text).unwrap_err();
        assert!(matches!(e, mnemo::Error::Invalid(_)), "{e}");
        e.to_string()
    };
    assert!(refuse("", "   ").contains("empty"));
    assert!(refuse("", &"x".repeat(101)).contains("documents.max_chars"));
    assert!(refuse("a\u{7}b", "ok").contains("source"));
    let agent_only = Scope::parse("acme", Some("coder"), None, None).unwrap();
    assert!(f.memory.store_document(&agent_only, DocumentOwner::User, DocumentKind::Note, "", "ok").is_err());
    assert!(f.memory.documents(&s, 50, 0).unwrap().is_empty());
    assert!(f.memory.similar_documents(&s, "", "x", Some(1.5), None).is_err());
}

#[test]
fn pii_in_a_document_never_reaches_the_store() {
    let f = hashed();
    let text = "Deploy notes: the staging password is hunter2-Secret! and the admin is reachable at \
                dana.smith@example.com or +44 20 7946 0958. Card on file 4111 1111 1111 1111.";
    let stored = f
        .memory
        .store_document(&coder("dana"), DocumentOwner::Agent, DocumentKind::Note, "dana.smith@example.com", text)
        .unwrap();
    let back = f.memory.document(&coder("dana"), stored.document.id).unwrap().unwrap();
    for level in [&back.source, &back.gist, &back.overview, &back.text] {
        for secret in ["dana.smith@example.com", "4111 1111 1111 1111", "7946 0958"] {
            assert!(!level.contains(secret), "{secret} in {level}");
        }
    }
    assert!(back.text.contains("[redacted"), "{}", back.text);
}
