//! `/v1/documents`: research persistence. Store a result once (`POST`), ask before the next
//! search whether it was researched before (`/similar`), search, read at a level, list, delete.

use axum::extract::State;
use axum::http::StatusCode;
use mnemo::core::DocumentId;
use mnemo::core::detail::Detail;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::documents::{
    DocumentHitOut, DocumentHits, DocumentList, DocumentOut, DocumentQuery, SearchDocumentsRequest,
    SimilarDocumentsRequest, StoreDocumentRequest, StoredDocumentOut,
};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// The level a request names (`L0`, `l1`, ...), else `default`.
fn level(raw: Option<&str>, default: Detail) -> Result<Detail, ApiError> {
    raw.map_or(Ok(default), |l| l.parse().map_err(|_| ApiError::Invalid(format!("level {l:?} is not L0, L1 or L2"))))
}

fn document_id(raw: &str) -> Result<DocumentId, ApiError> {
    Ok(raw.parse()?)
}

fn not_found(id: DocumentId) -> ApiError {
    ApiError::NotFound(format!("document {id} not found"))
}

/// Stores a research result, tool output or file summary at three levels: L0 a gist line, L1
/// an overview (a code outline for source files), L2 the text. Agent-wide unless `owner` is
/// `user`. PII is redacted; an empty or oversized text is refused and nothing is written.
#[utoipa::path(
    post, path = "/v1/documents", tag = "documents",
    request_body = StoreDocumentRequest,
    responses(
        (status = 201, description = "Stored, with its overview", body = StoredDocumentOut),
        (status = 400, description = "Empty or oversized text, bad source or ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 413, description = "Body larger than the server accepts", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape (unknown kind or field)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn store(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<StoreDocumentRequest>,
) -> Result<(StatusCode, Json<StoredDocumentOut>), ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), None)?;
    let stored = crate::heavy(&state, &tenant, move |memory| {
        let source = req.source.as_deref().unwrap_or_default();
        Ok(memory.store_document(&scope, req.owner.into(), req.kind.into(), source, &req.text)?)
    })
    .await?;
    let document = DocumentOut::at(&stored.document, Detail::Focus);
    Ok((StatusCode::CREATED, Json(StoredDocumentOut { document, degraded: stored.degraded })))
}

/// The documents the caller can see, newest first, each as its gist.
#[utoipa::path(
    get, path = "/v1/documents", tag = "documents",
    params(DocumentQuery),
    responses(
        (status = 200, description = "A page of documents", body = DocumentList),
        (status = 400, description = "Bad ids or page", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<DocumentQuery>,
) -> Result<Json<DocumentList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), None)?;
    let (limit, offset) = (q.limit.unwrap_or(50), q.offset.unwrap_or(0));
    let docs = crate::blocking(&state, move |memory| Ok(memory.documents(&scope, limit, offset)?)).await?;
    Ok(Json(DocumentList { items: docs.iter().map(|d| DocumentOut::at(d, Detail::Gist)).collect() }))
}

/// One document at a level: `L0` its gist, `L1` its overview, `L2` (default) its full text.
#[utoipa::path(
    get, path = "/v1/documents/{id}", tag = "documents",
    params(("id" = String, Path, description = "Document id"), DocumentQuery),
    responses(
        (status = 200, description = "The document at the level asked", body = DocumentOut),
        (status = 400, description = "Bad id, ids or level", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<DocumentQuery>,
) -> Result<Json<DocumentOut>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), None)?;
    let (id, level) = (document_id(&id)?, level(q.level.as_deref(), Detail::Full)?);
    let doc = crate::blocking(&state, move |memory| Ok(memory.document(&scope, id)?)).await?;
    Ok(Json(DocumentOut::at(&doc.ok_or_else(|| not_found(id))?, level)))
}

/// Deletes a document the caller can see.
#[utoipa::path(
    delete, path = "/v1/documents/{id}", tag = "documents",
    params(("id" = String, Path, description = "Document id"), DocumentQuery),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Bad id or ids", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn delete(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<DocumentQuery>,
) -> Result<StatusCode, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), None)?;
    let id = document_id(&id)?;
    let deleted = crate::blocking(&state, move |memory| Ok(memory.delete_document(&scope, id)?)).await?;
    if deleted { Ok(StatusCode::NO_CONTENT) } else { Err(not_found(id)) }
}

/// The documents nearest a query by meaning, best first, whatever their similarity.
#[utoipa::path(
    post, path = "/v1/documents/search", tag = "documents",
    request_body = SearchDocumentsRequest,
    responses(
        (status = 200, description = "Nearest documents with their similarity", body = DocumentHits),
        (status = 400, description = "Bad query, ids, level or top_k", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 503, description = "The embedding model is unavailable", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn search(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<SearchDocumentsRequest>,
) -> Result<Json<DocumentHits>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), None)?;
    let level = level(req.level.as_deref(), Detail::Focus)?;
    let hits =
        crate::blocking(&state, move |memory| Ok(memory.search_documents(&scope, &req.query, req.top_k)?)).await?;
    Ok(Json(DocumentHits { items: hits.iter().map(|h| DocumentHitOut::at(h, level)).collect(), threshold: None }))
}

/// "Has this been researched before?": prior documents at least `threshold` similar to a
/// question or a would-be result, best first; empty when nothing was.
#[utoipa::path(
    post, path = "/v1/documents/similar", tag = "documents",
    request_body = SimilarDocumentsRequest,
    responses(
        (status = 200, description = "Prior documents above the threshold", body = DocumentHits),
        (status = 400, description = "Empty or oversized text, bad threshold, ids, level or top_k", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 503, description = "The embedding model is unavailable", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn similar(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<SimilarDocumentsRequest>,
) -> Result<Json<DocumentHits>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), None)?;
    let level = level(req.level.as_deref(), Detail::Focus)?;
    let (hits, threshold) = crate::blocking(&state, move |memory| {
        let source = req.source.as_deref().unwrap_or_default();
        let hits = memory.similar_documents(&scope, source, &req.text, req.threshold, req.top_k)?;
        Ok((hits, req.threshold.unwrap_or(memory.config().documents.similar_threshold)))
    })
    .await?;
    let items = hits.iter().map(|h| DocumentHitOut::at(h, level)).collect();
    Ok(Json(DocumentHits { items, threshold: Some(threshold) }))
}
