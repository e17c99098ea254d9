//! mnemo-server: the HTTP API of mnemo.
//!
//! REST under `/v1` over a shared [`mnemo::Memory`], with per-tenant API keys ([`keys`]), one
//! error shape `{message, code}` ([`error`]), Prometheus metrics at `/metrics` and an OpenAPI 3.1
//! document generated from this code at `/openapi.json` ([`openapi`]).
//!
//! [`app`] builds the router from an [`AppState`] and is what tests drive with `oneshot`;
//! [`serve`] binds a socket and runs it until Ctrl-C.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mnemo_server::{AppState, KeyStore};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mnemo::Config::load(None)?;
//! let keys = KeyStore::open(&config.data_dir.join("keys.db"))?;
//! let memory = Arc::new(mnemo::Memory::open(config)?);
//! let state = AppState::new(memory, keys).with_admin_key(std::env::var("MNEMO_ADMIN_KEY").ok());
//! mnemo_server::serve("127.0.0.1:8080".parse()?, state).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

pub mod auth;
pub mod dto;
pub mod error;
pub mod keys;
pub mod mcp;
pub mod metrics;
pub mod openapi;
mod routes;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, patch, post};
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

/// What every handler shares: the engine, the key store, the admin key's hash and the metrics.
#[derive(Debug, Clone)]
pub struct AppState {
    pub(crate) memory: Arc<Memory>,
    pub(crate) keys: Arc<KeyStore>,
    pub(crate) admin_hash: Option<[u8; 32]>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) body_limit: usize,
}

impl AppState {
    /// State over an engine and a key store, with no admin key and the default body limit.
    pub fn new(memory: Arc<Memory>, keys: KeyStore) -> Self {
        Self {
            memory,
            keys: Arc::new(keys),
            admin_hash: None,
            metrics: Arc::new(Metrics::default()),
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }

    /// Enables the admin routes for this key (only its hash is kept). `None` or an empty key
    /// leaves them answering 401, so an unset `MNEMO_ADMIN_KEY` never means "no password".
    pub fn with_admin_key(mut self, key: Option<String>) -> Self {
        self.admin_hash = key.filter(|k| !k.trim().is_empty()).map(|k| keys::hash_key(&k));
        self
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

/// The whole API as a router, separate from any socket so tests can call it directly.
pub fn app(state: AppState) -> Router {
    use routes::*;
    Router::new()
        .route("/v1/messages", post(messages::ingest))
        .route("/v1/recall", post(recall::recall))
        .route("/v1/context", post(context::context))
        .route("/v1/memories", get(memories::list).post(memories::add))
        .route("/v1/memories/{id}", get(memories::get).delete(memories::delete).patch(memories::edit))
        .route("/v1/memos", get(memos::list).post(memos::add))
        .route("/v1/memos/{id}", patch(memos::edit))
        .route("/v1/memories/{id}/pin", post(memories::pin))
        .route("/v1/memories/{id}/unpin", post(memories::unpin))
        .route("/v1/policies", get(policies::list).post(policies::put))
        .route("/v1/documents", get(documents::list).post(documents::store))
        .route("/v1/documents/search", post(documents::search))
        .route("/v1/documents/similar", post(documents::similar))
        .route("/v1/documents/{id}", get(documents::get).delete(documents::delete))
        .route("/v1/traces/{turn_id}", get(traces::get))
        .route("/v1/maintain", post(maintain::maintain))
        .route("/v1/candidates", get(candidates::list))
        .route("/v1/candidates/{id}/approve", post(candidates::approve))
        .route("/v1/candidates/{id}/reject", post(candidates::reject))
        .route("/v1/users/{user_id}/erase", post(users::erase))
        .route("/v1/users/{user_id}/export", get(users::export))
        .route("/v1/users/{user_id}/clear", post(users::clear))
        .route("/v1/users/{user_id}", get(users::show))
        .route("/v1/users/{user_id}/pause", post(users::pause))
        .route("/v1/users/{user_id}/resume", post(users::resume))
        .route("/v1/users/{user_id}/disable", post(users::disable))
        .route("/v1/users/{user_id}/enable", post(users::enable))
        .route("/v1/admin/keys", get(admin::list_keys).post(admin::create_key))
        .route("/v1/admin/keys/{prefix}", delete(admin::revoke_key))
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(health::metrics))
        .route("/openapi.json", get(openapi::document))
        .merge(mcp::routes(state.clone(), mcp::HttpOptions::from_env()))
        .fallback(health::not_found)
        .method_not_allowed_fallback(health::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::track))
        .layer(request_spans())
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
/// blocking pool) and serves until Ctrl-C: what `mnemo serve` runs, so the binary needs no tokio.
pub fn serve_blocking(addr: SocketAddr, state: AppState, workers: usize) -> std::io::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .thread_name("mnemo-http")
        .enable_all()
        .build()?
        .block_on(serve(addr, state))
}

/// Binds `addr` and serves the API until Ctrl-C.
pub async fn serve(addr: SocketAddr, state: AppState) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    // The address is the whole message: tests and scripts read it back from this line.
    tracing::info!("listening on http://{}", listener.local_addr()?);
    serve_on(listener, state, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}
