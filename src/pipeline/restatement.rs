//! The restatement rule (issue 39, `docs/spec/native-memory.md`): the lines of a Claude Code
//! memory file as word sets, and whether an observation only restates one of them (then
//! SessionStart leaves it out). Pure text; the bridge reads the files, retrieval applies the rule.

use std::collections::BTreeSet;

use crate::text::words::{is_stopword, stem};

/// Share of an observation's words one memory line must hold for the observation to only
/// restate it.
pub const RESTATE_SHARE: f64 = 0.8;

/// The stemmed content words of `text` (letters first, ≥ 3 chars, no stopwords).
pub fn word_set(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3 && w.chars().next().is_some_and(char::is_alphabetic))
        .map(str::to_lowercase)
        .filter(|w| !is_stopword(w))
        .map(|w| stem(&w))
        .collect()
}

/// The lines of memory files worth comparing: Markdown structure stripped (headings, bullets,
/// links' targets, front matter keys), each with its word set; lines of fewer than 3 words are
/// left out.
pub fn memory_lines(text: &str) -> Vec<(String, BTreeSet<String>)> {
    let body = strip_front_matter(text);
    body.lines()
        .map(clean_line)
        .filter_map(|l| {
            let w = word_set(&l);
            (w.len() >= 3).then_some((l, w))
        })
        .collect()
}

fn strip_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---") {
        Some(end) => rest[end + 4..].trim_start_matches('\n'),
        None => text,
    }
}

/// A Markdown line as text: `#`, `-`, `*`, `>` and numbering dropped; `[Title](file.md)` → `Title`.
pub fn clean_line(line: &str) -> String {
    let t = line.trim().trim_start_matches(['#', '-', '*', '>', '+', ' ']);
    let t = t
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['.', ')', ' ']);
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(open) = rest.find("](") {
        out.push_str(&rest[..open].replace('[', ""));
        match rest[open..].find(')') {
            Some(close) => rest = &rest[open + close + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(&rest.replace('[', ""));
    out.trim().to_string()
}

/// Whether an observation (its title and narrative) only restates one of `lines`: nearly all
/// its words are in that one line, and it is not much longer than the line.
pub fn restates(title: &str, narrative: &str, lines: &[(String, BTreeSet<String>)]) -> bool {
    let mut obs = word_set(title);
    obs.extend(word_set(narrative));
    if obs.len() < 3 {
        return false;
    }
    lines.iter().any(|(_, line)| {
        let common = obs.intersection(line).count();
        common as f64 >= RESTATE_SHARE * obs.len() as f64 && obs.len() <= line.len() * 2 + 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_lines_become_plain_word_sets() {
        let text = "---\nname: pricing\ndescription: how prices work\n---\n# Pricing\n- [Integer cents](cents.md) — prices are stored as integer cents, never floats\n\nok\n";
        let lines = memory_lines(text);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].0, "Integer cents — prices are stored as integer cents, never floats");
        assert!(lines[0].1.contains("pric") && lines[0].1.contains("cent"), "{:?}", lines[0].1);
    }

    #[test]
    fn only_a_restatement_is_recognised() {
        let lines = memory_lines("- Prices are stored as integer cents, never floats.\n- Deploys go through the staging cluster first.\n");
        assert!(restates("Prices are integer cents", "prices are stored as integer cents", &lines));
        assert!(restates("Deploys go through staging first", "", &lines));
        assert!(
            !restates(
                "Rounding of prices switched to half-even",
                "The checkout rounded half-up and lost a cent on refunds; price.rs now rounds half-even.",
                &lines
            ),
            "new information is kept"
        );
        assert!(!restates("cents", "", &lines), "too few words to judge");
    }
}
