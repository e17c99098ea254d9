//! Documents on SQLite: rows and their vectors in one table, similarity scored exactly over
//! the scope's vectors (a scope holds thousands of documents, not millions).

use mnemo_core::{Document, DocumentId, Scope};
use rusqlite::params;

use super::SqliteStore;
use super::rows::{execute, insert, query, query_opt, vector_blob};
use crate::documents::{Documents, nearest};
use crate::error::Result;
use crate::memories::Embedding;
use crate::rows::{Row, decode, encode};
use crate::sql::documents as sql;

/// Ids and vectors of model `$4` and dimension `$5` visible to tenant `$1`, agent `$2`, user `$3`.
fn vectors() -> String {
    format!(
        "SELECT m.document_id, m.vector FROM document_vectors m WHERE {} AND m.model = $4 AND m.dim = $5",
        sql::VISIBLE
    )
}

/// Writes one document row with its vector: a live write, or a copy's import.
pub(super) fn write(tx: &rusqlite::Transaction<'_>, doc: &Document, embedding: Option<&Embedding>) -> Result<()> {
    insert(tx, "put document", &encode::document(doc))?;
    if let Some(e) = embedding {
        let [t, a, u, _] = doc.owner.key_parts();
        let args = params![doc.id.to_string(), t, a, u, e.model, e.vector.len() as i64, vector_blob(&e.vector)];
        let sql = "INSERT INTO document_vectors (document_id, tenant, agent, user_id, model, dim, vector) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7)";
        execute(tx, "put document", sql, args)?;
    }
    Ok(())
}

impl Documents for SqliteStore {
    fn put_document(&self, doc: &Document, embedding: Option<&Embedding>) -> Result<()> {
        self.write("put document", |tx| write(tx, doc, embedding))
    }

    fn document(&self, scope: &Scope, id: DocumentId) -> Result<Option<Document>> {
        let [t, a, u, _] = scope.key_parts();
        let args = params![t, a, u, id.to_string()];
        self.read(|c| query_opt(c, "document", &sql::by_id(), args, |r| decode::document(r)))
    }

    fn documents(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Document>> {
        let [t, a, u, _] = scope.key_parts();
        let args = params![t, a, u, limit as i64, offset as i64];
        self.read(|c| query(c, "documents", &sql::page(), args, |r| decode::document(r)))
    }

    fn delete_document(&self, scope: &Scope, id: DocumentId) -> Result<bool> {
        let [t, a, u, _] = scope.key_parts();
        self.write("delete document", |tx| {
            Ok(execute(tx, "delete document", sql::DELETE, params![t, a, u, id.to_string()])? > 0)
        })
    }

    fn nearest_documents(&self, scope: &Scope, q: &Embedding, k: usize) -> Result<Vec<(Document, f32)>> {
        let [t, a, u, _] = scope.key_parts();
        self.read(|c| {
            let args = params![t, a, u, q.model, q.vector.len() as i64];
            let rows = query(c, "nearest documents", &vectors(), args, |r| {
                Ok((r.text(0)?, r.vector(1)?.unwrap_or_default()))
            })?;
            let mut out = Vec::new();
            for (id, score) in nearest(rows.into_iter(), &q.vector, k) {
                let args = params![t, a, u, id];
                if let Some(d) = query_opt(c, "nearest documents", &sql::by_id(), args, |r| decode::document(r))? {
                    out.push((d, score));
                }
            }
            Ok(out)
        })
    }
}
