//! The Model Context Protocol server: mnemo's memory as ten tools for LLM clients — remember,
//! recall, context, forget, list_memories, store_document, find_similar_documents, observe,
//! report_context_usage, rotate_session — over the same engine and keys as the REST API.
//!
//! JSON-RPC 2.0 by hand ([`jsonrpc`]), the lifecycle and tool methods both transports share
//! ([`protocol`]), the tools and their schemas ([`tools`]), and two transports: streamable HTTP
//! at `/mcp` on the API's router ([`http`]) and newline-delimited stdio for `mnemo mcp`
//! ([`serve_stdio`]). The tenant always comes from the key, never from tool arguments.

mod http;
mod jsonrpc;
mod protocol;
mod stdio;
mod tools;

pub use http::HttpOptions;
pub(crate) use http::routes;
pub use stdio::{StdioError, serve_stdio, tenant_for_key};

/// The protocol revisions this server speaks, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26"];
/// The revision offered to a client that asks for one this server does not speak.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-06-18";
/// The HTTP header that names a session after `initialize`.
pub const SESSION_HEADER: &str = "mcp-session-id";
