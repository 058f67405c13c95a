//! memd's note when the agent reads one of Claude Code's memory files (docs/spec/native-memory.md
//! §3): for each line of the file, newer evidence memd holds — a memory on the same subject
//! superseded since the file was last written, or a file the line names that was changed since.
//! Pure: the worker reads the file and the evidence.

use std::collections::BTreeSet;

use super::word_set;
use crate::text::lines::one_line;

/// Note lines at most.
pub const NOTE_MAX: usize = 8;

/// A memory superseded since the file was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superseded {
    pub old_text: String,
    pub new_id: i64,
    pub new_title: String,
    pub new_date: String,
}

/// An observation that changed files since the file was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub id: i64,
    pub title: String,
    pub date: String,
    pub files: Vec<String>,
}

/// What memd knows that is newer than the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    pub superseded: Vec<Superseded>,
    pub changed: Vec<Changed>,
}

fn same_subject(line: &BTreeSet<String>, other: &BTreeSet<String>) -> bool {
    let common = line.intersection(other).count();
    common >= 2 && common as f64 >= 0.6 * line.len().min(other.len()) as f64
}

/// Words of a line that look like file paths (`src/price.rs`, `Cargo.toml`).
fn paths_in(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | ';' | '"' | '\''))
        .map(|w| w.trim_end_matches([':', '.']))
        .filter(|w| {
            let ext = w.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
            (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric()) && w.len() > ext.len() + 1
        })
        .map(|w| w.trim_start_matches("./").to_string())
        .collect()
}

/// The note for `file_name` with `lines` (as [`super::memory_lines`] gives them), or None when
/// memd knows nothing newer.
pub fn render(file_name: &str, lines: &[(String, BTreeSet<String>)], ev: &Evidence) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    for (text, words) in lines {
        if out.len() >= NOTE_MAX {
            break;
        }
        let quoted = one_line(text, 120);
        if let Some(s) = ev.superseded.iter().find(|s| same_subject(words, &word_set(&s.old_text))) {
            out.push(format!(
                "- \"{quoted}\": superseded since — #{} {} ({}).",
                s.new_id,
                one_line(&s.new_title, 120),
                s.new_date.get(..10).unwrap_or(&s.new_date)
            ));
            continue;
        }
        for p in paths_in(text) {
            if let Some(c) = ev
                .changed
                .iter()
                .find(|c| c.files.iter().any(|f| f == &p || f.ends_with(&format!("/{p}"))))
            {
                out.push(format!(
                    "- \"{quoted}\": {} was changed since — #{} {} ({}).",
                    one_line(&p, 120),
                    c.id,
                    one_line(&c.title, 120),
                    c.date.get(..10).unwrap_or(&c.date)
                ));
                break;
            }
        }
    }
    (!out.is_empty()).then(|| {
        format!(
            "memd has newer evidence about lines of {} (written before it; check before relying on them):\n{}",
            one_line(file_name, 200),
            out.join("\n")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::memory_lines;

    #[test]
    fn a_superseded_decision_and_a_changed_file_are_noted_against_their_lines() {
        let lines = memory_lines(
            "- We pin tokio to 1.38 in every crate\n- Rounding lives in `src/price.rs` and rounds half-up\n- Logs go to stderr only\n",
        );
        let ev = Evidence {
            superseded: vec![Superseded {
                old_text: "we pin tokio to 1.38".into(),
                new_id: 12,
                new_title: "The workspace moved to tokio 1.40".into(),
                new_date: "2026-12-04T10:00:00Z".into(),
            }],
            changed: vec![Changed {
                id: 15,
                title: "Rounding switched to half-even".into(),
                date: "2026-12-04T11:00:00Z".into(),
                files: vec!["src/price.rs".into()],
            }],
        };
        let note = render("MEMORY.md", &lines, &ev).unwrap();
        assert!(
            note.contains(
                "\"We pin tokio to 1.38 in every crate\": superseded since — #12 The workspace moved to tokio 1.40 (2026-12-04)."
            ),
            "{note}"
        );
        assert!(
            note.contains("src/price.rs was changed since — #15 Rounding switched to half-even"),
            "{note}"
        );
        assert!(!note.contains("Logs go to stderr"), "{note}");
        assert_eq!(render("MEMORY.md", &lines, &Evidence::default()), None);
    }
}
