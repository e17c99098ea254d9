//! The self-hosted mem0 server's routes, at the root without trailing slashes, in its shapes:
//! for clients written against `mem0 server` with plain HTTP. The key (`X-API-Key` or
//! `Authorization: Bearer`) names the tenant, so `/reset` and a listing without ids stay inside
//! it, where mem0's own server spans its whole store.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use mnemo::core::Metadata;
use mnemo::core::limits::check_count;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Body, Caller, Detail, Filter, Ids, MAX_PAGE_SIZE, Params, Segment, Shape, memory_id, run, run_heavy};
use crate::AppState;
use crate::error::ApiError;

/// The routes, at the root.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/memories", post(add).get(list).delete(delete_all))
        .route("/memories/{id}", get(get_one).put(update).delete(delete_one))
        .route("/memories/{id}/history", get(history))
        .route("/search", post(search))
        .route("/reset", post(reset))
}

/// A memory as mem0's server returns it; `score` for a search result.
fn item(row: &mnemo::core::Memory, score: Option<f32>) -> Value {
    Shape::SelfHosted.memory(row, score)
}

/// The ids of a request of mem0's server, which knows no `app_id`.
#[derive(Debug, Deserialize)]
struct OssIds {
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
}

impl OssIds {
    /// At least one id, as mem0's server requires.
    fn required(self) -> Result<Ids, ApiError> {
        let ids = Ids { user_id: self.user_id, agent_id: self.agent_id, app_id: None, run_id: self.run_id };
        if ids.is_empty() {
            return Err(ApiError::Invalid("at least one identifier (user_id, agent_id, run_id) is required".into()));
        }
        Ok(ids)
    }
}

#[derive(Debug, Deserialize)]
struct AddRequest {
    messages: Value,
    #[serde(flatten)]
    ids: OssIds,
    #[serde(default)]
    infer: Option<bool>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

/// `POST /memories`.
async fn add(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<AddRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let ids = req.ids.required()?;
    let messages = super::messages(req.messages)?;
    let infer = req.infer.unwrap_or(true);
    let metadata = req.metadata;
    let caller = tenant.clone();
    let added =
        run_heavy(&state, &caller, move |m| super::add(m, &tenant, &ids, messages, infer, metadata.as_ref())).await?;
    let results: Vec<Value> =
        added.written.iter().map(|w| json!({"id": w.id.to_string(), "memory": w.memory, "event": w.event})).collect();
    Ok(axum::Json(json!({ "results": results })))
}

/// The query of `GET /memories` (ids spelled out: a flattened struct cannot read numbers from a
/// query string).
#[derive(Debug, Deserialize)]
struct ListQuery {
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    top_k: Option<usize>,
}

/// `GET /memories`: the memories of the ids given, or a bare list of all the tenant's.
async fn list(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Params(q): Params<ListQuery>,
) -> Result<axum::Json<Value>, Detail> {
    let top_k = q.top_k;
    if let Some(k) = top_k {
        check_count("top_k", k, 1, MAX_PAGE_SIZE, "the largest page of a listing").map_err(ApiError::from)?;
    }
    let ids = OssIds { user_id: q.user_id, agent_id: q.agent_id, run_id: q.run_id };
    let (ids, everything) = match ids.required() {
        Ok(ids) => (ids, false),
        Err(_) => (Ids::default(), true),
    };
    let filter = ids.narrow(Filter::everything());
    let mut rows = run(&state, move |m| super::matching(m, &tenant, &filter)).await?;
    if let Some(k) = top_k {
        rows.truncate(k);
    }
    let items: Vec<Value> = rows.iter().map(|r| item(r, None)).collect();
    Ok(axum::Json(if everything { Value::Array(items) } else { json!({ "results": items }) }))
}

/// `GET /memories/{id}`: the memory, or `null` for an unknown id (what mem0's server answers).
async fn get_one(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    let id = memory_id(&id)?;
    let found = run(&state, move |m| match super::current(m, &tenant, id) {
        Ok(row) => Ok(Some(row)),
        Err(ApiError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    })
    .await?;
    Ok(axum::Json(found.as_ref().map_or(Value::Null, |r| item(r, None))))
}

/// `PUT /memories/{id}`.
async fn update(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
    Body(req): Body<super::UpdateRequest>,
) -> Result<axum::Json<Value>, Detail> {
    super::update_answer(&state, tenant, &id, req).await?;
    Ok(axum::Json(json!({"message": "Memory updated successfully!"})))
}

/// `DELETE /memories/{id}`.
async fn delete_one(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    let id = memory_id(&id)?;
    run(&state, move |m| super::delete(m, &tenant, id)).await?;
    Ok(axum::Json(json!({"message": "Memory deleted successfully"})))
}

/// `DELETE /memories?user_id=...`.
async fn delete_all(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Params(q): Params<OssIds>,
) -> Result<axum::Json<Value>, Detail> {
    let filter = q.required()?.narrow(Filter::everything());
    run(&state, move |m| super::delete_matching(m, &tenant, &filter)).await?;
    Ok(axum::Json(json!({"message": "All relevant memories deleted"})))
}

/// `GET /memories/{id}/history`.
async fn history(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Segment(id): Segment<String>,
) -> Result<axum::Json<Value>, Detail> {
    super::history_answer(&state, tenant, &id, Shape::SelfHosted).await
}

#[derive(Debug, Deserialize)]
struct SearchRequest {
    query: String,
    #[serde(default)]
    filters: Value,
    #[serde(flatten)]
    ids: OssIds,
    #[serde(default)]
    top_k: Option<usize>,
    #[serde(default)]
    threshold: Option<f32>,
}

/// `POST /search`: the filters (or the deprecated top-level ids) must name a user, agent or run.
async fn search(
    State(state): State<AppState>,
    Caller(tenant): Caller,
    Body(req): Body<SearchRequest>,
) -> Result<axum::Json<Value>, Detail> {
    let filter = Filter::parse(&req.filters).map_err(ApiError::from)?;
    let named = Ids { user_id: req.ids.user_id, agent_id: req.ids.agent_id, app_id: None, run_id: req.ids.run_id };
    let filter = named.narrow(filter);
    if Ids::default().or_from(&filter).is_empty() {
        return Err(ApiError::Invalid("filters must contain at least one of: user_id, agent_id, run_id".into()).into());
    }
    super::search_answer(&state, tenant, filter, req.query, (req.top_k, req.threshold), Shape::SelfHosted).await
}

/// `POST /reset`: empties the key's tenant (users erased, other memories deleted).
async fn reset(State(state): State<AppState>, Caller(tenant): Caller) -> Result<axum::Json<Value>, Detail> {
    // Heavy work (erasures and a purge of the files): behind the tenant's own cap, as the
    // native erase route, so a tenant's resets queue behind each other, not other tenants.
    let on = tenant.clone();
    run_heavy(&state, &on, move |m| super::reset(m, &tenant)).await?;
    Ok(axum::Json(json!({"message": "All memories reset"})))
}
