//! mnemo-eval: memory behaviour as data. A scenario file is a scripted conversation plus what
//! memory must then know, recall, surface and hold back (`docs/SCENARIOS.md` is the contract);
//! [`run_dir`] runs a directory of them through the real engine and returns a [`Report`] with
//! memory checks, hit@k, context checks, duplicates on replay and cross-scope leaks. [`locomo`]
//! is the LoCoMo retrieval benchmark (`mnemo bench locomo`).
//!
//! ```no_run
//! let config = mnemo::Config::load(None)?;
//! let report = mnemo_eval::run_dir(std::path::Path::new("scenarios"), &config)?;
//! print!("{}", report.to_text());
//! std::process::exit(report.exit_code());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod error;
pub mod locomo;
mod report;
mod runner;
mod scenario;

pub use error::EvalError;
pub use report::{Failure, Report, ScenarioReport, Tally};
pub use runner::{
    Leak, bundle_leaks, context_leaks, document_leaks, is_leak, leaked_items, load_dir, policy_leaks, recall_leaks,
    run_dir, run_scenario, run_scenarios,
};
pub use scenario::{Action, DEFAULT_CHAT, DEFAULT_START, DEFAULT_TOP, Scenario, Step, expected_alternatives};
