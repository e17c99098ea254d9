//! Scenario runner tests: parse errors that name file, step and key; scenarios run green and red
//! through the real engine with the hashing embedder; the leak predicate on hand-made items.
//! The LoCoMo harness has its own module.

mod locomo;
mod surfaces;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mnemo::models::EmbedderKind;
use mnemo::{Config, MemoryScope};
use mnemo_core::assemble::{BlockItem, ContextBlock, Section};
use mnemo_core::{Kind, Memory as Row, MemoryId, Policy, RecallItem, Scope, SectionName, StatusKind};
use mnemo_eval::{
    Action, EvalError, Report, Scenario, context_leaks, expected_alternatives, is_leak, leaked_items, load_dir,
    policy_leaks, run_dir,
};

fn config() -> Config {
    let mut c = backend_config();
    c.embedder.kind = EmbedderKind::Hash;
    c
}

/// The default configuration on the backend under test: with `MNEMO_TEST_BACKEND=postgres`,
/// scenarios run on the server of `MNEMO_TEST_DATABASE_URL` (a throwaway database each), exactly
/// as `MNEMO_DATABASE_URL=... mnemo eval scenarios` runs them.
fn backend_config() -> Config {
    let mut c = Config::default();
    if std::env::var("MNEMO_TEST_BACKEND").as_deref() == Ok("postgres") {
        let url = std::env::var("MNEMO_TEST_DATABASE_URL")
            .expect("MNEMO_TEST_BACKEND=postgres needs MNEMO_TEST_DATABASE_URL");
        c.database_url = Some(url);
    }
    c
}

fn parse_err(text: &str) -> String {
    Scenario::parse(Path::new("scenarios/foo.toml"), text).unwrap_err().to_string()
}

const HEAD: &str = "name = \"foo\"\ntenant = \"acme\"\nuser_id = \"dana\"\n";

fn with_steps(steps: &str) -> String {
    format!("{HEAD}{steps}")
}

/// Writes scenario files into a fresh directory.
fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn run(files: &[(&str, &str)]) -> Report {
    let dir = dir_with(files);
    run_dir(dir.path(), &config()).unwrap()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

// ---- parsing ----------------------------------------------------------------------------------

#[test]
fn unknown_step_key_names_file_step_and_key() {
    let e = parse_err(&with_steps(
        "[[step]]\nuser = \"hi\"\n[[step]]\nuser = \"My name is Dana.\"\n[[step]]\nrecal = \"name?\"\n",
    ));
    assert_eq!(e, "scenarios/foo.toml: step 3: unknown key \"recal\"");
}

#[test]
fn bad_time_names_the_step_and_key() {
    let e = parse_err(&with_steps("[[step]]\nuser = \"hi\"\n[[step]]\nat = \"yesterday\"\nuser = \"hello\"\n"));
    assert!(e.starts_with("scenarios/foo.toml: step 2: \"at\" is not an RFC 3339 time"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nmaintain = \"2026-13-01\"\n"));
    assert!(e.starts_with("scenarios/foo.toml: step 1: \"maintain\" is not an RFC 3339 time"), "{e}");
    // A TOML datetime literal without an offset is not a point in time either.
    let e = parse_err(&with_steps("[[step]]\nat = 2026-03-02T09:00:00\nuser = \"hello\"\n"));
    assert!(e.contains("step 1: \"at\" is not an RFC 3339 time"), "{e}");
}

#[test]
fn a_step_that_mixes_kinds_is_rejected() {
    let e = parse_err(&with_steps("[[step]]\nuser = \"hi\"\n[[step]]\nrecall = \"where?\"\nuser = \"hello\"\n"));
    assert!(e.starts_with("scenarios/foo.toml: step 2: mixes"), "{e}");
    assert!(e.contains("\"recall\"") && e.contains("\"user\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nrecall = \"where?\"\nassistant = \"hello\"\n"));
    assert!(e.contains("step 1: key \"assistant\" does not belong in a \"recall\" step"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nchat = \"c1\"\n"));
    assert!(e.contains("step 1: the step does nothing"), "{e}");
}

#[test]
fn missing_user_id_names_the_step_and_key() {
    let text =
        "name = \"foo\"\ntenant = \"acme\"\n[[step]]\nuser_id = \"ann\"\nuser = \"hi\"\n[[step]]\nuser = \"hello\"\n";
    let e = parse_err(text);
    assert!(e.starts_with("scenarios/foo.toml: step 2: missing key \"user_id\""), "{e}");
}

#[test]
fn top_level_and_value_errors_name_their_key() {
    let e = parse_err(&format!("{HEAD}nmae = \"x\"\n[[step]]\nuser = \"hi\"\n"));
    assert!(e.starts_with("scenarios/foo.toml: unknown key \"nmae\""), "{e}");
    let e = parse_err("tenant = \"acme\"\nuser_id = \"d\"\n[[step]]\nuser = \"hi\"\n");
    assert!(e.contains("missing key \"name\""), "{e}");
    let e = parse_err(&format!("{HEAD}memory_scope = \"team\"\n[[step]]\nuser = \"hi\"\n"));
    assert!(e.contains("\"memory_scope\" must be \"user\" or \"chat\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nrecall = \"x\"\ntop = 0\n"));
    assert!(e.contains("step 1: \"top\" must be a positive integer"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nexpect_memory = \"x\"\nkind = \"hobby\"\n"));
    assert!(e.contains("step 1: \"kind\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nexpect_memory = \"x\"\nstatus = \"stale|gone\"\n"));
    assert!(e.contains("step 1: \"status\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\ncontext = \"x\"\n[step.sections]\navoidd = [\"x\"]\n"));
    assert!(e.contains("step 1: unknown section \"sections.avoidd\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\npolicy = { key = \"k\", txt = \"t\" }\n"));
    assert!(e.contains("step 1: unknown key \"policy.txt\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nerase_user = false\n"));
    assert!(e.contains("step 1: \"erase_user\" must be true"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nmaintain = \"2026-03-02T09:00:00Z\"\nat = \"2026-03-02T09:00:00Z\"\n"));
    assert!(e.contains("step 1: key \"at\" does not belong in a \"maintain\" step"), "{e}");
    let e = parse_err("name = \"Foo Bar\"\ntenant = \"a\"\nuser_id = \"d\"\n[[step]]\nuser = \"hi\"\n");
    assert!(e.contains("kebab-case"), "{e}");
    let e = parse_err(HEAD);
    assert!(e.contains("no [[step]] tables"), "{e}");
    let e = parse_err("name = \n");
    assert!(e.starts_with("scenarios/foo.toml: invalid TOML"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nuser = \"hi\"\nembedder_down = \"yes\"\n"));
    assert!(e.contains("step 1: \"embedder_down\" must be true or false"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nremember = \"x\"\nkind = \"hobby\"\n"));
    assert!(e.contains("step 1: \"kind\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nremember = \"x\"\ntop = 3\n"));
    assert!(e.contains("key \"top\" does not belong in a \"remember\" step"), "{e}");
    let e = parse_err(&with_steps("[[step]]\nrecall = \"x\"\nembedder_down = true\n"));
    assert!(e.contains("key \"embedder_down\" does not belong in a \"recall\" step"), "{e}");
}

#[test]
fn tuning_is_checked_when_the_file_is_read() {
    let tuned = |table: &str| format!("{HEAD}{table}\n[[step]]\nuser = \"hi\"\n");
    let e = parse_err(&tuned("[tuning.lifecycle]\nmax_active = 3"));
    assert!(e.starts_with("scenarios/foo.toml: configuration error in tuning"), "{e}");
    assert!(e.contains("max_active"), "{e}");
    let e = parse_err(&tuned("[tuning]\ndatabase_url = \"postgres://elsewhere\""));
    assert!(e.contains("not a tuning section"), "{e}");
    let e = parse_err(&tuned("[tuning.lifecycle]\nmax_active_per_user = \"three\""));
    assert!(e.contains("tuning"), "{e}");
    let e = parse_err(&format!("{HEAD}tuning = 3\n[[step]]\nuser = \"hi\"\n"));
    assert!(e.contains("\"tuning\" must be a table"), "{e}");
    let ok = Scenario::parse(Path::new("t.toml"), &tuned("[tuning.lifecycle]\nmax_active_per_user = 3")).unwrap();
    assert_eq!(ok.tuning["lifecycle"]["max_active_per_user"].as_integer(), Some(3));
}

#[test]
fn implicit_time_chat_and_scope_are_resolved() {
    let s = Scenario::parse(
        Path::new("x.toml"),
        &format!(
            "{HEAD}agent = \"bot\"\nmemory_scope = \"chat\"\n\
             [[step]]\nuser = \"first\"\n\
             [[step]]\nat = \"2026-03-02T09:00:00Z\"\nchat = \"c7\"\nuser = \"second\"\nassistant = \"ok\"\n\
             [[step]]\nuser = \"third\"\nuser_id = \"bob\"\n\
             [[step]]\nrecall = \"q\"\nchat = \"c9\"\n\
             [[step]]\nmaintain = 2026-04-01T00:00:00Z\n\
             [[step]]\nexpect_memory = \"a | b\"\nstatus = \"stale|archived\"\n\
             [[step]]\ncontext = \"hi\"\ncontains = \"one\"\n[step.sections]\navoid = [\"x\"]\n"
        ),
    )
    .unwrap();
    assert_eq!(s.memory_scope, MemoryScope::Chat);
    let chat = |i: usize| s.steps[i].scope.chat.as_ref().unwrap().to_string();
    assert_eq!(s.steps[0].at.to_rfc3339(), "2026-01-01T00:00:00+00:00");
    assert_eq!(chat(0), "c1");
    assert_eq!(chat(1), "c7");
    assert_eq!(s.steps[2].at, s.steps[1].at, "steps without `at` keep the last time");
    assert_eq!(chat(2), "c7", "a chat-less message step uses the last chat");
    assert_eq!(s.steps[2].scope.user.as_ref().unwrap().as_str(), "bob");
    assert_eq!(s.steps[3].scope.user.as_ref().unwrap().as_str(), "dana", "overrides are per step");
    assert_eq!(s.steps[3].scope.agent.as_ref().unwrap().as_str(), "bot");
    assert_eq!(chat(3), "c9");
    assert_eq!(chat(5), "c7", "other steps use the last message chat");
    assert_eq!(s.steps[5].at.to_rfc3339(), "2026-04-01T00:00:00+00:00", "maintain moves the clock");
    match &s.steps[3].action {
        Action::Recall { top, hit, miss, .. } => assert_eq!((*top, hit.len(), miss.len()), (3, 0, 0)),
        other => panic!("{other:?}"),
    }
    match &s.steps[5].action {
        Action::ExpectMemory { alternatives, statuses, .. } => {
            assert_eq!(alternatives, &["a", "b"]);
            assert_eq!(statuses, &[StatusKind::Stale, StatusKind::Archived]);
        }
        other => panic!("{other:?}"),
    }
    match &s.steps[6].action {
        Action::Context { contains, sections, .. } => {
            assert_eq!(contains, &["one"]);
            assert_eq!(sections[&SectionName::Avoid], vec!["x".to_string()]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_bad_file_aborts_the_run_naming_it() {
    let good = "name = \"good\"\ntenant = \"a\"\nuser_id = \"d\"\n[[step]]\nuser = \"hi\"\n";
    let bad = "name = \"bad\"\ntenant = \"a\"\nuser_id = \"d\"\n[[step]]\nuser = \"hi\"\n[[step]]\nrecal = \"x\"\n";
    let dir = dir_with(&[("a.toml", good), ("b.toml", bad), ("notes.md", "not a scenario")]);
    let e = run_dir(dir.path(), &config()).unwrap_err();
    assert!(matches!(e, EvalError::Parse { step: Some(2), .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("b.toml: step 2: unknown key \"recal\""), "{msg}");

    let dir = dir_with(&[("a.toml", good), ("b.toml", good)]);
    assert!(matches!(load_dir(dir.path()).unwrap_err(), EvalError::DuplicateName { .. }));
    let dir = dir_with(&[("notes.md", "x")]);
    assert!(matches!(load_dir(dir.path()).unwrap_err(), EvalError::NoScenarios { .. }));
}

#[test]
fn files_run_sorted_by_name() {
    let dir = fixtures();
    let names: Vec<String> = load_dir(&dir).unwrap().into_iter().map(|s| s.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

// ---- running ----------------------------------------------------------------------------------

#[test]
fn fixtures_run_green_with_no_duplicates_or_leaks() {
    let report = run_dir(&fixtures(), &config()).unwrap();
    let text = report.to_text();
    assert!(report.success(), "{text}");
    assert_eq!(report.exit_code(), 0);
    assert_eq!((report.duplicates, report.leaks), (0, 0), "{text}");
    for t in [report.memory_checks, report.hit_at_k, report.context_checks] {
        assert!(t.total > 0 && t.passed == t.total, "{text}");
    }
    let last = text.lines().last().unwrap();
    assert_eq!(last, format!("scenarios: {} passed, 0 failed", report.scenarios.len()));
}

const TINY: &str = r#"
name = "tiny"
tenant = "acme"
user_id = "dana"

[[step]]
at = "2026-03-02T09:00:00Z"
user = "My name is Dana."
assistant = "Hi Dana!"

[[step]]
user = "I live in Lisbon."

[[step]]
expect_memory = "Dana"
kind = "profile"
count = 1

[[step]]
expect_no_memory = "Porto"

[[step]]
recall = "Lisbon"
chat = "c2"
hit = ["Lisbon"]

[[step]]
context = "Any food tips for Lisbon?"
chat = "c2"
contains = ["Lisbon"]
lacks = ["Porto"]
"#;

#[test]
fn a_tiny_scenario_passes() {
    let report = run(&[("tiny.toml", TINY)]);
    assert!(report.success(), "{}", report.to_text());
    let s = &report.scenarios[0];
    assert_eq!((s.memory_checks.passed, s.hit_at_k.passed, s.context_checks.passed), (2, 1, 1));
    assert_eq!(s.duplicates, 0, "replaying a normal conversation creates nothing new");
    assert_eq!(s.leaks, 0);
}

#[test]
fn a_failing_scenario_names_its_step_and_exits_non_zero() {
    let text = format!(
        "{TINY}\n[[step]]\nexpect_memory = \"Berlin\"\nkind = \"profile\"\n\
         [[step]]\nrecall = \"Lisbon\"\nmiss = [\"Lisbon\"]\n\
         [[step]]\ncontext = \"hi\"\n[step.sections]\navoid = [\"ex-husband\"]\n"
    );
    let report = run(&[("tiny.toml", &text)]);
    assert!(!report.success());
    assert_eq!(report.exit_code(), 1);
    assert_eq!((report.passed, report.failed), (0, 1));
    let s = &report.scenarios[0];
    let steps: Vec<Option<usize>> = s.failures.iter().map(|f| f.step).collect();
    assert_eq!(steps, vec![Some(7), Some(8), Some(9)], "{:?}", s.failures);
    let out = report.to_text();
    let line = out.lines().find(|l| l.starts_with("tiny step 7: ")).unwrap();
    assert!(
        line.starts_with("tiny step 7: expect_memory \"Berlin\" (kind profile): no active memory matched; active: [")
    );
    assert!(line.contains("\"User's name is Dana\""), "{line}");
    assert!(out.contains("tiny step 8: recall \"Lisbon\" (top 3): miss \"Lisbon\" is #1"), "{out}");
    assert!(out.contains("tiny step 9: context \"hi\": section avoid lacks \"ex-husband\""), "{out}");
    assert_eq!(out.lines().last().unwrap(), "scenarios: 0 passed, 1 failed");
    assert_eq!((s.memory_checks.passed, s.memory_checks.total), (2, 3));
    assert_eq!((s.hit_at_k.passed, s.hit_at_k.total), (1, 2));
    assert_eq!((s.context_checks.passed, s.context_checks.total), (1, 2));

    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    for key in ["passed", "failed", "memory_checks", "hit_at_k", "context_checks", "duplicates", "leaks", "scenarios"] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["failed"], 1);
    assert_eq!(json["scenarios"][0]["name"], "tiny");
    assert_eq!(json["scenarios"][0]["passed"], false);
    assert_eq!(json["scenarios"][0]["failures"][0]["step"], 7);
}

#[test]
fn alternatives_are_split_in_every_substring_list() {
    assert_eq!(expected_alternatives("Porto | Oporto|"), vec!["Porto", "Oporto"]);
    assert_eq!(expected_alternatives(" Porto "), vec![" Porto "], "without a bar: verbatim, as before");
    let s = Scenario::parse(
        Path::new("x.toml"),
        &with_steps("[[step]]\nrecall = \"q\"\nhit = \"a|b\"\nmiss = [\"c | d\"]\n"),
    )
    .unwrap();
    match &s.steps[0].action {
        Action::Recall { hit, miss, .. } => {
            assert_eq!((hit.as_slice(), miss.as_slice()), (&["a|b".to_string()][..], &["c | d".to_string()][..]));
            assert_eq!(expected_alternatives(&miss[0]), vec!["c", "d"]);
        }
        other => panic!("{other:?}"),
    }
    let e = parse_err(&with_steps("[[step]]\nrecall = \"q\"\nhit = [\"a\", \" | \"]\n"));
    assert!(e.contains("step 1: \"hit\" holds \" | \", which names no substring"), "{e}");
    let e = parse_err(&with_steps("[[step]]\ncontext = \"q\"\n[step.section_lacks]\nspeak = [\"|\"]\n"));
    assert!(e.contains("step 1: \"speak\" holds \"|\""), "{e}");
}

/// `a|b` in hit, miss, contains, lacks, sections and section_lacks: a positive check passes on
/// any alternative, a negative one fails on any.
#[test]
fn alternatives_hold_in_both_polarities() {
    let pass = format!(
        "{TINY}\n[[step]]\nrecall = \"Lisbon\"\nhit = [\"Porto|Lisbon\"]\nmiss = [\"Porto|Braga\"]\n\
         [[step]]\ncontext = \"Any food tips for Lisbon?\"\ncontains = [\"Oporto|lisbon\"]\nlacks = [\"Porto | Braga\"]\n\
         [step.sections]\nspeak = [\"Faro|Lisbon\"]\n[step.section_lacks]\nspeak = [\"Faro|Braga\"]\n"
    );
    let report = run(&[("tiny.toml", &pass)]);
    assert!(report.success(), "{}", report.to_text());
    let s = &report.scenarios[0];
    assert_eq!((s.hit_at_k.passed, s.context_checks.passed), (2, 2));

    let fail = format!(
        "{TINY}\n[[step]]\nrecall = \"Lisbon\"\nhit = [\"Porto|Braga\"]\nmiss = [\"Porto|LISBON\"]\n\
         [[step]]\ncontext = \"Any food tips for Lisbon?\"\ncontains = [\"Oporto|Braga\"]\nlacks = [\"Porto|lisbon\"]\n\
         [step.sections]\nspeak = [\"Faro|Braga\"]\n[step.section_lacks]\nspeak = [\"Faro|Lisbon\"]\n"
    );
    let report = run(&[("tiny.toml", &fail)]);
    let out = report.to_text();
    let s = &report.scenarios[0];
    assert_eq!((s.hit_at_k.passed, s.hit_at_k.total, s.context_checks.passed, s.context_checks.total), (1, 2, 1, 2));
    for expected in [
        "hit \"Porto|Braga\" not in the top 3",
        "miss \"Porto|LISBON\" (as \"LISBON\") is #1",
        "block lacks \"Oporto|Braga\"",
        "block contains \"Porto|lisbon\" (as \"lisbon\")",
        "section speak lacks \"Faro|Braga\"",
        "section speak contains \"Faro|Lisbon\" (as \"Lisbon\")",
    ] {
        assert!(out.contains(expected), "{expected}: {out}");
    }
}

#[test]
fn manage_steps_act_on_the_one_memory_they_name() {
    let text = r#"
name = "manage"
tenant = "acme"
user_id = "dana"

[[step]]
at = "2026-03-02T09:00:00Z"
user = "I live in Lisbon."

[[step]]
user = "I have a dog named Biscuit."

[[step]]
delete = "lisbon"

[[step]]
expect_no_memory = "Lisbon"

[[step]]
expect_memory = "Lisbon"
status = "archived"
count = 1

[[step]]
pin = "user"

[[step]]
pin = "Tokyo"

[[step]]
pin = "Biscuit"

[[step]]
context = "hello"
chat = "c2"
[step.sections]
pinned = ["Biscuit"]

[[step]]
erase_user = true

[[step]]
expect_no_memory = "Biscuit"
"#;
    let report = run(&[("manage.toml", text)]);
    let s = &report.scenarios[0];
    let out = report.to_text();
    assert_eq!(s.memory_checks.passed, 3, "{out}");
    assert_eq!(s.context_checks.passed, 1, "{out}");
    let at = |n: usize| s.failures.iter().find(|f| f.step == Some(n)).map(|f| f.message.clone());
    assert!(at(6).is_none_or(|m| m.contains("ambiguous") || m.contains("no active memory")), "{out}");
    assert!(at(7).unwrap().contains("pin \"Tokyo\": no active memory contains it"), "{out}");
    assert!(at(8).is_none(), "{out}");
    assert!(at(10).is_none() && at(11).is_none(), "erasure runs and leaves nothing: {out}");
    assert!(!s.passed);
}

#[test]
fn maintain_and_policy_steps_run() {
    let text = r#"
name = "jobs"
tenant = "shop"
user_id = "cara"

[[step]]
at = "2026-03-01T08:00:00Z"
policy = { key = "refunds", text = "Refunds within 30 days.", value = { days = 30 } }

[[step]]
user = "My name is Cara."

[[step]]
maintain = "2026-09-01T00:00:00Z"

[[step]]
expect_memory = "Cara"

[[step]]
user_id = "dave"
context = "Can I get a refund?"
contains = ["30 days"]
lacks = ["Cara"]
[step.sections]
policy = ["30 days"]
"#;
    let report = run(&[("jobs.toml", text)]);
    assert!(report.success(), "{}", report.to_text());
    assert_eq!(report.leaks, 0, "a tenant policy reaching another user of the tenant is not a leak");
}

// ---- the leak predicate -------------------------------------------------------------------------

fn scope(t: &str, u: Option<&str>, c: Option<&str>) -> Scope {
    Scope::parse(t, None, u, c).unwrap()
}

fn row(owner: Scope, content: &str) -> Row {
    Row::new(owner, Kind::Profile, content, "2026-03-02T09:00:00Z".parse().unwrap())
}

fn item(owner: Scope, content: &str) -> RecallItem {
    RecallItem { memory: row(owner, content), exact: None, score: None, tier: None, possibly_outdated: None }
}

#[test]
fn the_leak_predicate_follows_visibility() {
    let dana = scope("acme", Some("dana"), None);
    let dana_c1 = scope("acme", Some("dana"), Some("c1"));
    let tenant_wide = scope("acme", None, None);
    let items =
        vec![item(dana.clone(), "home"), item(dana_c1.clone(), "chat secret"), item(tenant_wide, "office hours")];

    // A foreign tenant sees nothing of acme's.
    let other_tenant = scope("globex", Some("dana"), Some("c1"));
    assert_eq!(leaked_items(&other_tenant, &items).len(), 3);
    // A foreign user of the same tenant legitimately sees tenant-wide rows only.
    let eve = scope("acme", Some("eve"), Some("c1"));
    let leaks: Vec<String> = leaked_items(&eve, &items).into_iter().map(|l| l.content).collect();
    assert_eq!(leaks, vec!["home", "chat secret"]);
    // A foreign chat of the same user sees the user's rows, not another chat's.
    let c2 = scope("acme", Some("dana"), Some("c2"));
    let leaks: Vec<String> = leaked_items(&c2, &items).into_iter().map(|l| l.content).collect();
    assert_eq!(leaks, vec!["chat secret"]);
    // The owner's own scope sees everything.
    assert!(leaked_items(&dana_c1, &items).is_empty());
    assert!(is_leak(&eve, &dana) && !is_leak(&dana_c1, &dana));

    let policy = Policy {
        tenant: "acme".parse().unwrap(),
        agent: None,
        key: "refunds".into(),
        text: "30 days".into(),
        value: serde_json::Value::Null,
        version: 1,
        effective_from: "2026-03-01T00:00:00Z".parse().unwrap(),
        effective_until: None,
    };
    assert!(!policy_leaks(&eve, &policy), "tenant policies reach every user of the tenant");
    assert!(policy_leaks(&other_tenant, &policy));
}

#[test]
fn context_leaks_count_memories_messages_and_foreign_policies() {
    let dana = scope("acme", Some("dana"), None);
    let tenant_wide = scope("acme", None, None);
    let mine = MemoryId::new();
    let shared = MemoryId::new();
    let owners: HashMap<MemoryId, Scope> = [(mine, dana.clone()), (shared, tenant_wide)].into_iter().collect();
    let line = |id: String, kind: &str, text: &str| BlockItem {
        id,
        kind: kind.into(),
        text: text.into(),
        surface: None,
        exact: None,
        score: None,
        tier: None,
        provenance: None,
        tokens: 1,
        detail: None,
        day: None,
    };
    let section = |name: SectionName, items: Vec<BlockItem>| Section {
        name,
        title: name.title().into(),
        cacheable: false,
        items,
    };
    let block = ContextBlock {
        sections: vec![
            section(SectionName::Policy, vec![line("policy:refunds@v1".into(), "policy", "30 days")]),
            section(
                SectionName::Speak,
                vec![line(mine.to_string(), "profile", "home"), line(shared.to_string(), "fact", "office")],
            ),
            section(SectionName::Recent, vec![line("tiny-s1-u".into(), "message", "I live in Lisbon")]),
        ],
        text: String::new(),
        tokens: 0,
        budget: 100,
        held_back: Vec::new(),
        shed: Vec::new(),
    };
    let home = dana.tenant;
    let eve = scope("acme", Some("eve"), Some("c1"));
    let leaks: Vec<String> = context_leaks(&eve, &block, &owners, &home).into_iter().map(|l| l.content).collect();
    assert_eq!(leaks, vec!["home", "I live in Lisbon"]);
    let other = scope("globex", Some("dana"), Some("c1"));
    assert_eq!(context_leaks(&other, &block, &owners, &home).len(), 4);
    let own = scope("acme", Some("dana"), Some("c1"));
    let empty = ContextBlock { sections: vec![block.sections[0].clone(), block.sections[1].clone()], ..block };
    assert!(context_leaks(&own, &empty, &owners, &home).is_empty());
}

/// The repository's own scenario suite, through the real local model (the default embedder),
/// exactly as `mnemo eval scenarios scenarios/` runs it. CI fetches the model first.
#[test]
fn the_repository_scenarios_all_pass_with_the_real_model() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut c = backend_config();
    c.embedder.kind = EmbedderKind::Local;
    let report =
        run_dir(&dir, &c).unwrap_or_else(|e| panic!("{e}\n(run scripts/fetch-model.sh if the model is missing)"));
    assert!(report.scenarios.len() >= 24, "only {} scenarios", report.scenarios.len());
    assert!(report.success(), "{}", report.to_text());
    assert_eq!((report.duplicates, report.leaks), (0, 0));
}

#[test]
fn document_steps_parse_their_keys_and_refuse_bad_values() {
    let s = Scenario::parse(
        Path::new("scenarios/foo.toml"),
        &with_steps(
            "[[step]]\nstore_document = \"notes\"\nkind = \"tool_output\"\nsource = \"cargo test\"\nowner = \"user\"\n\
             [[step]]\nsimilar_documents = \"q\"\nthreshold = 0.4\ntop = 2\nhit = \"notes\"\nmiss = [\"x|y\"]\n",
        ),
    )
    .unwrap();
    assert!(matches!(
        &s.steps[0].action,
        Action::StoreDocument { kind: mnemo::core::DocumentKind::ToolOutput, owner: mnemo::DocumentOwner::User, .. }
    ));
    assert!(
        matches!(&s.steps[1].action, Action::SimilarDocuments { threshold: Some(t), top: Some(2), .. } if (*t - 0.4).abs() < 1e-6)
    );
    let e = parse_err(&with_steps("[[step]]\nstore_document = \"n\"\nowner = \"team\"\n"));
    assert!(e.starts_with("scenarios/foo.toml: step 1: \"owner\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nstore_document = \"n\"\nkind = \"gossip\"\n"));
    assert!(e.contains("\"kind\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nsimilar_documents = \"q\"\nthreshold = 2.0\n"));
    assert!(e.contains("\"threshold\""), "{e}");
    let e = parse_err(&with_steps("[[step]]\nsimilar_documents = \"q\"\nsource = \"x\"\n"));
    assert!(e.contains("does not belong"), "{e}");
}

#[test]
fn context_window_steps_parse_their_keys_and_refuse_bad_values() {
    use mnemo::core::window::{PartName, Stage};
    let s = Scenario::parse(
        Path::new("scenarios/foo.toml"),
        &with_steps(
            "[[step]]\nusage = 900\ncapacity = 1000\nhold = [\"peanut\"]\nhold_documents = \"WAL\"\nhold_recent = 4\n\
             stage = \"rotate\"\nkeep = \"peanut\"\nshed = [\"WAL\"]\n\
             [[step]]\nrotate = true\nbudget = 500\ncontains = \"peanut\"\n[step.parts]\ncontinuity = [\"Last request\"]\n",
        ),
    )
    .unwrap();
    assert!(matches!(
        &s.steps[0].action,
        Action::Usage { used: 900, capacity: 1000, hold_recent: 4, stage: Some(Stage::Rotate), hold, .. } if hold == &["peanut"]
    ));
    assert!(
        matches!(&s.steps[1].action, Action::Rotate { budget: Some(500), parts, .. } if parts.contains_key(&PartName::Continuity))
    );
    // Files without the new keys read as before; bad values name their key.
    for (steps, key) in [
        ("[[step]]\nusage = 900\n", "\"capacity\""),
        ("[[step]]\nusage = 900\ncapacity = 0\n", "\"capacity\""),
        ("[[step]]\nusage = -1\ncapacity = 10\n", "\"usage\""),
        ("[[step]]\nusage = 9\ncapacity = 10\nstage = \"panic\"\n", "\"stage\""),
        ("[[step]]\nrotate = false\n", "\"rotate\""),
        ("[[step]]\nrotate = true\n[step.parts]\nsummary = [\"x\"]\n", "parts.summary"),
        ("[[step]]\nrotate = true\nhold = \"x\"\n", "does not belong"),
    ] {
        let e = parse_err(&with_steps(steps));
        assert!(e.starts_with("scenarios/foo.toml: step 1:") && e.contains(key), "{steps}: {e}");
    }
}

#[test]
fn a_bundle_leaks_its_recent_tail_and_memories_the_foreign_scope_cannot_see() {
    use mnemo::core::window::{Bundle, BundlePart, PartName};
    let dana = Scope::parse("acme", None, Some("dana"), None).unwrap();
    let shared = Scope::parse("acme", None, None, None).unwrap();
    let (mine, tenant_wide) = (mnemo::core::MemoryId::new(), mnemo::core::MemoryId::new());
    let owners: HashMap<_, _> = [(mine, dana), (tenant_wide, shared)].into_iter().collect();
    let part = |name, memories: Vec<mnemo::core::MemoryId>| BundlePart { name, text: "x".into(), tokens: 1, memories };
    let bundle = Bundle {
        parts: vec![part(PartName::MemoryMd, vec![mine, tenant_wide]), part(PartName::Recent, Vec::new())],
        text: "x".into(),
        tokens: 2,
        budget: 10,
        held_back: Vec::new(),
    };
    let sam = Scope::parse("acme", None, Some("sam"), Some("c1")).unwrap();
    let leaks: Vec<String> = mnemo_eval::bundle_leaks(&sam, &bundle, &owners).into_iter().map(|l| l.id).collect();
    assert_eq!(leaks, [mine.to_string(), "recent".to_string()]);
    let own = Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap();
    let only_tail = Bundle { parts: vec![part(PartName::MemoryMd, vec![mine])], ..bundle.clone() };
    assert!(mnemo_eval::bundle_leaks(&own, &only_tail, &owners).is_empty());
    let unknown = Bundle { parts: vec![part(PartName::Pinned, vec![mnemo::core::MemoryId::new()])], ..bundle };
    assert_eq!(mnemo_eval::bundle_leaks(&own, &unknown, &owners).len(), 1, "an unknown owner cannot be vouched for");
}

#[test]
fn agent_wide_research_reaches_another_user_but_never_another_agent_or_tenant() {
    let t = mnemo::core::document::DocumentsTuning::default();
    let hit = |owner: &str| {
        let owner = Scope::parse("acme", Some("coder"), (owner == "dana").then_some("dana"), None).unwrap();
        let at = "2026-03-02T09:00:00Z".parse().unwrap();
        let document =
            mnemo::core::Document::new(owner, mnemo::core::DocumentKind::Note, "", "WAL notes", at, &t).unwrap();
        mnemo::DocumentHit { document, score: 0.9 }
    };
    let hits = [hit("agent"), hit("dana")];
    let sam = Scope::parse("acme", Some("coder"), Some("sam"), None).unwrap();
    let leaks = mnemo_eval::document_leaks(&sam, &hits);
    assert_eq!(leaks.iter().map(|l| l.id.clone()).collect::<Vec<_>>(), [hits[1].document.id.to_string()]);
    let other_agent = Scope::parse("acme", Some("writer"), Some("dana"), None).unwrap();
    assert_eq!(mnemo_eval::document_leaks(&other_agent, &hits).len(), 2);
    let other_tenant = Scope::parse("globex", Some("coder"), Some("dana"), None).unwrap();
    assert_eq!(mnemo_eval::document_leaks(&other_tenant, &hits).len(), 2);
    assert!(
        mnemo_eval::document_leaks(&Scope::parse("acme", Some("coder"), Some("dana"), None).unwrap(), &hits).is_empty()
    );
}
