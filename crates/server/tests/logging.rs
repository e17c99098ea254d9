//! What `MNEMO_LOG=debug mnemo serve` shows: one `request` span per HTTP call with its method
//! and path (never the query string), closed by an event with the status and the latency.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tracing_subscriber::fmt::MakeWriter;

use crate::common::{fixture, request, send};

/// Log output collected in memory, in place of stderr.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn every_request_gets_a_span_with_method_path_status_and_latency() {
    let f = fixture();
    let out = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(out.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    // The test runtime is single-threaded: the router is polled on this thread.
    let guard = tracing::subscriber::set_default(subscriber);
    send(&f.app, request("GET", "/healthz?probe=secret-text", None, None)).await;
    send(&f.app, request("POST", "/v1/recall", None, Some(&json!({"user_id": "dana", "query": "x"})))).await;
    drop(guard);

    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let finished = |head: &str, status: &str| {
        text.lines().any(|l| l.contains(head) && l.contains("finished processing request") && l.contains(status))
    };
    assert!(finished(r#"request{method=GET path="/healthz"}"#, "status=200"), "{text}");
    assert!(finished(r#"request{method=POST path="/v1/recall"}"#, "status=401"), "{text}");
    assert!(
        text.lines().filter(|l| l.contains("finished processing request")).all(|l| l.contains("latency=")),
        "{text}"
    );
    assert!(!text.contains("secret-text"), "the query string is never logged: {text}");
}
