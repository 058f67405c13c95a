//! "Where did we change X?" questions (issue 35): for every successful edit of a recorded session,
//! the rarest identifier it wrote (fewest calls of its project hold it; not part of the edited
//! file's path; ties go to the longer, then the first) becomes `Where did we change X?`. A hit is
//! any memory or observation made from a write to the same file in the same project, so the
//! evidence is every such write. Deterministic: the same sessions give the same questions.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::dataset::Question;
use crate::observer::extractive::symbols::added_identifiers;
use crate::pipeline::terms::is_word_char;

pub const CATEGORY: &str = "where-changed";

struct Write {
    project: String,
    file: String,
    tid: String,
    candidates: Vec<String>,
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
        self.writes.push(Write {
            project: project.to_owned(),
            file: file.to_owned(),
            tid: tid.to_owned(),
            candidates,
        });
    }

    /// One question per write that wrote an identifier; evidence: every write of its file.
    pub fn questions(&self) -> Vec<Question> {
        let mut by_file: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for w in &self.writes {
            by_file.entry((&w.project, &w.file)).or_default().push(format!("tool:{}", w.tid));
        }
        let mut out = Vec::new();
        for w in &self.writes {
            let df = self.df.get(&w.project);
            let count = |id: &str| df.and_then(|d| d.get(id)).copied().unwrap_or(0);
            let rarest = w
                .candidates
                .iter()
                .enumerate()
                .min_by_key(|(i, id)| (count(id), std::cmp::Reverse(id.len()), *i))
                .map(|(_, id)| id);
            let Some(id) = rarest else { continue };
            out.push(Question {
                id: format!("{CATEGORY}:{}", w.tid),
                project: w.project.clone(),
                category: CATEGORY.to_owned(),
                query: format!("Where did we change {id}?"),
                evidence: by_file[&(w.project.as_str(), w.file.as_str())].clone(),
            });
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
}
