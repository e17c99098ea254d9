//! Prometheus metrics, hand-rolled: request counts by route, method and status, and a latency
//! histogram by route. Routes are the matched templates (`/v1/memories/{id}`), never raw paths,
//! so ids and user names do not become label values.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::AppState;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Debug, Default)]
struct Histogram {
    /// Cumulative counts per bucket bound.
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Inner {
    requests: BTreeMap<(String, String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
}

/// The counters of one server process.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records one finished request.
    pub fn record(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut inner = self.lock();
        *inner.requests.entry((route.to_string(), method.to_string(), status)).or_default() += 1;
        let h = inner.latency.entry(route.to_string()).or_default();
        if h.buckets.is_empty() {
            h.buckets = vec![0; BUCKETS.len()];
        }
        for (count, bound) in h.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        h.sum += seconds;
        h.count += 1;
    }

    /// The Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let inner = self.lock();
        let mut out = String::new();
        out.push_str("# HELP mnemo_http_requests_total HTTP requests by route template, method and status.\n");
        out.push_str("# TYPE mnemo_http_requests_total counter\n");
        for ((route, method, status), n) in &inner.requests {
            let _ = writeln!(
                out,
                "mnemo_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}"
            );
        }
        out.push_str("# HELP mnemo_http_request_duration_seconds Request latency by route template.\n");
        out.push_str("# TYPE mnemo_http_request_duration_seconds histogram\n");
        for (route, h) in &inner.latency {
            for (bound, count) in BUCKETS.iter().zip(&h.buckets) {
                let _ = writeln!(
                    out,
                    "mnemo_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "mnemo_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "mnemo_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ = writeln!(out, "mnemo_http_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        out
    }
}

/// Appends the store's cache gauges: with the process's resident set beside them, an operator
/// tells caches filling toward their budgets from memory that grows without one.
pub(crate) fn render_caches(out: &mut String, usage: mnemo::store::CacheUsage) {
    out.push_str("# HELP mnemo_cache_bytes Bytes held by the store's in-process caches, by cache.\n");
    out.push_str("# TYPE mnemo_cache_bytes gauge\n");
    for (cache, bytes) in [("memory_vectors", usage.memory_vectors), ("message_vectors", usage.message_vectors)] {
        let _ = writeln!(out, "mnemo_cache_bytes{{cache=\"{cache}\"}} {bytes}");
    }
}

/// The methods recorded by name; any other (a client may send any token as a method) is
/// recorded as `other`, so the series stay bounded whatever clients send. Routes are bounded
/// already: matched templates, or `unmatched`.
const KNOWN_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// Middleware: times every request and records it under its matched route.
pub(crate) async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = KNOWN_METHODS.iter().find(|m| **m == req.method().as_str()).copied().unwrap_or("other");
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_string();
    let response = next.run(req).await;
    state.metrics.record(method, &route, response.status().as_u16(), started.elapsed().as_secs_f64());
    response
}
