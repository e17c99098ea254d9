//! The stdio transport: newline-delimited JSON-RPC on standard input, replies on standard
//! output, one message per line, logs on standard error only.
//!
//! The tenant comes from a key checked against the same `keys.db` as the HTTP API, before the
//! first message and again before each request, so revoking the key ends the process's access.

use std::io::{BufRead, Write};

use mnemo::Memory;
use mnemo::core::TenantId;
use serde_json::Value;

use super::jsonrpc::{self, PARSE_ERROR, RpcError, UNAUTHORIZED};
use super::protocol::{self, SessionState};
use crate::keys::{KeyError, KeyStore};

/// Why the stdio server stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StdioError {
    /// The key is unknown or revoked in this data directory's key store.
    #[error(
        "the API key is not valid here (unknown or revoked in this data directory's keys.db); create one with \
         `mnemo keys create --tenant NAME` and pass it in MNEMO_API_KEY"
    )]
    InvalidKey,
    /// The key store could not be read.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// Reading standard input or writing standard output failed.
    #[error("stdio: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks a tenant key the way the HTTP API does and returns its tenant.
pub fn tenant_for_key(keys: &KeyStore, key: &str) -> Result<TenantId, StdioError> {
    keys.tenant_for(key)?.ok_or(StdioError::InvalidKey)
}

/// Serves MCP over a line-oriented reader and writer until the input ends.
///
/// `key` is checked against `keys` first (an invalid key is an error before anything is read)
/// and before every request after that; a request arriving after the key was revoked gets a
/// JSON-RPC error. Blank lines are skipped; a line that is not JSON gets a parse error.
pub fn serve_stdio(
    memory: &Memory,
    keys: &KeyStore,
    key: &str,
    mut input: impl BufRead,
    mut output: impl Write,
) -> Result<(), StdioError> {
    tenant_for_key(keys, key)?;
    let mut state = SessionState::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply = match serde_json::from_slice::<Value>(&line) {
            Err(e) => Some(jsonrpc::failure(
                Value::Null,
                &RpcError::new(PARSE_ERROR, "malformed_json", format!("the line is not JSON: {e}")),
            )),
            Ok(payload) => match tenant_for_key(keys, key) {
                Ok(tenant) => protocol::handle_payload(memory, &tenant, &mut state, payload),
                Err(StdioError::InvalidKey) => refuse_requests(&payload),
                Err(other) => return Err(other),
            },
        };
        if let Some(reply) = reply {
            let text = serde_json::to_string(&reply).map_err(std::io::Error::other)?;
            writeln!(output, "{text}")?;
            output.flush()?;
        }
    }
    Ok(())
}

/// Replies to every request of a payload with "key revoked"; notifications get nothing.
fn refuse_requests(payload: &Value) -> Option<Value> {
    let error = RpcError::new(UNAUTHORIZED, "unauthorized", StdioError::InvalidKey.to_string());
    let refuse = |m: &Value| {
        let id = m.get("id").filter(|_| m.get("method").is_some())?;
        Some(jsonrpc::failure(id.clone(), &error))
    };
    match payload {
        Value::Array(items) => {
            let replies: Vec<Value> = items.iter().filter_map(refuse).collect();
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
        one => refuse(one),
    }
}
