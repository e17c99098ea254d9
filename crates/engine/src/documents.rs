//! Research persistence: an agent stores what it found (research, tool output, a file's
//! summary) once, at three levels, and asks before the next search whether it has been
//! researched before.
//!
//! Documents go through the same doors as everything else: text is checked against
//! `[documents]` limits before any work, PII is redacted before levels, vectors or rows are
//! made, and every read is filtered by scope in the store.

use mnemo_core::document::{self, DocumentKind};
use mnemo_core::limits::{check_count, check_query};
use mnemo_core::pii::redact;
use mnemo_core::{CoreError, Document, DocumentId, Scope};
use mnemo_store::Embedding;

use crate::Memory;
use crate::error::Result;

/// Who owns a stored document: the agent (every user of the agent sees it, the default: research
/// is rarely one user's) or the one user who asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocumentOwner {
    /// Every user of the scope's agent (of the tenant when the scope names no agent).
    #[default]
    Agent,
    /// The scope's user only.
    User,
}

/// A stored document and whether it was stored without a vector.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDocument {
    /// The document as stored (redacted, with its levels).
    pub document: Document,
    /// Set when the embedder failed: the document is kept and readable by id, but is not found
    /// by similarity.
    pub degraded: Option<String>,
}

/// A document found by similarity, with its cosine to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentHit {
    /// The document.
    pub document: Document,
    /// Cosine similarity to the query, in -1..=1.
    pub score: f32,
}

impl Memory {
    /// Stores a document owned by the scope's agent or user: refuses an empty or oversized
    /// text before anything is written, redacts PII, computes L0 and L1, embeds the overview.
    pub fn store_document(
        &self,
        scope: &Scope,
        owner: DocumentOwner,
        kind: DocumentKind,
        source: &str,
        text: &str,
    ) -> Result<StoredDocument> {
        let _span = tracing::debug_span!("store_document", tenant = scope.tenant.as_str()).entered();
        let t = &self.tuning.documents;
        // Limits first, on the text as sent: a refused call costs no redaction or model time.
        document::check(source, text, t)?;
        let owner = match owner {
            DocumentOwner::Agent => Scope { user: None, chat: None, ..scope.clone() },
            DocumentOwner::User => {
                scope.require_user()?;
                Scope { chat: None, ..scope.clone() }
            }
        };
        let (source, text) = (redact(source), redact(text));
        let doc = crate::redact::document(Document::new(owner, kind, &source, &text, self.clock.now(), t)?);
        let (embedding, degraded) = match self.embed(&[&doc.embedding_text()]) {
            Ok(mut v) if !v.is_empty() => (Some(Embedding { model: self.model_id(), vector: v.remove(0) }), None),
            Ok(_) => (None, Some("the embedder returned no vector".to_string())),
            Err(e) => (None, Some(format!("embedding failed, stored without a vector: {e}"))),
        };
        self.store.put_document(&doc, embedding.as_ref())?;
        Ok(StoredDocument { document: doc, degraded })
    }

    /// One document the scope can see.
    pub fn document(&self, scope: &Scope, id: DocumentId) -> Result<Option<Document>> {
        Ok(self.store.document(scope, id)?)
    }

    /// Documents the scope can see, newest first (`limit` 1 to 500).
    pub fn documents(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Document>> {
        check_count("limit", limit, 1, 500, "the largest page of a listing")?;
        check_count("offset", offset, 0, self.tuning.limits.max_offset, "limits.max_offset")?;
        Ok(self.store.documents(scope, limit, offset)?)
    }

    /// Deletes a document the scope can see; false when there is none.
    pub fn delete_document(&self, scope: &Scope, id: DocumentId) -> Result<bool> {
        Ok(self.store.delete_document(scope, id)?)
    }

    /// The documents nearest a query, best first, whatever their score.
    pub fn search_documents(&self, scope: &Scope, query: &str, top_k: Option<usize>) -> Result<Vec<DocumentHit>> {
        let _span = tracing::debug_span!("search_documents", tenant = scope.tenant.as_str()).entered();
        check_query("query", query, &self.tuning.limits)?;
        self.nearest(scope, &redact(query), top_k)
    }

    /// "Has this been researched before?": prior documents whose similarity to `text` (a
    /// question, a topic, or a would-be document with its `source`) is at least `threshold`
    /// (`documents.similar_threshold` when absent), best first. A long text is compared by its
    /// overview, the same part of it a stored document's vector was made from.
    pub fn similar_documents(
        &self,
        scope: &Scope,
        source: &str,
        text: &str,
        threshold: Option<f32>,
        top_k: Option<usize>,
    ) -> Result<Vec<DocumentHit>> {
        let _span = tracing::debug_span!("similar_documents", tenant = scope.tenant.as_str()).entered();
        let t = &self.tuning.documents;
        document::check(source, text, t)?;
        let threshold = threshold.unwrap_or(t.similar_threshold);
        if !(-1.0..=1.0).contains(&threshold) {
            return Err(
                CoreError::OutOfRange { field: "threshold", reason: format!("{threshold} is outside -1..=1") }.into()
            );
        }
        let (source, text) = (redact(source), redact(text));
        let (_, overview) = document::levels(&source, &text, t.overview_tokens);
        let probe = match source.trim().is_empty() {
            true => overview,
            false => format!("{}\n{overview}", source.trim()),
        };
        let mut hits = self.nearest(scope, &probe, top_k)?;
        hits.retain(|h| h.score >= threshold);
        Ok(hits)
    }

    fn nearest(&self, scope: &Scope, text: &str, top_k: Option<usize>) -> Result<Vec<DocumentHit>> {
        let k = top_k.unwrap_or(self.tuning.ranking.default_top_k);
        check_count("top_k", k, 1, self.tuning.limits.max_top_k, "limits.max_top_k")?;
        let vector =
            self.embed_query_texts(&[text]).map_err(|e| crate::Error::Model(mnemo_models::ModelError::Inference(e)))?;
        let query = Embedding { model: self.model_id(), vector: vector.into_iter().next().unwrap_or_default() };
        let found = self.store.nearest_documents(scope, &query, k)?;
        Ok(found.into_iter().map(|(document, score)| DocumentHit { document, score }).collect())
    }

    /// The id vectors are stored under: the embedder's.
    pub(crate) fn model_id(&self) -> String {
        self.embedder_id().unwrap_or_default().to_string()
    }
}
