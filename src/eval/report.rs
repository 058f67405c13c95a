//! The benchmark report: per path (raw memories, extractive observations), per search mode, per
//! question category, the [`Summary`] of its answers — as JSON and as Markdown tables.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::{Summary, summarise};
use super::run::{Answer, SearchMode};

/// One path's results.
#[derive(Debug, Clone, Serialize, Default)]
pub struct PathReport {
    /// `raw` (memories saved through the API) or `extractive` (sessions replayed as hook events).
    pub path: String,
    /// Rows the questions were asked over (memories saved, or observations + prompts made).
    pub rows: usize,
    /// Seconds the vector backfill took after the last row was stored (0 when vectors are off).
    pub embed_seconds: f64,
    pub rows_embedded: i64,
    /// Questions whose evidence became no row (only the extractive path can have them; scored 0).
    pub unmapped: usize,
    /// mode → category (`all` included) → summary.
    pub modes: BTreeMap<SearchMode, BTreeMap<String, Summary>>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    pub dataset: String,
    pub questions: usize,
    /// Why a mode is missing (no model installed, …), when one is.
    pub notes: Vec<String>,
    pub paths: Vec<PathReport>,
    /// "What is true now" before (freshness off) and after (issue 38), when that path ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub true_now: Vec<super::true_now::TrueNow>,
}

/// Summaries of `answers` (question category, its split, answer) per category and over all, and
/// each of those per split (`all@held-out`, `where-changed@tune`): a setting is tuned on the
/// `tune` half and reported on the `held-out` half ([`super::dataset::Question::split`]).
pub fn by_category(answers: &[(String, &str, Answer)]) -> BTreeMap<String, Summary> {
    let mut groups: BTreeMap<String, Vec<(super::metrics::Scores, f64)>> = BTreeMap::new();
    for (cat, split, a) in answers {
        for key in [cat.clone(), "all".to_owned(), format!("{cat}@{split}"), format!("all@{split}")] {
            groups.entry(key).or_default().push((a.scores, a.ms));
        }
    }
    groups.into_iter().map(|(k, v)| (k, summarise(&v))).collect()
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// Markdown: one table per path, a row per (category, mode).
pub fn markdown(r: &Report) -> String {
    let mut out = format!("Dataset `{}`: {} questions.\n", r.dataset, r.questions);
    for n in &r.notes {
        out.push_str(&format!("\n> {n}\n"));
    }
    for p in &r.paths {
        out.push_str(&format!(
            "\n### {} path — {} rows, {} embedded in {:.1} s, {} questions without evidence rows\n\n",
            p.path, p.rows, p.rows_embedded, p.embed_seconds, p.unmapped
        ));
        out.push_str("| category | mode | n | recall@1 | recall@5 | recall@10 | MRR | nDCG@10 | all-evidence@10 | p50 ms | p95 ms |\n");
        out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        let mut cats: Vec<&String> = p.modes.values().flat_map(|m| m.keys()).collect();
        cats.sort_by_key(|c| (!c.starts_with("all"), String::clone(c)));
        cats.dedup();
        for cat in cats {
            for (mode, m) in &p.modes {
                let Some(s) = m.get(cat) else { continue };
                out.push_str(&format!(
                    "| {cat} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |\n",
                    mode.name(),
                    s.questions,
                    f3(s.recall_1),
                    f3(s.recall_5),
                    f3(s.recall_10),
                    f3(s.mrr),
                    f3(s.ndcg_10),
                    f3(s.all_evidence_10),
                    s.p50_ms,
                    s.p95_ms
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::score;

    #[test]
    fn categories_and_all_are_summarised_and_tabled() {
        let hit = Answer {
            scores: score(&[1], &[1]),
            ms: 2.0,
            unmapped: false,
            top: Vec::new(),
        };
        let miss = Answer {
            scores: score(&[2], &[1]),
            ms: 4.0,
            unmapped: false,
            top: Vec::new(),
        };
        let s = by_category(&[("a".into(), "tune", hit), ("b".into(), "held-out", miss)]);
        assert_eq!(s["all"].questions, 2);
        assert_eq!(s["all@held-out"].recall_1, 0.0);
        assert_eq!(s["a@tune"].recall_1, 1.0);
        assert_eq!(s["a"].recall_1, 1.0);
        assert_eq!(s["all"].recall_1, 0.5);
        let mut p = PathReport {
            path: "raw".into(),
            ..PathReport::default()
        };
        p.modes.insert(SearchMode::Keyword, s);
        let md = markdown(&Report {
            dataset: "d".into(),
            questions: 2,
            notes: vec![],
            paths: vec![p],
            true_now: vec![],
        });
        assert!(md.contains("| all | keyword | 2 | 0.500 |"), "{md}");
        assert!(md.find("| all |").unwrap() < md.find("| a |").unwrap());
    }
}
