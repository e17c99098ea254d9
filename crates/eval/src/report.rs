//! The run's report: per-scenario failures and the five metrics of `docs/SCENARIOS.md`, as text for
//! people (failure lines, a table, and the `scenarios: N passed, M failed` last line) and as JSON
//! for machines.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Checks of one kind that held, out of those run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Checks that held.
    pub passed: usize,
    /// Checks run.
    pub total: usize,
}

impl Tally {
    /// Counts one check.
    pub fn record(&mut self, held: bool) {
        self.total += 1;
        self.passed += usize::from(held);
    }

    fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.total += other.total;
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.passed, self.total)
    }
}

/// One thing that did not hold, located precisely enough to fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The step (1-based); absent for scenario-wide findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// What failed: the step's action key, `duplicates` or `leak`.
    pub check: String,
    /// What differed, starting with the check as written in the file.
    pub message: String,
}

/// One scenario's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// The scenario's name.
    pub name: String,
    /// Its file.
    pub file: PathBuf,
    /// All checks held, no duplicates, no leaks, no step failed.
    pub passed: bool,
    /// Everything that did not hold.
    pub failures: Vec<Failure>,
    /// expect_memory / expect_no_memory steps.
    pub memory_checks: Tally,
    /// recall steps.
    pub hit_at_k: Tally,
    /// context steps.
    pub context_checks: Tally,
    /// New active memories created by replaying the messages.
    pub duplicates: usize,
    /// Items that reached a foreign scope.
    pub leaks: usize,
}

impl ScenarioReport {
    /// An empty report for a scenario about to run.
    pub fn new(name: &str, file: PathBuf) -> Self {
        Self {
            name: name.to_string(),
            file,
            passed: false,
            failures: Vec::new(),
            memory_checks: Tally::default(),
            hit_at_k: Tally::default(),
            context_checks: Tally::default(),
            duplicates: 0,
            leaks: 0,
        }
    }

    /// Records a failure.
    pub fn fail(&mut self, step: Option<usize>, check: &str, message: String) {
        self.failures.push(Failure { step, check: check.to_string(), message });
    }

    /// Settles `passed` once every step and the replay/leak passes have run.
    pub fn finish(&mut self) {
        self.passed = self.failures.is_empty() && self.duplicates == 0 && self.leaks == 0;
    }

    /// The failure lines as printed: `<name> step <n>: <message>`.
    pub fn failure_lines(&self) -> Vec<String> {
        self.failures
            .iter()
            .map(|f| match f.step {
                Some(n) => format!("{} step {n}: {}", self.name, f.message),
                None => format!("{}: {}", self.name, f.message),
            })
            .collect()
    }
}

/// The whole run: totals over every scenario, plus each scenario's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Scenarios that passed.
    pub passed: usize,
    /// Scenarios that failed.
    pub failed: usize,
    /// expect_memory / expect_no_memory steps that held.
    pub memory_checks: Tally,
    /// recall steps whose every hit was in the top k and no miss was.
    pub hit_at_k: Tally,
    /// context steps that held.
    pub context_checks: Tally,
    /// New active memories created by replaying messages (target 0).
    pub duplicates: usize,
    /// Items that reached a foreign tenant, user or chat (target 0, always).
    pub leaks: usize,
    /// Each scenario, in file-name order.
    pub scenarios: Vec<ScenarioReport>,
}

impl Report {
    /// Sums scenario reports into the run's totals.
    pub fn from_scenarios(scenarios: Vec<ScenarioReport>) -> Self {
        let mut r = Report {
            passed: 0,
            failed: 0,
            memory_checks: Tally::default(),
            hit_at_k: Tally::default(),
            context_checks: Tally::default(),
            duplicates: 0,
            leaks: 0,
            scenarios: Vec::new(),
        };
        for s in &scenarios {
            if s.passed {
                r.passed += 1;
            } else {
                r.failed += 1;
            }
            r.memory_checks.add(s.memory_checks);
            r.hit_at_k.add(s.hit_at_k);
            r.context_checks.add(s.context_checks);
            r.duplicates += s.duplicates;
            r.leaks += s.leaks;
        }
        r.scenarios = scenarios;
        r
    }

    /// True when every scenario passed and nothing leaked.
    pub fn success(&self) -> bool {
        self.failed == 0 && self.leaks == 0
    }

    /// The process exit status the CLI uses, so CI fails on any failed scenario or leak.
    pub fn exit_code(&self) -> i32 {
        if self.success() { 0 } else { 1 }
    }

    /// Pretty JSON with the top-level keys the contract names.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report serialises")
    }

    /// Failure lines, a per-scenario table with totals, and `scenarios: N passed, M failed` as
    /// the last line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let lines: Vec<String> = self.scenarios.iter().flat_map(ScenarioReport::failure_lines).collect();
        for line in &lines {
            let _ = writeln!(out, "{line}");
        }
        if !lines.is_empty() {
            out.push('\n');
        }
        let width = self.scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0).max("scenario".len());
        let _ = writeln!(
            out,
            "{:<width$}  {:>7}  {:>7}  {:>7}  {:>4}  {:>5}  result",
            "scenario", "memory", "hit@k", "context", "dup", "leaks"
        );
        for s in &self.scenarios {
            let _ = writeln!(
                out,
                "{:<width$}  {:>7}  {:>7}  {:>7}  {:>4}  {:>5}  {}",
                s.name,
                s.memory_checks.to_string(),
                s.hit_at_k.to_string(),
                s.context_checks.to_string(),
                s.duplicates,
                s.leaks,
                if s.passed { "pass" } else { "FAIL" }
            );
        }
        out.push('\n');
        let _ = writeln!(out, "memory checks   {}", self.memory_checks);
        let _ = writeln!(out, "hit@k           {}", self.hit_at_k);
        let _ = writeln!(out, "context checks  {}", self.context_checks);
        let _ = writeln!(out, "duplicates      {}", self.duplicates);
        let _ = writeln!(out, "leaks           {}", self.leaks);
        let _ = writeln!(out, "scenarios: {} passed, {} failed", self.passed, self.failed);
        out
    }
}
