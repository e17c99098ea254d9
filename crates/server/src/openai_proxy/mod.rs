//! Memory for any OpenAI client: `POST /openai/v1/chat/completions` and `GET /openai/v1/models`
//! in front of an OpenAI-compatible upstream (`[proxy]`; docs/openai-proxy.md).
//!
//! An app points its OpenAI SDK's `base_url` here and its `api_key` at a mnemo tenant key. For
//! each chat request mnemo builds the memory block for the last user message (as
//! `POST /v1/context` does), inserts it as a system message after the app's own, forwards the
//! request with every other field untouched, and streams the upstream's answer back byte for
//! byte. Once the answer has been delivered, the user's message and the assistant's reply are
//! ingested (as `POST /v1/messages`), so remembering never delays the answer.
//!
//! The upstream's errors reach the client with their status and body. A failure of mnemo's own
//! (a bad user id, a store error) never breaks the chat: the request goes upstream without
//! memory, the log says why, and so does the answer's `X-Mnemo-Memory` header.
//!
//! Each upstream call runs on a thread of its own, never on the blocking pool the engine's work
//! shares, and each tenant may have only so many in flight ([`Slots`]): a slow upstream holds
//! the proxy's threads, one tenant's share of them at most, and no other route waits for it.

mod conversation;

use std::io::Read;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mnemo::ProxySettings;
use mnemo::core::{NewMessage, Role, Scope, TenantId};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use crate::AppState;
use crate::admission::{Place, TenantGate};
use crate::auth::CompatTenant;
use crate::error::ApiError;

/// Header of every proxied answer saying what memory did: `turn <id>` (the block's trace turn),
/// or `skipped: <why>`.
pub(crate) const MEMORY_HEADER: &str = "x-mnemo-memory";

/// How much of an answer is kept to read the reply from; the client still gets all of it.
const MAX_CAPTURE: usize = 4 * 1024 * 1024;

/// The `Retry-After`, in seconds, of a call refused for the calls in flight.
const RETRY_AFTER_SECS: u16 = 1;

/// The proxy's routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/openai/v1/chat/completions", post(chat_completions)).route("/openai/v1/models", get(models))
}

/// An error of the proxy itself in OpenAI's shape, `{"error": {"message", "type", "param",
/// "code"}}`, which OpenAI SDKs read: OpenAI's type for the status (`invalid_request_error` for
/// a refusal of the request, `server_error` for a failure on this side), and mnemo's stable code.
fn openai_error(status: StatusCode, message: &str, code: &str) -> Response {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    let error = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (status, axum::Json(error)).into_response()
}

/// Why a proxied call is refused before any work, each answered in OpenAI's shape.
#[derive(Debug)]
enum Refused {
    /// `proxy.upstream_url` is not set.
    NoUpstream,
    /// The tenant has `cap` calls in flight (`proxy.max_concurrent_per_tenant`).
    TenantBusy { cap: usize },
    /// The proxy has `cap` calls in flight (`proxy.max_concurrent`).
    ProxyBusy { cap: usize },
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, message, code) = match self {
            Refused::NoUpstream => {
                return openai_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "mnemo's OpenAI proxy has no upstream: set MNEMO_PROXY_UPSTREAM_URL (or upstream_url under [proxy])",
                    "unavailable",
                );
            }
            Refused::TenantBusy { cap } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "this tenant already has {cap} calls to the upstream in flight, the most it may have \
                     (proxy.max_concurrent_per_tenant); retry after {RETRY_AFTER_SECS} s, or raise the setting"
                ),
                "rate_limited",
            ),
            Refused::ProxyBusy { cap } => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "mnemo's OpenAI proxy already has {cap} calls to the upstream in flight, the most it makes \
                     (proxy.max_concurrent); retry after {RETRY_AFTER_SECS} s, or raise the setting"
                ),
                "unavailable",
            ),
        };
        // The calls in flight may end any moment: say when to try again, as OpenAI's SDKs read.
        let mut response = openai_error(status, &message, code);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        response
    }
}

/// The proxy's upstream calls in flight: a place in the calling tenant's cap
/// (`proxy.max_concurrent_per_tenant`) and one in the total (`proxy.max_concurrent`). A call
/// over either is refused at once rather than queued, so it never waits behind another
/// tenant's calls, and its client's SDK retries after `Retry-After`.
#[derive(Debug)]
pub(crate) struct Slots {
    tenants: TenantGate,
    total: Arc<Semaphore>,
    max_total: usize,
}

/// One upstream call's places, given back when its thread is done with it.
struct Slot {
    _tenant: Place,
    _total: OwnedSemaphorePermit,
}

impl Slots {
    /// The caps `settings` name (each at least 1).
    pub(crate) fn new(settings: &ProxySettings) -> Self {
        let max_total = settings.max_concurrent.max(1);
        Self {
            tenants: TenantGate::new(settings.max_concurrent_per_tenant),
            total: Arc::new(Semaphore::new(max_total)),
            max_total,
        }
    }

    /// Places for one more call of `tenant`, or why not: the tenant has its cap in flight
    /// (429), or the proxy has its total (503).
    fn take(&self, tenant: &TenantId) -> Result<Slot, Refused> {
        let Some(own) = self.tenants.try_enter(tenant) else {
            let cap = self.tenants.per_tenant();
            tracing::debug!(tenant = tenant.as_str(), cap, "proxy: refused, the tenant's calls are all in flight");
            return Err(Refused::TenantBusy { cap });
        };
        let Ok(total) = self.total.clone().try_acquire_owned() else {
            let cap = self.max_total;
            tracing::warn!(cap, "proxy: refused, the proxy's calls are all in flight");
            return Err(Refused::ProxyBusy { cap });
        };
        Ok(Slot { _tenant: own, _total: total })
    }
}

impl ApiError {
    /// This error in OpenAI's shape, for the proxy's own refusals (a bad key, a body too large).
    fn into_openai(self) -> Response {
        let (status, code, message) = self.public();
        self.with_headers(openai_error(status, &message, code))
    }
}

/// A body the proxy could not read as bytes, as an error to answer in OpenAI's shape: one over
/// the server's body limit (`limit` bytes) is a 413 that names it.
fn unread_body(rejection: &BytesRejection, limit: usize) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::TooLarge(format!(
            "the request body is larger than the server accepts ({limit} bytes); send a shorter history, or raise \
             the server's body limit"
        ))
    } else {
        ApiError::Invalid(rejection.body_text())
    }
}

/// Whose conversation a request belongs to and what to remember from it.
struct Turn {
    scope: Scope,
    user_text: String,
}

/// Reads the request, builds and inserts the memory block; what to ingest afterwards and what
/// the `X-Mnemo-Memory` header says. Every failure is reported, never raised.
async fn remember_into(
    state: &AppState,
    tenant: &mnemo::core::TenantId,
    headers: &HeaderMap,
    body: &mut Value,
) -> (Option<Turn>, String) {
    let Some(user) = conversation::user(body, headers) else {
        return (None, "skipped: no user (send `user` or X-Mnemo-User)".into());
    };
    let Some(user_text) = conversation::last_user_text(body) else {
        return (None, "skipped: no user message with text".into());
    };
    let chat = conversation::chat(body, headers);
    let agent = conversation::agent(headers);
    let scope = match crate::routes::scope(tenant, agent.as_deref(), Some(&user), chat.as_deref()) {
        Ok(s) => s,
        Err(e) => return (None, format!("skipped: {e}")),
    };
    let (for_context, query) = (scope.clone(), user_text.clone());
    let built = crate::blocking(state, move |m| Ok(m.context(&for_context, &query, None)?)).await;
    let note = match built {
        Ok(ctx) => {
            if !ctx.block.text.trim().is_empty() {
                conversation::insert_block(body, &ctx.block.text);
            }
            format!("turn {}", ctx.turn_id)
        }
        Err(e) => {
            let (_, code, message) = e.public();
            tracing::warn!(code, message, "proxy: forwarding without memory");
            format!("skipped: {message}")
        }
    };
    (Some(Turn { scope, user_text }), note)
}

/// `POST /openai/v1/chat/completions`.
async fn chat_completions(
    State(state): State<AppState>,
    tenant: Result<CompatTenant, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let CompatTenant(tenant) = match tenant {
        Ok(t) => t,
        Err(e) => return e.into_openai(),
    };
    let body = match body {
        Ok(b) => b,
        Err(r) => return unread_body(&r, state.body_limit).into_openai(),
    };
    // Refused before any work: no upstream, or the tenant's calls all in flight.
    let (settings, slot) = match admit(&state, &tenant) {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    // A body mnemo cannot read is the upstream's to judge: it goes through as sent.
    let (body, streaming, turn, note) = match serde_json::from_slice::<Value>(&body) {
        Ok(mut v) => {
            let streaming = v.get("stream").and_then(Value::as_bool) == Some(true);
            let (turn, note) = remember_into(&state, &tenant, &headers, &mut v).await;
            (Bytes::from(serde_json::to_vec(&v).unwrap_or_else(|_| body.to_vec())), streaming, turn, note)
        }
        Err(_) => (body, false, None, "skipped: the body is not JSON".into()),
    };
    let call = Call::new(settings, Method::POST, "chat/completions", Some(body), &headers, streaming);
    forward(&state, slot, call, turn, note).await
}

/// `GET /openai/v1/models`: the upstream's list, for SDKs and tools that ask first.
async fn models(State(state): State<AppState>, tenant: Result<CompatTenant, ApiError>, headers: HeaderMap) -> Response {
    let CompatTenant(tenant) = match tenant {
        Ok(t) => t,
        Err(e) => return e.into_openai(),
    };
    let (settings, slot) = match admit(&state, &tenant) {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    let call = Call::new(settings, Method::GET, "models", None, &headers, false);
    forward(&state, slot, call, None, "skipped: not a chat".into()).await
}

/// The upstream's settings and a place for one more of `tenant`'s calls, or why the call is
/// refused: no upstream configured (503), or too many calls in flight ([`Slots::take`]).
fn admit(state: &AppState, tenant: &TenantId) -> Result<(ProxySettings, Slot), Refused> {
    let settings = state.memory.config().proxy.clone();
    if settings.upstream_url.trim().is_empty() {
        return Err(Refused::NoUpstream);
    }
    let slot = state.upstream.take(tenant)?;
    Ok((settings, slot))
}

/// Response headers that describe the upstream's connection or encoding rather than the answer
/// (the body is re-framed here, and ureq has already decoded any compression).
fn passes(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "connection" | "keep-alive" | "transfer-encoding" | "content-length" | "content-encoding" | "upgrade"
    )
}

/// One request to the upstream, made on the proxy's own thread.
struct Call {
    settings: ProxySettings,
    method: Method,
    url: String,
    body: Option<Bytes>,
    accept: Option<String>,
    /// `stream: true`: the answer comes as events, and silence between them is what times out.
    streaming: bool,
}

impl Call {
    /// The call to `path` under the upstream's URL, passing on the client's `Accept`.
    fn new(
        settings: ProxySettings,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        headers: &HeaderMap,
        streaming: bool,
    ) -> Self {
        let url = format!("{}/{path}", settings.upstream_url.trim().trim_end_matches('/'));
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).map(str::to_string);
        Self { settings, method, url, body, accept, streaming }
    }

    /// Sends the request and waits for the answer to begin: its status and headers, whatever
    /// the status, with the body still to read. Blocks, for up to the call's timeouts.
    fn send(self) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let s = &self.settings;
        let secs = |n: u64| Some(Duration::from_secs(n.max(1)));
        let agent = ureq::Agent::config_builder()
            .timeout_global(secs(s.timeout_secs))
            .timeout_connect(secs(s.connect_timeout_secs))
            // A non-streamed answer is silent until it is whole, so only a stream has an idle time.
            .timeout_per_read(if self.streaming { secs(s.idle_timeout_secs) } else { None })
            .http_status_as_error(false)
            .build()
            .new_agent();
        let auth = (!s.upstream_key.trim().is_empty()).then(|| format!("Bearer {}", s.upstream_key.trim()));
        match (self.method, self.body) {
            (Method::POST, Some(b)) => {
                let mut req = agent.post(&self.url).header("content-type", "application/json");
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                if let Some(a) = &self.accept {
                    req = req.header("accept", a);
                }
                req.send(&b[..])
            }
            _ => {
                let mut req = agent.get(&self.url);
                if let Some(a) = &auth {
                    req = req.header("authorization", a);
                }
                req.call()
            }
        }
    }
}

/// Makes the call on a thread of its own and streams the answer back; after the last byte has
/// been handed to the client, ingests the turn. The thread holds the call's `slot` until it is
/// done, so the caps count calls the upstream still holds, whether or not their client waits.
async fn forward(state: &AppState, slot: Slot, call: Call, turn: Option<Turn>, note: String) -> Response {
    let (head_tx, head_rx) = oneshot::channel();
    let (tx, rx) = mpsc::channel(16);
    let memory = state.memory.clone();
    let started = std::thread::Builder::new().name("mnemo-proxy".into()).spawn(move || {
        let _slot = slot;
        let answer = match call.send() {
            Ok(a) => a,
            Err(e) => {
                let _ = head_tx.send(Err(e));
                return;
            }
        };
        let (parts, body) = answer.into_parts();
        let ok = parts.status.is_success();
        if head_tx.send(Ok(parts)).is_err() {
            return; // the client went away before the answer began
        }
        let captured = pump(body.into_reader(), &tx);
        // The client's stream ends here, before anything is remembered.
        drop(tx);
        if let (true, Some(turn)) = (ok, turn) {
            remember(&memory, turn, &captured);
        }
    });
    if let Err(e) = started {
        return ApiError::Unavailable { detail: format!("the proxy could not start a thread for the call: {e}") }
            .into_openai();
    }
    let parts = match head_rx.await {
        Ok(Ok(parts)) => parts,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "proxy: the upstream could not be reached");
            return openai_error(
                StatusCode::BAD_GATEWAY,
                &format!("the upstream could not be reached: {e}"),
                "upstream_error",
            );
        }
        Err(e) => return ApiError::internal(format!("the proxy's thread ended without an answer: {e}")).into_openai(),
    };
    let mut response = Response::builder().status(parts.status.as_u16());
    for (name, value) in parts.headers.iter().filter(|(n, _)| passes(n)) {
        response = response.header(name.as_str(), value.as_bytes());
    }
    if let Ok(v) = HeaderValue::from_str(&note) {
        response = response.header(MEMORY_HEADER, v);
    }
    response.body(Body::new(ChannelBody(rx))).unwrap_or_else(|e| ApiError::internal(e).into_openai())
}

/// Copies the upstream's answer to the client as it arrives; what was copied (up to
/// [`MAX_CAPTURE`]) to read the reply from.
fn pump(mut reader: impl Read, tx: &mpsc::Sender<Result<Bytes, std::io::Error>>) -> Vec<u8> {
    let mut captured = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if captured.len() + n <= MAX_CAPTURE {
                    captured.extend_from_slice(&buf[..n]);
                }
                if tx.blocking_send(Ok(Bytes::copy_from_slice(&buf[..n]))).is_err() {
                    break; // the client went away
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "proxy: the upstream's answer broke off");
                let _ = tx.blocking_send(Err(e));
                break;
            }
        }
    }
    captured
}

/// Ingests the user's message and the assistant's reply into the turn's chat.
fn remember(memory: &mnemo::Memory, turn: Turn, answer: &[u8]) {
    let mut messages = vec![NewMessage { id: None, role: Role::User, content: turn.user_text, at: None }];
    if let Some(reply) = conversation::reply_text(answer).filter(|r| !r.trim().is_empty()) {
        messages.push(NewMessage { id: None, role: Role::Assistant, content: reply, at: None });
    }
    match memory.ingest(&turn.scope, messages) {
        Ok(report) => tracing::debug!(appended = report.appended, ops = report.ops.len(), "proxy: turn remembered"),
        Err(e) => tracing::warn!(error = %e, "proxy: the turn could not be remembered"),
    }
}

/// A response body fed by the thread that reads the upstream.
struct ChannelBody(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|next| next.map(|chunk| chunk.map(http_body::Frame::data)))
    }
}
