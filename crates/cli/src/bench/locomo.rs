//! `mnemo bench locomo`: runs the LoCoMo harness of `mnemo-eval`, prints the tables, writes the
//! JSON with the machine and the command beside the numbers, and dumps the blocks when asked.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use mnemo::Config;
use mnemo::models::EmbedderKind;
use mnemo_eval::locomo::{Dataset, LocomoOptions, LocomoReport, run_locomo};

use super::{command, embedder, machine, write_report};

/// The budget the closing verdict is given at.
const ACCEPTANCE_BUDGET: usize = 1000;

/// Runs the benchmark, prints its tables and verdict, and writes the JSON and the block dump
/// where asked.
pub(super) fn run(
    mut config: Config,
    data: &Path,
    json: Option<&Path>,
    dump_blocks: Option<&Path>,
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
    if let Some(line) = report.verdict(ACCEPTANCE_BUDGET) {
        println!("{line}");
    }
    if let Some(path) = dump_blocks {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut out = std::io::BufWriter::new(file);
        let lines = report.write_blocks(&mut out).with_context(|| format!("writing {}", path.display()))?;
        out.flush().with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {lines} blocks to {}", path.display());
    }
    if let Some(out) = json {
        let mut v = report.to_json();
        v["machine"] = serde_json::to_value(machine())?;
        v["command"] = serde_json::Value::String(command());
        write_report(out, &v)?;
    }
    Ok(())
}
