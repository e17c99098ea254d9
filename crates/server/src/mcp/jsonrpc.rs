//! JSON-RPC 2.0 as MCP uses it: telling requests, notifications and responses apart, and
//! building replies and error objects.

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid JSON-RPC message.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not offered.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// The params of a known method are wrong (including an unknown tool name).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// A failure inside the server.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// Server-defined: the caller has no valid key (the tenant cannot be known).
pub(crate) const UNAUTHORIZED: i64 = -32001;

/// A JSON-RPC error object, with a stable snake_case `code` of our own in `data` so clients can
/// branch on the same codes the REST API uses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) reason: &'static str,
}

impl RpcError {
    pub(crate) fn new(code: i64, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), reason }
    }

    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, "invalid_request", message)
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, "invalid_params", message)
    }

    /// The error as a JSON-RPC error object.
    pub(crate) fn to_value(&self) -> Value {
        json!({"code": self.code, "message": self.message, "data": {"code": self.reason}})
    }
}

/// One message from the client, classified.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// Expects a response with the same id.
    Request { id: Value, method: String, params: Option<Value> },
    /// Expects nothing back.
    Notification { method: String },
    /// A reply to a request of ours; this server sends none, so these are dropped.
    Response,
}

/// Classifies one JSON value. The error carries the id when one could be read, so the error
/// response can still be matched to its request.
pub(crate) fn classify(message: Value) -> Result<Incoming, (Value, RpcError)> {
    let Value::Object(mut obj) = message else {
        return Err((Value::Null, RpcError::invalid_request("a JSON-RPC message must be a JSON object")));
    };
    let id = obj.remove("id");
    let reply_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((reply_id, RpcError::invalid_request("the message must carry \"jsonrpc\": \"2.0\"")));
    }
    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err((reply_id, RpcError::invalid_request("\"method\" must be a string")));
        };
        let params = obj.remove("params");
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err((reply_id, RpcError::invalid_request("\"params\" must be an object (MCP uses named params)")));
        }
        return match id {
            None => Ok(Incoming::Notification { method }),
            Some(id) if valid_id(&id) => Ok(Incoming::Request { id, method, params }),
            Some(_) => Err((Value::Null, RpcError::invalid_request("\"id\" must be a string or an integer"))),
        };
    }
    if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) {
        return Ok(Incoming::Response);
    }
    Err((
        reply_id,
        RpcError::invalid_request("a message needs \"method\" (request, notification) or \"result\"/\"error\""),
    ))
}

/// MCP ids are strings or integers, never null.
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some() || id.as_u64().is_some()
}

/// A successful response.
pub(crate) fn success(id: Value, result: Value) -> Value {
    response(id, "result", result)
}

/// An error response.
pub(crate) fn failure(id: Value, error: &RpcError) -> Value {
    response(id, "error", error.to_value())
}

fn response(id: Value, field: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::String("2.0".into()));
    map.insert("id".into(), id);
    map.insert(field.into(), value);
    Value::Object(map)
}

/// The `params` of a request as an object (absent params read as `{}`).
pub(crate) fn params_object(params: Option<Value>) -> Map<String, Value> {
    match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let req = classify(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})).unwrap();
        assert_eq!(req, Incoming::Request { id: json!(7), method: "ping".into(), params: None });
        let note = classify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        assert_eq!(note, Incoming::Notification { method: "notifications/initialized".into() });
        assert_eq!(classify(json!({"jsonrpc": "2.0", "id": "a", "result": {}})).unwrap(), Incoming::Response);
    }

    #[test]
    fn malformed_messages_name_what_is_wrong_and_keep_a_readable_id() {
        let (id, e) = classify(json!({"id": 3, "method": "ping"})).unwrap_err();
        assert_eq!((id, e.code), (json!(3), INVALID_REQUEST));
        assert!(e.message.contains("jsonrpc"), "{}", e.message);
        let (id, e) = classify(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})).unwrap_err();
        assert_eq!((id, e.code), (Value::Null, INVALID_REQUEST));
        let (_, e) = classify(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]})).unwrap_err();
        assert!(e.message.contains("params"), "{}", e.message);
        let (_, e) = classify(json!([1])).unwrap_err();
        assert_eq!(e.code, INVALID_REQUEST);
    }
}
