//! A real HTTP/1.1 server on loopback that plays a scripted OpenAI-compatible model (feature
//! `test-server`): how the chat client, the engine's LLM extraction, memos and summaries, and
//! the `mnemo` binary are tested against the real network path, with malformed, truncated,
//! slow and failing replies on demand.
//!
//! [`ScriptedServer::start`] answers each connection with the next [`Answer`] of a script;
//! [`ScriptedServer::respond`] asks a function for each answer (route by the request's schema
//! name, count calls, fail the first few). Every request is recorded as a [`Seen`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One canned answer of the scripted server.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An HTTP response.
    Reply {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body.
        body: String,
    },
    /// The same, after a pause.
    Slow(Duration, Box<Answer>),
    /// The connection is closed without a response.
    Hangup,
}

impl Answer {
    /// The answer with one more header.
    pub fn with_header(self, name: &str, value: &str) -> Self {
        match self {
            Answer::Reply { status, mut headers, body } => {
                headers.push((name.into(), value.into()));
                Answer::Reply { status, headers, body }
            }
            other => other,
        }
    }

    /// The answer after a pause of `ms` milliseconds.
    pub fn slow(self, ms: u64) -> Self {
        Answer::Slow(Duration::from_millis(ms), Box::new(self))
    }
}

/// A chat completion whose message content is `content`, reporting 120 + 30 tokens.
pub fn completion(content: &str) -> Answer {
    completion_with(content, "stop", Some((120, 30)))
}

/// A chat completion with a finish reason and optional (prompt, completion) token usage.
pub fn completion_with(content: &str, finish_reason: &str, usage: Option<(u64, u64)>) -> Answer {
    let mut body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "scripted-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
    });
    if let Some((p, c)) = usage {
        body["usage"] = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    }
    raw(200, &body.to_string())
}

/// Any status with any body.
pub fn raw(status: u16, body: &str) -> Answer {
    Answer::Reply { status, headers: vec![], body: body.into() }
}

/// An OpenAI-style error body with this status.
pub fn error(status: u16, message: &str) -> Answer {
    raw(status, &json!({"error": {"message": message, "type": "scripted"}}).to_string())
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `POST /v1/chat/completions HTTP/1.1`.
    pub request_line: String,
    /// Headers in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
    /// The body as sent, for what a parsed value forgets (the order of object keys).
    pub raw: String,
}

impl Seen {
    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The system message.
    pub fn system(&self) -> &str {
        self.body["messages"][0]["content"].as_str().unwrap_or("")
    }

    /// The last message (the user's part of the prompt).
    pub fn user(&self) -> &str {
        self.body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("")
    }

    /// The name of the JSON schema asked for in `response_format`, if any.
    pub fn schema_name(&self) -> Option<&str> {
        self.body["response_format"]["json_schema"]["name"].as_str()
    }
}

type Handler = dyn Fn(usize, &Seen) -> Answer + Send + Sync;

/// A loopback server answering each connection in its own thread (so a slow answer does not
/// hold up the retry behind it).
pub struct ScriptedServer {
    base: String,
    accept: Option<JoinHandle<Vec<JoinHandle<()>>>>,
    seen: Arc<Mutex<Vec<(usize, Seen)>>>,
    stop: Arc<AtomicBool>,
    scripted: bool,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer").field("base", &self.base).finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// Serves exactly the answers of `script`, one per connection, in order, then stops
    /// accepting (or after ten idle seconds).
    pub fn start(script: Vec<Answer>) -> Self {
        let len = script.len();
        let script = Arc::new(script);
        Self::serve(Some(len), Arc::new(move |i, _: &Seen| script.get(i).cloned().unwrap_or(Answer::Hangup)))
    }

    /// Serves every connection until [`ScriptedServer::finish`] or drop, asking `answer` what to
    /// play for the `n`-th request (0-based) given what it asked.
    pub fn respond(answer: impl Fn(usize, &Seen) -> Answer + Send + Sync + 'static) -> Self {
        Self::serve(None, Arc::new(answer))
    }

    fn serve(max: Option<usize>, handler: Arc<Handler>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let base = format!("http://127.0.0.1:{}/v1", listener.local_addr().expect("local address").port());
        listener.set_nonblocking(true).expect("non-blocking listener");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&seen), Arc::clone(&stop));
        let accept = std::thread::spawn(move || {
            let mut handlers = Vec::new();
            let counter = Arc::new(AtomicUsize::new(0));
            let mut idle_since = Instant::now();
            let mut accepted = 0;
            while max.is_none_or(|m| accepted < m) && !halt.load(Ordering::SeqCst) {
                let stream = match listener.accept() {
                    Ok((s, _)) => s,
                    Err(_) if max.is_some() && idle_since.elapsed() > Duration::from_secs(10) => break,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                };
                accepted += 1;
                idle_since = Instant::now();
                let (log, handler, counter) = (Arc::clone(&log), Arc::clone(&handler), Arc::clone(&counter));
                handlers.push(std::thread::spawn(move || {
                    let Some(req) = read_request(&stream) else { return };
                    let index = counter.fetch_add(1, Ordering::SeqCst);
                    let answer = handler(index, &req);
                    lock(&log).push((index, req));
                    play(stream, &answer);
                }));
            }
            handlers
        });
        Self { base, accept: Some(accept), seen, stop, scripted: max.is_some() }
    }

    /// The API root to configure as `base_url`: `http://127.0.0.1:PORT/v1`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Requests received so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        let mut seen = lock(&self.seen).clone();
        seen.sort_by_key(|(i, _)| *i);
        seen.into_iter().map(|(_, s)| s).collect()
    }

    /// Waits for a script to be played (or abandoned), or stops a responder, and returns every
    /// request in order.
    pub fn finish(mut self) -> Vec<Seen> {
        if !self.scripted {
            self.stop.store(true, Ordering::SeqCst);
        }
        if let Some(accept) = self.accept.take() {
            for h in accept.join().expect("accept thread") {
                h.join().expect("handler thread");
            }
        }
        self.seen()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads one request; `None` when the client went away first.
fn read_request(stream: &TcpStream) -> Option<Seen> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let len: usize = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-length"))?.1.parse().ok()?;
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        request_line: request_line.trim_end().to_owned(),
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn play(mut stream: TcpStream, answer: &Answer) {
    match answer {
        Answer::Hangup => drop(stream),
        Answer::Slow(pause, inner) => {
            std::thread::sleep(*pause);
            play(stream, inner);
        }
        Answer::Reply { status, headers, body } => {
            let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
            // The client may have timed out and left: a failed write is part of the script.
            let _ = write!(
                stream,
                "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
                body.len()
            );
            let _ = stream.flush();
        }
    }
}
