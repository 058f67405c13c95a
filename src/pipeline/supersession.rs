//! Deterministic rules between a new observation (or memory) and an older live one on the same
//! subject (issue 38): the new one *supersedes* the older when it says it replaces it ("moved
//! from", "instead of", "no longer" …); the two *contradict* when they disagree without saying so
//! (a different version of the same name, or one negates what the other asserts). Only records of
//! the same kind are compared: manual memories with manual memories, decisions with decisions,
//! bugfixes with bugfixes. The subject is shared when the two name a common file or a common
//! distinctive word (not a stopword, not a verb of the rules' own vocabulary).

use std::collections::BTreeSet;

/// What the rules compare of one record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subject {
    pub id: i64,
    pub project: String,
    pub obs_type: String,
    pub origin: String,
    /// Title, narrative and facts, joined.
    pub text: String,
    pub files: Vec<String>,
}

/// How a newer record stands to an older one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relation {
    Supersedes(&'static str),
    Contradicts(String),
    Unrelated,
}

/// Share of distinctive words two records without a common file must have in common.
pub const SAME_SUBJECT: f64 = 0.34;

/// Types whose newer record replaces an older claim.
const CLAIM_TYPES: &[&str] = &["decision", "bugfix"];

const REPLACES: &[&str] = &[
    "moved from",
    "moved to",
    "instead of",
    "replaced",
    "replaces",
    "replacing",
    "no longer",
    "switched",
    "migrated",
    "reverted",
    "superseded",
    "supersedes",
    "deprecated",
    "now use",
    "now uses",
    "rather than",
    "changed from",
];

const NEGATIONS: &[&str] = &["not", "never", "don't", "dont", "doesn't", "avoid", "without", "cannot", "can't"];

/// Words that name no subject (articles, the rules' verbs, common verbs of notes).
const GENERIC: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "are", "was", "were", "use", "uses", "used", "using", "pin", "pins",
    "pinned", "we", "our", "moved", "move", "switch", "switched", "now", "instead", "replaced", "not", "never", "all", "has", "have",
    "had", "but", "its", "his", "her", "they", "them", "then", "than", "when", "which", "what", "who", "will", "should", "must", "can",
    "also", "only", "just", "still", "more", "less", "new", "old", "version", "file", "files", "code", "project", "memory", "decision",
    "decided", "keep", "kept", "always", "made", "make", "set", "sets",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_' || c == '-' || c == '\''))
        .map(|w| w.trim_matches(|c: char| c == '.' || c == '-' || c == '\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn is_version(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// Distinctive words of a text: letters first, ≥ 3 chars, not generic.
fn distinctive(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && w.chars().next().is_some_and(char::is_alphabetic) && !GENERIC.contains(&w.as_str()))
        .collect()
}

/// The versions written right after each distinctive word ("tokio 1.38", "tokio to 1.38").
fn versions(text: &str) -> Vec<(String, String)> {
    let w = words(text);
    let mut out = Vec::new();
    for (i, word) in w.iter().enumerate() {
        if !is_version(word) {
            continue;
        }
        let named = w[..i]
            .iter()
            .rev()
            .take(4)
            .find(|x| !is_version(x) && x.len() >= 3 && !GENERIC.contains(&x.as_str()));
        if let Some(n) = named {
            out.push((n.clone(), word.clone()));
        }
    }
    out
}

fn says_it_replaces(text: &str) -> bool {
    let t = format!(" {} ", words(text).join(" "));
    REPLACES.iter().any(|m| t.contains(&format!(" {m} ")))
}

fn negates(text: &str) -> bool {
    words(text).iter().any(|w| NEGATIONS.contains(&w.as_str()))
}

fn same_kind(a: &Subject, b: &Subject) -> bool {
    if a.project != b.project || a.id == b.id {
        return false;
    }
    if a.origin == "manual" || b.origin == "manual" {
        return a.origin == b.origin;
    }
    a.obs_type == b.obs_type && CLAIM_TYPES.contains(&a.obs_type.as_str())
}

/// The relation of `newer` to `older`.
pub fn relate(newer: &Subject, older: &Subject) -> Relation {
    if !same_kind(newer, older) {
        return Relation::Unrelated;
    }
    let shared_file = newer.files.iter().any(|f| older.files.contains(f));
    let (dn, dold) = (distinctive(&newer.text), distinctive(&older.text));
    let shared: Vec<&String> = dn.intersection(&dold).collect();
    let union = dn.union(&dold).count().max(1);
    // One subject: a common file and a common word, or most of their words in common (a long
    // note that shares a word or two with another is about something else).
    let same_subject = (shared_file && !shared.is_empty()) || shared.len() as f64 / union as f64 >= SAME_SUBJECT;
    if !same_subject {
        return Relation::Unrelated;
    }
    if says_it_replaces(&newer.text) {
        return Relation::Supersedes("updated");
    }
    let old_versions = versions(&older.text);
    for (name, v) in versions(&newer.text) {
        if let Some((_, ov)) = old_versions.iter().find(|(n, ov)| *n == name && *ov != v) {
            return Relation::Contradicts(format!("{name}: {ov} then {v}"));
        }
    }
    if negates(&newer.text) != negates(&older.text) && shared.len() >= 2 {
        let topic: Vec<&str> = shared.iter().take(3).map(|s| s.as_str()).collect();
        return Relation::Contradicts(format!("one negates the other about {}", topic.join(", ")));
    }
    Relation::Unrelated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: i64, text: &str) -> Subject {
        Subject {
            id,
            project: "p".into(),
            obs_type: "discovery".into(),
            origin: "manual".into(),
            text: text.into(),
            files: vec![],
        }
    }

    #[test]
    fn a_memory_that_says_it_replaces_supersedes() {
        let old = memory(1, "we pin tokio to 1.38");
        let new = memory(2, "we moved from tokio 1.38 to 1.40");
        assert_eq!(relate(&new, &old), Relation::Supersedes("updated"));
    }

    #[test]
    fn a_different_version_of_the_same_name_contradicts() {
        let old = memory(1, "we pin tokio to 1.38");
        let new = memory(2, "the workspace uses tokio 1.40");
        assert_eq!(relate(&new, &old), Relation::Contradicts("tokio: 1.38 then 1.40".into()));
    }

    #[test]
    fn a_negation_of_the_same_claim_contradicts() {
        let old = memory(1, "checkout totals round with bankers rounding");
        let new = memory(2, "checkout totals do not round with bankers rounding");
        assert!(matches!(relate(&new, &old), Relation::Contradicts(_)));
    }

    #[test]
    fn a_long_note_sharing_a_word_is_another_subject() {
        let old = memory(1, "the upload worker retries with exponential backoff and jitter");
        let new = memory(2, "switched the viewer theme toggle to follow the system; the upload button moved");
        assert_eq!(relate(&new, &old), Relation::Unrelated);
    }

    #[test]
    fn other_subjects_projects_and_kinds_are_unrelated() {
        let old = memory(1, "we pin tokio to 1.38");
        assert_eq!(relate(&memory(2, "we moved from npm to pnpm"), &old), Relation::Unrelated);
        let mut other = memory(2, "we moved from tokio 1.38 to 1.40");
        other.project = "q".into();
        assert_eq!(relate(&other, &old), Relation::Unrelated);
        other.project = "p".into();
        other.origin = "observer".into();
        assert_eq!(relate(&other, &old), Relation::Unrelated);
    }

    #[test]
    fn decisions_on_the_same_file_relate_and_discoveries_do_not() {
        let mut old = memory(1, "Session cookies are signed with HMAC");
        let mut new = memory(2, "Replaced HMAC signing of session cookies with an AEAD seal");
        for s in [&mut old, &mut new] {
            s.origin = "observer".into();
            s.obs_type = "decision".into();
            s.files = vec!["src/session.rs".into()];
        }
        assert_eq!(relate(&new, &old), Relation::Supersedes("updated"));
        old.obs_type = "discovery".into();
        new.obs_type = "discovery".into();
        assert_eq!(relate(&new, &old), Relation::Unrelated);
    }
}
