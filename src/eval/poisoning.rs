//! `memd eval --poisoning` (issue 51): the instruction screen measured both ways. The class corpus
//! (`tests/fixtures/poisoning/classes.json`, built in) holds, per attack class, payloads and
//! near-misses in two halves — `tune` (the rules were written against it) and `report` (written
//! after, never tuned on); the catch rate and the near-miss rate are given per class and half.
//! The false-positive rate on recorded sessions comes from replaying them through the extractive
//! observer in a fresh worker: quarantined observations over all observations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One corpus item (a split attack's `parts` are joined, as the store screens a record).
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    pub id: String,
    pub class: String,
    pub split: String,
    pub text: String,
    pub instruction: bool,
}

/// The built-in corpus.
pub fn corpus() -> Vec<Item> {
    serde_json::from_str(include_str!("../../tests/fixtures/poisoning/classes.json")).unwrap_or_default()
}

/// One class in one half.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ClassScore {
    pub class: String,
    pub split: String,
    pub payloads: usize,
    pub caught: usize,
    pub near_misses: usize,
    pub false_alarms: usize,
    /// The ids the screen got wrong.
    pub wrong: Vec<String>,
}

/// Scores `items` with `screen` per (class, half).
pub fn score(items: &[Item], screen: impl Fn(&str) -> bool) -> Vec<ClassScore> {
    let mut by: BTreeMap<(String, String), ClassScore> = BTreeMap::new();
    for i in items {
        let s = by.entry((i.split.clone(), i.class.clone())).or_insert_with(|| ClassScore {
            class: i.class.clone(),
            split: i.split.clone(),
            ..ClassScore::default()
        });
        let flagged = screen(&i.text);
        match i.instruction {
            true => {
                s.payloads += 1;
                s.caught += usize::from(flagged);
            }
            false => {
                s.near_misses += 1;
                s.false_alarms += usize::from(flagged);
            }
        }
        if flagged != i.instruction {
            s.wrong.push(i.id.clone());
        }
    }
    by.into_values().collect()
}

/// The false-positive side: observations made from recorded sessions, and how many were quarantined.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Recorded {
    pub observations: i64,
    pub quarantined: i64,
    /// Reasons of the quarantined ones, with counts.
    pub reasons: BTreeMap<String, i64>,
    /// The dataset's memories (texts taken from the same sessions), and how many the screen flags.
    pub memories: usize,
    pub memories_flagged: Vec<String>,
}

/// The report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PoisoningReport {
    pub classes: Vec<ClassScore>,
    pub recorded: Option<Recorded>,
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "–".into()
    } else {
        format!("{:.0} %", 100.0 * n as f64 / d as f64)
    }
}

/// The report as Markdown: a table per half, then the recorded sessions.
pub fn markdown(r: &PoisoningReport) -> String {
    let mut out = String::from("# Poisoning screen\n");
    for split in ["tune", "report"] {
        out.push_str(&format!(
            "\n## {split} half{}\n\n| class | caught | near-misses flagged | wrong |\n|---|---:|---:|---|\n",
            if split == "report" {
                " (never tuned on)"
            } else {
                " (the rules were written against it)"
            }
        ));
        let (mut p, mut c, mut n, mut f) = (0, 0, 0, 0);
        for s in r.classes.iter().filter(|s| s.split == split) {
            out.push_str(&format!(
                "| {} | {}/{} ({}) | {}/{} | {} |\n",
                s.class,
                s.caught,
                s.payloads,
                pct(s.caught, s.payloads),
                s.false_alarms,
                s.near_misses,
                s.wrong.join(", ")
            ));
            (p, c, n, f) = (p + s.payloads, c + s.caught, n + s.near_misses, f + s.false_alarms);
        }
        out.push_str(&format!("| **all** | {c}/{p} ({}) | {f}/{n} | |\n", pct(c, p)));
    }
    if let Some(rec) = &r.recorded {
        let share = if rec.observations == 0 {
            0.0
        } else {
            100.0 * rec.quarantined as f64 / rec.observations as f64
        };
        out.push_str(&format!(
            "\n## Recorded sessions (extractive observer)\n\n{} of {} observations quarantined ({share:.2} %)",
            rec.quarantined, rec.observations
        ));
        let reasons: Vec<String> = rec.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if !reasons.is_empty() {
            out.push_str(&format!(": {}", reasons.join(", ")));
        }
        out.push('\n');
        out.push_str(&format!(
            "\nThe dataset's memories: {} of {} flagged{}\n",
            rec.memories_flagged.len(),
            rec.memories,
            if rec.memories_flagged.is_empty() {
                String::new()
            } else {
                format!(" ({})", rec.memories_flagged.join(", "))
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_has_both_halves_and_every_class_in_each() {
        let c = corpus();
        let classes = |split: &str| {
            c.iter()
                .filter(|i| i.split == split)
                .map(|i| i.class.clone())
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(classes("tune"), classes("report"));
        assert!(classes("tune").len() >= 9);
        let s = score(&c, |t| crate::pipeline::instruction::screen(t).is_some());
        let md = markdown(&PoisoningReport {
            classes: s,
            recorded: None,
        });
        assert!(md.contains("| multilingual |") && md.contains("never tuned on"), "{md}");
    }
}
