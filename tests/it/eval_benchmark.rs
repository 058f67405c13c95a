//! Issue 15: the retrieval benchmark runs on the shipped dataset (`datasets/transcripts`), and its
//! acceptance figures hold: hybrid search at least as good as keyword-only on recall@1, recall@5
//! and MRR (over all questions and over the held-out half), ≥ 10 points better on recall@5 for the
//! paraphrase questions, and "where did we change X?" answered (issue 35). The dataset is what
//! its generator makes from the recorded transcripts, byte for byte.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{model_dir, transcripts::transcripts_dir};

fn dataset() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/transcripts")
}

#[test]
fn the_shipped_dataset_is_what_its_generator_makes() {
    let Some(dir) = transcripts_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["eval", "--generate"])
        .arg(&dir)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for f in ["memories.jsonl", "questions.jsonl", "sessions.jsonl"] {
        let made = std::fs::read(out.path().join(f)).unwrap();
        let shipped = std::fs::read(dataset().join(f)).unwrap();
        assert!(
            made == shipped,
            "datasets/transcripts/{f} differs from the generator's output: {}",
            first_difference(&made, &shipped)
        );
    }
    let questions = std::fs::read_to_string(dataset().join("questions.jsonl")).unwrap().lines().count();
    let paraphrases = std::fs::read_to_string(dataset().join("questions_paraphrase.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(
        questions >= 300 && paraphrases >= 50,
        "{questions} questions, {paraphrases} paraphrases"
    );
}

/// Where two files first differ, for a failure a reader can act on (a changed generator, or a
/// transcript set that is not the one the dataset was made from).
fn first_difference(made: &[u8], shipped: &[u8]) -> String {
    let (made, shipped) = (String::from_utf8_lossy(made), String::from_utf8_lossy(shipped));
    let (m, s): (Vec<&str>, Vec<&str>) = (made.lines().collect(), shipped.lines().collect());
    let cut = |l: &str| l.chars().take(400).collect::<String>();
    match m.iter().zip(&s).position(|(a, b)| a != b) {
        Some(i) => format!(
            "line {}:\n  generated {}\n  shipped   {}\nregenerate it with `memd eval --generate`",
            i + 1,
            cut(m[i]),
            cut(s[i])
        ),
        None => format!("{} generated lines, {} shipped", m.len(), s.len()),
    }
}

fn figure(report: &Value, path: &str, mode: &str, category: &str, metric: &str) -> f64 {
    let p = report["paths"].as_array().unwrap().iter().find(|p| p["path"] == path).unwrap();
    p["modes"][mode][category][metric]
        .as_f64()
        .unwrap_or_else(|| panic!("{path} {mode} {category} {metric}"))
}

#[test]
fn issue_15_hybrid_search_never_loses_to_keyword_search_on_the_benchmark() {
    let Some(model) = model_dir() else { return };
    let run = Command::new(env!("CARGO_BIN_EXE_memd"))
        .arg("eval")
        .arg(dataset())
        .args(["--json", "--model-dir", &model])
        .env_remove("MEMD_DATA_DIR")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: Value = serde_json::from_slice(&run.stdout).unwrap();
    eprintln!("{}", serde_json::to_string(&report["paths"]).unwrap());
    // The raw path is deterministic: hybrid must not lose at all. The extractive path's
    // observations depend on how the replayed events were batched (timing), which moves a figure
    // by a question or two between runs: it may not lose by more than one point.
    // Issue 35: also on the held-out half, which no search setting was chosen on.
    for (path, slack) in [("raw", 0.0), ("extractive", 0.01)] {
        for metric in ["recall_1", "recall_5", "mrr"] {
            for category in ["all", "all@held-out"] {
                let (h, k) = (
                    figure(&report, path, "hybrid", category, metric),
                    figure(&report, path, "keyword", category, metric),
                );
                assert!(h >= k - slack, "{path} path, {category}, {metric}: hybrid {h:.3} < keyword {k:.3}");
            }
        }
    }
    // Issue 35: "where did we change X?" through the product path (replayed sessions, the
    // extractive observer, /api/search) finds the edit: hit@5 ≥ 0.90 and hit@1 ≥ 0.70.
    for mode in ["keyword", "hybrid"] {
        let (r1, r5) = (
            figure(&report, "extractive", mode, "where-changed", "recall_1"),
            figure(&report, "extractive", mode, "where-changed", "recall_5"),
        );
        assert!(
            r1 >= 0.70 && r5 >= 0.90,
            "where did we change, {mode}: hit@1 {r1:.3}, hit@5 {r5:.3}"
        );
    }
    let (h, k) = (
        figure(&report, "raw", "hybrid", "paraphrase", "recall_5"),
        figure(&report, "raw", "keyword", "paraphrase", "recall_5"),
    );
    assert!(h >= k + 0.10, "paraphrases, recall@5: hybrid {h:.3} vs keyword {k:.3}");
}
