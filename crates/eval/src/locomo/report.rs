//! The LoCoMo report: per token budget, the text metrics of mnemo's block and of three
//! baselines' blocks of whole turns (BM25, dense, their fusion), by category and overall;
//! mnemo against the best baseline on each metric (the headline); the evidence ids blocks name
//! and evidence_referenced@k (diagnostics); tokens, latency and ingest throughput. As JSON, as
//! a text table, and as a dump of the blocks themselves for reading.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::baselines::{RRF_K, block_overhead};
use super::bm25::{B, K1};
use super::harness::{LocomoRun, QuestionOutcome};
use super::metrics::{
    HeadToHead, Hit, Means, OVERALL_CATEGORIES, Referenced, Summary, System, TextMetric, by_category, category_name,
};
use super::textscore::WHOLE_TURN_SHARE;

/// Means by category key ("overall", "1".."5").
pub type ByCategory = BTreeMap<String, Means>;

/// The numbers of one system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemNumbers {
    /// Text metrics and evidence ids named within each token budget (keys are budgets as text).
    pub budgets: BTreeMap<String, ByCategory>,
    /// Tokens of the block per budget.
    pub tokens: BTreeMap<String, Summary>,
    /// Evidence turns named by the top k of a ranking (keys are k as text), for the systems
    /// that have a ranking of their own to cut (mnemo's `recall()`, BM25).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub evidence_referenced_at_k: BTreeMap<String, BTreeMap<String, Referenced>>,
}

/// mnemo against the best baseline on each figure, at one budget, over categories 1–4.
pub type Headline = BTreeMap<TextMetric, HeadToHead>;

/// The summarised benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct LocomoReport {
    /// Each system's numbers.
    pub systems: BTreeMap<System, SystemNumbers>,
    /// Per budget (as text), mnemo against the best baseline on each figure.
    pub headline: BTreeMap<String, Headline>,
    /// Budgets in the order they were run.
    pub budget_order: Vec<usize>,
    /// ks in the order they were run.
    pub k_order: Vec<usize>,
    /// The raw run (per conversation, per question, latencies).
    pub run: LocomoRun,
}

/// One system's numbers over the run; `at_k` picks its evidence_referenced@k hits, if it has any.
fn numbers(run: &LocomoRun, system: System, at_k: Option<fn(&QuestionOutcome) -> &[Hit]>) -> SystemNumbers {
    let o = &run.options;
    let budgets = (0..o.budgets.len())
        .map(|i| {
            let items: Vec<_> = run
                .questions
                .iter()
                .map(|q| {
                    let b = q.budgets[i].system(system);
                    (q.category, (b.score, b.referenced))
                })
                .collect();
            (o.budgets[i].to_string(), by_category(&items, Means::of))
        })
        .collect();
    let tokens = (0..o.budgets.len())
        .map(|i| {
            let v: Vec<f64> = run.questions.iter().map(|q| q.budgets[i].system(system).tokens as f64).collect();
            (o.budgets[i].to_string(), Summary::of(&v))
        })
        .collect();
    let evidence_referenced_at_k = at_k
        .map(|pick| {
            o.ks.iter()
                .enumerate()
                .map(|(i, k)| {
                    let hits: Vec<(u8, Hit)> = run.questions.iter().map(|q| (q.category, pick(q)[i])).collect();
                    (k.to_string(), by_category(&hits, Referenced::of))
                })
                .collect()
        })
        .unwrap_or_default();
    SystemNumbers { budgets, tokens, evidence_referenced_at_k }
}

impl LocomoReport {
    /// Summarises a run.
    pub fn new(run: LocomoRun) -> Self {
        let systems: BTreeMap<System, SystemNumbers> = System::ALL
            .into_iter()
            .map(|s| {
                let at_k: Option<fn(&QuestionOutcome) -> &[Hit]> = match s {
                    System::Mnemo => Some(|q| &q.mnemo_referenced_at_k),
                    System::Bm25 => Some(|q| &q.bm25_referenced_at_k),
                    System::Dense | System::Rrf => None,
                };
                (s, numbers(&run, s, at_k))
            })
            .collect();
        let overall = |s: System, b: &str| systems[&s].budgets[b]["overall"];
        let headline = run
            .options
            .budgets
            .iter()
            .map(|b| {
                let b = b.to_string();
                let h: Headline = TextMetric::ALL
                    .into_iter()
                    .filter_map(|m| {
                        let baselines = System::BASELINES.map(|s| (s, m.of(&overall(s, &b))));
                        Some((m, HeadToHead::new(m.of(&overall(System::Mnemo, &b)), baselines)?))
                    })
                    .collect();
                (b, h)
            })
            .collect();
        Self { systems, headline, budget_order: run.options.budgets.clone(), k_order: run.options.ks.clone(), run }
    }

    /// A system's means over categories 1–4 at a budget, if that budget was run.
    pub fn overall(&self, system: System, budget: usize) -> Option<&Means> {
        self.systems.get(&system)?.budgets.get(&budget.to_string())?.get("overall")
    }

    /// mnemo against the best baseline on `metric` at a budget, if that budget was run.
    pub fn head_to_head(&self, budget: usize, metric: TextMetric) -> Option<HeadToHead> {
        self.headline.get(&budget.to_string())?.get(&metric).copied()
    }

    /// One line for the end of a run: at `budget`, mnemo against the best baseline on the two
    /// figures that say most (the answer verbatim, and the evidence's words).
    pub fn verdict(&self, budget: usize) -> Option<String> {
        let a = self.head_to_head(budget, TextMetric::AnswerInBlock)?;
        let e = self.head_to_head(budget, TextMetric::EvidenceTextCoverage)?;
        let ahead = a.mnemo_minus_best > 0.0 && e.mnemo_minus_best > 0.0;
        Some(format!(
            "At {budget} tokens, categories 1-4: answer_in_block mnemo {:.1}% vs {} {:.1}% ({:+.1} points); \
             evidence_text_coverage mnemo {:.1}% vs {} {:.1}% ({:+.1} points): {}",
            a.mnemo * 100.0,
            a.best_baseline.name(),
            a.baseline * 100.0,
            a.mnemo_minus_best * 100.0,
            e.mnemo * 100.0,
            e.best_baseline.name(),
            e.baseline * 100.0,
            e.mnemo_minus_best * 100.0,
            if ahead { "mnemo ahead of the best baseline on both" } else { "mnemo NOT ahead of the best baseline" }
        ))
    }

    fn ingest(&self) -> Value {
        let c = &self.run.conversations;
        let messages: usize = c.iter().map(|s| s.turns).sum();
        let seconds: f64 = c.iter().map(|s| s.ingest_seconds).sum();
        json!({
            "messages": messages,
            "seconds": seconds,
            "messages_per_second": if seconds > 0.0 { messages as f64 / seconds } else { 0.0 },
            "ops_proposed": c.iter().map(|s| s.ops_proposed).sum::<usize>(),
            "active_memories": c.iter().map(|s| s.active_memories).sum::<usize>(),
            "batching": "one ingest() call per session",
        })
    }

    fn tokens(&self) -> Value {
        let conv: Vec<f64> = self.run.conversations.iter().map(|c| c.tokens as f64).collect();
        let conv = Summary::of(&conv);
        let mnemo = &self.systems[&System::Mnemo].tokens;
        let ratio: BTreeMap<String, f64> =
            mnemo.iter().map(|(b, s)| (b.clone(), if conv.mean > 0.0 { s.mean / conv.mean } else { 0.0 })).collect();
        json!({
            "context": mnemo,
            "conversation": {"mean": conv.mean, "max": conv.max, "conversations": conv.n},
            "context_mean_over_conversation_mean": ratio,
            "tokenizer": "cl100k_base",
        })
    }

    fn latency(&self) -> Value {
        let per_budget = |v: &[Vec<f64>]| -> BTreeMap<String, Summary> {
            let mut m: BTreeMap<String, Summary> =
                self.budget_order.iter().zip(v).map(|(b, xs)| (b.to_string(), Summary::of(xs))).collect();
            m.insert("all".into(), Summary::of(&v.concat()));
            m
        };
        json!({
            "context": per_budget(&self.run.context_ms),
            "context_excluding_embedding": per_budget(&self.run.context_ms_excluding_embedding),
            "recall": Summary::of(&self.run.recall_ms),
            "query_embedding": Summary::of(&self.run.query_embedding_ms),
            "note": "in-process wall time of Memory::context / Memory::recall; each question is embedded once \
                     (query_embedding) and that time is added to every call's end-to-end figure; the baselines' \
                     embedding and ranking run outside the timed calls and are in none of these figures",
        })
    }

    fn dataset(&self) -> Value {
        let r = &self.run;
        let mut asked: BTreeMap<String, usize> = BTreeMap::new();
        for q in &r.questions {
            *asked.entry(q.category.to_string()).or_default() += 1;
        }
        json!({
            "path": r.dataset,
            "conversations": r.conversations.len(),
            "sessions": r.conversations.iter().map(|c| c.sessions).sum::<usize>(),
            "turns": r.conversations.iter().map(|c| c.turns).sum::<usize>(),
            "questions_asked": r.questions.len(),
            "questions_asked_by_category": asked,
            "questions_without_evidence": r.questions_without_evidence.iter()
                .map(|(c, i, cat)| json!({"conversation": c, "index": i, "category": cat})).collect::<Vec<_>>(),
            "unresolved_evidence": r.unresolved_evidence.iter()
                .map(|(c, e)| json!({"conversation": c, "evidence": e})).collect::<Vec<_>>(),
            "normalised_evidence": r.normalised_evidence.iter()
                .map(|(c, e)| json!({"conversation": c, "evidence": e})).collect::<Vec<_>>(),
            "per_conversation": r.conversations,
        })
    }

    /// How the baselines rank and pack, for the JSON.
    fn methods(&self) -> Value {
        json!({
            "bm25": format!(
                "Okapi BM25 (k1 {K1}, b {B}) over the ingested turn texts, lowercase words minus stopwords"
            ),
            "dense": format!(
                "cosine between the question and each ingested turn text, both embedded with {} (turns in batches \
                 of {}), every turn ranked", self.run.embedder, super::baselines::EMBED_BATCH
            ),
            "rrf": format!("reciprocal-rank fusion of the bm25 and dense rankings, score = sum of 1 / ({RRF_K} + rank)"),
            "packing": format!(
                "best first, whole turns as \"- {{text}}\" lines under the block header and one heading \
                 ({} tokens), a turn that does not fit skipped; tokens are cl100k of the block text",
                block_overhead()
            ),
        })
    }

    /// The report as JSON: the headline per budget, every system's numbers (text metrics by
    /// category per budget, tokens, evidence_referenced@k), how the baselines work, tokens,
    /// latency, ingest, dataset and setup; each question's outcome with `per_question`.
    pub fn to_json(&self) -> Value {
        let o = &self.run.options;
        let mut v = json!({
            "benchmark": "locomo",
            "definitions": "docs/locomo-metrics.md",
            "headline": self.headline,
            "systems": self.systems,
            "baselines": self.methods(),
            "tokens": self.tokens(),
            "latency_ms": self.latency(),
            "ingest": self.ingest(),
            "dataset": self.dataset(),
            "setup": {
                "embedder": self.run.embedder,
                "extractor": self.run.extractor,
                "speaker_prefix": o.rendering.speaker_prefix,
                "captions": o.rendering.captions,
                "speakers": o.rendering.speakers,
                "conversations_skipped": o.skip,
                "embed_each_call": o.embed_each_call,
                "conversations_limit": o.conversations,
                "questions_limit": o.questions,
                "overall_categories": OVERALL_CATEGORIES,
                "whole_turn_share": WHOLE_TURN_SHARE,
                "rrf_k": RRF_K,
                "store": "a fresh embedded SQLite store per conversation",
                "scope": "tenant locomo, user = sample_id, chat = session_N; each question from a fresh chat",
                "clock": "each session at its date-time; questions one hour after the last session",
            },
            "seconds": self.run.seconds,
        });
        if o.per_question {
            v["questions"] = json!(self.run.questions);
        }
        v
    }

    /// The baseline whose block `--dump-blocks` shows beside mnemo's at a budget: the best on
    /// answer_in_block over categories 1–4 (BM25 when that budget was not run).
    pub fn dumped_baseline(&self, budget: usize) -> System {
        self.head_to_head(budget, TextMetric::AnswerInBlock).map_or(System::Bm25, |h| h.best_baseline)
    }

    /// Writes one JSON line per question per budget: the question, its answer and evidence
    /// texts, mnemo's block and the best baseline's (see [`Self::dumped_baseline`]; `null` unless
    /// the run kept blocks), and every system's metrics. Returns the lines written.
    pub fn write_blocks(&self, out: &mut dyn Write) -> std::io::Result<usize> {
        let mut lines = 0;
        for q in &self.run.questions {
            let evidence: Vec<Value> = q
                .evidence
                .iter()
                .zip(&q.evidence_texts)
                .map(|(id, text)| json!({"dia_id": id, "text": text}))
                .collect();
            for b in &q.budgets {
                let best = self.dumped_baseline(b.budget);
                let metrics: BTreeMap<&str, Value> =
                    System::ALL.iter().map(|&s| (s.name(), json!(b.system(s)))).collect();
                let line = json!({
                    "conversation": q.conversation,
                    "index": q.index,
                    "category": q.category,
                    "question": q.question,
                    "answer": q.answer,
                    "evidence": evidence,
                    "budget": b.budget,
                    "best_baseline": best,
                    "mnemo_block": b.mnemo.text,
                    "baseline_block": b.system(best).text,
                    "metrics": metrics,
                });
                serde_json::to_writer(&mut *out, &line)?;
                out.write_all(b"\n")?;
                lines += 1;
            }
        }
        Ok(lines)
    }

    /// The tables a person reads: per budget every figure for every system with mnemo against
    /// the best baseline, then per category the two main figures, evidence_referenced@k,
    /// tokens, latency and ingest.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let r = &self.run;
        let overall_n = r.questions.iter().filter(|q| OVERALL_CATEGORIES.contains(&q.category)).count();
        let _ = writeln!(
            s,
            "LoCoMo: {} conversations, {} turns, {} questions with evidence ({} in categories 1-4); embedder {}, extractor {}",
            r.conversations.len(),
            r.conversations.iter().map(|c| c.turns).sum::<usize>(),
            r.questions.len(),
            overall_n,
            r.embedder,
            r.extractor
        );
        let _ = writeln!(
            s,
            "Systems: mnemo = the context() block; bm25 = BM25 over turns; dense = cosine over turns ({}); \
             rrf = reciprocal-rank fusion of the two (k {RRF_K}); each baseline packs whole turns best first into \
             the same budget. Figures are read from the block's text (definitions: docs/locomo-metrics.md); \
             evidence_referenced counts evidence ids named by items or provenance, a diagnostic.",
            r.embedder
        );
        let mut cats: Vec<u8> = r.questions.iter().map(|q| q.category).collect();
        cats.sort_unstable();
        cats.dedup();
        let sys = |x: System| &self.systems[&x];
        for b in self.budget_order.iter().map(usize::to_string) {
            let tokens: Vec<String> =
                System::ALL.iter().map(|&x| format!("{} {:.0}", x.name(), sys(x).tokens[&b].mean)).collect();
            let _ = writeln!(s, "\nBudget {b} tokens, categories 1-4 (mean block tokens: {})", tokens.join(", "));
            let _ = writeln!(
                s,
                "{:<24} {:>5} {:>7} {:>7} {:>7} {:>7}  {:>14} {:>12}",
                "", "n", "mnemo", "bm25", "dense", "rrf", "best baseline", "mnemo - best"
            );
            let mnemo = &sys(System::Mnemo).budgets[&b]["overall"];
            for m in TextMetric::ALL {
                let Some(h) = self.headline[&b].get(&m) else { continue };
                let values: String =
                    System::ALL.iter().map(|&x| format!(" {:>7.3}", m.of(&sys(x).budgets[&b]["overall"]))).collect();
                let _ = writeln!(
                    s,
                    "{:<24} {:>5}{values}  {:>8.3} {:<5} {:>+12.3}",
                    m.name(),
                    m.questions(mnemo),
                    h.baseline,
                    h.best_baseline.name(),
                    h.mnemo_minus_best
                );
            }
            let (a, e) = (TextMetric::AnswerInBlock, TextMetric::EvidenceTextCoverage);
            let (Some(ha), Some(he)) = (self.headline[&b].get(&a), self.headline[&b].get(&e)) else { continue };
            let _ = writeln!(
                s,
                "  by category: {} mnemo vs {}, {} mnemo vs {}",
                a.name(),
                ha.best_baseline.name(),
                e.name(),
                he.best_baseline.name()
            );
            let _ = writeln!(
                s,
                "  {:<18} {:>5} {:>7} {:>7} {:>7}   {:>5} {:>7} {:>7} {:>7}",
                "category",
                "n",
                "mnemo",
                ha.best_baseline.name(),
                "diff",
                "n",
                "mnemo",
                he.best_baseline.name(),
                "diff"
            );
            let rows = std::iter::once("overall".to_string()).chain(cats.iter().map(u8::to_string));
            for cat in rows {
                let (Some(m), Some(ba), Some(be)) = (
                    sys(System::Mnemo).budgets[&b].get(&cat),
                    sys(ha.best_baseline).budgets[&b].get(&cat),
                    sys(he.best_baseline).budgets[&b].get(&cat),
                ) else {
                    continue;
                };
                let name = match cat.parse::<u8>() {
                    Ok(c) => format!("{c} {}", category_name(c)),
                    Err(_) => "overall (1-4)".to_string(),
                };
                // Three figures (mnemo, the baseline, the difference), or dashes over no questions.
                let cells = |metric: TextMetric, baseline: &Means| match metric.questions(m) {
                    0 => format!("{:>5} {:>7} {:>7} {:>7}", 0, "-", "-", "-"),
                    n => format!(
                        "{n:>5} {:>7.3} {:>7.3} {:>+7.3}",
                        metric.of(m),
                        metric.of(baseline),
                        metric.of(m) - metric.of(baseline)
                    ),
                };
                let _ = writeln!(s, "  {name:<18} {}   {}", cells(a, ba), cells(e, be));
            }
        }
        let _ = writeln!(
            s,
            "\nevidence_referenced@k, categories 1-4 (ids named by recall()'s top k; bm25: its top k turns): \
             mean share (share of questions with all named)"
        );
        let _ = writeln!(s, "{:>6}  {:>15}  {:>15}", "k", "mnemo", "bm25");
        for k in self.k_order.iter().map(usize::to_string) {
            let at = |x: System| sys(x).evidence_referenced_at_k.get(&k).and_then(|m| m.get("overall")).copied();
            let (Some(m), Some(b)) = (at(System::Mnemo), at(System::Bm25)) else { continue };
            let _ = writeln!(
                s,
                "{k:>6}  {:>7.3} ({:>5.3})  {:>7.3} ({:>5.3})",
                m.evidence_referenced, m.all_evidence_referenced, b.evidence_referenced, b.all_evidence_referenced
            );
        }
        let conv: Vec<f64> = r.conversations.iter().map(|c| c.tokens as f64).collect();
        let conv = Summary::of(&conv);
        let _ = writeln!(
            s,
            "\nTokens per question (cl100k): whole conversation mean {:.0}, max {:.0}; block mean / p95 per system",
            conv.mean, conv.max
        );
        let head: String = System::ALL.iter().map(|x| format!("  {:>15}", x.name())).collect();
        let _ = writeln!(s, "{:>6}{head}", "budget");
        for b in self.budget_order.iter().map(usize::to_string) {
            let row: String = System::ALL
                .iter()
                .map(|&x| {
                    let t = &sys(x).tokens[&b];
                    format!("  {:>7.0} / {:>5.0}", t.mean, t.p95)
                })
                .collect();
            let _ = writeln!(s, "{b:>6}{row}");
        }
        let how = if self.run.options.embed_each_call {
            "each call's wall time, its question embedded in the call"
        } else {
            "each call's own time plus its question's one embedding"
        };
        let _ = writeln!(
            s,
            "\nmnemo latency in process (ms, {how}; no baseline work included): context() p50 / p95, and excluding the query embedding"
        );
        for (i, b) in self.budget_order.iter().enumerate() {
            let (a, e) = (Summary::of(&r.context_ms[i]), Summary::of(&r.context_ms_excluding_embedding[i]));
            let _ = writeln!(
                s,
                "{b:>6}  {:>7.2} / {:>7.2}   excl. embedding {:>7.2} / {:>7.2}",
                a.p50, a.p95, e.p50, e.p95
            );
        }
        let (rc, qe) = (Summary::of(&r.recall_ms), Summary::of(&r.query_embedding_ms));
        let _ = writeln!(s, "recall(k={}) {:>7.2} / {:>7.2}", self.k_order.iter().max().unwrap_or(&0), rc.p50, rc.p95);
        let _ = writeln!(s, "query embedding (once per question) {:>7.2} / {:>7.2}", qe.p50, qe.p95);
        let ing = self.ingest();
        let _ = writeln!(
            s,
            "\nIngest: {} messages in {:.1} s = {:.1} messages/s ({} ops proposed, {} active memories)",
            ing["messages"],
            ing["seconds"].as_f64().unwrap_or(0.0),
            ing["messages_per_second"].as_f64().unwrap_or(0.0),
            ing["ops_proposed"],
            ing["active_memories"]
        );
        if !r.unresolved_evidence.is_empty() || !r.questions_without_evidence.is_empty() {
            let _ = writeln!(
                s,
                "Dataset: {} evidence entries name no turn ({}); {} questions had no usable evidence and were skipped; {} entries repaired",
                r.unresolved_evidence.len(),
                r.unresolved_evidence.iter().map(|(c, e)| format!("{c} {e:?}")).collect::<Vec<_>>().join(", "),
                r.questions_without_evidence.len(),
                r.normalised_evidence.len()
            );
        }
        let _ = writeln!(s, "Run time: {:.1} s", r.seconds);
        s
    }
}
