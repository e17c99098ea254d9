//! mem0's hosted-platform routes, mounted under `/mem0`: what `MemoryClient` and
//! `AsyncMemoryClient` (Python `mem0ai` 2.x, and the 1.x routes it replaced) and the TypeScript
//! `MemoryClient` call. Every path ends in `/`, served as is (the Python client follows no
//! redirect). What the platform offers beyond memory (exports, webhooks, projects, profiles)
//! answers 501.

use axum::Router;
use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post, put};
use mnemo::core::limits::check_count;
use mnemo::core::{MemoryId, Metadata, Scope};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Body, Caller, Detail, Entity, Filter, Ids, MAX_PAGE_SIZE, Params, Segment, Shape, memory_id, run, run_heavy,
};
use crate::AppState;
use crate::error::ApiError;

/// The routes, relative to `/mem0`.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/ping/", get(ping))
        .route("/v3/memories/add/", post(add))
        .route("/v1/memories/", post(add).delete(delete_all))
        .route("/v3/memories/", post(get_all))
        .route("/v2/memories/", post(get_all))
        .route("/v3/memories/search/", post(search))
        .route("/v2/memories/search/", post(search))
        .route("/v1/memories/{id}/", get(get_one).put(update).delete(delete_one))
        .route("/v1/memories/{id}/history/", get(history))
        .route("/v1/entities/", get(entities))
        .route("/v2/entities/{kind}/{name}/", axum::routing::delete(delete_entity))
        .route("/v1/batch/", put(batch_update).delete(batch_delete))
        .route("/v1/feedback/", post(feedback))
        .route("/v1/event/{id}/", get(event))
        .fallback(platform_only)
}

/// A memory as the platform returns it; `score` for search results.
fn item(row: &mnemo::core::Memory, score: Option<f32>) -> Value {
    Shape::Platform.memory(row, score)
}

/// The constructor's key check: the SDK refuses to start without a non-empty org and project.
/// Both are the key's tenant, the one partition a key sees.
async fn ping(State(state): State<AppState>, Caller(tenant): Caller) -> Result<axum::Json<Value>, Detail> {
    let _ = state;
    Ok(axum::Json(json!({
        "status": "ok",
        "org_id": tenant.as_str(),
        "project_id": tenant.as_str(),
        "user_email": null,
    })))
}

#[derive(Debug, Deserialize)]
struct AddRequest {
    messages: Value,
    #[serde(flatten)]
    ids: Ids,
    #[serde(default)]
    filters: Value,
    #[serde(default)]
    infer: Option<bool>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

/// `add`: entity ids at the top level or as plain equalities in `filters`; answered
/// synchronously with what was written.
async fn add(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<AddRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let ids = req.ids.or_from(&Filter::parse(&req.filters).map_err(ApiError::from)?);
    let messages = super::messages(req.messages)?;
    let infer = req.infer.unwrap_or(true);
    let metadata = req.metadata;
    let caller = tenant.clone();
    let added =
        run_heavy(&state, &caller, move |m| super::add(m, &tenant, &ids, messages, infer, metadata.as_ref())).await?;
    let results: Vec<Value> = added
        .written
        .iter()
        .map(|w| json!({"id": w.id.to_string(), "event": w.event, "memory": w.memory, "data": {"memory": w.memory}}))
        .collect();
    let mut out = json!({ "results": results });
    if let Some(turn) = added.turn_id {
        out["event_id"] = Value::String(turn);
    }
    Ok(axum::Json(out))
}

#[derive(Debug, Deserialize)]
struct ListRequest {
    #[serde(default)]
    filters: Value,
    #[serde(flatten)]
    ids: Ids,
}

#[derive(Debug, Deserialize)]
struct Page {
    #[serde(default)]
    page: Option<usize>,
    #[serde(default)]
    page_size: Option<usize>,
}

/// Page size when none is asked for.
const DEFAULT_PAGE_SIZE: usize = 100;

/// `get_all`: the memories `filters` matches, newest first, in the paginated envelope.
async fn get_all(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    Params(page): Params<Page>,
    Body(req): Body<ListRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let filter = req.ids.narrow(Filter::parse(&req.filters).map_err(ApiError::from)?);
    let number = page.page.unwrap_or(1);
    let size = page.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if number == 0 || !(1..=MAX_PAGE_SIZE).contains(&size) {
        return Err(ApiError::Invalid(format!("page starts at 1 and page_size is within 1..={MAX_PAGE_SIZE}")).into());
    }
    // A page past `limits.max_offset` rows, as a native listing's offset.
    let last = state.memory.config().limits.max_offset / size + 1;
    check_count("page", number, 1, last, "limits.max_offset").map_err(ApiError::from)?;
    let rows = run(&state, move |m| super::matching(m, &tenant, &filter)).await?;
    let count = rows.len();
    let start = (number - 1).saturating_mul(size).min(count);
    let end = start.saturating_add(size).min(count);
    let link = |n: usize| {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
        Value::String(format!("http://{host}{}?page={n}&page_size={size}", uri.path()))
    };
    Ok(axum::Json(json!({
        "count": count,
        "next": if end < count { link(number + 1) } else { Value::Null },
        "previous": if number > 1 && start > 0 { link(number - 1) } else { Value::Null },
        "results": rows[start..end].iter().map(|r| item(r, None)).collect::<Vec<_>>(),
    })))
}

#[derive(Debug, Deserialize)]
struct SearchRequest {
    query: String,
    #[serde(default)]
    filters: Value,
    #[serde(flatten)]
    ids: Ids,
    #[serde(default)]
    top_k: Option<usize>,
    #[serde(default)]
    threshold: Option<f32>,
}

/// `search`: recall among the memories `filters` matches, best first, each with its score.
async fn search(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<SearchRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let filter = req.ids.narrow(Filter::parse(&req.filters).map_err(ApiError::from)?);
    super::search_answer(&state, tenant, filter, req.query, (req.top_k, req.threshold), Shape::Platform).await
}

/// `get`: the memory's current version; 404 for an id this tenant does not hold.
async fn get_one(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    let id = memory_id(&id)?;
    let row = run(&state, move |m| super::current(m, &tenant, id)).await?;
    Ok(axum::Json(item(&row, None)))
}

/// `update`: new text through the gate (a new version that the old id keeps naming); the memory
/// as it is now.
async fn update(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
    Body(req): Body<super::UpdateRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let row = super::update_answer(&state, tenant, &id, req).await?;
    Ok(axum::Json(item(&row, None)))
}

/// `delete`: archives the memory at the user's request.
async fn delete_one(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    let id = memory_id(&id)?;
    run(&state, move |m| super::delete(m, &tenant, id)).await?;
    Ok(axum::Json(json!({"message": "Memory deleted successfully!"})))
}

/// `history`: a list of the memory's changes across its versions.
async fn history(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    super::history_answer(&state, tenant, &id, Shape::Platform).await
}

/// `delete_all`: every live memory of the entities the query names (at least one).
async fn delete_all(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Params(ids): Params<Ids>,
) -> Result<axum::Json<Value>, Detail> {
    if ids.is_empty() {
        return Err(ApiError::Invalid("name at least one of user_id, agent_id, app_id or run_id".into()).into());
    }
    let filter = ids.narrow(Filter::everything());
    run(&state, move |m| super::delete_matching(m, &tenant, &filter)).await?;
    Ok(axum::Json(json!({"message": "Memories deleted successfully!"})))
}

/// `users`: every user, agent and run the tenant holds memories for.
async fn entities(State(state): State<AppState>, Caller(tenant): Caller) -> Result<axum::Json<Value>, Detail> {
    let list = run(&state, move |m| super::entities(m, &tenant)).await?;
    let results: Vec<Value> = list
        .iter()
        .map(|(kind, name)| {
            json!({"id": name, "name": name, "type": kind, "owner": null, "metadata": null,
                   "created_at": null, "updated_at": null})
        })
        .collect();
    Ok(axum::Json(json!({"count": results.len(), "next": null, "previous": null, "results": results})))
}

/// `delete_users`: a user is erased; an agent's, app's or run's memories are deleted.
async fn delete_entity(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment((kind, name)): Segment<(String, String)>,
) -> Result<axum::Json<Value>, Detail> {
    let entity = match kind.as_str() {
        "user" => Entity::User,
        "agent" => Entity::Agent,
        "app" => Entity::App,
        "run" => Entity::Run,
        other => {
            return Err(ApiError::Invalid(format!("unknown entity type {other:?}: user, agent, app or run")).into());
        }
    };
    // A user's erasure purges the files: heavy work, behind the tenant's own cap.
    let on = tenant.clone();
    run_heavy(&state, &on, move |m| super::delete_entity(m, &tenant, entity, &name)).await?;
    Ok(axum::Json(json!({"message": "Entity deleted successfully!"})))
}

#[derive(Debug, Deserialize)]
struct BatchItem {
    memory_id: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

#[derive(Debug, Deserialize)]
struct BatchRequest {
    memories: Vec<BatchItem>,
}

/// The most memories one batch may name (mem0's own limit).
const MAX_BATCH: usize = 1000;

/// Every id of a batch, each resolved to a live memory before anything is written, so a bad
/// entry writes nothing.
fn resolve(m: &mnemo::Memory, tenant: &mnemo::core::TenantId, ids: &[MemoryId]) -> Result<(), ApiError> {
    ids.iter().try_for_each(|id| super::current(m, tenant, *id).map(drop))
}

fn batch_ids(req: &BatchRequest) -> Result<Vec<MemoryId>, ApiError> {
    if req.memories.is_empty() || req.memories.len() > MAX_BATCH {
        return Err(ApiError::Invalid(format!("a batch holds 1..={MAX_BATCH} memories")));
    }
    req.memories.iter().map(|i| memory_id(&i.memory_id)).collect()
}

/// `batch_update`: new text for several memories.
async fn batch_update(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<BatchRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let ids = batch_ids(&req)?;
    let n = ids.len();
    run(&state, move |m| {
        resolve(m, &tenant, &ids)?;
        for (id, item) in ids.into_iter().zip(req.memories) {
            super::update(m, &tenant, id, item.text.as_deref(), item.metadata)?;
        }
        Ok(())
    })
    .await?;
    Ok(axum::Json(json!({"message": format!("Successfully updated {n} memories")})))
}

/// `batch_delete`: deletes several memories.
async fn batch_delete(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<BatchRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let ids = batch_ids(&req)?;
    let n = ids.len();
    run(&state, move |m| {
        resolve(m, &tenant, &ids)?;
        ids.iter().try_for_each(|id| super::delete(m, &tenant, *id))
    })
    .await?;
    Ok(axum::Json(json!({"message": format!("Successfully deleted {n} memories")})))
}

#[derive(Debug, Deserialize)]
struct FeedbackRequest {
    memory_id: String,
    #[serde(default)]
    feedback: Option<String>,
    #[serde(default)]
    feedback_reason: Option<String>,
}

/// `feedback`: checked (a live memory of the tenant, a known verdict) and acknowledged. mnemo
/// ranks by use and reinforcement, not by ratings, so it changes nothing (docs/mem0.md).
async fn feedback(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<FeedbackRequest>,
) -> Result<axum::Json<Value>, Detail> {
    if let Some(f) = req.feedback.as_deref().filter(|f| !["POSITIVE", "NEGATIVE", "VERY_NEGATIVE"].contains(f)) {
        return Err(ApiError::Invalid(format!("feedback {f:?} is not POSITIVE, NEGATIVE or VERY_NEGATIVE")).into());
    }
    let id = memory_id(&req.memory_id)?;
    run(&state, move |m| super::current(m, &tenant, id).map(drop)).await?;
    Ok(axum::Json(json!({"id": req.memory_id, "feedback": req.feedback, "feedback_reason": req.feedback_reason})))
}

/// `GET /v1/event/{id}/`: an add's outcome by the trace turn that recorded it. Adds answer
/// synchronously, so every event mnemo knows has succeeded.
async fn event(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    let turn = id.clone();
    let envelope = run(&state, move |m| {
        let scope = Scope { tenant, agent: None, user: None, chat: None };
        Ok(m.trace(&scope, &turn)?)
    })
    .await?
    .ok_or_else(|| ApiError::NotFound(format!("event {id} not found")))?;
    let results: Vec<Value> = envelope
        .verdicts
        .iter()
        .filter_map(|v| {
            let event = super::event_of(&v.verdict)?;
            Some(json!({"id": v.verdict.memory()?.to_string(), "event": event, "data": {"memory": v.content}}))
        })
        .collect();
    Ok(axum::Json(json!({"id": id, "event_type": "ADD", "status": "SUCCEEDED", "results": results})))
}

/// What mnemo does not provide: the platform's exports, summaries, profiles, projects and
/// webhooks.
async fn platform_only(OriginalUri(uri): OriginalUri) -> (StatusCode, axum::Json<Value>) {
    (
        StatusCode::NOT_IMPLEMENTED,
        axum::Json(json!({
            "detail": format!("{} is a mem0 platform feature that mnemo does not provide (see docs/mem0.md)", uri.path())
        })),
    )
}
