//! Unauthenticated routes for operators: health, metrics; and the fallbacks that keep unknown
//! paths and methods in the error shape.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;

use crate::AppState;
use crate::dto::Health;
use crate::error::{ApiError, Json};

/// Liveness: the process is up and serving.
#[utoipa::path(
    get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "Serving", body = Health))
)]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into(), version: env!("CARGO_PKG_VERSION").into() })
}

/// Prometheus metrics: request counts and latency histograms by route template, and the bytes
/// the store's in-process caches hold (what the server's memory should level off at).
#[utoipa::path(
    get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain"))
)]
pub(crate) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let mut text = state.metrics.render();
    crate::metrics::render_caches(&mut text, state.memory.store().cache_usage());
    ([(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text)
}

/// Any path that is not a route.
pub(crate) async fn not_found() -> ApiError {
    ApiError::NotFound("no such route; see /openapi.json".into())
}

/// A route asked with a method it does not have.
pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
