//! `mnemo bench locomo`: runs the LoCoMo harness of `mnemo-eval`, prints the side-by-side table
//! and writes the JSON with the machine and the command beside the numbers.

use std::path::Path;

use anyhow::{Context, Result};
use mnemo::Config;
use mnemo::models::EmbedderKind;
use mnemo_eval::locomo::{Dataset, LocomoOptions, LocomoReport, run_locomo};

use super::{command, embedder, machine, write_report};

/// The budget the acceptance criterion is judged at.
const ACCEPTANCE_BUDGET: usize = 1000;

pub(super) fn run(
    mut config: Config,
    data: &Path,
    json: Option<&Path>,
    kind: EmbedderKind,
    options: &LocomoOptions,
) -> Result<()> {
    let dataset = Dataset::load(data)?;
    let embedder = embedder(&mut config, kind)?;
    eprintln!(
        "LoCoMo: {} conversations from {}, embedder {}",
        dataset.conversations.len(),
        data.display(),
        embedder.id()
    );
    let run = run_locomo(&dataset, &config, &embedder, options, &mut |line| eprintln!("  {line}"))
        .context("running the LoCoMo benchmark")?;
    let report = LocomoReport::new(run);
    print!("{}", report.to_text());
    if let (Some(m), Some(b)) = (report.overall(ACCEPTANCE_BUDGET), report.baseline_overall(ACCEPTANCE_BUDGET)) {
        println!(
            "At {ACCEPTANCE_BUDGET} tokens, categories 1-4: mnemo covers {:.1}% of evidence, BM25 {:.1}%: {}",
            m.fraction_covered * 100.0,
            b.fraction_covered * 100.0,
            if m.fraction_covered > b.fraction_covered { "mnemo ahead" } else { "mnemo NOT ahead of the baseline" }
        );
    }
    if let Some(out) = json {
        let mut v = report.to_json();
        v["machine"] = serde_json::to_value(machine())?;
        v["command"] = serde_json::Value::String(command());
        write_report(out, &v)?;
    }
    Ok(())
}
