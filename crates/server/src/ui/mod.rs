//! The console at `/ui`: a small hand-written HTML, CSS and JavaScript app, embedded in the
//! binary, that lets a person see and correct what the system remembers.
//!
//! It is only a client of the JSON API under `/v1` (the key travels in the `Authorization`
//! header, kept in the tab's `sessionStorage`), so every verdict and error it shows is the API's
//! own, and nothing the console does bypasses the gate. The assets are served with a strict
//! Content-Security-Policy: scripts and styles from this origin only, nothing inline, no frames.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::AppState;

/// What the console's pages may load: their own script, style and API, nothing else. No inline
/// script or style, so text that reaches the page (memory content is user data) cannot run.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The console's routes; they carry no key themselves (the page asks for one and sends it to
/// the API), so serving them reveals nothing.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/ui/", get(|| async { Redirect::permanent("/ui") }))
        .route("/ui/app.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/ui/app.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}

/// One embedded asset with its type and the headers every console response carries.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, content_type),
            (HeaderName::from_static("content-security-policy"), CONTENT_SECURITY_POLICY),
            (HeaderName::from_static("x-content-type-options"), "nosniff"),
            (HeaderName::from_static("referrer-policy"), "no-referrer"),
            // The assets change with the binary; a stale copy after an upgrade would talk to
            // routes that moved.
            (CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
