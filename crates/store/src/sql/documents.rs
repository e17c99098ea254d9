//! Document statements: by id, a page, a deletion, the vectors of a scope; all behind the
//! visibility predicate of documents (tenant, agent or every agent, user or every user).

/// Columns of a document row, in the order [`decode::document`](crate::rows::decode::document)
/// reads them (a document has no chat: the scope's fourth part is empty). Aliased `m`.
pub(crate) const COLUMNS: &str = "m.id, m.tenant, m.agent, m.user_id, '' AS chat, m.kind, m.source, m.gist, \
     m.overview, m.text, m.tokens, m.created_at";

/// The document `$4` visible to tenant `$1`, agent `$2`, user `$3`.
pub(crate) fn by_id() -> String {
    format!("SELECT {COLUMNS} FROM documents m WHERE {VISIBLE} AND m.id = $4")
}

/// The documents visible to tenant `$1`, agent `$2`, user `$3`, newest first: `$4` of them
/// after skipping `$5`.
pub(crate) fn page() -> String {
    format!(
        "SELECT {COLUMNS} FROM documents m WHERE {VISIBLE} ORDER BY m.created_at DESC, m.id DESC LIMIT $4 OFFSET $5"
    )
}

/// Deletes the document `$4` visible to tenant `$1`, agent `$2`, user `$3`.
pub(crate) const DELETE: &str =
    "DELETE FROM documents WHERE tenant = $1 AND agent IN ('', $2) AND user_id IN ('', $3) AND id = $4";

/// Who may see a document: [`Scope::can_see`](mnemo_core::Scope::can_see) without the chat.
pub(crate) const VISIBLE: &str = "m.tenant = $1 AND m.agent IN ('', $2) AND m.user_id IN ('', $3)";
