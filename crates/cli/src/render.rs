//! Human-readable output for the terminal.

use mnemo::core::trace::LlmCall;
use mnemo::core::{Memory as Row, Provenance, Verdict};
use mnemo::{IngestReport, MemoryDetail, PendingReport, RecallResult, SynthesisReport};

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
    println!("  rule       {}", rule(&m.provenance));
    if let Some(c) = &d.extraction {
        println!(
            "  extracted  {} · {}{}",
            c.model,
            cost_line(c),
            if c.fallback { " (model failed: heuristic fallback)" } else { "" }
        );
    }
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

/// Why a memory was remembered: the heuristic rule that read it (`preference.likes`), or, where
/// no rule did, who wrote it instead.
pub(crate) fn rule(p: &Provenance) -> String {
    if let Some(rule) = &p.rule {
        return rule.clone();
    }
    let who = match p.extractor.as_str() {
        "heuristic" => "not recorded (written before rules were recorded)",
        "llm" => "none: the model proposed it",
        "api" => "none: written through the API",
        "user" => "none: written or edited by the user",
        "job" => "none: written by a background job",
        _ => "none",
    };
    who.to_string()
}

/// One line of what the chat model cost: calls, tokens in and out, latency.
pub(crate) fn cost_line(c: &LlmCall) -> String {
    let estimated = if c.estimated_calls > 0 { " (estimated)" } else { "" };
    format!(
        "{} call(s), {} retr{}, {} tokens in, {} out{estimated}, {:.0} ms",
        c.calls,
        c.retries,
        if c.retries == 1 { "y" } else { "ies" },
        c.prompt_tokens,
        c.completion_tokens,
        c.micros as f64 / 1e3
    )
}

/// What a background pass (flush, worker, maintain) did: each batch with its verdicts and cost.
pub(crate) fn pending_report(r: &PendingReport) {
    for b in &r.batches {
        let how = match (&b.error, b.retry) {
            (None, false) => "extracted by the model".to_string(),
            (None, true) => format!("retried with the model (attempt {})", b.attempt),
            (Some(e), false) => format!("model failed, heuristic fallback ({e}); retried later"),
            (Some(e), true) => format!("retry {} failed ({e})", b.attempt),
        };
        println!("batch of {} message(s): {how}", b.messages);
        for o in &b.ops {
            println!("  {}", verdict_line(&o.op.draft.content, o.op.draft.kind.as_str(), &o.verdict));
        }
        for e in &b.llm.item_errors {
            println!("  ! {e}");
        }
        for id in &b.retired {
            println!("  archived {id}: the heuristic's stand-in, replaced by the model's reading");
        }
        println!("  llm {} · {} · trace {}", b.llm.model, cost_line(&b.llm), b.turn_id);
    }
    for m in &r.memos {
        match (&m.memo, &m.gap) {
            (Some(id), _) => println!("memo {id} for messages {}..{}", m.from + 1, m.to),
            (None, Some(g)) => println!("memo gap for messages {}..{}: {g}", m.from + 1, m.to),
            (None, None) => println!("no memo for messages {}..{}: nothing memorable", m.from + 1, m.to),
        }
    }
    for s in &r.busy {
        println!("chat {s} is being processed by another worker");
    }
    if !r.batches.is_empty() || !r.memos.is_empty() {
        println!("llm total: {}", cost_line(&r.cost()));
    }
}

/// What a synthesis run wrote.
pub(crate) fn synthesis_report(r: &SynthesisReport) {
    if let Some(why) = &r.skipped {
        println!("summaries skipped: {why}");
        return;
    }
    for (key, id) in &r.summaries {
        println!("{key} -> {id}");
    }
    for id in &r.reflections {
        println!("reflection {id}");
    }
    for g in &r.gaps {
        println!("gap: {g}");
    }
}

/// A trace envelope as a person reads it: what the call was, what it found and why, what it
/// placed, held back or shortened, and what it cost (`mnemo trace --json` gives every field).
pub(crate) fn trace(t: &mnemo::core::trace::TraceEnvelope) {
    println!("{} {} at {} in {}", t.op, t.turn_id, t.at.format("%Y-%m-%d %H:%M:%S UTC"), t.scope);
    if !t.query.is_empty() {
        println!("query: \"{}\"", short(&t.query, 100));
    }
    let mut line = format!("took {:.1} ms (embedding {:.1} ms)", t.micros as f64 / 1e3, t.embed_micros as f64 / 1e3);
    if let Some(m) = t.mode {
        line.push_str(&format!(", mode {m}"));
    }
    if let (Some(used), Some(budget)) = (t.tokens, t.budget) {
        line.push_str(&format!(", {used} tokens of {budget}"));
    }
    println!("{line}");
    if let Some(d) = &t.degraded {
        println!("degraded: {d}");
    }
    if !t.retrieved.is_empty() {
        println!("retrieved ({}):", t.retrieved.len());
        for i in &t.retrieved {
            let why = match (&i.exact, &i.score, &i.tier) {
                (Some(e), _, _) => format!("always included ({e})"),
                (None, Some(p), Some(tier)) => format!("ranked {:.3} ({tier}: relevance {:.2})", p.total, p.relevance),
                _ => "ranked".into(),
            };
            let placed = if t.surfaced.contains(&i.id) { "placed" } else { "" };
            println!("  {:<28} {why:<48} {placed}", i.id.to_string());
        }
    }
    if !t.below_floor.is_empty() {
        println!("below the relevance floor: {}", t.below_floor.len());
    }
    for h in &t.held_back {
        println!("held back: {} ({})", h.id, h.reason);
    }
    for s in &t.shed {
        println!("shortened: {} to {} ({} of {} tokens)", s.id, s.detail, s.tokens, s.full_tokens);
    }
    for v in &t.verdicts {
        println!("{}", verdict_line(&v.content, v.kind.as_str(), &v.verdict));
        if let Some(s) = &v.surface {
            println!("    surface {}: set by {}", s.policy, s.by);
        }
    }
    for c in &t.llm {
        println!("{}", cost_line(c));
    }
}

#[cfg(test)]
mod tests {
    use mnemo::core::Provenance;

    fn by(extractor: &str, rule: Option<&str>) -> Provenance {
        Provenance { extractor: extractor.into(), rule: rule.map(Into::into), ..Provenance::default() }
    }

    #[test]
    fn the_rule_line_names_the_rule_or_who_wrote_it_instead() {
        assert_eq!(super::rule(&by("heuristic", Some("preference.likes"))), "preference.likes");
        assert_eq!(super::rule(&by("llm", Some("identity.home-live"))), "identity.home-live", "a heuristic fallback");
        assert_eq!(super::rule(&by("llm", None)), "none: the model proposed it");
        assert_eq!(super::rule(&by("api", None)), "none: written through the API");
        assert_eq!(super::rule(&by("job", None)), "none: written by a background job");
        assert!(super::rule(&by("heuristic", None)).starts_with("not recorded"));
    }
}
