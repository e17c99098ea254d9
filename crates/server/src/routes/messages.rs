//! `/v1/messages`: append messages to a chat's trace and extract memories from them (`POST`),
//! or read the chat's latest messages back (`GET`).

use mnemo::core::{NewMessage, Role};

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::{ConversationOut, ConversationQuery, IngestOut, MessagesRequest, SourceMessageOut};
use crate::error::{ApiError, ErrorBody, Json, Query};
use axum::extract::State;

/// Appends messages and runs extraction through the gate; re-sending a message id is a no-op.
#[utoipa::path(
    post, path = "/v1/messages", tag = "messages",
    request_body = MessagesRequest,
    responses(
        (status = 200, description = "What was appended and what the gate decided", body = IngestOut),
        (status = 400, description = "Invalid ids, empty or oversized messages", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 422, description = "Body of the wrong shape", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ingest(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Json(req): Json<MessagesRequest>,
) -> Result<Json<IngestOut>, ApiError> {
    let scope = super::scope(&tenant, req.agent_id.as_deref(), Some(&req.user_id), Some(&req.chat_id))?;
    let messages = req
        .messages
        .into_iter()
        .map(|m| Ok(NewMessage { id: m.id, role: m.role.parse::<Role>()?, content: m.content, at: m.at }))
        .collect::<Result<Vec<_>, ApiError>>()?;
    let report = crate::heavy(&state, &tenant, move |memory| Ok(memory.ingest(&scope, messages)?)).await?;
    Ok(Json(IngestOut::from(&report)))
}

/// The chat's latest messages, oldest first, as stored (PII redacted): what was actually said
/// where a memo or a memory points, for a person checking what the system made of it.
#[utoipa::path(
    get, path = "/v1/messages", tag = "messages",
    params(ConversationQuery),
    responses(
        (status = 200, description = "The chat's latest messages, oldest first", body = ConversationOut),
        (status = 400, description = "Invalid ids or limit", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn conversation(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Query(q): Query<ConversationQuery>,
) -> Result<Json<ConversationOut>, ApiError> {
    let scope = super::scope(&tenant, q.agent_id.as_deref(), Some(&q.user_id), Some(&q.chat_id))?;
    let limit = super::memories::page_limit(q.limit)?;
    let rows = crate::blocking(&state, move |memory| Ok(memory.conversation(&scope, limit)?)).await?;
    Ok(Json(ConversationOut { items: rows.iter().map(SourceMessageOut::from).collect() }))
}
