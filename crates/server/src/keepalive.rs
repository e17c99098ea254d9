//! A kept-alive HTTP/1.1 connection stays usable after a request whose body was not read.
//!
//! A route may answer before it reads the request's body: a missing or wrong key (401), a rate
//! limit (429), a forbidden act-as header, a body declared larger than allowed (413) — the
//! extractors refuse from the head alone. The unread rest of the body is then still on the way,
//! ahead of the client's next request on the same connection. hyper reads what has already
//! arrived and, when the body is not complete, stops reading the connection and closes it after
//! the answer — without saying so in the answer, so a client that sent its next request on the
//! kept-alive connection sees it fail (a reset, an empty reply), and a POST is not retried.
//!
//! [`settle`] makes the outcome one of the two a client handles: a small rest that arrives at
//! once is read and dropped, so the connection is clean for the next request; anything else
//! (a large or slow rest, a client waiting for `100 Continue`) gets `Connection: close` on the
//! answer, so the client opens a new connection. Draining every body instead would let one
//! client hold the server's time with a slow or endless upload it has already been refused.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::Version;
use axum::http::header::{CONNECTION, CONTENT_LENGTH, EXPECT, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Body as _, Frame, SizeHint};

/// The most of an unread body [`settle`] reads and drops to keep the connection: a refused
/// JSON request is usually well under this, and reading it costs less than a new connection.
pub(crate) const DRAIN_MAX_BYTES: u64 = 64 * 1024;

/// How long [`settle`] waits for the rest of an unread body before it closes the connection
/// instead: it delays the answer by as much, so it stays short.
pub(crate) const DRAIN_WAIT: Duration = Duration::from_millis(250);

/// The middleware: runs the request with its body behind a shared slot, then, when the route
/// left the body unread and dropped it, drains a small rest or marks the answer
/// `Connection: close` (see the module's documentation).
pub(crate) async fn settle(request: Request, next: Next) -> Response {
    // HTTP/2 streams are independent: an unread body ends with its stream, and a connection
    // header is not allowed there.
    if !matches!(request.version(), Version::HTTP_11 | Version::HTTP_10) {
        return next.run(request).await;
    }
    let waits_for_continue = request.headers().get(EXPECT).is_some();
    let declared =
        request.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    let (parts, body) = request.into_parts();
    let slot = Arc::new(Mutex::new(body));
    let mut response = next.run(Request::from_parts(parts, Body::new(Shared(slot.clone())))).await;
    // Still held by the route (a body it streams on after answering): it is the route's to read.
    let Ok(body) = Arc::try_unwrap(slot) else { return response };
    let mut body = body.into_inner().unwrap_or_else(PoisonError::into_inner);
    if http_body::Body::is_end_stream(&body) {
        return response;
    }
    // A chunked body (no length) is drained up to the same bound, counted as it arrives.
    let small = declared.is_none_or(|n| n <= DRAIN_MAX_BYTES);
    let drained = !waits_for_continue && small && tokio::time::timeout(DRAIN_WAIT, drain(&mut body)).await == Ok(true);
    if !drained {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads `body` to its end and drops it; false when it ends in an error or runs past
/// [`DRAIN_MAX_BYTES`] (a `Content-Length` is checked by hyper, but not a chunked body's).
async fn drain(body: &mut Body) -> bool {
    let mut read = 0u64;
    loop {
        match std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
            None => return true,
            Some(Err(_)) => return false,
            Some(Ok(frame)) => {
                read += frame.data_ref().map_or(0, |d| d.len() as u64);
                if read > DRAIN_MAX_BYTES {
                    return false;
                }
            }
        }
    }
}

/// The request's body as the route sees it: the same frames, read through the slot the
/// middleware keeps, so that what the route leaves unread is still there once it has answered.
struct Shared(Arc<Mutex<Body>>);

impl http_body::Body for Shared {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let mut body = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Pin::new(&mut *body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).size_hint()
    }
}
