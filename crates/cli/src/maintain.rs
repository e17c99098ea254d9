//! `mnemo maintain` output: progress on stderr for long runs, then what changed, by kind of
//! change, and each transition.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use mnemo::{MaintainProgress, MaintainReport};

/// Memories after which a run counts as long and reports progress even when stderr is no
/// terminal (a cron log then shows that it is moving).
const LONG_RUN: usize = 20_000;

/// The progress callback: a line rewritten in place on a terminal; on anything else, a line per
/// phase change and per 50,000 memories once the run is long.
pub(crate) fn progress() -> impl FnMut(MaintainProgress) {
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last_phase = "";
    let mut last_logged = 0usize;
    let mut long = false;
    move |p: MaintainProgress| {
        if p.phase == "lifecycle" && p.done >= LONG_RUN {
            long = true;
        }
        if !tty && !long {
            return;
        }
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        let unit = if p.phase == "lifecycle" { " memories" } else { "" };
        let line = format!("maintain: {} {}{total}{unit} ({:.1} s)", p.phase, p.done, started.elapsed().as_secs_f64());
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
        } else if p.phase != last_phase || p.done >= last_logged + 50_000 {
            let _ = writeln!(err, "{line}");
            last_logged = p.done;
        }
        last_phase = p.phase;
        if tty && p.phase == "retention" {
            let _ = writeln!(err);
        }
    }
}

/// Prints each transition, merges and knowledge, then the summary by kind of change.
pub(crate) fn print(report: &MaintainReport) {
    if let Some(why) = &report.skipped {
        println!("skipped: {why}");
        return;
    }
    for t in &report.transitions {
        println!("{} {} -> {}: {}", t.id, t.from, t.to, t.reason);
    }
    for m in &report.consolidation.merged {
        println!("{} merged into {} (similarity {:.2})", m.duplicate, m.survivor, m.similarity);
    }
    for k in &report.consolidation.knowledge {
        println!("{} knowledge ({}) derived from {} memories", k.id, k.status, k.members.len());
    }
    let summary = report.summary();
    if summary.is_empty() {
        println!("examined {} memories: nothing to change", report.examined);
    } else {
        println!("examined {} memories; changed:", report.examined);
        for (what, n) in summary {
            println!("  {what}: {n}");
        }
    }
}
