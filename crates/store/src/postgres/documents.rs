//! Documents on PostgreSQL: rows with a pgvector column under the tenant's row-level security;
//! similarity is an exact scan of the scope's vectors of the query's model, ordered by pgvector.

use mnemo_core::{Document, DocumentId, Scope};

use super::PostgresStore;
use super::apply::insert;
use super::pool::Tx;
use super::rows::vector_text;
use crate::documents::Documents;
use crate::error::Result;
use crate::memories::Embedding;
use crate::rows::{Row, decode, encode};
use crate::sql::documents as sql;

/// The `$7` documents visible to tenant `$1`, agent `$2`, user `$3` nearest vector `$4` of
/// model `$5` and dimension `$6`, with their cosine. The nearest ids are found first over the
/// narrow (id, vector) pairs, and only they are joined back to their wide rows: a sort carrying
/// every row's text is most of the time of a scan of 10,000 documents.
fn nearest() -> String {
    format!(
        "SELECT {}, n.score FROM (SELECT m.id, (1 - (m.embedding <=> $4::text::vector))::real AS score \
         FROM documents m WHERE {} AND m.model = $5 AND vector_dims(m.embedding) = $6 \
         ORDER BY m.embedding <=> $4::text::vector, m.id LIMIT $7) n JOIN documents m ON m.id = n.id \
         ORDER BY n.score DESC, m.id",
        sql::COLUMNS,
        sql::VISIBLE
    )
}

/// Writes one document row with its vector: a live write, or a copy's import.
pub(super) fn write(tx: &mut Tx<'_>, doc: &Document, embedding: Option<&Embedding>) -> Result<()> {
    insert(tx, &encode::document(doc))?;
    if let Some(e) = embedding {
        tx.execute(
            "UPDATE documents SET model = $2, embedding = $3::text::vector WHERE id = $1",
            &[&doc.id.to_string(), &e.model, &vector_text(&e.vector)],
        )?;
    }
    Ok(())
}

impl Documents for PostgresStore {
    fn put_document(&self, doc: &Document, embedding: Option<&Embedding>) -> Result<()> {
        self.write("put document", doc.owner.tenant.as_str(), |tx| write(tx, doc, embedding))
    }

    fn document(&self, scope: &Scope, id: DocumentId) -> Result<Option<Document>> {
        let [t, a, u, _] = scope.key_parts();
        self.read("document", t, |tx| {
            tx.query_opt(&sql::by_id(), &[&t, &a, &u, &id.to_string()])?.map(|r| decode::document(&r)).transpose()
        })
    }

    fn documents(&self, scope: &Scope, limit: usize, offset: usize) -> Result<Vec<Document>> {
        let [t, a, u, _] = scope.key_parts();
        self.read("documents", t, |tx| {
            tx.query(&sql::page(), &[&t, &a, &u, &(limit as i64), &(offset as i64)])?
                .iter()
                .map(decode::document)
                .collect()
        })
    }

    fn delete_document(&self, scope: &Scope, id: DocumentId) -> Result<bool> {
        let [t, a, u, _] = scope.key_parts();
        self.write("delete document", t, |tx| Ok(tx.execute(sql::DELETE, &[&t, &a, &u, &id.to_string()])? > 0))
    }

    fn nearest_documents(&self, scope: &Scope, q: &Embedding, k: usize) -> Result<Vec<(Document, f32)>> {
        let [t, a, u, _] = scope.key_parts();
        let (v, dim, k) = (vector_text(&q.vector), q.vector.len() as i32, k as i64);
        self.read("nearest documents", t, |tx| {
            tx.query(&nearest(), &[&t, &a, &u, &v, &q.model, &dim, &k])?
                .iter()
                .map(|r| Ok((decode::document(r)?, r.real(12)?)))
                .collect()
        })
    }
}
