//! The MCP methods both transports share: the lifecycle (`initialize`, `notifications/initialized`,
//! `ping`) and the tools (`tools/list`, `tools/call`), over one session's state.
//!
//! Protocol problems (unknown method, bad params, a request before `initialize`) are JSON-RPC
//! errors; a tool that fails answers a result with `isError: true` and the engine's message, so
//! the model calling it can read what to fix.

use mnemo::Memory;
use mnemo::core::TenantId;
use serde_json::{Value, json};

use super::jsonrpc::{self, INTERNAL_ERROR, Incoming, METHOD_NOT_FOUND, RpcError};
use super::tools::{self, Tool};
use super::{LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS};
use crate::error::ApiError;

/// What one connection (a stdio process, an HTTP session) has agreed with its client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SessionState {
    /// The negotiated protocol revision; `None` until `initialize` succeeded.
    pub(crate) protocol_version: Option<String>,
    /// Whether the client sent `notifications/initialized`.
    pub(crate) initialized: bool,
}

impl SessionState {
    /// Whether the negotiated revision allows JSON-RPC batches (2025-03-26 does, 2025-06-18 not).
    fn allows_batches(&self) -> bool {
        self.protocol_version.as_deref() != Some("2025-06-18")
    }
}

/// Whether `payload` (a message or a batch) calls a tool that keeps a thread long
/// ([`super::tools::Tool::heavy`]).
pub(crate) fn calls_heavy_tool(payload: &Value) -> bool {
    let heavy = |m: &Value| {
        m.get("method").and_then(Value::as_str) == Some("tools/call")
            && m.pointer("/params/name")
                .and_then(Value::as_str)
                .and_then(super::tools::Tool::by_name)
                .is_some_and(|t| t.heavy())
    };
    match payload {
        Value::Array(items) => items.iter().any(heavy),
        m => heavy(m),
    }
}

/// Handles one payload (a message or, where the revision allows, a batch) for a tenant and
/// returns the reply to send, or `None` when nothing is owed (notifications, responses).
pub(crate) fn handle_payload(
    memory: &Memory,
    tenant: &TenantId,
    state: &mut SessionState,
    payload: Value,
) -> Option<Value> {
    match payload {
        Value::Array(items) => {
            if items.is_empty() {
                return Some(jsonrpc::failure(
                    Value::Null,
                    &RpcError::invalid_request("an empty batch holds no message"),
                ));
            }
            if !state.allows_batches() {
                return Some(jsonrpc::failure(
                    Value::Null,
                    &RpcError::invalid_request(
                        "JSON-RPC batches are not part of protocol 2025-06-18; send one message per request",
                    ),
                ));
            }
            let most = memory.config().limits.mcp_max_batch;
            if items.len() > most {
                return Some(jsonrpc::failure(
                    Value::Null,
                    &RpcError::invalid_request(format!(
                        "a batch of {} messages is over the limit of {most} (limits.mcp_max_batch); send several \
                         requests",
                        items.len()
                    )),
                ));
            }
            // Each call is bounded on its own; together they may carry no more text than one
            // ingest call, so a batch never keeps the server busy longer than one request may.
            let text: usize = items.iter().map(|item| text_chars(item.get("params"))).sum();
            let most = memory.config().ingest.max_batch_chars;
            if text > most {
                return Some(jsonrpc::failure(
                    Value::Null,
                    &RpcError::invalid_request(format!(
                        "a batch carrying {text} characters of text is over the limit of {most} for one request \
                         (ingest.max_batch_chars); send several requests"
                    )),
                ));
            }
            let replies: Vec<Value> = items
                .into_iter()
                .filter_map(|item| {
                    if item.get("method").and_then(Value::as_str) == Some("initialize") {
                        let id = item.get("id").cloned().unwrap_or(Value::Null);
                        let e = RpcError::invalid_request("initialize must not be part of a batch");
                        return Some(jsonrpc::failure(id, &e));
                    }
                    handle_message(memory, tenant, state, item)
                })
                .collect();
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
        message => handle_message(memory, tenant, state, message),
    }
}

/// Characters of text in a JSON value: its strings, at any depth (what the tools would store,
/// search for or embed).
fn text_chars(value: Option<&Value>) -> usize {
    match value {
        Some(Value::String(s)) => s.chars().count(),
        Some(Value::Array(items)) => items.iter().map(|v| text_chars(Some(v))).sum(),
        Some(Value::Object(map)) => map.values().map(|v| text_chars(Some(v))).sum(),
        _ => 0,
    }
}

/// Handles one JSON-RPC message.
pub(crate) fn handle_message(
    memory: &Memory,
    tenant: &TenantId,
    state: &mut SessionState,
    message: Value,
) -> Option<Value> {
    match jsonrpc::classify(message) {
        Err((id, e)) => Some(jsonrpc::failure(id, &e)),
        Ok(Incoming::Response) => None,
        Ok(Incoming::Notification { method }) => {
            if method == "notifications/initialized" && state.protocol_version.is_some() {
                state.initialized = true;
            }
            // Other notifications (cancelled, progress, roots changed) need nothing from this server.
            None
        }
        Ok(Incoming::Request { id, method, params }) => Some(match request(memory, tenant, state, &method, params) {
            Ok(result) => jsonrpc::success(id, result),
            Err(e) => jsonrpc::failure(id, &e),
        }),
    }
}

fn request(
    memory: &Memory,
    tenant: &TenantId,
    state: &mut SessionState,
    method: &str,
    params: Option<Value>,
) -> Result<Value, RpcError> {
    match method {
        "initialize" => initialize(state, params),
        "ping" => Ok(json!({})),
        _ if state.protocol_version.is_none() => {
            Err(RpcError::invalid_request(format!("`{method}` before `initialize`: initialize the session first")))
        }
        "tools/list" => {
            let params = jsonrpc::params_object(params);
            if params.get("cursor").is_some_and(|c| !c.is_null()) {
                return Err(RpcError::invalid_params("unknown cursor: every tool is on the first page"));
            }
            Ok(json!({"tools": tools::list()}))
        }
        "tools/call" => call_tool(memory, tenant, params),
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            "method_not_found",
            format!("method `{other}` is not offered; this server has tools only (tools/list, tools/call) and ping"),
        )),
    }
}

/// Negotiates the revision: the client's if this server speaks it, else the latest it speaks.
fn initialize(state: &mut SessionState, params: Option<Value>) -> Result<Value, RpcError> {
    if state.protocol_version.is_some() {
        return Err(RpcError::invalid_request("the session is already initialized"));
    }
    let params = jsonrpc::params_object(params);
    let requested = params.get("protocolVersion").and_then(Value::as_str).ok_or_else(|| {
        RpcError::invalid_params("initialize needs params.protocolVersion, a string such as \"2025-06-18\"")
    })?;
    if params.get("clientInfo").is_some_and(|c| !c.is_object()) {
        return Err(RpcError::invalid_params("params.clientInfo must be an object {name, version}"));
    }
    let version = PROTOCOL_VERSIONS.iter().find(|v| **v == requested).copied().unwrap_or(LATEST_PROTOCOL_VERSION);
    state.protocol_version = Some(version.to_string());
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "mnemo", "title": "mnemo memory", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "Durable memory for the users you talk to. Call `context` with the user's new message \
                         before answering and follow its sections; call `remember` with what the user said \
                         (or a memory to keep); `recall` searches, `list_memories` browses, `forget` archives \
                         a memory the user wants gone. Every call names the user_id; the tenant is your key's.",
    }))
}

fn call_tool(memory: &Memory, tenant: &TenantId, params: Option<Value>) -> Result<Value, RpcError> {
    let mut params = jsonrpc::params_object(params);
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs params.name, the tool to call"))?;
    let tool = Tool::by_name(name).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "unknown tool `{name}`; the tools are remember, recall, context, forget and list_memories"
        ))
    })?;
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(a @ Value::Object(_)) => a,
        Some(_) => return Err(RpcError::invalid_params("params.arguments must be an object")),
    };
    Ok(match tools::call(memory, tenant, tool, arguments) {
        Ok(structured) => {
            let text = serde_json::to_string(&structured)
                .map_err(|e| RpcError::new(INTERNAL_ERROR, "internal", format!("could not encode the result: {e}")))?;
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false})
        }
        Err(e) => json!({"content": [{"type": "text", "text": tool_error_text(&e)}], "isError": true}),
    })
}

/// The message a failed tool call shows the model: the engine's own words for bad input and
/// unknown ids; for internal failures only a reference to the log line, as the REST API does.
fn tool_error_text(e: &ApiError) -> String {
    match e {
        ApiError::Internal { detail } | ApiError::Unavailable { detail } => {
            let reference = ulid::Ulid::new().to_string().to_lowercase();
            let (_, code) = e.status_and_code();
            crate::error::log_failure(e, &reference, code, detail);
            format!("{e}; reference {reference}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::calls_heavy_tool;
    use serde_json::json;

    #[test]
    fn ingesting_tools_are_heavy_and_reads_are_not() {
        let call = |name: &str| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}});
        for heavy in ["remember", "store_document", "rotate_session"] {
            assert!(calls_heavy_tool(&call(heavy)), "{heavy}");
        }
        for light in ["recall", "context", "forget", "list_memories", "no_such_tool"] {
            assert!(!calls_heavy_tool(&call(light)), "{light}");
        }
        assert!(!calls_heavy_tool(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})));
        assert!(calls_heavy_tool(&json!([call("recall"), call("remember")])), "a batch holding one ingest");
        assert!(!calls_heavy_tool(&json!([call("recall"), call("context")])));
    }
}
