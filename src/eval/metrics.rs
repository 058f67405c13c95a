//! Ranking metrics of one answer and their means over a set of questions. Relevance is binary:
//! a result is relevant when it is one of the question's evidence rows. Every metric looks at the
//! first 10 results.

use serde::Serialize;

/// Results looked at.
pub const DEPTH: usize = 10;

/// The scores of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    pub recall_1: f64,
    pub recall_5: f64,
    pub recall_10: f64,
    /// 1 / rank of the first relevant result (0 when none in the first 10).
    pub reciprocal_rank: f64,
    pub ndcg_10: f64,
    /// Share of the relevant rows found in the first 10.
    pub all_evidence_10: f64,
}

/// Scores `ranked` (best first) against the `relevant` rows (deduplicated by the caller).
pub fn score<T: PartialEq>(ranked: &[T], relevant: &[T]) -> Scores {
    if relevant.is_empty() {
        return Scores::default();
    }
    let top = &ranked[..ranked.len().min(DEPTH)];
    let first = top.iter().position(|r| relevant.contains(r)).map(|i| i + 1);
    let within = |k: usize| if first.is_some_and(|f| f <= k) { 1.0 } else { 0.0 };
    let dcg: f64 = top
        .iter()
        .enumerate()
        .filter(|(_, r)| relevant.contains(r))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(DEPTH)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    let found = relevant.iter().filter(|r| top.contains(r)).count();
    Scores {
        recall_1: within(1),
        recall_5: within(5),
        recall_10: within(10),
        reciprocal_rank: first.map_or(0.0, |f| 1.0 / f as f64),
        ndcg_10: dcg / ideal,
        all_evidence_10: found as f64 / relevant.len() as f64,
    }
}

/// Means and latency percentiles over a group of questions.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Summary {
    pub questions: usize,
    pub recall_1: f64,
    pub recall_5: f64,
    pub recall_10: f64,
    pub mrr: f64,
    pub ndcg_10: f64,
    pub all_evidence_10: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

/// The `q`-quantile (0..=1) of `sorted` by nearest rank.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Summarises `(scores, latency ms)` pairs.
pub fn summarise(rows: &[(Scores, f64)]) -> Summary {
    let n = rows.len();
    if n == 0 {
        return Summary::default();
    }
    let mean = |f: fn(&Scores) -> f64| rows.iter().map(|(s, _)| f(s)).sum::<f64>() / n as f64;
    let mut ms: Vec<f64> = rows.iter().map(|(_, m)| *m).collect();
    ms.sort_by(f64::total_cmp);
    Summary {
        questions: n,
        recall_1: mean(|s| s.recall_1),
        recall_5: mean(|s| s.recall_5),
        recall_10: mean(|s| s.recall_10),
        mrr: mean(|s| s.reciprocal_rank),
        ndcg_10: mean(|s| s.ndcg_10),
        all_evidence_10: mean(|s| s.all_evidence_10),
        p50_ms: quantile(&ms, 0.5),
        p95_ms: quantile(&ms, 0.95),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_relevant_rank_drives_recall_and_mrr() {
        let s = score(&[5, 7, 3, 9], &[3, 4]);
        assert_eq!((s.recall_1, s.recall_5, s.recall_10), (0.0, 1.0, 1.0));
        assert!((s.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
        // DCG = 1/log2(4) = 0.5; IDCG (2 relevant) = 1 + 1/log2(3).
        assert!((s.ndcg_10 - 0.5 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-12);
        assert_eq!(s.all_evidence_10, 0.5);
    }

    #[test]
    fn nothing_relevant_in_the_first_ten_scores_zero() {
        let ranked: Vec<i32> = (0..20).collect();
        let s = score(&ranked, &[15]);
        assert_eq!(s, Scores::default());
        assert_eq!(score(&[1, 2], &[]), Scores::default());
    }

    #[test]
    fn a_summary_averages_and_takes_nearest_rank_percentiles() {
        let hit = score(&[1], &[1]);
        let miss = Scores::default();
        let rows: Vec<(Scores, f64)> = (1..=20).map(|i| (if i % 2 == 0 { hit } else { miss }, i as f64)).collect();
        let s = summarise(&rows);
        assert_eq!(s.questions, 20);
        assert_eq!(s.recall_1, 0.5);
        assert_eq!((s.p50_ms, s.p95_ms), (10.0, 19.0));
    }
}
