//! `mnemo user`: the privacy switches from the command line, on the store the API serves.

use std::path::Path;
use std::process::{Command, Output};

fn mnemo(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mnemo"));
    c.arg("--data-dir").arg(data).env("MNEMO_EMBEDDER", "hash").env_remove("MNEMO_CONFIG");
    c.env_remove("MNEMO_TENANT").env_remove("MNEMO_USER").env_remove("MNEMO_DATABASE_URL");
    c
}

fn run(data: &Path, args: &[&str]) -> Output {
    mnemo(data).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn pause_disable_and_back_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let show = |tenant: &str| stdout(&run(&data, &["user", "show", "--tenant", tenant, "--user", "dana"]));
    assert_eq!(show("acme"), "user dana of tenant acme: active\n");
    assert_eq!(
        stdout(&run(&data, &["user", "pause", "--tenant", "acme", "--user", "dana", "--json"])).trim(),
        r#"{"state":"paused","user_id":"dana"}"#
    );
    assert_eq!(show("acme"), "user dana of tenant acme: paused\n");
    assert_eq!(show("globex"), "user dana of tenant globex: active\n", "per tenant");

    // A paused user's messages are kept but nothing is extracted.
    let chat = dir.path().join("chat.jsonl");
    std::fs::write(&chat, "{\"role\": \"user\", \"content\": \"I have a dog named Biscuit.\"}\n").unwrap();
    let ingest = |extra: &[&str]| {
        let mut args = vec!["ingest", chat.to_str().unwrap(), "--tenant", "acme", "--user", "dana", "--chat", "c1"];
        args.extend_from_slice(extra);
        stdout(&run(&data, &args))
    };
    let report: serde_json::Value = serde_json::from_str(&ingest(&["--json"])).unwrap();
    assert_eq!((&report["user_state"], &report["appended"]), (&serde_json::json!("paused"), &serde_json::json!(1)));
    assert_eq!(report["ops"], serde_json::json!([]));

    stdout(&run(&data, &["user", "disable", "--tenant", "acme", "--user", "dana"]));
    assert_eq!(show("acme"), "user dana of tenant acme: disabled\n");
    stdout(&run(&data, &["user", "enable", "--tenant", "acme", "--user", "dana"]));
    assert_eq!(show("acme"), "user dana of tenant acme: active\n");
    stdout(&run(&data, &["user", "resume", "--tenant", "acme", "--user", "dana"]));

    // No user: a clear error, nothing done.
    let o = run(&data, &["user", "pause", "--tenant", "acme"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--user"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&data, &["user", "pause", "--tenant", "acme", "--user", " bad "]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error:"), "{}", String::from_utf8_lossy(&o.stderr));
}
