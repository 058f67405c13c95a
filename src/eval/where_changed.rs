//! "Where did we change X?" questions (issue 35): for every successful edit of a recorded session,
//! the rarest identifier it wrote (fewest calls of its project hold it; not part of the edited
//! file's path; ties go to the longer, then the first) becomes `Where did we change X?`; and
//! (issue 54, category `where-changed-word`) the rarest plain word of at least
//! [`WORD_MIN_CHARS`] letters it wrote — a CSS `transition`, an HTML `placeholder`, `Implementation`
//! in a comment — asked the same way. A hit is any memory or observation made from a write to the
//! same file in the same project, so the evidence is every such write. Deterministic: the same
//! sessions give the same questions.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::dataset::Question;
use crate::observer::extractive::symbols::added_identifiers;
use crate::pipeline::terms::is_word_char;

pub const CATEGORY: &str = "where-changed";
/// The plain-word questions (issue 54).
pub const WORD_CATEGORY: &str = "where-changed-word";
/// A "long word": at least this many letters.
pub const WORD_MIN_CHARS: usize = 7;

struct Write {
    project: String,
    file: String,
    tid: String,
    candidates: Vec<String>,
    words: Vec<String>,
}

/// The plain words (letters only, not written as an identifier, not a stopword) of `new`, at least
/// [`WORD_MIN_CHARS`] long and not part of `path`, in order of first appearance.
fn plain_words(new: &str, path: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    new.split(|c: char| !is_word_char(c))
        .filter(|w| w.chars().count() >= WORD_MIN_CHARS && w.chars().all(char::is_alphabetic))
        .filter(|w| !crate::pipeline::terms::is_identifier(w))
        .filter(|w| !crate::text::words::is_stopword(&w.to_lowercase()))
        .filter(|w| !path.contains(&w.to_lowercase()))
        .filter(|w| seen.insert(w.to_string()))
        .map(str::to_owned)
        .collect()
}

/// Collects every call's words (for rarity) and every write (for questions), in session order.
#[derive(Default)]
pub struct WhereChanged {
    writes: Vec<Write>,
    /// project → word → calls holding it.
    df: HashMap<String, HashMap<String, usize>>,
}

impl WhereChanged {
    /// A tool call of `project` with all its text (input and output).
    pub fn call(&mut self, project: &str, text: &str) {
        let words: HashSet<&str> = text.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty()).collect();
        let df = self.df.entry(project.to_owned()).or_default();
        for w in words {
            *df.entry(w.to_owned()).or_default() += 1;
        }
    }

    /// A successful write of `file` (relative to the project) by call `tid`, writing `new`.
    pub fn write(&mut self, project: &str, file: &str, tid: &str, new: &str) {
        let path = file.to_lowercase();
        let candidates = added_identifiers("", new)
            .into_iter()
            .filter(|id| !path.contains(&id.to_lowercase()))
            .collect();
        let words = plain_words(new, &path);
        self.writes.push(Write {
            project: project.to_owned(),
            file: file.to_owned(),
            tid: tid.to_owned(),
            candidates,
            words,
        });
    }

    /// One question per write that wrote an identifier, and one per write that wrote a long plain
    /// word; evidence: every write of its file.
    pub fn questions(&self) -> Vec<Question> {
        let mut by_file: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for w in &self.writes {
            by_file.entry((&w.project, &w.file)).or_default().push(format!("tool:{}", w.tid));
        }
        let mut out = Vec::new();
        for w in &self.writes {
            let df = self.df.get(&w.project);
            let count = |id: &str| df.and_then(|d| d.get(id)).copied().unwrap_or(0);
            let rarest = |list: &[String]| {
                list.iter()
                    .enumerate()
                    .min_by_key(|(i, id)| (count(id), std::cmp::Reverse(id.len()), *i))
                    .map(|(_, id)| id.clone())
            };
            for (category, pick) in [(CATEGORY, rarest(&w.candidates)), (WORD_CATEGORY, rarest(&w.words))] {
                let Some(id) = pick else { continue };
                out.push(Question {
                    id: format!("{category}:{}", w.tid),
                    project: w.project.clone(),
                    category: category.to_owned(),
                    query: format!("Where did we change {id}?"),
                    evidence: by_file[&(w.project.as_str(), w.file.as_str())].clone(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rarest_identifier_not_in_the_path_is_asked_and_every_write_of_the_file_answers() {
        let mut wc = WhereChanged::default();
        wc.call("p", "read tokenizer: renderTokenAndText common_helper");
        wc.call("p", "common_helper again");
        wc.call("p", "debouncedUpdateTokens renderTokenAndText common_helper tokenizer_js");
        wc.write(
            "p",
            "src/tokenizer_js",
            "t1",
            "debouncedUpdateTokens renderTokenAndText common_helper tokenizer_js",
        );
        wc.write("p", "src/tokenizer_js", "t2", "plain words");
        let q = wc.questions();
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].query, "Where did we change debouncedUpdateTokens?");
        assert_eq!(q[0].evidence, ["tool:t1", "tool:t2"]);
        assert_eq!(q[0].id, "where-changed:t1");
    }

    #[test]
    fn the_rarest_long_plain_word_is_asked_too() {
        let mut wc = WhereChanged::default();
        wc.call("p", "a transition here and opacity there");
        wc.call("p", "opacity again, and styles");
        wc.call("p", "transition again; placeholder once; styles");
        wc.write(
            "p",
            "src/style.css",
            "t1",
            "opacity: 1; transition: opacity 0.2s; placeholder styles",
        );
        wc.write("p", "src/style.css", "t2", "fooBar short");
        let q: Vec<_> = wc.questions().into_iter().filter(|q| q.category == WORD_CATEGORY).collect();
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(q[0].query, "Where did we change placeholder?");
        assert_eq!(q[0].id, "where-changed-word:t1");
        assert!(plain_words("Implementation of styleSheet and style", "src/style.css") == ["Implementation"]);
    }
}
