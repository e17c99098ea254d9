//! `mnemo bench serve`: bounded load on a real `mnemo serve` over loopback. A mixed workload
//! (ingest of messages, recall, context) from N concurrent HTTP clients for a fixed time, at
//! each requested concurrency, with throughput, latency percentiles, errors and the server's
//! peak resident memory per level.
//!
//! By default the server is this binary started as a child on a temporary data directory with
//! a fresh tenant key and the chosen embedder, so its RSS can be read from `/proc`; `--url` and
//! `--key` aim the same workload at a server started elsewhere instead.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use mnemo::Config;
use mnemo::core::NewMessage;
use mnemo::models::EmbedderKind;
use serde::Serialize;
use serde_json::{Value, json};

use super::{
    Dist, Machine, Rng, SUBJECTS, THINGS, command, dist, machine, proc_status_mib, reset_peak_rss, synthetic_messages,
    write_report,
};

/// Error descriptions kept per level: enough to see what went wrong, not a log.
const ERROR_SAMPLES: usize = 5;

/// How often a level samples the started server's resident set: a long run shows whether
/// memory levels off or keeps growing, which one figure at the end cannot.
const RSS_EVERY: Duration = Duration::from_secs(10);

/// Where a long level's resident set is compared with its end: by then caches have filled, so
/// growth after it is what a leak looks like.
const RSS_SETTLED_AFTER: Duration = Duration::from_secs(600);

/// What a run does.
#[derive(Debug)]
pub(super) struct Plan {
    /// A server to target instead of starting one (`http://host:port`).
    pub(super) url: Option<String>,
    /// The tenant key for `url`.
    pub(super) key: Option<String>,
    /// Concurrent clients, one level after another.
    pub(super) concurrency: Vec<usize>,
    /// Duration of each level.
    pub(super) seconds: f64,
    /// Relative weights of ingest, recall and context.
    pub(super) weights: [u32; 3],
    /// Users seeded before the load (the load's requests pick among them).
    pub(super) users: usize,
    /// Messages seeded per user.
    pub(super) seed_messages: usize,
    /// Embedder of the started server.
    pub(super) embedder: EmbedderKind,
    /// Async worker threads of the started server.
    pub(super) workers: usize,
    /// Client-side limit on one request; a request past it counts as an error.
    pub(super) timeout: Duration,
    /// Messages an ingest sends instead of synthetic ones (`--data`): LoCoMo's turns, each with
    /// its user and chat, taken in order by whichever client ingests next.
    pub(super) corpus: Option<Vec<(String, String, NewMessage)>>,
}

/// The three operations of the mix, in the order of `Plan::weights`.
const OPS: [&str; 3] = ["ingest", "recall", "context"];

#[derive(Debug, Serialize)]
struct OpStats {
    requests: usize,
    throughput_rps: f64,
    errors: usize,
    latency_ms: Dist,
}

#[derive(Debug, Serialize)]
struct Level {
    concurrency: usize,
    seconds: f64,
    requests: usize,
    throughput_rps: f64,
    /// Non-2xx answers and transport failures (timeouts included).
    errors: usize,
    /// Every request's latency, errors included.
    latency_ms: Dist,
    operations: BTreeMap<&'static str, OpStats>,
    /// The first few errors, described.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    error_samples: Vec<String>,
    /// The server's peak resident set during this level (VmHWM, reset before it), MiB; absent
    /// for a server this run did not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_peak_rss_mib: Option<f64>,
    /// The server's resident set when the level ended, MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_rss_after_mib: Option<f64>,
    /// The server's resident set every [`RSS_EVERY`] during the level: `[seconds, MiB]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    server_rss_samples: Vec<[f64; 2]>,
    /// The store's caches at the same moments, from the server's `/metrics`:
    /// `[seconds, memory vectors MiB, message vectors MiB]` (what of the resident set is caches
    /// filling toward their budgets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    server_cache_samples: Vec<[f64; 3]>,
    /// The resident set's parts at the same moments, from the kernel: `[seconds, anonymous MiB
    /// (the heap), file-backed MiB (mapped files: the model, libraries), shared MiB (SQLite's
    /// WAL index)]`, so that growth can be told apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    server_rss_parts: Vec<[f64; 4]>,
    /// For a level longer than [`RSS_SETTLED_AFTER`]: the growth of the resident set from the
    /// sample at that mark to the last one, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_rss_growth_after_settled_pct: Option<f64>,
}

#[derive(Debug, Serialize)]
struct ServeReport {
    benchmark: &'static str,
    machine: Machine,
    command: String,
    /// `started` (a child `mnemo serve` on a temporary data dir) or `url`.
    server: &'static str,
    /// The started server's embedder; `None` for `--url`, whose embedder this run cannot see.
    #[serde(skip_serializing_if = "Option::is_none")]
    embedder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_workers: Option<usize>,
    weights: BTreeMap<&'static str, u32>,
    users: usize,
    seed_messages_per_user: usize,
    /// Where ingested messages came from: LoCoMo's file (`--data`) or synthetic.
    ingest_corpus: String,
    seed_seconds: f64,
    seconds_per_level: f64,
    timeout_seconds: f64,
    levels: Vec<Level>,
    errors: usize,
}

/// A `mnemo serve` child on a temporary data dir, killed when dropped.
struct Started {
    child: Child,
    base: String,
    key: String,
    _dir: tempfile::TempDir,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts this binary as `mnemo serve` on loopback with `config` (data dir and embedder
/// replaced) written to the temporary dir, after creating a tenant key there.
fn start(mut config: Config, embedder: EmbedderKind, workers: usize) -> Result<Started> {
    let dir = tempfile::tempdir()?;
    config.data_dir = dir.path().to_path_buf();
    config.embedder.kind = embedder;
    // The run is one tenant as fast as its clients go: what it measures is the server, not the
    // per-tenant rate limit, which is off unless the environment sets one (it overrides the file).
    config.limits.requests_per_second = 0.0;
    let config_path = dir.path().join("mnemo.toml");
    std::fs::write(&config_path, toml::to_string_pretty(&config)?)?;
    let keys = mnemo_server::KeyStore::open(&mnemo_server::key_file(dir.path()))?;
    let (key, _) = keys.create("bench")?;
    drop(keys);
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--config")
        .arg(&config_path)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", &workers.to_string()])
        // Settings from the environment override the file: the embedder asked for wins, and the
        // address is read back from the default text log line.
        .env("MNEMO_EMBEDDER", embedder.as_str())
        .env("MNEMO_LOG", "info")
        .env("MNEMO_LOG_FORMAT", "text")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting mnemo serve")?;
    let mut lines = BufReader::new(child.stderr.take().context("the server's stderr")?).lines();
    let mut said = Vec::new();
    let addr = loop {
        match lines.next() {
            Some(Ok(line)) => match line.split("listening on http://").nth(1) {
                Some(addr) => break addr.trim().to_string(),
                None => said.push(line),
            },
            _ => {
                let _ = child.kill();
                bail!("mnemo serve exited before listening:\n{}", said.join("\n"));
            }
        }
    };
    // Keep draining its stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Ok(Started { child, base: format!("http://{addr}"), key, _dir: dir })
}

/// One client's HTTP connection (kept alive across requests) and key.
struct Client {
    agent: ureq::Agent,
    base: String,
    auth: String,
}

impl Client {
    fn new(base: &str, key: &str, timeout: Duration) -> Self {
        let agent =
            ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().new_agent();
        Self { agent, base: base.trim_end_matches('/').to_string(), auth: format!("Bearer {key}") }
    }

    /// POSTs JSON; `Err` describes a non-2xx answer or a transport failure.
    fn post(&self, path: &str, body: &Value) -> Result<(), String> {
        let sent = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .header("content-type", "application/json")
            .send(body.to_string());
        match sent {
            Ok(mut resp) if resp.status().is_success() => {
                // Read the whole body: the latency is the client's, answer included.
                resp.body_mut().read_to_vec().map(drop).map_err(|e| format!("reading the answer: {e}"))
            }
            Ok(mut resp) => {
                let text = resp.body_mut().read_to_string().unwrap_or_default();
                Err(format!("{} {}", resp.status().as_u16(), text.chars().take(200).collect::<String>()))
            }
            Err(e) => Err(format!("transport: {e}")),
        }
    }
}

fn user(i: usize) -> String {
    format!("bench-user-{i}")
}

fn chat(i: usize) -> String {
    format!("bench-chat-{i}")
}

fn messages_body(user_index: usize, messages: &[(String, String)]) -> Value {
    let messages: Vec<Value> =
        messages.iter().map(|(id, text)| json!({"id": id, "role": "user", "content": text})).collect();
    json!({"user_id": user(user_index), "chat_id": chat(user_index), "messages": messages})
}

/// Seeds every user with `per_user` messages, ten to a request.
fn seed(client: &Client, users: usize, per_user: usize) -> Result<()> {
    for u in 0..users {
        let texts = synthetic_messages(per_user, 0x5EED ^ u as u64);
        let batch: Vec<(String, String)> =
            texts.into_iter().enumerate().map(|(i, t)| (format!("seed-{u}-{i}"), t)).collect();
        for chunk in batch.chunks(10) {
            client.post("/v1/messages", &messages_body(u, chunk)).map_err(|e| anyhow::anyhow!("seeding: {e}"))?;
        }
    }
    Ok(())
}

/// What one client measured: per operation, latencies and error count; a few descriptions.
#[derive(Default)]
struct Tally {
    latencies: [Vec<f64>; 3],
    errors: [usize; 3],
    samples: Vec<String>,
}

/// One client's loop until `deadline`: picks an operation by weight and a user at random.
fn client_loop(
    client: &Client,
    plan: &Plan,
    cursor: &AtomicUsize,
    (level, id): (usize, usize),
    deadline: Instant,
) -> Tally {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (((level as u64) << 32) | id as u64));
    let total: u32 = plan.weights.iter().sum();
    let mut tally = Tally::default();
    for i in 0.. {
        if Instant::now() >= deadline {
            break;
        }
        let mut pick = (rng.next() % u64::from(total)) as u32;
        let op = plan
            .weights
            .iter()
            .position(|&w| {
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .unwrap_or(0);
        let u = (rng.next() % plan.users as u64) as usize;
        let (path, body) = match op {
            0 => match &plan.corpus {
                Some(turns) => {
                    // Past the end, the corpus again under new ids: every request still appends.
                    let n = cursor.fetch_add(1, Ordering::Relaxed);
                    let (user, chat, m) = &turns[n % turns.len()];
                    let id = format!("{}#{}", m.id.as_deref().unwrap_or("turn"), n / turns.len());
                    let at = m.at.map(|t| t.to_rfc3339());
                    let message = json!({"id": id, "role": "user", "content": m.content, "at": at});
                    ("/v1/messages", json!({"user_id": user, "chat_id": chat, "messages": [message]}))
                }
                None => {
                    let text = synthetic_messages(1, rng.next()).remove(0);
                    ("/v1/messages", messages_body(u, &[(format!("load-c{level}-t{id}-{i}"), text)]))
                }
            },
            1 => {
                let query = format!("What about my {} and {}?", rng.pick(SUBJECTS), rng.pick(THINGS));
                ("/v1/recall", json!({"user_id": user(u), "chat_id": chat(u), "query": query}))
            }
            _ => {
                let message = format!("Can you remind me what I said about {}?", rng.pick(THINGS));
                ("/v1/context", json!({"user_id": user(u), "chat_id": chat(u), "message": message}))
            }
        };
        let t = Instant::now();
        let got = client.post(path, &body);
        tally.latencies[op].push(t.elapsed().as_secs_f64() * 1e3);
        if let Err(e) = got {
            tally.errors[op] += 1;
            if tally.samples.len() < ERROR_SAMPLES {
                tally.samples.push(format!("{} {path}: {e}", OPS[op]));
            }
        }
    }
    tally
}

/// Level number `index`: `concurrency` clients for `plan.seconds`, with the server's peak RSS
/// if known.
fn level(
    (base, key): (&str, &str),
    plan: &Plan,
    cursor: &AtomicUsize,
    (index, concurrency): (usize, usize),
    pid: Option<u32>,
) -> Level {
    if let Some(pid) = pid {
        reset_peak_rss(&pid.to_string());
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(plan.seconds);
    let (tallies, Samples { rss: server_rss_samples, caches: server_cache_samples, parts: server_rss_parts }) =
        std::thread::scope(|s| {
            let sampler = pid.map(|pid| s.spawn(move || sample_rss(pid, base, started, deadline)));
            let handles: Vec<_> = (0..concurrency)
                .map(|id| {
                    let client = Client::new(base, key, plan.timeout);
                    s.spawn(move || client_loop(&client, plan, cursor, (index, id), deadline))
                })
                .collect();
            let tallies: Vec<Tally> = handles.into_iter().map(|h| h.join().expect("a load client panicked")).collect();
            (tallies, sampler.map(|h| h.join().expect("the RSS sampler panicked")).unwrap_or_default())
        });
    let seconds = started.elapsed().as_secs_f64();
    let mut operations = BTreeMap::new();
    let mut all = Vec::new();
    let mut errors = 0;
    for (op, name) in OPS.iter().enumerate() {
        let lat: Vec<f64> = tallies.iter().flat_map(|t| t.latencies[op].iter().copied()).collect();
        let errs: usize = tallies.iter().map(|t| t.errors[op]).sum();
        errors += errs;
        operations.insert(
            *name,
            OpStats {
                requests: lat.len(),
                throughput_rps: lat.len() as f64 / seconds,
                errors: errs,
                latency_ms: dist(&lat),
            },
        );
        all.extend(lat);
    }
    let error_samples = tallies.iter().flat_map(|t| t.samples.iter().cloned()).take(ERROR_SAMPLES).collect();
    let proc = |field| pid.and_then(|p| proc_status_mib(&p.to_string(), field));
    Level {
        concurrency,
        seconds,
        requests: all.len(),
        throughput_rps: all.len() as f64 / seconds,
        errors,
        latency_ms: dist(&all),
        operations,
        error_samples,
        server_peak_rss_mib: proc("VmHWM"),
        server_rss_after_mib: proc("VmRSS"),
        server_rss_growth_after_settled_pct: growth_after_settled(&server_rss_samples),
        server_rss_samples,
        server_cache_samples,
        server_rss_parts,
    }
}

/// What [`sample_rss`] gathers, each sample led by its seconds since the level started.
#[derive(Debug, Default)]
struct Samples {
    /// `[seconds, resident MiB]`.
    rss: Vec<[f64; 2]>,
    /// `[seconds, memory vectors MiB, message vectors MiB]`.
    caches: Vec<[f64; 3]>,
    /// `[seconds, anonymous MiB, file-backed MiB, shared MiB]`.
    parts: Vec<[f64; 4]>,
}

/// The resident set of `pid` every [`RSS_EVERY`] from `started` until `deadline`, its parts,
/// and the store's caches from the server at `base`'s `/metrics` at the same moments.
fn sample_rss(pid: u32, base: &str, started: Instant, deadline: Instant) -> Samples {
    let pid = pid.to_string();
    let agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(5))).build().new_agent();
    let (mut rss, mut caches, mut parts) = (Vec::new(), Vec::new(), Vec::new());
    let mut next = started + RSS_EVERY;
    while next <= deadline {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let at = next.duration_since(started).as_secs_f64();
        if let Some(mib) = proc_status_mib(&pid, "VmRSS") {
            rss.push([at, mib]);
        }
        let part = |field| proc_status_mib(&pid, field);
        if let (Some(anon), Some(file), Some(shmem)) = (part("RssAnon"), part("RssFile"), part("RssShmem")) {
            parts.push([at, anon, file, shmem]);
        }
        let text = agent
            .get(format!("{}/metrics", base.trim_end_matches('/')))
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok());
        if let Some(text) = text {
            let mib =
                |cache: &str| gauge(&text, &format!("mnemo_cache_bytes{{cache=\"{cache}\"}}")).map_or(0.0, |b| b / MIB);
            caches.push([at, mib("memory_vectors"), mib("message_vectors")]);
        }
        next += RSS_EVERY;
    }
    Samples { rss, caches, parts }
}

/// Bytes in a MiB.
const MIB: f64 = 1024.0 * 1024.0;

/// The value of the Prometheus series named exactly `series` (name and labels) in `text`.
fn gauge(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

/// Growth in percent from the first sample at or after [`RSS_SETTLED_AFTER`] to the last one;
/// `None` when the level ended before that mark.
fn growth_after_settled(samples: &[[f64; 2]]) -> Option<f64> {
    let mark = RSS_SETTLED_AFTER.as_secs_f64();
    let settled = samples.iter().find(|[at, _]| *at >= mark)?;
    let last = samples.last()?;
    Some((last[1] / settled[1] - 1.0) * 100.0)
}

pub(super) fn run(config: Config, plan: &Plan, out: &Path) -> Result<()> {
    ensure!(!plan.concurrency.is_empty() && plan.concurrency.iter().all(|&c| c > 0), "--concurrency must be >= 1");
    ensure!(plan.seconds > 0.0, "--seconds must be positive");
    ensure!(plan.users > 0, "--users must be at least 1");
    ensure!(plan.weights.iter().sum::<u32>() > 0, "the operation weights must not all be 0");
    let (started, base, key) = match &plan.url {
        None => {
            eprintln!("starting mnemo serve with the {} embedder", plan.embedder);
            let s = start(config, plan.embedder, plan.workers)?;
            let (base, key) = (s.base.clone(), s.key.clone());
            (Some(s), base, key)
        }
        Some(url) => {
            let key = plan.key.clone().context("--url needs --key (or MNEMO_API_KEY): a key of the tenant to load")?;
            (None, url.clone(), key)
        }
    };
    let pid = started.as_ref().map(|s| s.child.id());
    let seeder = Client::new(&base, &key, plan.timeout);
    let t = Instant::now();
    seed(&seeder, plan.users, plan.seed_messages)?;
    let seed_seconds = t.elapsed().as_secs_f64();
    eprintln!("seeded {} users x {} messages in {seed_seconds:.1} s", plan.users, plan.seed_messages);

    let mut levels = Vec::new();
    let cursor = AtomicUsize::new(0);
    for (index, &c) in plan.concurrency.iter().enumerate() {
        let l = level((&base, &key), plan, &cursor, (index, c), pid);
        println!(
            "concurrency {:>3}: {:>6} requests in {:.1} s = {:>7.1} req/s; p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms; \
             {} errors; server peak RSS {}",
            c,
            l.requests,
            l.seconds,
            l.throughput_rps,
            l.latency_ms.p50,
            l.latency_ms.p95,
            l.latency_ms.p99,
            l.errors,
            l.server_peak_rss_mib.map_or("n/a".to_string(), |m| format!("{m:.0} MiB")),
        );
        if let Some(growth) = l.server_rss_growth_after_settled_pct {
            let at = |i: usize| l.server_rss_samples.get(i).map_or(f64::NAN, |s| s[1]);
            let settled = l.server_rss_samples.iter().position(|[t, _]| *t >= RSS_SETTLED_AFTER.as_secs_f64());
            println!(
                "    server RSS: {:.0} MiB at {} s, {:.0} MiB at the end ({growth:+.1}%)",
                settled.map_or(f64::NAN, at),
                RSS_SETTLED_AFTER.as_secs(),
                at(l.server_rss_samples.len().saturating_sub(1)),
            );
        }
        for s in &l.error_samples {
            println!("    {s}");
        }
        levels.push(l);
    }
    let errors = levels.iter().map(|l| l.errors).sum();
    let report = ServeReport {
        benchmark: "serve",
        machine: machine(),
        command: command(),
        server: if started.is_some() { "started" } else { "url" },
        embedder: started.is_some().then(|| plan.embedder.to_string()),
        server_workers: started.is_some().then_some(plan.workers),
        weights: OPS.iter().copied().zip(plan.weights).collect(),
        users: plan.users,
        seed_messages_per_user: plan.seed_messages,
        ingest_corpus: plan.corpus.as_ref().map_or("synthetic".to_string(), |c| format!("locomo turns ({})", c.len())),
        seed_seconds,
        seconds_per_level: plan.seconds,
        timeout_seconds: plan.timeout.as_secs_f64(),
        levels,
        errors,
    };
    write_report(out, &report)?;
    ensure!(errors == 0, "{errors} request(s) failed under load (described in {})", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{gauge, growth_after_settled};

    #[test]
    fn a_gauge_is_read_by_its_exact_series() {
        let text = "# TYPE mnemo_cache_bytes gauge\nmnemo_cache_bytes{cache=\"memory_vectors\"} 2048\n\
                    mnemo_cache_bytes{cache=\"message_vectors\"} 1048576\n";
        assert_eq!(gauge(text, "mnemo_cache_bytes{cache=\"message_vectors\"}"), Some(1_048_576.0));
        assert_eq!(gauge(text, "mnemo_cache_bytes{cache=\"memory_vectors\"}"), Some(2048.0));
        assert_eq!(gauge(text, "mnemo_cache_bytes{cache=\"other\"}"), None);
    }

    #[test]
    fn growth_is_measured_from_the_settled_mark_to_the_end() {
        // Ten-second samples: warm-up growth before 600 s does not count, what follows does.
        let samples: Vec<[f64; 2]> =
            (1..=120).map(|i| [f64::from(i) * 10.0, if i < 60 { 100.0 } else { 200.0 }]).collect();
        assert_eq!(growth_after_settled(&samples), Some(0.0));
        let mut grew = samples.clone();
        grew.last_mut().unwrap()[1] = 220.0;
        assert!((growth_after_settled(&grew).unwrap() - 10.0).abs() < 1e-9);
        // A level shorter than the mark has no settled figure.
        assert_eq!(growth_after_settled(&samples[..50]), None);
        assert_eq!(growth_after_settled(&[]), None);
    }
}
