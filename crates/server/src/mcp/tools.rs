//! The MCP tools — remember, recall, context, forget, list_memories, for research
//! store_document and find_similar_documents, for behavioural learning observe, and for the
//! context window report_context_usage and rotate_session — with their JSON Schemas, run against
//! the engine inside the tenant of the caller's key.
//!
//! Arguments are typed structs that refuse unknown fields; their input schemas and the output
//! schemas are generated from the same types (`utoipa`) as the REST API's OpenAPI document, so
//! what `tools/list` promises is what `tools/call` parses and returns. No argument names a tenant.

use std::sync::LazyLock;

use mnemo::Memory;
use mnemo::core::detail::Detail;
use mnemo::core::{Draft, Kind, MemoryId, NewMessage, Role, TenantId};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::dto::documents::{
    DocumentHitOut, DocumentHits, DocumentKindName, DocumentOut, DocumentOwnerName, StoredDocumentOut,
};
use crate::dto::observations::{ObservationOut, OutcomeName, StoredObservationOut};
use crate::dto::sessions::{HeldItemIn, RotationOut, UsageOut};
use crate::dto::{ContextOut, IngestOut, KindName, MemoryList, MemoryOut, OpOut, RecallOut, VerdictOut};
use crate::error::ApiError;
use crate::routes::memories::{list_filter, list_page};

/// The chat a `remember`ed message goes to when the call names none.
pub(crate) const DEFAULT_CHAT: &str = "mcp";

/// Remember something about a user: a chat message that mnemo extracts memories from, or (with
/// `kind`) a memory written directly. Either way the write gate judges it (too short, too
/// unsure, PII, duplicate, superseding an older value) and says what it decided.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    /// The end user the memory is about.
    user_id: String,
    /// The agent (bot or project), when memories are kept per agent.
    #[serde(default)]
    agent_id: Option<String>,
    /// The conversation. A message is appended to this chat's trace (`mcp` when absent); with
    /// `kind`, it makes the memory private to this chat.
    #[serde(default)]
    chat_id: Option<String>,
    /// A message as it was said (e.g. "I moved to Porto last week"), or with `kind` the memory
    /// itself as a statement (e.g. "Dana prefers short answers").
    content: String,
    /// Who said the message: `user` (default), `assistant`, `system` or `tool`. Not used with `kind`.
    #[serde(default)]
    role: Option<String>,
    /// Your id for the message, so a retried call is a no-op; derived from the content and the
    /// time when absent. Not used with `kind`.
    #[serde(default)]
    message_id: Option<String>,
    /// Write `content` directly as a memory of this kind instead of extracting from it (not
    /// `policy`: policies are authored by an admin).
    #[serde(default)]
    #[schema(value_type = Option<KindName>)]
    kind: Option<String>,
}

/// What a user's memory holds that bears on a query: path A (policies, preferences, pinned,
/// loops due soon) and path B (ranked by relevance, salience, recency), each with its scores.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// The end user.
    user_id: String,
    /// The agent, if any.
    #[serde(default)]
    agent_id: Option<String>,
    /// The conversation; without it, chat-private memories are not seen.
    #[serde(default)]
    chat_id: Option<String>,
    /// What to recall for.
    query: String,
    /// How many ranked items; the configured default when absent.
    #[serde(default)]
    top_k: Option<usize>,
}

/// The token-budgeted memory block to put in the prompt for the user's next turn, in sections
/// that say how to use each item (speak, use silently, do not raise, do not contradict).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ContextArgs {
    /// The end user.
    user_id: String,
    /// The agent, if any.
    #[serde(default)]
    agent_id: Option<String>,
    /// The conversation the turn belongs to.
    chat_id: String,
    /// The user's new message.
    message: String,
    /// Token budget for the block; the configured default when absent.
    #[serde(default)]
    budget_tokens: Option<usize>,
}

/// Forget one memory at the user's request: it is archived, never recalled again, and the
/// messages it came from are no longer quoted back.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ForgetArgs {
    /// The end user the memory belongs to.
    user_id: String,
    /// The agent, if any.
    #[serde(default)]
    agent_id: Option<String>,
    /// The conversation, for a chat-private memory.
    #[serde(default)]
    chat_id: Option<String>,
    /// The memory's id, as `recall` or `list_memories` return it.
    memory_id: String,
}

/// A user's memories, newest first, filtered and paged.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// The end user.
    user_id: String,
    /// The agent, if any.
    #[serde(default)]
    agent_id: Option<String>,
    /// The conversation; needed to see chat-private memories.
    #[serde(default)]
    chat_id: Option<String>,
    /// Kinds, comma-separated (`preference,fact`); all when absent.
    #[serde(default)]
    kind: Option<String>,
    /// Statuses, comma-separated (`active,archived`); all when absent.
    #[serde(default)]
    status: Option<String>,
    /// Case-insensitive substring of the content.
    #[serde(default)]
    text: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default)]
    limit: Option<usize>,
    /// Rows to skip.
    #[serde(default)]
    offset: Option<usize>,
}

/// Keep a research result, tool output or file summary so it is never researched again: stored
/// at three levels (a gist line, an overview or code outline, the full text), shared by every
/// user of the agent unless `owner` is `user`. Call `find_similar_documents` first.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct StoreDocumentArgs {
    /// The user the agent works for (needed with `owner: user`).
    #[serde(default)]
    user_id: Option<String>,
    /// The agent (bot or project) the document belongs to.
    #[serde(default)]
    agent_id: Option<String>,
    /// What it is: `research`, `tool_output`, `file` or `note`.
    kind: DocumentKindName,
    /// Where it came from: a URL, a file path, a command (its extension picks the code outline).
    #[serde(default)]
    source: Option<String>,
    /// The full text.
    text: String,
    /// `agent` (default: every user of the agent) or `user` (only this user).
    #[serde(default)]
    owner: DocumentOwnerName,
}

/// Has this been researched before? Prior documents (research, tool outputs, file summaries)
/// similar to a question or a would-be result, above the configured similarity threshold, each
/// with its overview; an empty list means it is new.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct SimilarDocumentsArgs {
    /// The user the agent works for.
    #[serde(default)]
    user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    agent_id: Option<String>,
    /// The question about to be researched, or the result about to be stored.
    text: String,
    /// The result's source, if it is one.
    #[serde(default)]
    source: Option<String>,
    /// Least similarity (cosine) of a match; the configured default when absent.
    #[serde(default)]
    threshold: Option<f32>,
    /// Most matches; the configured default when absent.
    #[serde(default)]
    top_k: Option<usize>,
}

/// Record what you just did in this session (a tool, a few words on what it was applied to, how
/// it ended, and with `corrected` what the person said was right). Patterns that recur across
/// sessions become skill candidates; approved skills appear at the start of every session.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ObserveArgs {
    /// The user the agent works for, if any.
    #[serde(default)]
    user_id: Option<String>,
    /// The agent the skills belong to.
    #[serde(default)]
    agent_id: Option<String>,
    /// The session.
    chat_id: String,
    /// The tool or action (`edit_file`, `run_tests`).
    tool: String,
    /// What it was applied to, in a few words.
    args_summary: String,
    /// `success`, `failure` or `corrected`.
    outcome: OutcomeName,
    /// What was learned: the correction, the error seen.
    #[serde(default)]
    text: Option<String>,
}

/// Report how full your context window is and what it holds (memories, documents, message
/// ranges, each at a level); get back, least valuable first, what to keep, what to step down to
/// a lower level (with the text to put in its place) and what to release. Pinned items and
/// boundaries are always kept. Past the last threshold `rotate` is true: call `rotate_session`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct UsageArgs {
    /// The user the agent works for.
    user_id: String,
    /// The agent.
    #[serde(default)]
    agent_id: Option<String>,
    /// The session (chat) id.
    chat_id: String,
    /// Tokens in the window now.
    used_tokens: usize,
    /// The window's size in tokens.
    capacity_tokens: usize,
    /// What the window holds that mnemo can give back.
    #[serde(default)]
    items: Vec<HeldItemIn>,
}

/// Rotate a full session: every message of the segment is extracted into memory first, then a
/// continuation bundle comes back (MEMORY.md, pinned items and boundaries, a continuity note of
/// open loops and what was settled, the recent tail) to start the next segment with, under the
/// same session id. What the segment said stays reachable through recall and context.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct RotateArgs {
    /// The user the agent works for.
    user_id: String,
    /// The agent.
    #[serde(default)]
    agent_id: Option<String>,
    /// The session (chat) id.
    chat_id: String,
    /// Token budget of the bundle; the configured default (2,000) when absent.
    #[serde(default)]
    budget_tokens: Option<usize>,
}

/// What `remember` did: messages appended (for a message) and the gate's verdict on every
/// memory proposed from it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RememberOut {
    /// `message` (appended to the chat and extracted from) or `memory` (written directly).
    mode: String,
    /// Messages appended to the trace (0 for a direct memory).
    appended: usize,
    /// Messages already present (a `message_id` sent before), ignored.
    duplicates: usize,
    /// Every proposed memory with the gate's verdict; `verdict.memory_id` names what was written.
    ops: Vec<OpOut>,
    /// Trace turn holding these verdicts (absent when nothing was proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn_id: Option<String>,
    /// Set when embeddings were unavailable (dedup by hash only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    degraded: Option<String>,
    /// Set when the user is `paused` (the message was kept, nothing extracted) or `disabled`
    /// (nothing was stored; `discarded` counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_state: Option<crate::dto::UserStateName>,
    /// Messages not stored because the user is disabled.
    #[serde(default)]
    discarded: usize,
}

/// What `forget` did.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ForgetOut {
    /// The memory as it is now: status `archived`.
    memory: MemoryOut,
}

/// The tools this server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Remember,
    Recall,
    Context,
    Forget,
    ListMemories,
    StoreDocument,
    FindSimilarDocuments,
    Observe,
    ReportContextUsage,
    RotateSession,
}

impl Tool {
    const ALL: [Tool; 10] = [
        Tool::Remember,
        Tool::Recall,
        Tool::Context,
        Tool::Forget,
        Tool::ListMemories,
        Tool::StoreDocument,
        Tool::FindSimilarDocuments,
        Tool::Observe,
        Tool::ReportContextUsage,
        Tool::RotateSession,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Remember => "remember",
            Tool::Recall => "recall",
            Tool::Context => "context",
            Tool::Forget => "forget",
            Tool::ListMemories => "list_memories",
            Tool::StoreDocument => "store_document",
            Tool::FindSimilarDocuments => "find_similar_documents",
            Tool::Observe => "observe",
            Tool::ReportContextUsage => "report_context_usage",
            Tool::RotateSession => "rotate_session",
        }
    }

    /// Whether the tool keeps a thread long (an ingest with the model, a document's store and
    /// outline, a session's rotation), so its call waits for one of the tenant's heavy places
    /// like the HTTP routes that do the same work.
    pub(crate) fn heavy(self) -> bool {
        matches!(self, Tool::Remember | Tool::StoreDocument | Tool::RotateSession)
    }

    pub(crate) fn by_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    fn title(self) -> &'static str {
        match self {
            Tool::Remember => "Remember",
            Tool::Recall => "Recall memories",
            Tool::Context => "Memory context for the next turn",
            Tool::Forget => "Forget a memory",
            Tool::ListMemories => "List memories",
            Tool::StoreDocument => "Store a research result",
            Tool::FindSimilarDocuments => "Find research done before",
            Tool::Observe => "Record what the agent did",
            Tool::ReportContextUsage => "Context window advice",
            Tool::RotateSession => "Rotate a full session",
        }
    }

    /// The tool's entry in `tools/list`.
    fn describe(self) -> Value {
        let (input, output) = match self {
            Tool::Remember => (schema_of::<RememberArgs>(), schema_of::<RememberOut>()),
            Tool::Recall => (schema_of::<RecallArgs>(), schema_of::<RecallOut>()),
            Tool::Context => (schema_of::<ContextArgs>(), schema_of::<ContextOut>()),
            Tool::Forget => (schema_of::<ForgetArgs>(), schema_of::<ForgetOut>()),
            Tool::ListMemories => (schema_of::<ListArgs>(), schema_of::<MemoryList>()),
            Tool::StoreDocument => (schema_of::<StoreDocumentArgs>(), schema_of::<StoredDocumentOut>()),
            Tool::FindSimilarDocuments => (schema_of::<SimilarDocumentsArgs>(), schema_of::<DocumentHits>()),
            Tool::Observe => (schema_of::<ObserveArgs>(), schema_of::<StoredObservationOut>()),
            Tool::ReportContextUsage => (schema_of::<UsageArgs>(), schema_of::<UsageOut>()),
            Tool::RotateSession => (schema_of::<RotateArgs>(), schema_of::<RotationOut>()),
        };
        // The arguments' doc comment says what the tool is for; as one line, the way clients show it.
        let description =
            input["description"].as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
        let annotations = match self {
            Tool::ListMemories | Tool::FindSimilarDocuments | Tool::ReportContextUsage => {
                json!({"readOnlyHint": true, "openWorldHint": false})
            }
            Tool::Forget => {
                json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false})
            }
            // Recall and context also update access statistics and leave a trace envelope.
            _ => json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}),
        };
        json!({
            "name": self.name(),
            "title": self.title(),
            "description": description,
            "inputSchema": input,
            "outputSchema": output,
            "annotations": annotations,
        })
    }
}

/// Every tool's `tools/list` entry, built once.
pub(crate) fn list() -> &'static [Value] {
    static TOOLS: LazyLock<Vec<Value>> = LazyLock::new(|| Tool::ALL.into_iter().map(Tool::describe).collect());
    &TOOLS
}

/// A type's JSON Schema, self-contained: the schemas it refers to are put under `$defs` and the
/// OpenAPI-style references (`#/components/schemas/X`) point there.
fn schema_of<T: ToSchema>() -> Value {
    let mut refs = Vec::new();
    T::schemas(&mut refs);
    let mut root = serde_json::to_value(T::schema()).unwrap_or(Value::Null);
    if !refs.is_empty() {
        let defs: Map<String, Value> = refs
            .into_iter()
            .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or(Value::Null)))
            .collect();
        root["$defs"] = Value::Object(defs);
    }
    point_refs_at_defs(&mut root);
    root
}

fn point_refs_at_defs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(s) if key == "$ref" => {
                        if let Some(name) = s.strip_prefix("#/components/schemas/") {
                            *s = format!("#/$defs/{name}");
                        }
                    }
                    other => point_refs_at_defs(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(point_refs_at_defs),
        _ => {}
    }
}

fn args<T: DeserializeOwned>(tool: Tool, arguments: Value) -> Result<T, ApiError> {
    serde_json::from_value(arguments).map_err(|e| {
        ApiError::InvalidBody(format!(
            "invalid arguments for `{}`: {e}; see its inputSchema in tools/list",
            tool.name()
        ))
    })
}

fn scope(tenant: &TenantId, agent: Option<&str>, user: &str, chat: Option<&str>) -> Result<mnemo::Scope, ApiError> {
    Ok(mnemo::Scope::parse(tenant.as_str(), agent, Some(user), chat)?)
}

fn to_json<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(ApiError::internal)
}

/// Runs one tool for the tenant of the caller's key and returns its structured result.
/// Everything is checked before anything is written, so a refused call changes nothing.
pub(crate) fn call(memory: &Memory, tenant: &TenantId, tool: Tool, arguments: Value) -> Result<Value, ApiError> {
    match tool {
        Tool::Remember => remember(memory, tenant, args(tool, arguments)?),
        Tool::Recall => {
            let a: RecallArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, a.chat_id.as_deref())?;
            to_json(&RecallOut::from(&memory.recall(&scope, &a.query, a.top_k)?))
        }
        Tool::Context => {
            let a: ContextArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, Some(&a.chat_id))?;
            to_json(&ContextOut::from(&memory.context(&scope, &a.message, a.budget_tokens)?))
        }
        Tool::Forget => {
            let a: ForgetArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, a.chat_id.as_deref())?;
            let id: MemoryId = a.memory_id.parse()?;
            memory.forget(&scope, id)?;
            to_json(&ForgetOut { memory: MemoryOut::from(&memory.show(&scope, id)?.memory) })
        }
        Tool::ListMemories => {
            let a: ListArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, a.chat_id.as_deref())?;
            let filter = list_filter(memory, a.kind.as_deref(), a.status.as_deref(), a.text, a.limit, a.offset)?;
            to_json(&list_page(memory, &scope, &filter)?)
        }
        Tool::StoreDocument => {
            let a: StoreDocumentArgs = args(tool, arguments)?;
            let scope = mnemo::Scope::parse(tenant.as_str(), a.agent_id.as_deref(), a.user_id.as_deref(), None)?;
            let source = a.source.as_deref().unwrap_or_default();
            let stored = memory.store_document(&scope, a.owner.into(), a.kind.into(), source, &a.text)?;
            let document = DocumentOut::at(&stored.document, Detail::Focus);
            to_json(&StoredDocumentOut { document, degraded: stored.degraded })
        }
        Tool::FindSimilarDocuments => {
            let a: SimilarDocumentsArgs = args(tool, arguments)?;
            let scope = mnemo::Scope::parse(tenant.as_str(), a.agent_id.as_deref(), a.user_id.as_deref(), None)?;
            let source = a.source.as_deref().unwrap_or_default();
            let hits = memory.similar_documents(&scope, source, &a.text, a.threshold, a.top_k)?;
            let threshold = a.threshold.unwrap_or(memory.config().documents.similar_threshold);
            let items = hits.iter().map(|h| DocumentHitOut::at(h, Detail::Focus)).collect();
            to_json(&DocumentHits { items, threshold: Some(threshold) })
        }
        Tool::Observe => {
            let a: ObserveArgs = args(tool, arguments)?;
            let scope =
                mnemo::Scope::parse(tenant.as_str(), a.agent_id.as_deref(), a.user_id.as_deref(), Some(&a.chat_id))?;
            let stored = memory.observe(&scope, &a.tool, &a.args_summary, a.outcome.into(), a.text.as_deref())?;
            to_json(&StoredObservationOut {
                observation: ObservationOut::from(&stored.observation),
                degraded: stored.degraded,
            })
        }
        Tool::ReportContextUsage => {
            let a: UsageArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, Some(&a.chat_id))?;
            let items =
                a.items.into_iter().enumerate().map(|(i, item)| item.parse(i)).collect::<Result<Vec<_>, _>>()?;
            let advice = memory.session_usage(&scope, a.used_tokens, a.capacity_tokens, &items)?;
            to_json(&UsageOut::new(&advice, &memory.config().sessions))
        }
        Tool::RotateSession => {
            let a: RotateArgs = args(tool, arguments)?;
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, Some(&a.chat_id))?;
            to_json(&RotationOut::from(&memory.rotate_session(&scope, a.budget_tokens)?))
        }
    }
}

fn remember(memory: &Memory, tenant: &TenantId, a: RememberArgs) -> Result<Value, ApiError> {
    let out = match a.kind {
        Some(kind) => {
            if a.role.is_some() || a.message_id.is_some() {
                return Err(ApiError::Invalid(
                    "`role` and `message_id` describe a chat message; leave them out when `kind` writes a memory \
                     directly"
                        .into(),
                ));
            }
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, a.chat_id.as_deref())?;
            let kind: Kind = kind.parse()?;
            if kind == Kind::Policy {
                return Err(ApiError::Invalid(
                    "policies are tenant rules authored by an admin through POST /v1/policies, not remembered".into(),
                ));
            }
            // The same defaults as a person adding a memory through POST /v1/memories.
            let verdict = memory.add(&scope, Draft::authored(kind, a.content.clone()))?;
            RememberOut {
                mode: "memory".into(),
                appended: 0,
                duplicates: 0,
                ops: vec![OpOut {
                    op: "add".into(),
                    kind: kind.to_string(),
                    content: a.content,
                    sources: Vec::new(),
                    verdict: VerdictOut::from(&verdict),
                }],
                turn_id: None,
                degraded: None,
                user_state: None,
                discarded: 0,
            }
        }
        None => {
            let chat = a.chat_id.as_deref().unwrap_or(DEFAULT_CHAT);
            let scope = scope(tenant, a.agent_id.as_deref(), &a.user_id, Some(chat))?;
            let role: Role = a.role.as_deref().unwrap_or("user").parse()?;
            let message = NewMessage { id: a.message_id, role, content: a.content, at: None };
            let report = IngestOut::from(&memory.ingest(&scope, vec![message])?);
            RememberOut {
                mode: "message".into(),
                appended: report.appended,
                duplicates: report.duplicates,
                ops: report.ops,
                turn_id: report.turn_id,
                degraded: report.degraded,
                user_state: report.user_state,
                discarded: report.discarded,
            }
        }
    };
    to_json(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(s) if k == "$ref" => out.push(s.clone()),
                        other => refs(other, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
            _ => {}
        }
    }

    #[test]
    fn every_schema_is_an_object_schema_whose_references_resolve_inside_it() {
        for tool in list() {
            for key in ["inputSchema", "outputSchema"] {
                let schema = &tool[key];
                assert_eq!(schema["type"], "object", "{} {key}: {schema}", tool["name"]);
                let mut found = Vec::new();
                refs(schema, &mut found);
                for r in found {
                    let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{} {key}: ref {r}", tool["name"]));
                    assert!(schema["$defs"].get(name).is_some(), "{} {key}: {r} is not in $defs", tool["name"]);
                }
            }
            assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{}", tool["name"]);
            assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20), "{}", tool["name"]);
        }
    }

    #[test]
    fn input_schemas_require_exactly_the_fields_the_arguments_need() {
        let by_name = |n: &str| list().iter().find(|t| t["name"] == n).unwrap().clone();
        let required = |n: &str| {
            let mut r: Vec<String> = serde_json::from_value(by_name(n)["inputSchema"]["required"].clone()).unwrap();
            r.sort();
            r
        };
        assert_eq!(required("remember"), ["content", "user_id"]);
        assert_eq!(required("recall"), ["query", "user_id"]);
        assert_eq!(required("context"), ["chat_id", "message", "user_id"]);
        assert_eq!(required("forget"), ["memory_id", "user_id"]);
        assert_eq!(required("list_memories"), ["user_id"]);
        assert_eq!(required("store_document"), ["kind", "text"]);
        assert_eq!(required("find_similar_documents"), ["text"]);
        assert_eq!(required("observe"), ["args_summary", "chat_id", "outcome", "tool"]);
        assert_eq!(required("report_context_usage"), ["capacity_tokens", "chat_id", "used_tokens", "user_id"]);
        assert_eq!(required("rotate_session"), ["chat_id", "user_id"]);
        for tool in list() {
            assert!(tool["inputSchema"]["properties"].get("tenant").is_none(), "the tenant comes from the key");
        }
    }

    #[test]
    fn remember_offers_every_kind_with_its_description() {
        let remember = list().iter().find(|t| t["name"] == "remember").unwrap().clone();
        let kind = &remember["inputSchema"]["$defs"]["Kind"];
        let offered: Vec<&str> = kind["enum"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(offered, Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>());
        let prose = kind["description"].as_str().unwrap();
        for k in Kind::ALL {
            assert!(prose.contains(&format!("`{k}`: {}", k.spec().description)), "{k} described: {prose}");
        }
    }
}
