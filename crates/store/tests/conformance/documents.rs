//! [`Documents`](mnemo_store::Documents): rows at three levels, visible by tenant, agent and
//! user, found by vector similarity within scope.

use mnemo_core::document::DocumentsTuning;
use mnemo_core::{Document, DocumentId, DocumentKind, Scope};
use mnemo_store::{Embedding, Store};

use super::{axis, t0};

/// A document stored `n` seconds after [`t0`], so listings have an order to check.
fn doc_at(n: i64, owner: &Scope, source: &str, text: &str) -> Document {
    let at = t0() + chrono::Duration::seconds(n);
    Document::new(owner.clone(), DocumentKind::Research, source, text, at, &DocumentsTuning::default()).unwrap()
}

fn doc(owner: &Scope, source: &str, text: &str) -> Document {
    doc_at(0, owner, source, text)
}

fn embedding(i: usize, j: usize, mix: f32) -> Embedding {
    Embedding { model: "test:8".into(), vector: axis(i, j, mix) }
}

pub(crate) fn documents_round_trip_and_are_scoped(store: &dyn Store) {
    let agent = Scope::parse("acme", Some("coder"), None, None).unwrap();
    let dana = Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap();
    let shared = doc(&agent, "https://sqlite.org/wal.html", "# WAL\n\nReaders do not block writers.");
    let private = doc_at(1, &dana, "notes.md", "Dana's own notes on WAL checkpoints.");
    store.put_document(&shared, Some(&embedding(0, 1, 0.1))).unwrap();
    store.put_document(&private, Some(&embedding(0, 2, 0.3))).unwrap();
    let unembedded = doc_at(2, &agent, "", "A note stored while the embedder was down.");
    store.put_document(&unembedded, None).unwrap();

    // Read back whole, by every scope that can see it.
    assert_eq!(store.document(&dana, shared.id).unwrap().as_ref(), Some(&shared));
    assert_eq!(store.document(&agent, shared.id).unwrap().as_ref(), Some(&shared));
    assert_eq!(store.document(&dana, private.id).unwrap().as_ref(), Some(&private));
    // Not by another user, another agent, another tenant, or an unknown id.
    let sam = Scope::parse("acme", Some("coder"), Some("sam"), None).unwrap();
    for other in [&sam, &agent] {
        assert_eq!(store.document(other, private.id).unwrap(), None);
    }
    for other in ["other-agent", "coder"].map(|a| Scope::parse("acme", Some(a), None, None).unwrap()) {
        let seen = store.documents(&other, 10, 0).unwrap().len();
        assert_eq!(seen, if other.agent == agent.agent { 2 } else { 0 });
    }
    let foreign = Scope::parse("globex", Some("coder"), Some("dana"), None).unwrap();
    assert_eq!(store.document(&foreign, shared.id).unwrap(), None);
    assert!(store.documents(&foreign, 10, 0).unwrap().is_empty());
    assert_eq!(store.document(&dana, DocumentId::new()).unwrap(), None);

    // Newest first, paged.
    let ids: Vec<DocumentId> = store.documents(&dana, 10, 0).unwrap().iter().map(|d| d.id).collect();
    assert_eq!(ids, [unembedded.id, private.id, shared.id]);
    assert_eq!(store.documents(&dana, 1, 1).unwrap()[0].id, private.id);

    // Nearest by cosine, within scope and model; the unembedded one is never found.
    let near = store.nearest_documents(&dana, &embedding(0, 1, 0.1), 5).unwrap();
    assert_eq!(near.iter().map(|(d, _)| d.id).collect::<Vec<_>>(), [shared.id, private.id]);
    assert!((near[0].1 - 1.0).abs() < 1e-4 && near[1].1 < near[0].1, "{near:?}");
    assert_eq!(store.nearest_documents(&sam, &embedding(0, 1, 0.1), 5).unwrap().len(), 1);
    assert!(store.nearest_documents(&foreign, &embedding(0, 1, 0.1), 5).unwrap().is_empty());
    let other_model = Embedding { model: "other:8".into(), vector: axis(0, 1, 0.1) };
    assert!(store.nearest_documents(&dana, &other_model, 5).unwrap().is_empty());
    assert_eq!(store.nearest_documents(&dana, &embedding(0, 1, 0.1), 1).unwrap().len(), 1);

    // Deleted only by a scope that sees it.
    assert!(!store.delete_document(&foreign, shared.id).unwrap());
    assert!(!store.delete_document(&sam, private.id).unwrap());
    assert!(store.delete_document(&dana, private.id).unwrap());
    assert!(!store.delete_document(&dana, private.id).unwrap());
    assert_eq!(store.document(&dana, private.id).unwrap(), None);
    assert_eq!(store.documents(&dana, 10, 0).unwrap().len(), 2);
}

pub(crate) fn erasure_deletes_the_users_documents_only(store: &dyn Store) {
    let agent = Scope::parse("acme", Some("coder"), None, None).unwrap();
    let dana = Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap();
    let shared = doc(&agent, "", "Shared research on connection pooling.");
    let private = doc(&dana, "", "Dana's research on connection pooling.");
    store.put_document(&shared, Some(&embedding(1, 2, 0.1))).unwrap();
    store.put_document(&private, Some(&embedding(1, 2, 0.2))).unwrap();
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let counts = store.erase_user(&dana.tenant, dana.user.as_ref().unwrap(), &event).unwrap();
    assert_eq!(counts.get("documents"), Some(&1));
    assert_eq!(store.documents(&dana, 10, 0).unwrap().iter().map(|d| d.id).collect::<Vec<_>>(), [shared.id]);
}
