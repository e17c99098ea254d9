//! The OpenAI-compatible client against a real (if tiny) HTTP server on localhost: request
//! shape, auth, reply validation, batching and the error messages users will see.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::Duration;

use mnemo_models::{Embedder, ModelError, OpenAiConfig, OpenAiEmbedder};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Debug)]
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Serves `n` connections one after another, answering each with `handler`'s (status, body),
/// and returns the base URL (`http://127.0.0.1:PORT/v1`) plus a handle yielding what it saw.
fn serve<F>(n: usize, handler: F) -> (String, JoinHandle<Vec<Seen>>)
where
    F: Fn(&Seen) -> (u16, String) + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..n {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                headers.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .map(|(_, v)| v.parse().unwrap())
                .expect("client must send Content-Length");
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let req = Seen {
                request_line: request_line.trim_end().to_owned(),
                headers,
                body: serde_json::from_slice(&body).unwrap(),
            };
            let (status, reply) = handler(&req);
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            )
            .unwrap();
            stream.flush().unwrap();
            seen.push(req);
        }
        seen
    });
    (format!("http://127.0.0.1:{port}/v1"), handle)
}

fn config(base_url: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(base_url, "test-model");
    c.timeout = Duration::from_secs(10);
    c
}

/// A reply for `inputs` where input i maps to the unnormalised vector [i+1, 1, 0, 0], listed
/// in reverse order so the client must sort by `index`.
fn reply_for(inputs: &[Value]) -> String {
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, _)| json!({"object": "embedding", "index": i, "embedding": [i as f32 + 1.0, 1.0, 0.0, 0.0]}))
        .collect();
    data.reverse();
    json!({"object": "list", "data": data, "model": "test-model", "usage": {"prompt_tokens": 1, "total_tokens": 1}})
        .to_string()
}

#[test]
fn good_reply_with_shuffled_indices() {
    let (base, server) = serve(1, |_| {
        let body = json!({"data": [
            {"index": 2, "embedding": [0.0, 0.0, 3.0]},
            {"index": 0, "embedding": [2.0, 0.0, 0.0]},
            {"index": 1, "embedding": [0.0, 0.5, 0.0]},
        ]});
        (200, body.to_string())
    });
    let mut c = config(&format!("{base}/")); // trailing slash must not double up
    c.api_key = Some("sk-test".into());
    let e = OpenAiEmbedder::new(c).unwrap();
    assert_eq!(e.id(), "openai:test-model");
    assert_eq!(e.dim(), 0, "unknown model: dimension not known before the first reply");
    let out = e.embed(&["alpha", "beta", "gamma"]).unwrap();
    assert_eq!(out, vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]);
    assert_eq!(e.dim(), 3, "dimension learned from the reply");

    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].request_line, "POST /v1/embeddings HTTP/1.1");
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test"));
    assert!(seen[0].header("content-type").unwrap().starts_with("application/json"));
    assert_eq!(seen[0].body, json!({"model": "test-model", "input": ["alpha", "beta", "gamma"]}));
}

#[test]
fn server_error_names_url_status_and_body() {
    let (base, server) = serve(1, |_| (500, r#"{"error": {"message": "model overloaded, try later"}}"#.into()));
    let e = OpenAiEmbedder::new(config(&base)).unwrap();
    let err = e.embed(&["x"]).unwrap_err();
    match &err {
        ModelError::HttpStatus { url, status, body_excerpt } => {
            assert_eq!(url, &format!("{base}/embeddings"));
            assert_eq!(*status, 500);
            assert!(body_excerpt.contains("model overloaded"), "{body_excerpt}");
        }
        other => panic!("expected HttpStatus, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("500") && msg.contains(&base) && msg.contains("model overloaded"), "{msg}");
    // Without a key no Authorization header may be sent.
    assert_eq!(server.join().unwrap()[0].header("authorization"), None);
}

#[test]
fn wrong_count_is_rejected() {
    let (base, server) = serve(1, |_| {
        (
            200,
            json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [0.0, 1.0]}]}).to_string(),
        )
    });
    let e = OpenAiEmbedder::new(config(&base)).unwrap();
    let err = e.embed(&["a", "b", "c"]).unwrap_err();
    assert!(matches!(err, ModelError::BadResponse { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("3 inputs") && msg.contains("2 embeddings") && msg.contains(&base), "{msg}");
    server.join().unwrap();
}

#[test]
fn duplicate_or_out_of_range_index_is_rejected() {
    let (base, server) = serve(2, |req| {
        let body = if req.body["input"][0] == "dup" {
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]})
        } else {
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]})
        };
        (200, body.to_string())
    });
    let e = OpenAiEmbedder::new(config(&base)).unwrap();
    let msg = e.embed(&["dup", "b"]).unwrap_err().to_string();
    assert!(msg.contains("twice"), "{msg}");
    let msg = e.embed(&["range", "b"]).unwrap_err().to_string();
    assert!(msg.contains("out of range"), "{msg}");
    server.join().unwrap();
}

#[test]
fn batches_respect_batch_size_and_keep_order() {
    let (base, server) = serve(3, |req| (200, reply_for(req.body["input"].as_array().unwrap())));
    let mut c = config(&base);
    c.batch_size = 2;
    let e = OpenAiEmbedder::new(c).unwrap();
    let out = e.embed(&["t0", "t1", "t2", "t3", "t4"]).unwrap();
    assert_eq!(out.len(), 5);
    // Within each request, input i got [i+1, 1, 0, 0] (normalised).
    let expect = |i: f32| {
        let n = ((i + 1.0) * (i + 1.0) + 1.0).sqrt();
        vec![(i + 1.0) / n, 1.0 / n, 0.0, 0.0]
    };
    let expected = [expect(0.0), expect(1.0), expect(0.0), expect(1.0), expect(0.0)];
    for (got, want) in out.iter().zip(&expected) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
        }
    }
    let inputs: Vec<Value> = server.join().unwrap().into_iter().map(|s| s.body["input"].clone()).collect();
    assert_eq!(inputs, vec![json!(["t0", "t1"]), json!(["t2", "t3"]), json!(["t4"])]);
}

#[test]
fn configured_dimension_is_enforced() {
    let (base, server) = serve(1, |req| (200, reply_for(req.body["input"].as_array().unwrap())));
    let mut c = config(&base);
    c.dim = Some(8);
    let e = OpenAiEmbedder::new(c).unwrap();
    assert_eq!(e.dim(), 8);
    let err = e.embed(&["a"]).unwrap_err();
    assert!(matches!(err, ModelError::DimensionMismatch { expected: 8, got: 4 }), "{err:?}");
    server.join().unwrap();
}

#[test]
fn probe_learns_dimension_and_later_replies_must_match() {
    let (base, server) = serve(2, |req| {
        if req.body["input"][0] == "dimension probe" {
            (200, reply_for(req.body["input"].as_array().unwrap()))
        } else {
            (200, json!({"data": [{"index": 0, "embedding": [1.0, 2.0]}]}).to_string())
        }
    });
    let e = OpenAiEmbedder::new(config(&base)).unwrap();
    assert_eq!(e.probe_dim().unwrap(), 4);
    assert_eq!(e.probe_dim().unwrap(), 4, "second probe must not hit the server");
    let err = e.embed(&["x"]).unwrap_err();
    assert!(matches!(err, ModelError::DimensionMismatch { expected: 4, got: 2 }), "{err:?}");
    assert_eq!(server.join().unwrap().len(), 2);
}

#[test]
fn known_openai_models_have_a_dimension_up_front() {
    let e = OpenAiEmbedder::new(OpenAiConfig::new("https://api.openai.com/v1", "text-embedding-3-small")).unwrap();
    assert_eq!(e.dim(), 1536);
    assert_eq!(e.url(), "https://api.openai.com/v1/embeddings");
}

#[test]
fn non_json_reply_is_a_bad_response() {
    let (base, server) = serve(1, |_| (200, "<html>proxy login</html>".into()));
    let err = OpenAiEmbedder::new(config(&base)).unwrap().embed(&["a"]).unwrap_err();
    assert!(matches!(err, ModelError::BadResponse { .. }), "{err:?}");
    assert!(err.to_string().contains("proxy login"), "{err}");
    server.join().unwrap();
}

#[test]
fn empty_batch_makes_no_request() {
    // Nothing listens on this URL; any request would fail.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let e = OpenAiEmbedder::new(config(&format!("http://127.0.0.1:{port}/v1"))).unwrap();
    assert!(e.embed(&[]).unwrap().is_empty());
}

#[test]
fn connection_refused_names_the_url() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let err = OpenAiEmbedder::new(config(&base)).unwrap().embed(&["a"]).unwrap_err();
    assert!(matches!(err, ModelError::Http { .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("{base}/embeddings")), "{err}");
}

#[test]
fn slow_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}/v1", listener.local_addr().unwrap().port());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        drop(stream);
    });
    let mut c = config(&base);
    c.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let err = OpenAiEmbedder::new(c).unwrap().embed(&["a"]).unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(1400), "timeout not applied");
    assert!(matches!(err, ModelError::Http { .. }), "{err:?}");
    assert!(err.to_string().to_lowercase().contains("timeout"), "{err}");
    server.join().unwrap();
}
