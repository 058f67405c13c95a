//! `memd promote` (docs/spec/native-memory.md §5): a memory written the way Claude Code writes
//! its own — into the auto-memory directory as a topic file with `name` / `description` /
//! `metadata.type` front matter plus a `- [Title](file.md) — hook` line in `MEMORY.md`, or as a
//! `- …` line appended to the project's `CLAUDE.md`. Pure: the edits, for the CLI to show or write.

use std::path::{Path, PathBuf};

use crate::text::lines::one_line;

/// The memory being promoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promoted {
    pub id: i64,
    pub title: String,
    pub text: String,
    pub date: String,
}

/// One file write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub path: PathBuf,
    /// The whole new content.
    pub content: String,
    pub created: bool,
}

/// A kebab-case slug of the title (`prices-are-integer-cents`).
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
        if s.len() >= 50 {
            break;
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() { "memd-memory".into() } else { s }
}

fn with_line(existing: Option<&str>, line: &str) -> String {
    let mut text = existing.unwrap_or_default().to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    text
}

/// The topic file and the `MEMORY.md` line in `dir`; `read` gives a file's current text. Nothing
/// to do (empty) when `MEMORY.md` already points at the same topic file with the same content.
pub fn to_auto_memory(m: &Promoted, dir: &Path, read: impl Fn(&Path) -> Option<String>) -> Vec<Edit> {
    let title = one_line(&m.title, 100);
    let body = format!(
        "---\nname: {slug}\ndescription: {title}\nmetadata:\n  type: project\n---\n\n{}\n\n(From memd #{}, {}.)\n",
        // One defused line (issue 50): stored text cannot end the front matter or start a heading.
        one_line(&m.text, 4000),
        m.id,
        one_line(m.date.get(..10).unwrap_or(&m.date), 10),
        slug = slug(&m.title),
    );
    // A topic file of that name with other content gets a numbered name.
    let mut name = format!("{}.md", slug(&m.title));
    for n in 2.. {
        match read(&dir.join(&name)) {
            Some(t) if t != body => name = format!("{}-{n}.md", slug(&m.title)),
            _ => break,
        }
    }
    let topic = dir.join(&name);
    let index_path = dir.join("MEMORY.md");
    let index = read(&index_path);
    let mut edits = Vec::new();
    if read(&topic).as_deref() != Some(body.as_str()) {
        edits.push(Edit {
            path: topic.clone(),
            content: body,
            created: read(&topic).is_none(),
        });
    }
    if !index.as_deref().unwrap_or_default().contains(&format!("]({name})")) {
        let hook = one_line(&m.text, 110);
        edits.push(Edit {
            path: index_path,
            content: with_line(index.as_deref(), &format!("- [{title}]({name}) — {hook}")),
            created: index.is_none(),
        });
    }
    edits
}

/// A `- …` line appended to `claude_md` (created when missing); nothing when the line is there.
pub fn to_claude_md(m: &Promoted, claude_md: &Path, read: impl Fn(&Path) -> Option<String>) -> Vec<Edit> {
    let line = format!("- {}", one_line(&m.text, 300));
    let existing = read(claude_md);
    if existing.as_deref().is_some_and(|t| t.lines().any(|l| l.trim() == line)) {
        return Vec::new();
    }
    vec![Edit {
        path: claude_md.to_path_buf(),
        content: with_line(existing.as_deref(), &line),
        created: existing.is_none(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn m() -> Promoted {
        Promoted {
            id: 7,
            title: "Prices are integer cents".into(),
            text: "Prices are stored as integer cents; never floats.".into(),
            date: "2026-12-04T10:00:00Z".into(),
        }
    }

    #[test]
    fn a_memory_becomes_a_topic_file_and_an_index_line_once() {
        let dir = Path::new("/m");
        let files: HashMap<PathBuf, String> = [(dir.join("MEMORY.md"), "- [Old](old.md) — kept".to_string())].into();
        let edits = to_auto_memory(&m(), dir, |p| files.get(p).cloned());
        assert_eq!(edits.len(), 2);
        assert_eq!(edits[0].path, dir.join("prices-are-integer-cents.md"));
        assert!(
            edits[0].content.starts_with(
                "---\nname: prices-are-integer-cents\ndescription: Prices are integer cents\nmetadata:\n  type: project\n---\n"
            )
        );
        assert_eq!(
            edits[1].content,
            "- [Old](old.md) — kept\n- [Prices are integer cents](prices-are-integer-cents.md) — Prices are stored as integer cents; never floats.\n"
        );
        let after: HashMap<PathBuf, String> = edits.iter().map(|e| (e.path.clone(), e.content.clone())).collect();
        assert!(
            to_auto_memory(&m(), dir, |p| after.get(p).cloned()).is_empty(),
            "a second promote writes nothing"
        );
    }

    #[test]
    fn a_claude_md_gets_one_bullet_line() {
        let p = Path::new("/p/CLAUDE.md");
        let edits = to_claude_md(&m(), p, |_| Some("# Project\nrules".into()));
        assert_eq!(
            edits[0].content,
            "# Project\nrules\n- Prices are stored as integer cents; never floats.\n"
        );
        let again = edits[0].content.clone();
        assert!(to_claude_md(&m(), p, |_| Some(again.clone())).is_empty());
    }
}
