//! `mnemo bench serve` as CI runs it: a few seconds of the mixed load on the server it starts,
//! with a well-formed report and no failed request; and a server that refuses requests (a rate
//! limit) shows up as counted, described errors and a failing exit, never as a clean report.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use support::{mnemo, wait_with_deadline};

/// Runs a short `mnemo bench serve` (hash embedder, two levels) with `env` set and `extra`
/// arguments; returns whether it succeeded, its output, and the report it wrote.
fn bench_serve(dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> (bool, String, Value) {
    let out = dir.join("serve.json");
    let child = mnemo(dir)
        .args(["bench", "serve", "--embedder", "hash", "--seconds", "3", "--concurrency", "1", "--concurrency", "2"])
        .args(["--users", "3", "--seed-messages", "5"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (ok, stdout, stderr) = wait_with_deadline(child, Duration::from_secs(180));
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no report ({e}):\n{stdout}\n{stderr}"));
    (ok, format!("{stdout}\n{stderr}"), serde_json::from_str(&text).unwrap())
}

#[test]
fn a_short_load_run_has_no_errors_and_a_well_formed_report() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, output, report) = bench_serve(dir.path(), &[], &[]);
    assert!(ok, "{output}");
    assert_eq!(report["benchmark"], "serve");
    assert_eq!(report["server"], "started");
    assert_eq!(report["embedder"], "hash");
    assert_eq!(report["errors"], 0, "{report}");
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(levels.iter().map(|l| l["concurrency"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    for level in levels {
        let requests = level["requests"].as_u64().unwrap();
        assert!(requests > 0 && level["throughput_rps"].as_f64().unwrap() > 0.0, "{level}");
        assert_eq!(level["errors"], 0, "{level}");
        let l = &level["latency_ms"];
        let p = |k: &str| l[k].as_f64().unwrap();
        assert!(0.0 < p("p50") && p("p50") <= p("p95") && p("p95") <= p("p99") && p("p99") <= p("max"), "{l}");
        let ops = level["operations"].as_object().unwrap();
        assert_eq!(ops.keys().collect::<Vec<_>>(), ["context", "ingest", "recall"]);
        assert_eq!(ops.values().map(|o| o["requests"].as_u64().unwrap()).sum::<u64>(), requests, "{level}");
        assert!(ops.values().all(|o| o["requests"].as_u64().unwrap() > 0), "every operation ran: {level}");
        let rss = level["server_peak_rss_mib"].as_f64().unwrap();
        assert!(rss > 1.0 && rss >= level["server_rss_after_mib"].as_f64().unwrap(), "{level}");
    }
}

#[test]
fn refused_requests_are_counted_described_and_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // The started server inherits these: a burst that covers the seeding, then 5 requests/s.
    let limits = [("MNEMO_LIMITS__REQUESTS_PER_SECOND", "5"), ("MNEMO_LIMITS__REQUEST_BURST", "10")];
    let (ok, output, report) = bench_serve(dir.path(), &limits, &[]);
    assert!(!ok, "a run with failed requests exits non-zero: {output}");
    assert!(output.contains("failed under load"), "{output}");
    let errors = report["errors"].as_u64().unwrap();
    assert!(errors > 0, "{report}");
    let level = &report["levels"][1];
    assert!(level["errors"].as_u64().unwrap() > 0, "{level}");
    let samples = level["error_samples"].as_array().unwrap();
    assert!(!samples.is_empty() && samples.len() <= 5, "{level}");
    assert!(samples.iter().all(|s| s.as_str().unwrap().contains("429")), "{level}");
}

#[test]
fn ingest_only_from_locomo_turns_sends_them_in_order_and_again_under_new_ids() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/tests/fixtures/locomo-tiny.json");
    let data = fixture.to_str().unwrap();
    let only_ingest = ["--ingest", "1", "--recall", "0", "--context", "0", "--data", data];
    let (ok, output, report) = bench_serve(dir.path(), &[], &only_ingest);
    assert!(ok, "{output}");
    assert_eq!(report["ingest_corpus"], "locomo turns (9)", "{report}");
    for level in report["levels"].as_array().unwrap() {
        let ops = &level["operations"];
        assert_eq!(ops["recall"]["requests"], 0, "{level}");
        // Nine turns in seconds of load: the corpus came round again, under new ids, unrefused.
        assert!(ops["ingest"]["requests"].as_u64().unwrap() > 9, "{level}");
        assert_eq!(level["errors"], 0, "{level}");
    }
}
