//! `/v1/memories`: list, show, add through the gate, pin, unpin, delete (archive).
//!
//! A memory id that the caller's scope cannot see answers 404 whether or not it exists in another
//! tenant or for another user: existence is never revealed.

use axum::extract::State;
use axum::http::StatusCode;
use mnemo::core::{Draft, Kind, MemoryId, StatusKind, Surface};
use mnemo::store::ListFilter;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{
    AddMemoryOut, AddMemoryRequest, EditMemoryRequest, ListQuery, MemoryDetailOut, MemoryList, MemoryOut, ScopeQuery,
    VerdictOut,
};
use crate::error::{ApiError, ErrorBody, Json, Path, Query};

/// Default and largest page sizes of a listing.
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 500;

/// Where a page stops growing, in bytes of its items as JSON (it always carries at least one):
/// 500 memories each with the 16 KiB of key-value data they may carry would be 8 MB in one
/// answer, held in memory while it is written, for every listing at once. The rest comes with
/// `next_offset`, as when the page is full by count.
const PAGE_BYTES: usize = 1 << 20;

fn comma_list<T: std::str::FromStr<Err = mnemo::core::CoreError>>(s: Option<&str>) -> Result<Vec<T>, ApiError> {
    s.into_iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<T>().map_err(ApiError::from))
        .collect()
}

fn memory_id(id: &str) -> Result<MemoryId, ApiError> {
    Ok(id.parse::<MemoryId>()?)
}

/// Memories visible to the scope, newest first, filtered and paged.
#[utoipa::path(
    get, path = "/v1/memories", tag = "memories",
    params(ListQuery),
    responses(
        (status = 200, description = "A page of memories", body = MemoryList),
        (status = 400, description = "Bad filter or id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<ListQuery>,
) -> Result<Json<MemoryList>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let filter = list_filter(&state.memory, q.kind.as_deref(), q.status.as_deref(), q.text, q.limit, q.offset)?;
    Ok(Json(crate::blocking(&state, move |memory| list_page(memory, &scope, &filter)).await?))
}

/// The filter of a listing, its paging range-checked: `limit` within 1..=500, `offset` within
/// `limits.max_offset` (so that `offset + limit` can neither overflow nor reach SQL as a
/// negative number). Shared by `GET /v1/memories` and MCP's `list_memories`.
pub(crate) fn list_filter(
    memory: &mnemo::Memory,
    kind: Option<&str>,
    status: Option<&str>,
    text: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
) -> Result<ListFilter, ApiError> {
    let limit = page_limit(limit)?;
    let offset = offset.unwrap_or(0);
    let max_offset = memory.config().limits.max_offset;
    mnemo::core::limits::check_count("offset", offset, 0, max_offset, "limits.max_offset")?;
    Ok(ListFilter {
        kinds: comma_list::<Kind>(kind)?,
        statuses: comma_list::<StatusKind>(status)?,
        text: text.filter(|t| !t.is_empty()),
        limit,
        offset,
    })
}

/// A listing's page size: 50 when absent, refused outside 1..=500 (every listing of rows shares
/// these bounds, so one request never reads an unbounded table).
pub(crate) fn page_limit(limit: Option<usize>) -> Result<usize, ApiError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::Invalid(format!("invalid limit: {limit} is outside 1..={MAX_LIMIT}")));
    }
    Ok(limit)
}

/// One page of a listing, with the offset of the next one when this page is full: by count
/// (`limit`) or by size ([`PAGE_BYTES`]).
pub(crate) fn list_page(
    memory: &mnemo::Memory,
    scope: &mnemo::Scope,
    filter: &ListFilter,
) -> Result<MemoryList, ApiError> {
    let rows = memory.list(scope, filter)?;
    let (limit, offset) = (filter.limit, filter.offset);
    let mut items = Vec::with_capacity(rows.len());
    let mut bytes = 0;
    for row in &rows {
        let item = MemoryOut::from(row);
        bytes += serde_json::to_vec(&item).map_or(0, |j| j.len());
        if bytes > PAGE_BYTES && !items.is_empty() {
            break;
        }
        items.push(item);
    }
    let full = rows.len() == limit || items.len() < rows.len();
    let next_offset = full.then_some(offset + items.len());
    Ok(MemoryList { items, limit, offset, next_offset })
}

/// One memory with its history, links, source messages and score parts.
#[utoipa::path(
    get, path = "/v1/memories/{id}", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 200, description = "The memory in detail", body = MemoryDetailOut),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoryDetailOut>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let id = memory_id(&id)?;
    let detail = crate::blocking(&state, move |memory| Ok(memory.show(&scope, id)?)).await?;
    Ok(Json(MemoryDetailOut::from(&detail)))
}

/// Adds a memory a person wrote, judged by the same gate as extraction.
#[utoipa::path(
    post, path = "/v1/memories", tag = "memories",
    request_body = AddMemoryRequest,
    responses(
        (status = 200, description = "The gate's verdict and the memory it concerns", body = AddMemoryOut),
        (status = 400, description = "Bad kind, surface or id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn add(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<AddMemoryRequest>,
) -> Result<Json<AddMemoryOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), req.chat_id.as_deref())?;
    let kind: Kind = req.kind.parse()?;
    if kind == Kind::Policy {
        return Err(ApiError::Invalid("policies are authored through /v1/policies, not as memories".into()));
    }
    let mut draft = Draft::authored(kind, req.content);
    draft.confidence = req.confidence.unwrap_or(draft.confidence);
    draft.salience = req.salience.unwrap_or(draft.salience);
    draft.key = req.key;
    draft.value = req.value;
    draft.surface = req.surface.as_deref().map(str::parse::<Surface>).transpose()?;
    draft.due_at = req.due_at;
    draft.expires_at = req.expires_at;
    let pin = req.pinned.unwrap_or(false);
    let (verdict, row) = crate::blocking(&state, move |memory| {
        let verdict = memory.add(&scope, draft)?;
        let row = match verdict.memory() {
            Some(id) => {
                if pin {
                    memory.pin(&scope, id, true)?;
                }
                Some(memory.show(&scope, id)?.memory)
            }
            None => None,
        };
        Ok((verdict, row))
    })
    .await?;
    Ok(Json(AddMemoryOut { verdict: VerdictOut::from(&verdict), memory: row.as_ref().map(MemoryOut::from) }))
}

async fn set_pinned(
    state: AppState,
    tenant: &mnemo::core::TenantId,
    id: &str,
    q: &ScopeQuery,
    pinned: bool,
) -> Result<Json<MemoryOut>, ApiError> {
    let scope = super::scope(tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let id = memory_id(id)?;
    let row = crate::blocking(&state, move |memory| {
        memory.pin(&scope, id, pinned)?;
        Ok(memory.show(&scope, id)?.memory)
    })
    .await?;
    Ok(Json(MemoryOut::from(&row)))
}

/// Pins a memory: always in the block, exempt from lifecycle.
#[utoipa::path(
    post, path = "/v1/memories/{id}/pin", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 200, description = "The memory, pinned", body = MemoryOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn pin(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoryOut>, ApiError> {
    set_pinned(state, &tenant, &id, &q, true).await
}

/// Unpins a memory.
#[utoipa::path(
    post, path = "/v1/memories/{id}/unpin", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 200, description = "The memory, unpinned", body = MemoryOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn unpin(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<Json<MemoryOut>, ApiError> {
    set_pinned(state, &tenant, &id, &q, false).await
}

/// Deletes a memory at the user's request: it is archived (kept for audit, never recalled).
/// Erasure of content is a separate operation.
#[utoipa::path(
    delete, path = "/v1/memories/{id}", tag = "memories",
    params(("id" = String, Path, description = "Memory id"), ScopeQuery),
    responses(
        (status = 204, description = "Archived (or already was)"),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn delete(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> Result<StatusCode, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), q.user_id.as_deref(), q.chat_id.as_deref())?;
    let id = memory_id(&id)?;
    crate::blocking(&state, move |memory| Ok(memory.forget(&scope, id)?)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Replaces a memory's content, through the same gate as extraction: the edited version
/// supersedes the old one (history and a link keep what it said). Memos are edited under
/// `/v1/memos`.
#[utoipa::path(
    patch, path = "/v1/memories/{id}", tag = "memories",
    params(("id" = String, Path, description = "Memory id")),
    request_body = EditMemoryRequest,
    responses(
        (status = 200, description = "The gate's verdict and the new version", body = AddMemoryOut),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 404, description = "Not visible to this scope", body = ErrorBody),
        (status = 422, description = "Not editable (inactive, or a memo)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn edit(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    Json(req): Json<EditMemoryRequest>,
) -> Result<Json<AddMemoryOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), req.user_id.as_deref(), req.chat_id.as_deref())?;
    let id = memory_id(&id)?;
    let (verdict, row) = crate::blocking(&state, move |memory| {
        let verdict = memory.edit(&scope, id, &req.content)?;
        let row = match verdict.memory() {
            Some(new) => Some(memory.show(&scope, new)?.memory),
            None => None,
        };
        Ok((verdict, row))
    })
    .await?;
    Ok(Json(AddMemoryOut { verdict: VerdictOut::from(&verdict), memory: row.as_ref().map(MemoryOut::from) }))
}
