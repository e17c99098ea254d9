//! mem0-compatible routes: code written against mem0's SDKs or its self-hosted server talks to
//! mnemo by changing a base URL (docs/mem0.md).
//!
//! Two route sets over the same operations: the hosted platform's, under `/mem0` ([`hosted`],
//! what `MemoryClient(host=".../mem0")` calls) and the self-hosted server's at the root
//! ([`oss`]). Neither is part of the native `/v1` API or its OpenAPI document: they are
//! compatibility surfaces whose shapes are mem0's.
//!
//! Every handler authenticates like the native routes (a tenant key; the tenant comes only from
//! it), maps mem0's entity ids onto a mnemo scope and calls the engine the way the native routes
//! do, so the gate, the privacy switches and tenant isolation apply unchanged. Errors keep the
//! native table of statuses but mem0's body, `{"detail": ...}`, which the SDKs read.

mod filters;
mod hosted;
mod oss;

use std::collections::HashMap;

use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use mnemo::core::limits::{check_count, check_query};
use mnemo::core::message::check_batch_size;
use mnemo::core::{
    Draft, HistoryEvent, Kind, Memory as Row, MemoryId, Metadata, NewMessage, Role, Scope, Status, StatusKind,
    TenantId, Verdict,
};
use mnemo::store::ListFilter;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) use filters::{Entity, Filter};

use crate::AppState;
use crate::auth::CompatTenant;
use crate::error::ApiError;

/// The chat that messages added without a `run_id` go to when mnemo extracts from them:
/// extraction reads a conversation, and mem0's `add` need not name one.
pub(crate) const DEFAULT_RUN: &str = "mem0";

/// Both route sets: the hosted platform's under `/mem0`, the self-hosted server's at the root.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().nest("/mem0", hosted::routes()).merge(oss::routes())
}

/// An [`ApiError`] answered in mem0's error shape, `{"detail": message}`, with the native status.
#[derive(Debug)]
pub(crate) struct Detail(pub(crate) ApiError);

impl<E: Into<ApiError>> From<E> for Detail {
    fn from(e: E) -> Self {
        Detail(e.into())
    }
}

impl IntoResponse for Detail {
    fn into_response(self) -> Response {
        let (status, _, message) = self.0.public();
        self.0.with_headers((status, axum::Json(json!({ "detail": message }))).into_response())
    }
}

impl From<filters::FilterError> for ApiError {
    fn from(e: filters::FilterError) -> Self {
        ApiError::Invalid(e.to_string())
    }
}

/// The caller's tenant, from a key sent as `Token`, `Bearer` or `X-API-Key`.
pub(crate) struct Caller(pub(crate) TenantId);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Detail;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(Caller(CompatTenant::from_request_parts(parts, state).await?.0))
    }
}

/// A JSON body, refused in mem0's error shape. Unknown fields are ignored: mem0's SDKs send
/// options (`output_format`, `async_mode`, `org_id`, ...) that change nothing here.
pub(crate) struct Body<T>(pub(crate) T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = Detail;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Ok(Body(crate::error::Json::<T>::from_request(req, state).await?.0))
    }
}

/// A query string, refused in mem0's error shape.
pub(crate) struct Params<T>(pub(crate) T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = Detail;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(Params(crate::error::Query::<T>::from_request_parts(parts, state).await?.0))
    }
}

/// mem0's entity ids as a request names them (top level, or in the query of a delete).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Ids {
    #[serde(default)]
    pub(crate) user_id: Option<String>,
    #[serde(default)]
    pub(crate) agent_id: Option<String>,
    #[serde(default)]
    pub(crate) app_id: Option<String>,
    #[serde(default)]
    pub(crate) run_id: Option<String>,
}

impl Ids {
    fn get(&self, e: Entity) -> Option<&str> {
        let v = match e {
            Entity::User => &self.user_id,
            Entity::Agent => &self.agent_id,
            Entity::App => &self.app_id,
            Entity::Run => &self.run_id,
        };
        v.as_deref().filter(|s| !s.is_empty())
    }

    /// Whether no id is named.
    pub(crate) fn is_empty(&self) -> bool {
        Entity::ALL.iter().all(|e| self.get(*e).is_none())
    }

    /// These ids, each missing one taken from a plain equality at the top of `filters`.
    pub(crate) fn or_from(mut self, filter: &Filter) -> Ids {
        for e in Entity::ALL {
            if self.get(e).is_none() {
                let v = filter.pinned(e).map(str::to_string);
                match e {
                    Entity::User => self.user_id = v,
                    Entity::Agent => self.agent_id = v,
                    Entity::App => self.app_id = v,
                    Entity::Run => self.run_id = v,
                }
            }
        }
        self
    }

    /// `filter` with these ids required as well.
    pub(crate) fn narrow(&self, filter: Filter) -> Filter {
        Entity::ALL.into_iter().fold(filter, |f, e| match self.get(e) {
            Some(v) => f.and_entity(e, v),
            None => f,
        })
    }

    /// The mnemo scope they name: `agent_id` (else `app_id`) is the agent, `run_id` the chat.
    pub(crate) fn scope(&self, tenant: &TenantId, chat: Option<&str>) -> Result<Scope, ApiError> {
        let agent = self.get(Entity::Agent).or(self.get(Entity::App));
        crate::routes::scope(tenant, agent, self.get(Entity::User), chat.or(self.get(Entity::Run)))
    }
}

/// One message of an `add`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MessageIn {
    #[serde(default = "user_role")]
    pub(crate) role: String,
    pub(crate) content: Value,
}

fn user_role() -> String {
    "user".into()
}

/// mem0's `messages`: a list of messages, one message object, or a bare string (a user message).
pub(crate) fn messages(value: Value) -> Result<Vec<NewMessage>, ApiError> {
    let list: Vec<MessageIn> = match value {
        Value::String(s) => vec![MessageIn { role: user_role(), content: Value::String(s) }],
        Value::Object(_) => {
            vec![serde_json::from_value(value).map_err(|e| ApiError::InvalidBody(format!("messages: {e}")))?]
        }
        Value::Array(_) => {
            serde_json::from_value(value).map_err(|e| ApiError::InvalidBody(format!("messages: {e}")))?
        }
        _ => return Err(ApiError::InvalidBody("messages: expected a list of {role, content}".into())),
    };
    if list.is_empty() {
        return Err(ApiError::Invalid("messages: at least one message is needed".into()));
    }
    list.into_iter()
        .enumerate()
        .map(|(i, m)| {
            let Value::String(content) = m.content else {
                return Err(ApiError::Invalid(format!("messages[{i}].content: only text content is supported")));
            };
            Ok(NewMessage { id: None, role: m.role.parse::<Role>()?, content, at: None })
        })
        .collect()
}

/// What one write did, in mem0's vocabulary.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub(crate) id: MemoryId,
    pub(crate) memory: String,
    /// `ADD`, `UPDATE` or `DELETE`.
    pub(crate) event: &'static str,
}

/// mem0's event for a verdict; `None` for what changed nothing (a duplicate, a rejection).
fn event_of(v: &Verdict) -> Option<&'static str> {
    match v {
        Verdict::Written { .. } => Some("ADD"),
        Verdict::Superseded { .. } | Verdict::Contradicted { .. } | Verdict::Closed { .. } => Some("UPDATE"),
        Verdict::Forgotten { .. } => Some("DELETE"),
        Verdict::Deduplicated { .. } | Verdict::Rejected { .. } => None,
    }
}

/// What an add wrote, and the trace turn that recorded an extraction (mem0's event id).
#[derive(Debug, Clone)]
pub(crate) struct Added {
    pub(crate) written: Vec<Written>,
    pub(crate) turn_id: Option<String>,
}

/// Adds messages: with `infer` mnemo extracts memories from them as from any conversation
/// (`POST /v1/messages`), without it each non-system message is written as a memory through the
/// gate, as given (`POST /v1/memories`). `metadata` goes on every memory the add writes.
///
/// Either way an add is bounded as a native ingest is (`ingest.max_batch` messages,
/// `ingest.max_batch_chars` characters; 413 past them), and without inference a message longer
/// than one memory holds is refused before anything is written, rather than dropped by the
/// gate with no word to the caller.
pub(crate) fn add(
    memory: &mnemo::Memory,
    tenant: &TenantId,
    ids: &Ids,
    messages: Vec<NewMessage>,
    infer: bool,
    metadata: Option<&Metadata>,
) -> Result<Added, ApiError> {
    if ids.is_empty() {
        return Err(ApiError::Invalid("name at least one of user_id, agent_id, app_id or run_id".into()));
    }
    let tuning = memory.config().tuning();
    check_batch_size(&messages, &tuning.ingest).map_err(|e| ApiError::TooLarge(e.to_string()))?;
    if let Some(m) = metadata {
        memory.check_metadata(m)?;
    }
    if !infer {
        let max = tuning.gate.max_content_chars;
        let too_long = messages.iter().enumerate().filter(|(_, m)| m.role != Role::System);
        if let Some((i, chars)) = too_long.map(|(i, m)| (i, m.content.chars().count())).find(|(_, n)| *n > max) {
            return Err(ApiError::Invalid(format!(
                "messages[{i}]: {chars} characters, more than one memory holds ({max}, gate.max_content_chars); \
                 with infer=false each message is stored as one memory: split it, or send infer=true to extract \
                 memories from it"
            )));
        }
    }
    if infer {
        if ids.get(Entity::User).is_none() {
            return Err(ApiError::Invalid(
                "infer=true needs a user_id: mnemo extracts memories from a user's conversation; send infer=false to \
                 store agent-wide text as given"
                    .into(),
            ));
        }
        let scope = ids.scope(tenant, Some(ids.get(Entity::Run).unwrap_or(DEFAULT_RUN)))?;
        let report = memory.ingest(&scope, messages)?;
        let written = report
            .ops
            .iter()
            .filter_map(|r| {
                Some(Written {
                    id: r.verdict.memory()?,
                    memory: r.op.draft.content.clone(),
                    event: event_of(&r.verdict)?,
                })
            })
            .collect::<Vec<Written>>();
        if metadata.is_some() {
            for w in written.iter().filter(|w| w.event == "ADD") {
                let row = memory.find(tenant, w.id)?;
                memory.set_metadata(&row.owner, row.id, metadata.cloned())?;
            }
        }
        return Ok(Added { written, turn_id: report.turn_id });
    }
    let scope = ids.scope(tenant, None)?;
    let mut written = Vec::new();
    for m in messages.into_iter().filter(|m| m.role != Role::System) {
        let draft = Draft { metadata: metadata.cloned(), ..Draft::authored(Kind::Fact, m.content.clone()) };
        let verdict = memory.add(&scope, draft)?;
        if let (Some(id), Some(event)) = (verdict.memory(), event_of(&verdict)) {
            written.push(Written { id, memory: m.content, event });
        }
    }
    Ok(Added { written, turn_id: None })
}

/// Statuses of memories mem0 would still return.
const LIVE: [StatusKind; 3] = [StatusKind::Provisional, StatusKind::Active, StatusKind::Stale];

/// The tenant's live memories that match, newest first: each owner the filter may hold for is
/// listed, and the filter decides row by row.
pub(crate) fn matching(memory: &mnemo::Memory, tenant: &TenantId, filter: &Filter) -> Result<Vec<Row>, ApiError> {
    let list = ListFilter { statuses: LIVE.to_vec(), ..ListFilter::default() };
    let mut rows = Vec::new();
    for owner in memory.owners(tenant)?.into_iter().filter(|o| filter.may_hold_for(o)) {
        rows.extend(memory.list(&owner, &list)?.into_iter().filter(|r| r.owner == owner && filter.holds(r)));
    }
    rows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.to_string().cmp(&a.id.to_string())));
    Ok(rows)
}

/// Recalled memories for a query among those the filter matches, best first, with a score in
/// 0..=1. Recall runs in each matching owner's scope that has a user (recall is a user's);
/// agent-wide memories are reached through a listing instead.
pub(crate) fn search(
    memory: &mnemo::Memory,
    tenant: &TenantId,
    filter: &Filter,
    query: &str,
    top_k: Option<usize>,
    threshold: Option<f32>,
) -> Result<Vec<(Row, f32)>, ApiError> {
    // Checked before any work, as recall checks them: the answer must not depend on whether
    // the filter matches anyone (a `top_k` of 2^63 was a 400 for a known user, a 200 else).
    let limits = &memory.config().limits;
    check_query("query", query, limits)?;
    if let Some(k) = top_k {
        check_count("top_k", k, 1, limits.max_top_k, "limits.max_top_k")?;
    }
    let mut best: HashMap<MemoryId, (Row, f32)> = HashMap::new();
    for owner in memory.owners(tenant)?.into_iter().filter(|o| o.user.is_some() && filter.may_hold_for(o)) {
        let recalled = memory.recall(&owner, query, top_k)?;
        // Path A (standing preferences, protocols, pins, loops due) is what recall always puts
        // first, whatever the query: score 1. Path B's ranked items carry their total.
        let exact = recalled.exact.into_iter().map(|i| (i.memory, 1.0));
        let ranked = recalled.items.into_iter().map(|i| (i.memory, i.score.map_or(0.0, |s| s.total.clamp(0.0, 1.0))));
        for (row, score) in exact.chain(ranked).filter(|(row, _)| filter.holds(row)) {
            let slot = best.entry(row.id).or_insert((row, score));
            slot.1 = slot.1.max(score);
        }
    }
    let mut ranked: Vec<(Row, f32)> = best.into_values().filter(|(_, s)| threshold.is_none_or(|t| *s >= t)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.id.to_string().cmp(&b.0.id.to_string())));
    ranked.truncate(top_k.unwrap_or(memory.config().tuning().ranking.default_top_k));
    Ok(ranked)
}

/// The largest page of a listing (and the most a self-hosted listing's `top_k` keeps).
pub(crate) const MAX_PAGE_SIZE: usize = 1000;

/// A memory id from a path.
pub(crate) fn memory_id(id: &str) -> Result<MemoryId, ApiError> {
    Ok(id.parse::<MemoryId>()?)
}

/// How many successive edits an id is followed through.
const MAX_VERSIONS: usize = 64;

/// The versions of a memory from `id` on: an edit writes a new version that supersedes the old
/// one, so a mem0 id keeps naming the memory after `update`. The last one is the current.
pub(crate) fn versions(memory: &mnemo::Memory, tenant: &TenantId, id: MemoryId) -> Result<Vec<Row>, ApiError> {
    let mut chain = vec![memory.find(tenant, id)?];
    while let Status::Superseded { by } = chain.last().expect("at least one").status {
        if chain.len() >= MAX_VERSIONS {
            break;
        }
        chain.push(memory.find(tenant, by)?);
    }
    Ok(chain)
}

/// The current version of a memory, 404 when it is unknown or no longer live (deleted, erased).
pub(crate) fn current(memory: &mnemo::Memory, tenant: &TenantId, id: MemoryId) -> Result<Row, ApiError> {
    let row = versions(memory, tenant, id)?.pop().expect("at least one");
    if !LIVE.contains(&row.status.kind()) {
        return Err(ApiError::NotFound(format!("memory {id} not found")));
    }
    Ok(row)
}

/// Replaces a memory's text through the gate (a new version, which keeps the metadata) and/or
/// its metadata, in its owner's scope; the current version after.
pub(crate) fn update(
    memory: &mnemo::Memory,
    tenant: &TenantId,
    id: MemoryId,
    text: Option<&str>,
    metadata: Option<Metadata>,
) -> Result<Row, ApiError> {
    let mut row = current(memory, tenant, id)?;
    if let Some(text) = text.filter(|t| *t != row.content) {
        let verdict = memory.edit(&row.owner, row.id, text)?;
        let new = verdict.memory().ok_or_else(|| ApiError::InvalidBody(verdict.to_string()))?;
        row = memory.find(tenant, new)?;
    }
    if let Some(data) = metadata {
        memory.set_metadata(&row.owner, row.id, Some(data))?;
        row = memory.find(tenant, row.id)?;
    }
    Ok(row)
}

/// Deletes (archives) a memory at the user's request, in its owner's scope.
pub(crate) fn delete(memory: &mnemo::Memory, tenant: &TenantId, id: MemoryId) -> Result<(), ApiError> {
    let row = current(memory, tenant, id)?;
    Ok(memory.forget(&row.owner, row.id)?)
}

/// Deletes every live memory the filter matches; how many.
pub(crate) fn delete_matching(memory: &mnemo::Memory, tenant: &TenantId, filter: &Filter) -> Result<usize, ApiError> {
    let rows = matching(memory, tenant, filter)?;
    for r in &rows {
        match memory.forget(&r.owner, r.id) {
            // Gone since it was listed (another reset, an erasure, a correction that replaced
            // it): what this call wanted, not a failure of it.
            Err(
                mnemo::Error::NotFound { .. } | mnemo::Error::Store(mnemo::store::StoreError::MemoryNotFound { .. }),
            ) => {}
            done => done?,
        }
    }
    Ok(rows.len())
}

/// Removes an entity: a user is erased (everything of theirs, as `POST /v1/users/{id}/erase`);
/// an agent's or run's live memories are deleted.
pub(crate) fn delete_entity(
    memory: &mnemo::Memory,
    tenant: &TenantId,
    entity: Entity,
    name: &str,
) -> Result<(), ApiError> {
    match entity {
        Entity::User => {
            memory.erase_user(&crate::routes::scope(tenant, None, Some(name), None)?)?;
        }
        other => {
            delete_matching(memory, tenant, &Filter::everything().and_entity(other, name))?;
        }
    }
    Ok(())
}

/// Every entity (user, agent, run) the tenant holds live memories for, as `(type, name)`.
pub(crate) fn entities(memory: &mnemo::Memory, tenant: &TenantId) -> Result<Vec<(&'static str, String)>, ApiError> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for owner in memory.owners(tenant)? {
        for (kind, entity) in [("user", Entity::User), ("agent", Entity::Agent), ("run", Entity::Run)] {
            if let Some(name) = entity.of(&owner) {
                if !out.iter().any(|(k, n)| *k == kind && *n == name) {
                    out.push((kind, name));
                }
            }
        }
    }
    Ok(out)
}

/// Empties the tenant: every user is erased and every other live memory deleted.
///
/// The users are erased together ([`mnemo::Memory::erase_users`]): the same erasure as each
/// one's own, but with a single purge of the files at the end. One purge per user made a reset
/// of hundreds of users take minutes and slowed every other tenant's requests all along.
pub(crate) fn reset(memory: &mnemo::Memory, tenant: &TenantId) -> Result<(), ApiError> {
    // Everyone the store holds anything of: a user with messages but no memory yet is erased too.
    let users = memory.known_users(tenant)?;
    memory.erase_users(tenant, &users)?;
    delete_matching(memory, tenant, &Filter::everything())?;
    Ok(())
}

/// One change in mem0's history vocabulary.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) memory_id: MemoryId,
    pub(crate) old: Option<String>,
    pub(crate) new: Option<String>,
    /// `ADD`, `UPDATE` or `DELETE`.
    pub(crate) event: &'static str,
    pub(crate) at: chrono::DateTime<chrono::Utc>,
    pub(crate) owner: Scope,
}

/// The history of a memory from `id` on, across its versions: its creation (`ADD`), each edit
/// (`UPDATE`, old and new text) and a deletion or erasure (`DELETE`).
pub(crate) fn history(memory: &mnemo::Memory, tenant: &TenantId, id: MemoryId) -> Result<Vec<Change>, ApiError> {
    let chain = versions(memory, tenant, id)?;
    let mut out = Vec::new();
    for (i, row) in chain.iter().enumerate() {
        let before = i.checked_sub(1).map(|p| chain[p].content.clone());
        for h in memory.show(&row.owner, row.id)?.history {
            let (event, old, new) = match h.event {
                HistoryEvent::Created if i == 0 => ("ADD", None, Some(row.content.clone())),
                HistoryEvent::Created => ("UPDATE", before.clone(), Some(row.content.clone())),
                HistoryEvent::Forgotten | HistoryEvent::Erased => ("DELETE", Some(row.content.clone()), None),
                _ => continue,
            };
            out.push(Change { memory_id: row.id, old, new, event, at: h.at, owner: row.owner.clone() });
        }
    }
    Ok(out)
}

/// Which of mem0's two servers a route answers as: their memory and history shapes differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The hosted platform (`MemoryClient`): every field, `categories`, `app_id`.
    Platform,
    /// The self-hosted server: entity ids only when set, `score` always (`null` outside search).
    SelfHosted,
}

impl Shape {
    /// A memory; `score` for a search result.
    pub(crate) fn memory(self, row: &Row, score: Option<f32>) -> Value {
        let mut v = json!({
            "id": row.id.to_string(),
            "memory": row.content,
            "hash": row.content_hash,
            "metadata": row.metadata,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        });
        let ids = [
            ("user_id", Entity::User.of(&row.owner)),
            ("agent_id", Entity::Agent.of(&row.owner)),
            ("run_id", Entity::Run.of(&row.owner)),
        ];
        match self {
            Shape::Platform => {
                v["app_id"] = Value::Null;
                v["categories"] = json!([row.kind.as_str()]);
                v["immutable"] = json!(false);
                v["expiration_date"] = json!(row.expires_at.map(|t| t.date_naive().to_string()));
                for (k, id) in ids {
                    v[k] = json!(id);
                }
                if let Some(s) = score {
                    v["score"] = json!(s);
                }
            }
            Shape::SelfHosted => {
                v["score"] = json!(score);
                for (k, id) in ids {
                    if let Some(id) = id {
                        v[k] = Value::String(id);
                    }
                }
            }
        }
        v
    }

    /// A memory's history, oldest first.
    pub(crate) fn history(self, changes: &[Change]) -> Value {
        let entries = changes.iter().enumerate().map(|(i, c)| {
            let mut v = json!({
                "id": format!("{}-{i}", c.memory_id),
                "memory_id": c.memory_id.to_string(),
                "old_memory": c.old,
                "new_memory": c.new,
                "event": c.event,
                "created_at": c.at,
                "updated_at": c.at,
            });
            match self {
                Shape::Platform => {
                    v["input"] = json!([]);
                    v["user_id"] = json!(Entity::User.of(&c.owner));
                    v["metadata"] = Value::Null;
                }
                Shape::SelfHosted => {
                    v["is_deleted"] = json!(c.event == "DELETE");
                    v["actor_id"] = Value::Null;
                    v["role"] = Value::Null;
                }
            }
            v
        });
        Value::Array(entries.collect())
    }
}

/// The body of an `update` in either route set: new text, new metadata, or both.
#[derive(Debug, Deserialize)]
pub(crate) struct UpdateRequest {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

/// `update` in either route set: the memory as it is afterwards.
pub(crate) async fn update_answer(
    state: &AppState,
    tenant: TenantId,
    id: &str,
    req: UpdateRequest,
) -> Result<Row, Detail> {
    let id = memory_id(id)?;
    run(state, move |m| update(m, &tenant, id, req.text.as_deref(), req.metadata)).await
}

/// `history` in either shape.
pub(crate) async fn history_answer(
    state: &AppState,
    tenant: TenantId,
    id: &str,
    shape: Shape,
) -> Result<axum::Json<Value>, Detail> {
    let id = memory_id(id)?;
    let changes = run(state, move |m| history(m, &tenant, id)).await?;
    Ok(axum::Json(shape.history(&changes)))
}

/// `search` in either shape: the recalled memories the filter matches, each with its score.
pub(crate) async fn search_answer(
    state: &AppState,
    tenant: TenantId,
    filter: Filter,
    query: String,
    (top_k, threshold): (Option<usize>, Option<f32>),
    shape: Shape,
) -> Result<axum::Json<Value>, Detail> {
    let ranked = run(state, move |m| search(m, &tenant, &filter, &query, top_k, threshold)).await?;
    Ok(axum::Json(json!({ "results": ranked.iter().map(|(r, s)| shape.memory(r, Some(*s))).collect::<Vec<_>>() })))
}

/// A path parameter, refused in mem0's error shape.
pub(crate) struct Segment<T>(pub(crate) T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Segment<T> {
    type Rejection = Detail;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(Segment(crate::error::Path::<T>::from_request_parts(parts, state).await?.0))
    }
}

/// Runs mem0 operations on the blocking pool, as every native handler runs the engine.
pub(crate) async fn run<T, F>(state: &AppState, f: F) -> Result<T, Detail>
where
    T: Send + 'static,
    F: FnOnce(&mnemo::Memory) -> Result<T, ApiError> + Send + 'static,
{
    crate::blocking(state, f).await.map_err(Detail)
}

/// [`run`] for mem0's `add`, which ingests: behind the tenant's cap on heavy work, as the
/// native ingest ([`crate::heavy`]).
pub(crate) async fn run_heavy<T, F>(state: &AppState, tenant: &TenantId, f: F) -> Result<T, Detail>
where
    T: Send + 'static,
    F: FnOnce(&mnemo::Memory) -> Result<T, ApiError> + Send + 'static,
{
    crate::heavy(state, tenant, f).await.map_err(Detail)
}
