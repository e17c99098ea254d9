//! The streamable HTTP transport at `/mcp`: one JSON-RPC message per POST, answered with
//! `application/json` (this server never streams), sessions named by `Mcp-Session-Id`.
//!
//! Auth is the REST API's: `Authorization: Bearer <tenant key>` on every request, and a session
//! belongs to the tenant whose key opened it, so another tenant's key cannot use (or even find)
//! it. `Origin` is checked on every request against DNS rebinding: loopback origins are allowed,
//! others only when listed in [`HttpOptions::allowed_origins`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mnemo::core::TenantId;
use serde_json::Value;

use super::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR, RpcError, UNAUTHORIZED};
use super::protocol::{self, SessionState};
use super::{PROTOCOL_VERSIONS, SESSION_HEADER};
use crate::AppState;
use crate::auth::Tenant;
use crate::error::ApiError;

/// The header naming the negotiated revision on every request after `initialize`.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// Settings of the `/mcp` endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpOptions {
    /// Browser origins allowed besides loopback ones (`http://localhost:3000` is always
    /// allowed), exactly as browsers send them (`https://app.example.com`); `*` allows any.
    /// Requests without an `Origin` header (non-browser clients) are always allowed.
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    /// Options from the environment: `MNEMO_MCP_ALLOWED_ORIGINS`, comma-separated.
    pub fn from_env() -> Self {
        let list = std::env::var("MNEMO_MCP_ALLOWED_ORIGINS").unwrap_or_default();
        Self::with_origins(list.split(','))
    }

    /// Options allowing these origins besides loopback ones.
    pub fn with_origins<'a>(origins: impl IntoIterator<Item = &'a str>) -> Self {
        let allowed_origins =
            origins.into_iter().map(|o| o.trim().trim_end_matches('/').to_string()).filter(|o| !o.is_empty()).collect();
        Self { allowed_origins }
    }

    /// Whether a request with this `Origin` may use the endpoint.
    fn allows(&self, origin: &str) -> bool {
        let origin = origin.trim().trim_end_matches('/');
        is_loopback_origin(origin)
            || self.allowed_origins.iter().any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(origin))
    }
}

/// `http://localhost:8080`, `http://127.0.0.1`, `http://[::1]:3000` and the like.
fn is_loopback_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else { return false };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return false;
    }
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((host, _)) => host,
            None => return false,
        }
    } else {
        rest.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[derive(Debug)]
struct HttpSession {
    tenant: TenantId,
    state: SessionState,
    last_seen: Instant,
}

/// The live sessions of one router, bounded per tenant and in all (`[limits]`): a tenant
/// opening session after session ends its own longest-idle ones, never another tenant's.
/// Sessions idle for longer than `idle` are forgotten (the client starts a new one with
/// `initialize` after a 404, as the protocol says).
#[derive(Debug)]
struct Sessions {
    map: Mutex<HashMap<String, HttpSession>>,
    per_tenant: usize,
    most: usize,
    idle: Duration,
}

impl Sessions {
    fn new(limits: &mnemo::core::config::LimitsTuning) -> Self {
        Self {
            map: Mutex::default(),
            per_tenant: limits.mcp_sessions_per_tenant.max(1),
            most: limits.mcp_max_sessions.max(1),
            idle: Duration::from_secs(limits.mcp_session_idle_secs),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HttpSession>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create(&self, tenant: TenantId, state: SessionState) -> Result<String, Refusal> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness for a session id: {e}")))?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let now = Instant::now();
        let mut map = self.lock();
        map.retain(|_, s| now.duration_since(s.last_seen) < self.idle);
        let own = map.values().filter(|s| s.tenant == tenant).count();
        if own >= self.per_tenant
            && let Some(oldest) =
                map.iter().filter(|(_, s)| s.tenant == tenant).min_by_key(|(_, s)| s.last_seen).map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        } else if map.len() >= self.most {
            return Err(Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                INVALID_REQUEST,
                "too_many_sessions",
                format!(
                    "the server holds {} MCP sessions, its limit (limits.mcp_max_sessions); end unused sessions \
                     with DELETE /mcp or retry once idle ones expire",
                    map.len()
                ),
            ));
        }
        map.insert(id.clone(), HttpSession { tenant, state, last_seen: now });
        Ok(id)
    }

    /// The session's state, if it exists, is live and belongs to this tenant.
    fn get(&self, id: &str, tenant: &TenantId) -> Option<SessionState> {
        let mut map = self.lock();
        let now = Instant::now();
        let session = map.get_mut(id)?;
        if now.duration_since(session.last_seen) >= self.idle {
            map.remove(id);
            return None;
        }
        if session.tenant != *tenant {
            return None;
        }
        session.last_seen = now;
        Some(session.state.clone())
    }

    fn update(&self, id: &str, state: &SessionState) {
        if let Some(session) = self.lock().get_mut(id) {
            session.state.initialized |= state.initialized;
        }
    }

    fn remove(&self, id: &str, tenant: &TenantId) -> bool {
        let mut map = self.lock();
        match map.get(id) {
            Some(s) if s.tenant == *tenant => map.remove(id).is_some(),
            _ => false,
        }
    }
}

#[derive(Debug)]
struct McpState {
    app: AppState,
    options: HttpOptions,
    sessions: Sessions,
}

/// The `/mcp` route, to merge into the API's router.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(app: AppState, options: HttpOptions) -> Router<S> {
    let sessions = Sessions::new(&app.memory.config().limits);
    let state = Arc::new(McpState { app, options, sessions });
    Router::new().route("/mcp", post(post_message).get(get_stream).delete(delete_session)).with_state(state)
}

/// A transport-level failure: an HTTP status with a JSON-RPC error body (id null).
struct Refusal {
    status: StatusCode,
    error: RpcError,
}

impl Refusal {
    fn new(status: StatusCode, code: i64, reason: &'static str, message: impl Into<String>) -> Self {
        Self { status, error: RpcError::new(code, reason, message) }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = jsonrpc::failure(Value::Null, &self.error);
        let mut res = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        res
    }
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        let (status, reason) = e.status_and_code();
        match e {
            ApiError::Unauthorized => Refusal::new(status, UNAUTHORIZED, reason, e.to_string()),
            // Internal detail goes to the log through the REST error path, never to the client.
            ApiError::Internal { .. } | ApiError::Unavailable { .. } => {
                let res = e.into_response();
                Refusal::new(res.status(), jsonrpc::INTERNAL_ERROR, reason, "internal error; see the server log")
            }
            other => Refusal::new(status, INVALID_REQUEST, reason, other.to_string()),
        }
    }
}

fn check_origin(headers: &HeaderMap, options: &HttpOptions) -> Result<(), Refusal> {
    let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
    let origin = origin.to_str().unwrap_or("<not text>");
    if options.allows(origin) {
        return Ok(());
    }
    Err(Refusal::new(
        StatusCode::FORBIDDEN,
        INVALID_REQUEST,
        "forbidden_origin",
        format!(
            "Origin {origin} may not use /mcp: only loopback origins are allowed unless the server lists it in \
             MNEMO_MCP_ALLOWED_ORIGINS"
        ),
    ))
}

/// Origin first (a hostile page learns nothing), then the key.
async fn authorize(st: &McpState, parts: &mut axum::http::request::Parts) -> Result<TenantId, Refusal> {
    check_origin(&parts.headers, &st.options)?;
    let Tenant(tenant) = Tenant::from_request_parts(parts, &st.app).await?;
    Ok(tenant)
}

fn session_id(headers: &HeaderMap) -> Result<String, Refusal> {
    let id = headers.get(SESSION_HEADER).ok_or_else(|| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "missing_session",
            "missing Mcp-Session-Id header: send `initialize` first and echo the session id it returns",
        )
    })?;
    Ok(id.to_str().unwrap_or_default().to_string())
}

fn unknown_session() -> Refusal {
    Refusal::new(
        StatusCode::NOT_FOUND,
        INVALID_REQUEST,
        "session_not_found",
        "no such MCP session for this key (it ended or expired): send `initialize` to start a new one",
    )
}

/// Whether the `Accept` header admits a JSON reply (absent means anything goes).
fn accepts_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|a| a.to_str().ok()) else { return true };
    accept
        .split(',')
        .map(|t| t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .any(|t| t == "application/json" || t == "application/*" || t == "*/*")
}

/// `POST /mcp`: one JSON-RPC message (or, in revision 2025-03-26, a batch).
async fn post_message(State(st): State<Arc<McpState>>, request: Request) -> Response {
    match post_inner(&st, request).await {
        Ok(res) => res,
        Err(refusal) => refusal.into_response(),
    }
}

async fn post_inner(st: &Arc<McpState>, request: Request) -> Result<Response, Refusal> {
    let (mut parts, body) = request.into_parts();
    let tenant = authorize(st, &mut parts).await?;
    if !accepts_json(&parts.headers) {
        return Err(Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "not_acceptable",
            "this server answers application/json; send `Accept: application/json, text/event-stream`",
        ));
    }
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("application/json"));
    if !is_json {
        return Err(Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            INVALID_REQUEST,
            "unsupported_media_type",
            "send the JSON-RPC message with `Content-Type: application/json`",
        ));
    }
    let bytes = axum::body::to_bytes(body, st.app.body_limit).await.map_err(|_| {
        Refusal::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            "payload_too_large",
            "the request body is larger than the server accepts",
        )
    })?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Refusal::new(StatusCode::BAD_REQUEST, PARSE_ERROR, "malformed_json", format!("the body is not JSON: {e}"))
    })?;

    let is_initialize = payload.get("method").and_then(Value::as_str) == Some("initialize");
    if is_initialize {
        let (reply, state) = run(st, tenant.clone(), SessionState::default(), payload).await?;
        let mut res = json_reply(reply);
        if state.protocol_version.is_some() {
            let id = st.sessions.create(tenant, state)?;
            if let Ok(value) = HeaderValue::from_str(&id) {
                res.headers_mut().insert(SESSION_HEADER, value);
            }
        }
        return Ok(res);
    }

    let id = session_id(&parts.headers)?;
    let state = st.sessions.get(&id, &tenant).ok_or_else(unknown_session)?;
    if let Some(version) = parts.headers.get(PROTOCOL_HEADER) {
        let version = version.to_str().unwrap_or_default();
        if !PROTOCOL_VERSIONS.contains(&version) || state.protocol_version.as_deref() != Some(version) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "unsupported_protocol_version",
                format!(
                    "MCP-Protocol-Version {version} does not match this session's {}; this server speaks {}",
                    state.protocol_version.as_deref().unwrap_or("none"),
                    PROTOCOL_VERSIONS.join(", ")
                ),
            ));
        }
    }
    let (reply, state) = run(st, tenant, state, payload).await?;
    st.sessions.update(&id, &state);
    Ok(json_reply(reply))
}

/// Runs the protocol on the blocking pool (tools call the engine, which does disk and model work);
/// a call to a heavy tool goes the HTTP routes' heavy way instead ([`crate::heavy`]): behind one
/// of the tenant's heavy places, on a thread of lower priority.
async fn run(
    st: &Arc<McpState>,
    tenant: TenantId,
    mut state: SessionState,
    payload: Value,
) -> Result<(Option<Value>, SessionState), Refusal> {
    let heavy = protocol::calls_heavy_tool(&payload).then(|| tenant.clone());
    let work = move |memory: &mnemo::Memory| {
        let reply = protocol::handle_payload(memory, &tenant, &mut state, payload);
        Ok((reply, state))
    };
    Ok(match heavy {
        Some(tenant) => crate::heavy(&st.app, &tenant, work).await?,
        None => crate::blocking(&st.app, work).await?,
    })
}

/// A reply as `application/json`, or 202 with no body when nothing is owed.
fn json_reply(reply: Option<Value>) -> Response {
    match reply {
        Some(body) => (StatusCode::OK, axum::Json(body)).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `GET /mcp`: this server sends nothing unprompted, so it offers no stream.
async fn get_stream() -> Response {
    let mut res = Refusal::new(
        StatusCode::METHOD_NOT_ALLOWED,
        INVALID_REQUEST,
        "method_not_allowed",
        "this server offers no server-initiated stream; POST JSON-RPC messages to /mcp",
    )
    .into_response();
    res.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    res
}

/// `DELETE /mcp`: ends the session named by `Mcp-Session-Id`.
async fn delete_session(State(st): State<Arc<McpState>>, request: Request<Body>) -> Response {
    let (mut parts, _) = request.into_parts();
    let ended = async {
        let tenant = authorize(&st, &mut parts).await?;
        let id = session_id(&parts.headers)?;
        if st.sessions.remove(&id, &tenant) { Ok(StatusCode::NO_CONTENT) } else { Err(unknown_session()) }
    };
    match ended.await {
        Ok(status) => status.into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_and_others_need_listing() {
        let none = HttpOptions::default();
        for ok in ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443", "http://LOCALHOST/"] {
            assert!(none.allows(ok), "{ok}");
        }
        for bad in ["https://evil.example", "http://localhost.evil.example", "null", "file://", "http://[::1"] {
            assert!(!none.allows(bad), "{bad}");
        }
        let listed = HttpOptions::with_origins("https://app.example.com/, ".split(','));
        assert!(listed.allows("https://app.example.com"));
        assert!(!listed.allows("https://other.example.com"));
        assert!(HttpOptions::with_origins(["*"]).allows("https://anything.example"));
    }

    #[test]
    fn accept_must_admit_json() {
        let mut h = HeaderMap::new();
        assert!(accepts_json(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        assert!(accepts_json(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(!accepts_json(&h));
    }
}
