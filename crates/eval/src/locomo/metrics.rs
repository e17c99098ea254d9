//! The arithmetic of the benchmark: evidence coverage per question, its means per category and
//! overall, and latency/token percentiles. Pure functions, so every number in a report can be
//! checked by hand.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

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

/// How many of `evidence` appear among `covered` (each evidence id counted once).
pub(crate) fn covered_count<'a>(evidence: &[String], covered: impl IntoIterator<Item = &'a String>) -> usize {
    let seen: HashSet<&str> = covered.into_iter().map(String::as_str).collect();
    evidence.iter().filter(|e| seen.contains(e.as_str())).count()
}

/// Coverage of one question's evidence by one retrieval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hit {
    /// Evidence turns covered.
    pub covered: usize,
    /// Evidence turns asked for.
    pub of: usize,
}

impl Hit {
    /// |evidence ∩ covered| / |evidence|.
    pub fn fraction(self) -> f64 {
        if self.of == 0 { 0.0 } else { self.covered as f64 / self.of as f64 }
    }

    /// Every evidence turn covered.
    pub fn all(self) -> bool {
        self.of > 0 && self.covered == self.of
    }
}

/// Means of coverage over a set of questions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Coverage {
    /// Mean fraction of evidence turns covered.
    pub fraction_covered: f64,
    /// Share of questions whose evidence is covered entirely.
    pub all_covered: f64,
    /// Questions averaged over.
    pub questions: usize,
}

impl Coverage {
    /// Means over `hits` (zeros when there are none).
    pub fn of(hits: &[Hit]) -> Self {
        let n = hits.len();
        if n == 0 {
            return Self { fraction_covered: 0.0, all_covered: 0.0, questions: 0 };
        }
        Self {
            fraction_covered: hits.iter().map(|h| h.fraction()).sum::<f64>() / n as f64,
            all_covered: hits.iter().filter(|h| h.all()).count() as f64 / n as f64,
            questions: n,
        }
    }
}

/// Coverage per category id (as text keys "1".."5") plus "overall" over categories 1–4.
pub(crate) fn by_category(hits: &[(u8, Hit)]) -> BTreeMap<String, Coverage> {
    let mut out = BTreeMap::new();
    let overall: Vec<Hit> = hits.iter().filter(|(c, _)| OVERALL_CATEGORIES.contains(c)).map(|(_, h)| *h).collect();
    out.insert("overall".to_string(), Coverage::of(&overall));
    let mut cats: Vec<u8> = hits.iter().map(|(c, _)| *c).collect();
    cats.sort_unstable();
    cats.dedup();
    for c in cats {
        let hs: Vec<Hit> = hits.iter().filter(|(x, _)| *x == c).map(|(_, h)| *h).collect();
        out.insert(c.to_string(), Coverage::of(&hs));
    }
    out
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
    fn coverage_counts_each_evidence_turn_once() {
        let ev = s(&["D1:1", "D2:3"]);
        assert_eq!(covered_count(&ev, &s(&["D2:3", "D2:3", "D9:9"])), 1);
        let h = Hit { covered: 1, of: 2 };
        assert_eq!((h.fraction(), h.all()), (0.5, false));
        assert!(Hit { covered: 2, of: 2 }.all());
    }

    #[test]
    fn means_per_category_and_overall_leave_out_adversarial() {
        let hits = [(1, Hit { covered: 1, of: 2 }), (4, Hit { covered: 1, of: 1 }), (5, Hit { covered: 0, of: 1 })];
        let m = by_category(&hits);
        assert_eq!(m["overall"], Coverage { fraction_covered: 0.75, all_covered: 0.5, questions: 2 });
        assert_eq!(m["5"].questions, 1);
        assert_eq!(m["1"].fraction_covered, 0.5);
        assert!(!m.contains_key("2"));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v);
        assert_eq!((s.p50, s.p95, s.p99, s.max, s.n), (50.0, 95.0, 99.0, 100.0, 100));
        assert_eq!(Summary::of(&[]).n, 0);
    }
}
