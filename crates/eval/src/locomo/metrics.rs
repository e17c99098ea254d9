//! The arithmetic of the benchmark: each question's text metrics and evidence ids named, their
//! means per category and overall, mnemo against the best baseline, and latency/token
//! percentiles. Pure functions, so every number in a report can be checked by hand.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::textscore::TextScore;

/// The categories that make up "overall"; 5 (adversarial: the answer is not in the conversation)
/// is reported apart, as the LoCoMo paper does.
pub const OVERALL_CATEGORIES: [u8; 4] = [1, 2, 3, 4];

/// The LoCoMo paper's name for a category id.
pub fn category_name(c: u8) -> &'static str {
    match c {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    }
}

/// How many of `evidence` appear among `referenced` (each evidence id counted once).
pub(crate) fn referenced_count<'a>(evidence: &[String], referenced: impl IntoIterator<Item = &'a String>) -> usize {
    let seen: HashSet<&str> = referenced.into_iter().map(String::as_str).collect();
    evidence.iter().filter(|e| seen.contains(e.as_str())).count()
}

/// How many of one question's evidence turns a retrieval names by id (a block item's own id
/// or its provenance): a diagnostic of where a block's material came from, never proof that the
/// turn's words reached the prompt (the text metrics are that).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hit {
    /// Evidence turns named.
    pub referenced: usize,
    /// Evidence turns asked for.
    pub of: usize,
}

impl Hit {
    /// |evidence ∩ named| / |evidence|.
    pub fn fraction(self) -> f64 {
        if self.of == 0 { 0.0 } else { self.referenced as f64 / self.of as f64 }
    }

    /// Every evidence turn named.
    pub fn all(self) -> bool {
        self.of > 0 && self.referenced == self.of
    }
}

/// Means of [`Hit`]s over a set of questions (`evidence_referenced@k` of a ranking).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Referenced {
    /// Mean share of evidence turns named.
    pub evidence_referenced: f64,
    /// Share of questions whose evidence turns are all named.
    pub all_evidence_referenced: f64,
    /// Questions averaged over.
    pub questions: usize,
}

impl Referenced {
    /// Means over `hits` (zeros when there are none).
    pub fn of(hits: &[Hit]) -> Self {
        let n = hits.len();
        Self {
            evidence_referenced: mean(hits.iter().map(|h| h.fraction())).unwrap_or(0.0),
            all_evidence_referenced: mean(hits.iter().map(|h| f64::from(u8::from(h.all())))).unwrap_or(0.0),
            questions: n,
        }
    }
}

/// The mean of `values`; `None` when there are none.
fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The mean of the values present, and how many there were (0.0 of 0 when none).
fn mean_present(values: impl Iterator<Item = Option<f64>>) -> (f64, usize) {
    let present: Vec<f64> = values.flatten().collect();
    (mean(present.iter().copied()).unwrap_or(0.0), present.len())
}

/// One system's block at one budget, over a set of questions: each text metric's mean over the
/// questions taking part in it (and how many did), and the id-based diagnostic beside them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Means {
    /// Questions in the set.
    pub questions: usize,
    /// Share of eligible questions whose answer is in the block verbatim.
    pub answer_in_block: f64,
    /// Questions eligible for `answer_in_block` (answer said verbatim in an evidence turn).
    pub answer_in_block_questions: usize,
    /// Mean share of the answer's content words in the block.
    pub answer_word_recall: f64,
    /// Questions whose answer has content words.
    pub answer_word_recall_questions: usize,
    /// Mean over questions of the mean share of each evidence turn's content words in the block.
    pub evidence_text_coverage: f64,
    /// Mean over questions of the share of evidence turns at least 90% in the block.
    pub evidence_whole: f64,
    /// Questions with an evidence turn that has content words.
    pub evidence_text_questions: usize,
    /// Mean share of evidence turns named by id or provenance (diagnostic).
    pub evidence_referenced: f64,
    /// Share of questions whose evidence turns are all named (diagnostic).
    pub all_evidence_referenced: f64,
}

impl Means {
    /// Means over each question's text score and id-based hit.
    pub fn of(items: &[(TextScore, Hit)]) -> Self {
        let (answer_in_block, answer_in_block_questions) =
            mean_present(items.iter().map(|(s, _)| s.answer_in_block.map(|b| f64::from(u8::from(b)))));
        let (answer_word_recall, answer_word_recall_questions) =
            mean_present(items.iter().map(|(s, _)| s.answer_word_recall));
        let (evidence_text_coverage, evidence_text_questions) =
            mean_present(items.iter().map(|(s, _)| s.evidence_text_coverage));
        let (evidence_whole, _) = mean_present(items.iter().map(|(s, _)| s.evidence_whole));
        let hits: Vec<Hit> = items.iter().map(|(_, h)| *h).collect();
        let referenced = Referenced::of(&hits);
        Self {
            questions: items.len(),
            answer_in_block,
            answer_in_block_questions,
            answer_word_recall,
            answer_word_recall_questions,
            evidence_text_coverage,
            evidence_whole,
            evidence_text_questions,
            evidence_referenced: referenced.evidence_referenced,
            all_evidence_referenced: referenced.all_evidence_referenced,
        }
    }
}

/// Per category id (as text keys "1".."5") plus "overall" over categories 1–4, each the
/// `summarise`d values of its questions.
pub(crate) fn by_category<T: Clone, M>(items: &[(u8, T)], summarise: impl Fn(&[T]) -> M) -> BTreeMap<String, M> {
    let pick = |keep: &dyn Fn(u8) -> bool| -> Vec<T> {
        items.iter().filter(|(c, _)| keep(*c)).map(|(_, t)| t.clone()).collect()
    };
    let mut out = BTreeMap::new();
    out.insert("overall".to_string(), summarise(&pick(&|c| OVERALL_CATEGORIES.contains(&c))));
    let mut cats: Vec<u8> = items.iter().map(|(c, _)| *c).collect();
    cats.sort_unstable();
    cats.dedup();
    for c in cats {
        out.insert(c.to_string(), summarise(&pick(&|x| x == c)));
    }
    out
}

/// The systems whose blocks are scored: mnemo and the three baselines over whole turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum System {
    /// mnemo's `context()` block.
    Mnemo,
    /// BM25 over turns.
    Bm25,
    /// Cosine over turns with the run's embedding model.
    Dense,
    /// Reciprocal-rank fusion of the BM25 and dense rankings.
    Rrf,
}

impl System {
    /// Every system, mnemo first: the order of a report's columns.
    pub const ALL: [System; 4] = [System::Mnemo, System::Bm25, System::Dense, System::Rrf];
    /// The baselines, in the order a tie between them is broken.
    pub const BASELINES: [System; 3] = [System::Bm25, System::Dense, System::Rrf];

    /// Its name in reports and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            System::Mnemo => "mnemo",
            System::Bm25 => "bm25",
            System::Dense => "dense",
            System::Rrf => "rrf",
        }
    }
}

/// The figures a report compares systems on: the four text metrics, then the id-based
/// diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextMetric {
    /// [`Means::answer_in_block`].
    AnswerInBlock,
    /// [`Means::answer_word_recall`].
    AnswerWordRecall,
    /// [`Means::evidence_text_coverage`].
    EvidenceTextCoverage,
    /// [`Means::evidence_whole`].
    EvidenceWhole,
    /// [`Means::evidence_referenced`] (diagnostic, never the headline).
    EvidenceReferenced,
}

impl TextMetric {
    /// Every figure, in the order of a report's rows.
    pub const ALL: [TextMetric; 5] = [
        TextMetric::AnswerInBlock,
        TextMetric::AnswerWordRecall,
        TextMetric::EvidenceTextCoverage,
        TextMetric::EvidenceWhole,
        TextMetric::EvidenceReferenced,
    ];

    /// Its name in reports and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            TextMetric::AnswerInBlock => "answer_in_block",
            TextMetric::AnswerWordRecall => "answer_word_recall",
            TextMetric::EvidenceTextCoverage => "evidence_text_coverage",
            TextMetric::EvidenceWhole => "evidence_whole",
            TextMetric::EvidenceReferenced => "evidence_referenced",
        }
    }

    /// Its value in `m`.
    pub fn of(self, m: &Means) -> f64 {
        match self {
            TextMetric::AnswerInBlock => m.answer_in_block,
            TextMetric::AnswerWordRecall => m.answer_word_recall,
            TextMetric::EvidenceTextCoverage => m.evidence_text_coverage,
            TextMetric::EvidenceWhole => m.evidence_whole,
            TextMetric::EvidenceReferenced => m.evidence_referenced,
        }
    }

    /// The questions its value in `m` is a mean over.
    pub fn questions(self, m: &Means) -> usize {
        match self {
            TextMetric::AnswerInBlock => m.answer_in_block_questions,
            TextMetric::AnswerWordRecall => m.answer_word_recall_questions,
            TextMetric::EvidenceTextCoverage | TextMetric::EvidenceWhole => m.evidence_text_questions,
            TextMetric::EvidenceReferenced => m.questions,
        }
    }
}

/// mnemo against the best baseline on one figure: the headline of a report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeadToHead {
    /// mnemo's value.
    pub mnemo: f64,
    /// The baseline with the highest value (the first of [`System::BASELINES`] on a tie).
    pub best_baseline: System,
    /// Its value.
    pub baseline: f64,
    /// `mnemo - baseline`.
    pub mnemo_minus_best: f64,
}

impl HeadToHead {
    /// mnemo's value against the best of the baselines' (`None` without baselines).
    pub fn new(mnemo: f64, baselines: impl IntoIterator<Item = (System, f64)>) -> Option<Self> {
        let (best_baseline, baseline) =
            baselines.into_iter().fold(None, |best: Option<(System, f64)>, (s, v)| match best {
                Some((_, b)) if b >= v => best,
                _ => Some((s, v)),
            })?;
        Some(Self { mnemo, best_baseline, baseline, mnemo_minus_best: mnemo - baseline })
    }
}

/// A distribution summarised: nearest-rank percentiles, mean and max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Mean.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
    /// Values summarised.
    pub n: usize,
}

impl Summary {
    /// Summarises `values` (all zeros when empty).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self { p50: 0.0, p95: 0.0, p99: 0.0, mean: 0.0, max: 0.0, n: 0 };
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
        Self {
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            max: v[v.len() - 1],
            n: v.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn each_evidence_turn_is_counted_once() {
        let ev = s(&["D1:1", "D2:3"]);
        assert_eq!(referenced_count(&ev, &s(&["D2:3", "D2:3", "D9:9"])), 1);
        let h = Hit { referenced: 1, of: 2 };
        assert_eq!((h.fraction(), h.all()), (0.5, false));
        assert!(Hit { referenced: 2, of: 2 }.all());
    }

    #[test]
    fn means_per_category_and_overall_leave_out_adversarial() {
        let hits =
            [(1, Hit { referenced: 1, of: 2 }), (4, Hit { referenced: 1, of: 1 }), (5, Hit { referenced: 0, of: 1 })];
        let m = by_category(&hits, Referenced::of);
        assert_eq!(m["overall"], Referenced { evidence_referenced: 0.75, all_evidence_referenced: 0.5, questions: 2 });
        assert_eq!(m["5"].questions, 1);
        assert_eq!(m["1"].evidence_referenced, 0.5);
        assert!(!m.contains_key("2"));
        assert_eq!(Referenced::of(&[]).questions, 0);
    }

    #[test]
    fn each_text_mean_is_over_the_questions_taking_part_in_it() {
        let hit = Hit { referenced: 1, of: 1 };
        let a = TextScore {
            answer_in_block: Some(true),
            answer_word_recall: Some(0.5),
            evidence_text_coverage: Some(0.25),
            evidence_whole: Some(0.0),
        };
        let b = TextScore { answer_in_block: None, answer_word_recall: Some(1.0), ..TextScore::default() };
        let c = TextScore { answer_in_block: Some(false), ..a };
        let m = Means::of(&[(a, hit), (b, Hit { referenced: 0, of: 2 }), (c, hit)]);
        assert_eq!((m.questions, m.answer_in_block, m.answer_in_block_questions), (3, 0.5, 2));
        assert_eq!((m.answer_word_recall, m.answer_word_recall_questions), (2.0 / 3.0, 3));
        assert_eq!((m.evidence_text_coverage, m.evidence_whole, m.evidence_text_questions), (0.25, 0.0, 2));
        assert_eq!((m.evidence_referenced, m.all_evidence_referenced), (2.0 / 3.0, 2.0 / 3.0));
        assert_eq!(TextMetric::AnswerInBlock.questions(&m), 2);
        assert_eq!(TextMetric::EvidenceWhole.of(&m), 0.0);
        let none = Means::of(&[]);
        assert_eq!((none.questions, none.answer_in_block), (0, 0.0));
    }

    #[test]
    fn the_best_baseline_is_the_highest_and_the_first_on_a_tie() {
        let h = HeadToHead::new(0.4, [(System::Bm25, 0.7), (System::Dense, 0.6), (System::Rrf, 0.7)]).unwrap();
        assert_eq!((h.best_baseline, h.baseline), (System::Bm25, 0.7));
        assert!((h.mnemo_minus_best + 0.3).abs() < 1e-12);
        let h = HeadToHead::new(0.4, [(System::Bm25, 0.1), (System::Dense, 0.2)]).unwrap();
        assert_eq!(h.best_baseline, System::Dense);
        assert!(HeadToHead::new(0.4, []).is_none());
        assert_eq!(System::ALL.map(System::name), ["mnemo", "bm25", "dense", "rrf"]);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v);
        assert_eq!((s.p50, s.p95, s.p99, s.max, s.n), (50.0, 95.0, 99.0, 100.0, 100));
        assert_eq!(Summary::of(&[]).n, 0);
    }
}
