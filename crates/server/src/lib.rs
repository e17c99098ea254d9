//! mnemo-server: the HTTP API of mnemo.
//!
//! REST under `/v1` over a shared [`mnemo::Memory`], with per-tenant API keys ([`keys`]), one
//! error shape `{message, code}` ([`error`]), Prometheus metrics at `/metrics` and an OpenAPI 3.1
//! document generated from this code at `/openapi.json` ([`openapi`]).
//!
//! [`app`] builds the router from an [`AppState`] and is what tests drive with `oneshot`;
//! [`serve`] binds a socket and runs it until SIGINT or SIGTERM, draining what is in flight.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mnemo_server::{AppState, KeyStore};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mnemo::Config::load(None)?;
//! let keys = KeyStore::open(&config.data_dir.join("keys.db"))?;
//! let memory = Arc::new(mnemo::Memory::open(config)?);
//! let state = AppState::new(memory, keys).with_admin_key(std::env::var("MNEMO_ADMIN_KEY").ok().as_deref())?;
//! mnemo_server::serve("127.0.0.1:8080".parse()?, state).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod admission;
pub mod auth;
mod background;
pub mod dto;
pub mod error;
mod keepalive;
pub mod keys;
pub mod mcp;
mod mem0;
pub mod metrics;
mod openai_proxy;
pub mod openapi;
pub mod rate;
mod routes;
pub mod ui;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use mnemo::Memory;
use tower_http::LatencyUnit;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

pub use error::{ApiError, ErrorBody};
pub use keys::{KeyInfo, KeyStore, key_file};
pub use metrics::Metrics;

/// Request bodies larger than this are refused with 413 unless [`AppState::with_body_limit`]
/// says otherwise: the largest legitimate body is a batch of messages, well under a mebibyte.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// The shortest admin key accepted, in characters after trimming: as long as a tenant key's
/// random part, so the key that mints all others is no easier to guess than any of them.
pub const MIN_ADMIN_KEY_CHARS: usize = 32;

/// Why an admin key was refused at start-up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdminKeyError {
    /// Shorter than [`MIN_ADMIN_KEY_CHARS`] after trimming.
    #[error(
        "MNEMO_ADMIN_KEY is {chars} character(s) long after trimming; it must be at least {MIN_ADMIN_KEY_CHARS} \
         (e.g. `openssl rand -hex 32`)"
    )]
    TooShort {
        /// Its length after trimming.
        chars: usize,
    },
}

/// What every handler shares: the engine, the key store, the admin key's hash and the metrics.
#[derive(Debug, Clone)]
pub struct AppState {
    pub(crate) memory: Arc<Memory>,
    pub(crate) keys: Arc<KeyStore>,
    pub(crate) admin_hash: Option<[u8; 32]>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) body_limit: usize,
    /// Per-tenant request rate (`limits.requests_per_second`); `None` when no limit is set.
    pub(crate) rate: Option<Arc<rate::RateLimiter>>,
    /// Per-tenant cap on heavy engine work at once (`limits.heavy_requests_per_tenant`).
    pub(crate) heavy: Arc<admission::TenantGate>,
    /// The OpenAI proxy's upstream calls in flight, per tenant and in all (`[proxy]`).
    pub(crate) upstream: Arc<openai_proxy::Slots>,
}

impl AppState {
    /// State over an engine and a key store, with no admin key and the default body limit.
    pub fn new(memory: Arc<Memory>, keys: KeyStore) -> Self {
        let limits = &memory.config().limits;
        let rate = rate::RateLimiter::new(limits.requests_per_second, limits.request_burst).map(Arc::new);
        let heavy = Arc::new(admission::TenantGate::new(limits.heavy_requests_per_tenant));
        let upstream = Arc::new(openai_proxy::Slots::new(&memory.config().proxy));
        Self {
            memory,
            keys: Arc::new(keys),
            admin_hash: None,
            metrics: Arc::new(Metrics::default()),
            body_limit: DEFAULT_BODY_LIMIT,
            rate,
            heavy,
            upstream,
        }
    }

    /// Enables the admin routes for this key (only its hash is kept). `None` or an empty key
    /// leaves them answering 401, so an unset `MNEMO_ADMIN_KEY` never means "no password".
    ///
    /// The key is trimmed, as bearer tokens are (a key pasted with a trailing newline would
    /// otherwise never match), and must then be at least [`MIN_ADMIN_KEY_CHARS`] long: the
    /// admin key creates every tenant's keys, so a guessable one is refused at start-up.
    pub fn with_admin_key(mut self, key: Option<&str>) -> Result<Self, AdminKeyError> {
        let key = key.map(str::trim).filter(|k| !k.is_empty());
        if let Some(k) = key {
            let chars = k.chars().count();
            if chars < MIN_ADMIN_KEY_CHARS {
                return Err(AdminKeyError::TooShort { chars });
            }
        }
        self.admin_hash = key.map(keys::hash_key);
        Ok(self)
    }

    /// Changes the request body limit in bytes.
    pub fn with_body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The key store, for tools that manage keys beside a running server.
    pub fn keys(&self) -> &KeyStore {
        &self.keys
    }
}

/// Runs a synchronous engine call on the blocking pool: `Memory` does disk and model work.
pub(crate) async fn blocking<T, F>(state: &AppState, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
{
    let memory = state.memory.clone();
    tokio::task::spawn_blocking(move || f(&memory)).await.map_err(ApiError::internal)?
}

/// [`blocking`] for work that keeps a thread long (ingest, storing a document, export, clear,
/// erase): it first waits for one of the tenant's `limits.heavy_requests_per_tenant` places, so a
/// tenant's burst queues behind its own cap and never fills the blocking pool every tenant's
/// reads need, then runs on a thread of its own at a lower CPU priority ([`background`]), so
/// it never takes the cores those reads need either. The place goes with the work onto its
/// thread, so a client that hangs up frees it only when the work is done.
pub(crate) async fn heavy<T, F>(state: &AppState, tenant: &mnemo::core::TenantId, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
{
    let place = state.heavy.enter(tenant).await;
    let memory = state.memory.clone();
    background::run(move || {
        let _place = place;
        f(&memory)
    })
    .await
    .map_err(ApiError::internal)?
}

/// The whole API as a router, separate from any socket so tests can call it directly.
///
/// The documented routes come from `routes::api`, which registers each with its OpenAPI entry;
/// here are the rest and the layers that wrap every route alike, documented or not.
pub fn app(state: AppState) -> Router {
    let (api, doc) = routes::api().split_for_parts();
    api.route("/openapi.json", openapi::document(openapi::render(doc)))
        .merge(mcp::routes(state.clone(), mcp::HttpOptions::from_env()))
        .merge(mem0::routes())
        .merge(openai_proxy::routes())
        .merge(ui::routes())
        .fallback(routes::health::not_found)
        .method_not_allowed_fallback(routes::health::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::track))
        .layer(request_spans())
        // Outermost, so it sees the body as it came off the connection, whichever layer or
        // extractor answers without reading it.
        .layer(axum::middleware::from_fn(keepalive::settle))
        .with_state(state)
}

/// One `request` span per HTTP request (method and path, never the query string, which may
/// carry user text) with a closing event of status and latency: what `MNEMO_LOG=debug` shows.
/// Outermost, so the time includes the body limit, the metrics middleware and the handler.
fn request_spans() -> TraceLayer<
    tower_http::classify::SharedClassifier<tower_http::classify::ServerErrorsAsFailures>,
    impl Fn(&axum::http::Request<axum::body::Body>) -> tracing::Span + Clone,
> {
    TraceLayer::new_for_http()
        .make_span_with(|req: &axum::http::Request<axum::body::Body>| {
            tracing::debug_span!("request", method = %req.method(), path = req.uri().path())
        })
        .on_response(DefaultOnResponse::new().level(Level::DEBUG).latency_unit(LatencyUnit::Micros))
}

/// Serves the API on an already bound listener until `shutdown` resolves.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await
}

/// Builds a multi-threaded runtime with `workers` async threads (engine calls run on its separate
/// blocking pool) and serves until SIGINT or SIGTERM: what `mnemo serve` runs, so the binary
/// needs no tokio.
pub fn serve_blocking(addr: SocketAddr, state: AppState, workers: usize) -> std::io::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .thread_name("mnemo-http")
        .enable_all()
        .build()?
        .block_on(serve(addr, state))
}

/// Binds `addr` and serves the API until SIGINT (Ctrl-C) or SIGTERM, then drains: no new
/// connection is accepted and the requests in flight are answered before it returns.
pub async fn serve(addr: SocketAddr, state: AppState) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let stop = stop_signal()?;
    // The address is the whole message: tests and scripts read it back from this line.
    tracing::info!("listening on http://{}", listener.local_addr()?);
    serve_on(listener, state, stop).await?;
    tracing::info!("stopped: every request in flight was answered");
    Ok(())
}

/// Resolves on SIGINT or, on Unix, SIGTERM: what a terminal, systemd, Docker and Kubernetes
/// send to stop a service, and each expects the in-flight requests to be drained, not reset.
/// The handlers are installed before this returns, so a signal that arrives while the server
/// starts is not lost.
fn stop_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    Ok(async move {
        #[cfg(unix)]
        let term = term.recv();
        #[cfg(not(unix))]
        let term = std::future::pending::<Option<()>>();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: draining the requests in flight"),
            _ = term => tracing::info!("SIGTERM: draining the requests in flight"),
        }
    })
}
