//! Human-readable output for the terminal.

use mnemo::core::{Memory as Row, Verdict};
use mnemo::{IngestReport, MemoryDetail, RecallResult};

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n - 1).collect::<String>()) }
}

/// One line per verdict.
pub(crate) fn verdict_line(content: &str, kind: &str, v: &Verdict) -> String {
    let mark = match v {
        Verdict::Written { .. } => "+",
        Verdict::Superseded { .. } | Verdict::Contradicted { .. } => "~",
        Verdict::Deduplicated { .. } => "=",
        Verdict::Closed { .. } | Verdict::Forgotten { .. } => "-",
        Verdict::Rejected { .. } => "x",
    };
    format!("{mark} {kind:<10} {:<52} {v}", format!("\"{}\"", short(content, 50)))
}

pub(crate) fn ingest_report(r: &IngestReport) {
    println!("appended {} message(s), {} already present", r.appended, r.duplicates);
    if let Some(d) = &r.degraded {
        println!("note: {d}");
    }
    for o in &r.ops {
        println!("  {}", verdict_line(&o.op.draft.content, o.op.draft.kind.as_str(), &o.verdict));
    }
    if let Some(turn) = &r.turn_id {
        println!("verdicts recorded in trace {turn} (mnemo trace {turn})");
    }
}

pub(crate) fn recall(r: &RecallResult) {
    println!(
        "mode {} · turn {} · {:.2} ms ({:.2} ms embedding)",
        r.mode,
        r.turn_id,
        r.micros as f64 / 1e3,
        r.embed_micros as f64 / 1e3
    );
    for p in &r.policies {
        println!("  [policy]    {} (v{})", p.text, p.version);
    }
    for i in &r.exact {
        println!("  [{}] {} {}", i.exact.map(|e| e.as_str()).unwrap_or(""), i.memory.id, i.memory.content);
    }
    for i in &r.items {
        let s = i.score.unwrap_or_default();
        println!(
            "  {:.3} {:<8} {} {:<10} {}",
            s.total,
            i.tier.map(|t| t.as_str()).unwrap_or(""),
            i.memory.id,
            i.memory.kind,
            i.memory.content
        );
    }
    for e in &r.excerpts {
        let m = &e.message;
        println!("  {:.3} said     {} [{}] {}", e.relevance, m.id, m.at.format("%Y-%m-%d"), short(&m.content, 100));
    }
    if r.exact.is_empty() && r.items.is_empty() && r.policies.is_empty() && r.excerpts.is_empty() {
        println!("  (nothing relevant)");
    }
}

pub(crate) fn list(rows: &[Row]) {
    for m in rows {
        println!(
            "{} {:<10} {:<12} {}{}",
            m.id,
            m.kind,
            m.status.kind(),
            if m.pinned { "[pinned] " } else { "" },
            m.content
        );
    }
    println!("{} memor{}", rows.len(), if rows.len() == 1 { "y" } else { "ies" });
}

pub(crate) fn detail(d: &MemoryDetail) {
    let m = &d.memory;
    println!("{}  {}  {}", m.id, m.kind, m.status);
    println!("  {}", m.content);
    if let (Some(k), Some(v)) = (&m.key, &m.value) {
        println!("  key {k} = {v}");
    }
    println!("  owner      {} ({:?} layer)", m.owner, m.owner.layer());
    println!("  surface    {}   pinned {}   sensitivity {}", m.surface, m.pinned, m.sensitivity);
    println!("  confidence {:.2}   salience {:.2}", m.confidence, m.salience);
    println!(
        "  accessed   {} time(s), {} distinct session(s), reinforced {} time(s)",
        m.access_count, m.distinct_sessions, m.reinforcements
    );
    let s = d.score;
    println!(
        "  score now  strength {:.3} · recency {:.3} · urgency {:.2} · salience {:.2} · confidence {:.2} · pinned {:.0} → {:.3} (before query relevance)",
        s.strength, s.recency, s.urgency, s.salience, s.confidence, s.pinned, s.total
    );
    println!(
        "  provenance {} v{} from chat {}",
        m.provenance.extractor,
        m.provenance.extractor_version,
        m.provenance.chat.as_ref().map_or("-", |c| c.as_str())
    );
    for msg in &d.sources {
        println!("    {} {} {}: {}", msg.at.format("%Y-%m-%d %H:%M"), msg.id, msg.role, msg.content);
    }
    println!("  history");
    for h in &d.history {
        println!("    {} {:<12} {} — {}", h.at.format("%Y-%m-%d %H:%M"), h.event, h.to_status, h.reason);
    }
    for l in &d.links {
        println!("  link {} {} {}", l.from, l.kind, l.to);
    }
}
