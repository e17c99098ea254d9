//! Documents an agent keeps (research results, tool outputs, file summaries), each with one
//! vector, found again by similarity within scope.

use mnemo_core::{Document, DocumentId, Scope};

use crate::error::Result;
use crate::memories::Embedding;

/// Stored documents: kept apart from memories because they are whole texts at three levels,
/// never extracted, gated or decayed, and found by what they are about rather than by who said
/// what.
pub trait Documents {
    /// Stores a new document with its vector (none when the embedder was unavailable: the
    /// document is then listed and read by id, but not found by similarity).
    fn put_document(&self, doc: &Document, embedding: Option<&Embedding>) -> Result<()>;

    /// The document with this id, when the scope can see it (its tenant, its agent or every
    /// agent, its user or every user).
    fn document(&self, scope: &Scope, id: DocumentId) -> Result<Option<Document>>;

    /// Documents the scope can see, newest first.
    fn documents(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Document>>;

    /// Deletes a document the scope can see; false when there is none.
    fn delete_document(&self, scope: &Scope, id: DocumentId) -> Result<bool>;

    /// The `k` documents the scope can see whose vectors (of the query's model and dimension)
    /// are nearest the query's, with their cosine, best first.
    fn nearest_documents(&self, scope: &Scope, query: &Embedding, k: usize) -> Result<Vec<(Document, f32)>>;
}

/// The `k` best of `candidates` by dot product with the unit `query` (the cosine: vectors are
/// stored unit length), best first, ties by id; for backends that score vectors themselves.
pub(crate) fn nearest(
    candidates: impl Iterator<Item = (String, Vec<f32>)>,
    query: &[f32],
    k: usize,
) -> Vec<(String, f32)> {
    let mut scored: Vec<(String, f32)> =
        candidates.map(|(id, v)| (id, v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>())).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}
