//! What one batch of tool calls shows, deterministically: the entities it touches (files,
//! symbols, commands, error signatures, concepts) and the relations between them that the calls
//! themselves are evidence of. Pure: the store adds the evidence (the batch's observations) and the
//! session history that `fixes` needs (see [`fixes`]).

use std::collections::BTreeSet;

use serde_json::Value;

use super::names::{command_name, error_signature, imports_in, is_check, relative_path, symbols_in};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntityKind {
    File,
    Symbol,
    Concept,
    Command,
    Error,
    Dependency,
    Decision,
}

impl EntityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::File => "file",
            EntityKind::Symbol => "symbol",
            EntityKind::Concept => "concept",
            EntityKind::Command => "command",
            EntityKind::Error => "error",
            EntityKind::Dependency => "dependency",
            EntityKind::Decision => "decision",
        }
    }
}

/// An entity by kind and canonical name (a file relative to the project root when it is inside
/// it), with the other names it goes by (the absolute path).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entity {
    pub kind: EntityKind,
    pub name: String,
    pub aliases: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelationKind {
    ModifiedWith,
    Fixes,
    FailsWith,
    Defines,
    Tests,
    DependsOn,
    Mentions,
    Decided,
}

impl RelationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::ModifiedWith => "modified_with",
            RelationKind::Fixes => "fixes",
            RelationKind::FailsWith => "fails_with",
            RelationKind::Defines => "defines",
            RelationKind::Tests => "tests",
            RelationKind::DependsOn => "depends_on",
            RelationKind::Mentions => "mentions",
            RelationKind::Decided => "decided",
        }
    }
}

/// `src —kind→ dst`, both by (kind, canonical name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relation {
    pub src: (EntityKind, String),
    pub dst: (EntityKind, String),
    pub kind: RelationKind,
}

/// One stored tool call, as the graph reads it.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: i64,
    pub tool_name: String,
    pub input: Value,
    pub response: String,
    pub is_error: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
}

impl Facts {
    fn entity(&mut self, kind: EntityKind, name: &str, alias: Option<&str>) {
        match self.entities.iter_mut().find(|e| e.kind == kind && e.name == name) {
            Some(e) => {
                if let Some(a) = alias.filter(|a| *a != name && !e.aliases.iter().any(|x| x == a)) {
                    e.aliases.push(a.to_string());
                }
            }
            None => self.entities.push(Entity {
                kind,
                name: name.to_string(),
                aliases: alias.filter(|a| *a != name).map(String::from).into_iter().collect(),
            }),
        }
    }

    fn relate(&mut self, src: (EntityKind, &str), dst: (EntityKind, &str), kind: RelationKind) {
        let r = Relation {
            src: (src.0, src.1.to_string()),
            dst: (dst.0, dst.1.to_string()),
            kind,
        };
        if r.src != r.dst && !self.relations.contains(&r) {
            self.relations.push(r);
        }
    }
}

/// The longest decision name: a decision is named by its observation's title.
const DECISION_NAME_MAX: usize = 120;

/// `decided`: a decision observation (by its title) → the files it is about — those it lists as
/// modified, else those it read. Its only evidence is that observation.
pub fn decided(title: &str, modified: &[String], read: &[String], root: Option<&str>) -> Facts {
    let mut f = Facts::default();
    let name: String = crate::text::sink::inline(title).chars().take(DECISION_NAME_MAX).collect();
    let files = if modified.is_empty() { read } else { modified };
    if name.is_empty() || files.is_empty() {
        return f;
    }
    f.entity(EntityKind::Decision, &name, None);
    for path in files {
        let rel = relative_path(path, root);
        f.entity(EntityKind::File, &rel, Some(path));
        f.relate((EntityKind::Decision, &name), (EntityKind::File, &rel), RelationKind::Decided);
    }
    f
}

/// The relations an observer proposed (`<from> <kind> <to>` lines) that the batch supports: both
/// ends are entities its calls show, of the kinds the relation joins (`fixes`: file → command,
/// `modified_with`: file → file, `depends_on`: file → dependency, `defines`/`tests`: file →
/// symbol, `fails_with`: command → error). Anything else is dropped.
pub fn proposed(facts: &Facts, lines: &[String], root: Option<&str>) -> Vec<Relation> {
    use EntityKind::*;
    use RelationKind::*;
    let kinds = [Fixes, ModifiedWith, DependsOn, Defines, Tests, FailsWith];
    let find = |name: &str| -> Option<(EntityKind, String)> {
        let name = name.trim().trim_matches('`');
        let rel = relative_path(name, root);
        let cmd = command_name(name);
        facts
            .entities
            .iter()
            .find(|e| {
                e.name == name
                    || e.name == rel
                    || e.aliases.iter().any(|a| a == name)
                    || (e.kind == Command && cmd.as_deref() == Some(e.name.as_str()))
            })
            .map(|e| (e.kind, e.name.clone()))
    };
    let mut out = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((i, kind)) = words
            .iter()
            .enumerate()
            .find_map(|(i, w)| kinds.iter().find(|k| k.as_str() == *w).map(|k| (i, *k)))
        else {
            continue;
        };
        let (Some(src), Some(dst)) = (find(&words[..i].join(" ")), find(&words[i + 1..].join(" "))) else {
            continue;
        };
        let fits = matches!(
            (kind, src.0, dst.0),
            (Fixes, File, Command)
                | (ModifiedWith, File, File)
                | (DependsOn, File, Dependency)
                | (Defines | Tests, File, Symbol)
                | (FailsWith, Command, Error)
        );
        let r = Relation { src, dst, kind };
        if fits && r.src != r.dst && !facts.relations.contains(&r) && !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// `mentions` are drawn for at most this many concepts of a batch, and only when the batch edited
/// at most this many files.
const MENTION_CONCEPTS_MAX: usize = 3;
const MENTION_FILES_MAX: usize = 3;

/// Tools that change a file, and the input key naming it.
pub fn edited_file(call: &Call) -> Option<&str> {
    match call.tool_name.as_str() {
        "Edit" | "Write" | "MultiEdit" => call.input["file_path"].as_str(),
        "NotebookEdit" => call.input["notebook_path"].as_str(),
        _ => None,
    }
}

/// The text an edit wrote (new strings of an Edit or MultiEdit, the content of a Write).
fn written_text(call: &Call) -> String {
    let i = &call.input;
    let mut out = String::new();
    for key in ["content", "new_string", "new_source"] {
        if let Some(s) = i[key].as_str() {
            out.push_str(s);
            out.push('\n');
        }
    }
    for e in i["edits"].as_array().into_iter().flatten() {
        if let Some(s) = e["new_string"].as_str() {
            out.push_str(s);
            out.push('\n');
        }
    }
    out
}

fn is_test_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    p.starts_with("tests/")
        || p.contains("/tests/")
        || p.contains("/test/")
        || p.contains("_test.")
        || p.contains(".test.")
        || p.contains(".spec.")
        || p.rsplit('/').next().is_some_and(|f| f.starts_with("test_"))
}

/// A symbol's name qualified by its module, the way its language writes it: `cart::total` for
/// `src/cart.rs`, `cart.total` for `app/cart.py` or `src/cart.ts` (`mod.rs`, `index.*` and
/// `__init__.py` take their folder's name). An alias: the node stays the bare name.
pub fn qualified(rel: &str, ext: &str, symbol: &str) -> Option<String> {
    let mut parts = rel.rsplit('/');
    let stem = parts.next()?.rsplit_once('.').map_or("", |(s, _)| s);
    let module = match stem {
        "mod" | "index" | "__init__" | "lib" | "main" => parts.next()?,
        s => s,
    };
    if module.is_empty() || module == symbol {
        return None;
    }
    let sep = if ext == "rs" { "::" } else { "." };
    Some(format!("{module}{sep}{symbol}"))
}

/// The facts of one batch: `root` is the project root (files under it are named relative to it),
/// `concepts` the concepts of the observations the batch made.
pub fn extract(calls: &[Call], root: Option<&str>, concepts: &[String]) -> Facts {
    let mut f = Facts::default();
    let mut modified: BTreeSet<String> = BTreeSet::new();
    for call in calls {
        if let Some(path) = edited_file(call) {
            let rel = relative_path(path, root);
            f.entity(EntityKind::File, &rel, Some(path));
            modified.insert(rel.clone());
            let written = written_text(call);
            for dep in imports_in(&written) {
                f.entity(EntityKind::Dependency, &dep, None);
                f.relate((EntityKind::File, &rel), (EntityKind::Dependency, &dep), RelationKind::DependsOn);
            }
            let ext = rel.rsplit_once('.').map_or("", |(_, e)| e).to_ascii_lowercase();
            for (symbol, test) in symbols_in(&written, &ext) {
                f.entity(EntityKind::Symbol, &symbol, None);
                if let Some(q) = qualified(&rel, &ext, &symbol) {
                    f.entity(EntityKind::Symbol, &symbol, Some(&q));
                }
                let kind = if test || is_test_path(&rel) {
                    RelationKind::Tests
                } else {
                    RelationKind::Defines
                };
                f.relate((EntityKind::File, &rel), (EntityKind::Symbol, &symbol), kind);
            }
        } else if call.tool_name == "Bash" {
            let Some(cmd) = call.input["command"].as_str().and_then(command_name) else {
                continue;
            };
            f.entity(EntityKind::Command, &cmd, None);
            if call.is_error
                && let Some(sig) = error_signature(&call.response)
            {
                f.entity(EntityKind::Error, &sig, None);
                f.relate((EntityKind::Command, &cmd), (EntityKind::Error, &sig), RelationKind::FailsWith);
            }
        }
    }
    let files: Vec<String> = modified.into_iter().collect();
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            f.relate((EntityKind::File, a), (EntityKind::File, b), RelationKind::ModifiedWith);
        }
    }
    // A concept says what a batch was about only when the batch was about a few files: a sweeping
    // edit would tie every concept to every file (most of the graph's rows, little of its use).
    if files.len() > MENTION_FILES_MAX {
        return f;
    }
    for c in concepts.iter().take(MENTION_CONCEPTS_MAX) {
        let c = c.trim().to_lowercase();
        if c.is_empty() || files.is_empty() {
            continue;
        }
        f.entity(EntityKind::Concept, &c, None);
        for file in &files {
            f.relate((EntityKind::Concept, &c), (EntityKind::File, file), RelationKind::Mentions);
        }
    }
    f
}

/// `fixes`: a command that failed earlier in the session and passes in this batch, and the files
/// edited between the failure and the pass. `history` is the session's calls before this batch's
/// passing run, oldest first.
pub fn fixes(history: &[Call], passing: &Call, root: Option<&str>) -> Vec<Relation> {
    let Some(cmd) = passing.input["command"].as_str().and_then(command_name).filter(|c| is_check(c)) else {
        return Vec::new();
    };
    let failed_at = history.iter().rposition(|c| {
        c.tool_name == "Bash" && c.is_error && c.input["command"].as_str().and_then(command_name).as_deref() == Some(cmd.as_str())
    });
    let Some(start) = failed_at else { return Vec::new() };
    let mut files: BTreeSet<String> = BTreeSet::new();
    for c in &history[start + 1..] {
        if let Some(p) = edited_file(c) {
            files.insert(relative_path(p, root));
        }
    }
    files
        .into_iter()
        .map(|file| Relation {
            src: (EntityKind::File, file),
            dst: (EntityKind::Command, cmd.clone()),
            kind: RelationKind::Fixes,
        })
        .collect()
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
