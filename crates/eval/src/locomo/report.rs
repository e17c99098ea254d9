//! The LoCoMo report: coverage per budget and category for mnemo and the BM25 baseline,
//! recall@k, tokens, latency and ingest throughput, as JSON (the shape the issue fixes, with
//! extra keys beside it) and as a side-by-side text table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};

use super::harness::{LocomoRun, QuestionOutcome};
use super::metrics::{Coverage, Hit, OVERALL_CATEGORIES, Summary, by_category, category_name};

/// Coverage by category key ("overall", "1".."5").
pub type ByCategory = BTreeMap<String, Coverage>;

/// The numbers of one system (mnemo or the baseline).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemNumbers {
    /// Coverage within each token budget (keys are budgets as text).
    pub budgets: BTreeMap<String, ByCategory>,
    /// Coverage by the top k of the ranking (keys are k as text).
    pub recall_at_k: BTreeMap<String, ByCategory>,
    /// Tokens of the block per budget.
    pub tokens: BTreeMap<String, Summary>,
}

/// The summarised benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct LocomoReport {
    /// mnemo's numbers.
    pub mnemo: SystemNumbers,
    /// The BM25-over-turns baseline's numbers.
    pub bm25: SystemNumbers,
    /// Budgets in the order they were run.
    pub budget_order: Vec<usize>,
    /// ks in the order they were run.
    pub k_order: Vec<usize>,
    /// The raw run (per conversation, per question, latencies).
    pub run: LocomoRun,
}

fn numbers(
    run: &LocomoRun,
    context: impl Fn(&QuestionOutcome) -> &[Hit],
    recall: impl Fn(&QuestionOutcome) -> &[Hit],
    tokens: impl Fn(&QuestionOutcome) -> &[usize],
) -> SystemNumbers {
    let per = |pick: &dyn Fn(&QuestionOutcome) -> Hit| -> ByCategory {
        let hits: Vec<(u8, Hit)> = run.questions.iter().map(|q| (q.category, pick(q))).collect();
        by_category(&hits)
    };
    let o = &run.options;
    SystemNumbers {
        budgets: o.budgets.iter().enumerate().map(|(i, b)| (b.to_string(), per(&|q| context(q)[i]))).collect(),
        recall_at_k: o.ks.iter().enumerate().map(|(i, k)| (k.to_string(), per(&|q| recall(q)[i]))).collect(),
        tokens: o
            .budgets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let v: Vec<f64> = run.questions.iter().map(|q| tokens(q)[i] as f64).collect();
                (b.to_string(), Summary::of(&v))
            })
            .collect(),
    }
}

impl LocomoReport {
    /// Summarises a run.
    pub fn new(run: LocomoRun) -> Self {
        let mnemo = numbers(&run, |q| &q.mnemo_context, |q| &q.mnemo_recall, |q| &q.mnemo_tokens);
        let bm25 = numbers(&run, |q| &q.bm25_context, |q| &q.bm25_recall, |q| &q.bm25_tokens);
        Self { mnemo, bm25, budget_order: run.options.budgets.clone(), k_order: run.options.ks.clone(), run }
    }

    /// mnemo's overall (categories 1–4) coverage at a budget, if that budget was run.
    pub fn overall(&self, budget: usize) -> Option<Coverage> {
        self.mnemo.budgets.get(&budget.to_string()).and_then(|m| m.get("overall")).copied()
    }

    /// The baseline's overall (categories 1–4) coverage at a budget, if that budget was run.
    pub fn baseline_overall(&self, budget: usize) -> Option<Coverage> {
        self.bm25.budgets.get(&budget.to_string()).and_then(|m| m.get("overall")).copied()
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
        let ratio: BTreeMap<String, f64> = self
            .mnemo
            .tokens
            .iter()
            .map(|(b, s)| (b.clone(), if conv.mean > 0.0 { s.mean / conv.mean } else { 0.0 }))
            .collect();
        json!({
            "context": self.mnemo.tokens,
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
                     (query_embedding) and that time is added to every call's end-to-end figure",
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

    /// The report as JSON: `budgets`, `baseline_bm25.budgets`, `tokens` and `latency_ms` as the
    /// issue fixes them, plus recall@k, ingest, dataset and setup.
    pub fn to_json(&self) -> Value {
        let o = &self.run.options;
        let mut v = json!({
            "benchmark": "locomo",
            "budgets": self.mnemo.budgets,
            "recall_at_k": self.mnemo.recall_at_k,
            "baseline_bm25": {
                "budgets": self.bm25.budgets,
                "recall_at_k": self.bm25.recall_at_k,
                "tokens": self.bm25.tokens,
                "method": format!(
                    "Okapi BM25 (k1 {}, b {}) over the ingested turn texts, lowercase words minus stopwords; \
                     best turns packed whole into the budget after a {}-token header",
                    super::bm25::K1, super::bm25::B, super::bm25::block_overhead()
                ),
            },
            "tokens": self.tokens(),
            "latency_ms": self.latency(),
            "ingest": self.ingest(),
            "dataset": self.dataset(),
            "setup": {
                "embedder": self.run.embedder,
                "extractor": self.run.extractor,
                "speaker_prefix": o.rendering.speaker_prefix,
                "captions": o.rendering.captions,
                "conversations_skipped": o.skip,
                "embed_each_call": o.embed_each_call,
                "conversations_limit": o.conversations,
                "questions_limit": o.questions,
                "overall_categories": OVERALL_CATEGORIES,
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

    /// The side-by-side text table a person reads.
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
        let mut cats: Vec<u8> = r.questions.iter().map(|q| q.category).collect();
        cats.sort_unstable();
        cats.dedup();
        let table = |s: &mut String,
                     title: &str,
                     label: &str,
                     keys: Vec<String>,
                     a: &BTreeMap<String, ByCategory>,
                     b: &BTreeMap<String, ByCategory>| {
            let _ = writeln!(s, "\n{title}");
            let _ =
                writeln!(s, "{label:>6}  {:<18} {:>5}  {:>16}  {:>16}", "category", "n", "mnemo", "BM25 over turns");
            for key in keys {
                let rows = std::iter::once("overall".to_string()).chain(cats.iter().map(u8::to_string));
                for (i, cat) in rows.enumerate() {
                    let (Some(x), Some(y)) = (a[&key].get(&cat), b[&key].get(&cat)) else { continue };
                    let name = match cat.parse::<u8>() {
                        Ok(c) => format!("{c} {}", category_name(c)),
                        Err(_) => "overall (1-4)".to_string(),
                    };
                    let shown = if i == 0 { key.as_str() } else { "" };
                    let _ = writeln!(
                        s,
                        "{shown:>6}  {name:<18} {:>5}  {:>7.3} ({:>5.3})  {:>7.3} ({:>5.3})",
                        x.questions, x.fraction_covered, x.all_covered, y.fraction_covered, y.all_covered
                    );
                }
            }
        };
        table(
            &mut s,
            "Evidence covered by context() within a token budget: mean fraction (share of questions fully covered)",
            "budget",
            self.budget_order.iter().map(usize::to_string).collect(),
            &self.mnemo.budgets,
            &self.bm25.budgets,
        );
        table(
            &mut s,
            "Evidence covered by the top k of recall() (BM25: top k turns)",
            "k",
            self.k_order.iter().map(usize::to_string).collect(),
            &self.mnemo.recall_at_k,
            &self.bm25.recall_at_k,
        );
        let conv: Vec<f64> = r.conversations.iter().map(|c| c.tokens as f64).collect();
        let conv = Summary::of(&conv);
        let _ = writeln!(
            s,
            "\nTokens per question (cl100k): whole conversation mean {:.0}, max {:.0}",
            conv.mean, conv.max
        );
        let _ = writeln!(s, "{:>6}  {:>12} {:>8}  {:>12} {:>8}", "budget", "mnemo mean", "p95", "BM25 mean", "p95");
        for b in &self.budget_order {
            let (m, x) = (&self.mnemo.tokens[&b.to_string()], &self.bm25.tokens[&b.to_string()]);
            let _ = writeln!(s, "{b:>6}  {:>12.0} {:>8.0}  {:>12.0} {:>8.0}", m.mean, m.p95, x.mean, x.p95);
        }
        let how = if self.run.options.embed_each_call {
            "each call's wall time, its question embedded in the call"
        } else {
            "each call's own time plus its question's one embedding"
        };
        let _ = writeln!(s, "\nLatency in process (ms, {how}): context() p50 / p95, and excluding the query embedding");
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
