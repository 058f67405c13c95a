//! File evidence (`docs/spec/pipeline.md` §14 item 1): which files a batch of tool
//! events actually read or modified, taken from the tool inputs rather than
//! from what an observer claims, plus the lexical path normalisation shared by
//! the extractive observer.
//!
//! Pure and total: no filesystem access, no panics on any input.

use std::collections::HashSet;

use serde_json::Value;

use super::tool_names::as_claude_tool;
use super::types::{ObservationDraft, ToolEvent};

pub(crate) mod path;
pub(crate) use path::normalize;

/// Tools whose successful calls are read evidence (by their Claude Code name, `tool_names`).
pub(crate) const READ_TOOLS: &[&str] = &["Read", "NotebookRead"];
/// Tools whose successful calls are write evidence (`apply_patch` via its patch text).
pub(crate) const WRITE_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch"];
/// Path fields read from a tool input (and from each `edits[]` item of write tools;
/// `absolute_path`: Gemini CLI's `read_file` before it took `file_path`).
const PATH_FIELDS: &[&str] = &["file_path", "filePath", "notebook_path", "notebookPath", "absolute_path"];

/// Normalised, de-duplicated file evidence of one batch, in event order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Evidence {
    pub read: Vec<String>,
    pub modified: Vec<String>,
}

/// What one patch header says happens to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchOp {
    /// `*** Add File:` or a unified diff from `/dev/null`.
    Add,
    /// Any other header (update, delete, move, ordinary diff).
    Other,
}

/// Read and write evidence of `events` (failed events excluded: a failed
/// write changed nothing), normalised against each event's cwd and
/// `project_root`.
pub fn collect<'a>(events: impl IntoIterator<Item = &'a ToolEvent>, project_root: &str) -> Evidence {
    let mut ev = Evidence::default();
    let (mut seen_read, mut seen_mod) = (HashSet::new(), HashSet::new());
    for event in events.into_iter().filter(|e| !e.is_error) {
        let name = as_claude_tool(&event.tool_name);
        let (list, seen) = if READ_TOOLS.contains(&name) {
            (&mut ev.read, &mut seen_read)
        } else if WRITE_TOOLS.contains(&name) {
            (&mut ev.modified, &mut seen_mod)
        } else {
            continue;
        };
        for path in event_paths(event, project_root) {
            push_unique(list, seen, path);
        }
    }
    ev
}

/// Apply §14 item 1 to an observer's draft: `files_modified` becomes the write
/// evidence alone (the model's list is discarded, even when evidence is
/// empty); `files_read` becomes read evidence followed by the model's claims
/// (relative claims resolved against `project_root`), stably de-duplicated.
pub fn correct(draft: &mut ObservationDraft, evidence: &Evidence, project_root: &str) {
    let mut seen = HashSet::new();
    let mut modified = Vec::new();
    for path in &evidence.modified {
        push_unique(&mut modified, &mut seen, path.clone());
    }
    seen.clear();
    let mut read = Vec::new();
    for path in &evidence.read {
        push_unique(&mut read, &mut seen, path.clone());
    }
    for claim in &draft.files_read {
        if let Some(path) = normalize(claim, project_root, project_root) {
            push_unique(&mut read, &mut seen, path);
        }
    }
    draft.files_modified = modified;
    draft.files_read = read;
}

/// Normalised file paths named by one read- or write-tool event (any other
/// tool yields nothing), whether or not the call succeeded, in field order.
pub(crate) fn event_paths(event: &ToolEvent, project_root: &str) -> Vec<String> {
    let name = as_claude_tool(&event.tool_name);
    let input = &event.tool_input;
    let mut raw = Vec::new();
    if name == "apply_patch" {
        for text in patch_texts(input) {
            raw.extend(patch_headers(&text).into_iter().map(|(_, p)| p));
        }
    } else if READ_TOOLS.contains(&name) {
        // Gemini CLI's `read_file` has also named its file `path`.
        path_fields(input, event.tool_name == "read_file", &mut raw);
    } else if WRITE_TOOLS.contains(&name) {
        path_fields(input, true, &mut raw);
        if let Some(edits) = input.get("edits").and_then(Value::as_array) {
            for item in edits {
                path_fields(item, true, &mut raw);
            }
        }
    }
    let base = event_base(event, project_root);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in raw {
        if let Some(n) = normalize(&p, base, project_root) {
            push_unique(&mut out, &mut seen, n);
        }
    }
    out
}

/// Directory that relative paths of `event` are resolved against: its cwd,
/// else the project root.
pub(crate) fn event_base<'a>(event: &'a ToolEvent, project_root: &'a str) -> &'a str {
    match event.cwd.as_deref() {
        Some(cwd) if !cwd.trim().is_empty() => cwd,
        _ => project_root,
    }
}

/// Patch texts of an `apply_patch` input: a string input, its `patch` /
/// `input` fields, and each `edits[]` item (a string or such an object).
pub(crate) fn patch_texts(input: &Value) -> Vec<String> {
    fn fields(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Object(map) => {
                for key in ["patch", "input"] {
                    if let Some(s) = map.get(key).and_then(Value::as_str) {
                        out.push(s.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    fields(input, &mut out);
    if let Some(edits) = input.get("edits").and_then(Value::as_array) {
        for item in edits {
            fields(item, &mut out);
        }
    }
    out
}

/// File headers of a patch in order: Codex `*** Update/Add/Delete File:` and
/// `*** Move to:` lines, and unified-diff `--- ` / `+++ ` pairs (a `--- `
/// line counts only when the next line starts with `+++ `, so removed or
/// added hunk lines are never taken for headers). Paths are raw (not
/// normalised); `a/`/`b/` prefixes of diff headers are stripped, `/dev/null`
/// is ignored and everything from a tab on is cut.
pub(crate) fn patch_headers(text: &str) -> Vec<(PatchOp, String)> {
    const CODEX: &[(&str, PatchOp)] = &[
        ("*** Update File: ", PatchOp::Other),
        ("*** Add File: ", PatchOp::Add),
        ("*** Delete File: ", PatchOp::Other),
        ("*** Move to: ", PatchOp::Other),
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((rest, op)) = CODEX.iter().find_map(|(prefix, op)| line.strip_prefix(prefix).map(|r| (r, *op))) {
            if let Some(p) = header_path(rest, false) {
                out.push((op, p));
            }
        } else if let (Some(old), Some(new)) = (line.strip_prefix("--- "), lines.get(i + 1).and_then(|l| l.strip_prefix("+++ "))) {
            let (old, new) = (header_path(old, true), header_path(new, true));
            let op = if old.is_none() { PatchOp::Add } else { PatchOp::Other };
            out.extend(old.into_iter().chain(new).map(|p| (op, p)));
            i += 1;
        }
        i += 1;
    }
    out
}

/// One header path: cut at a tab, trimmed, `/dev/null` and empty ignored,
/// `a/` / `b/` stripped for unified-diff headers.
fn header_path(rest: &str, diff: bool) -> Option<String> {
    let path = rest.split('\t').next().unwrap_or_default().trim();
    if path.is_empty() || path == "/dev/null" {
        return None;
    }
    let path = if diff {
        path.strip_prefix("a/").or_else(|| path.strip_prefix("b/")).unwrap_or(path)
    } else {
        path
    };
    (!path.is_empty()).then(|| path.to_owned())
}

/// Push the string path fields of `v` (plus `path` when `with_path`, plus
/// every string of `filePaths[]`) onto `out`.
fn path_fields(v: &Value, with_path: bool, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else { return };
    let extra: &[&str] = if with_path { &["path"] } else { &[] };
    for key in PATH_FIELDS.iter().chain(extra) {
        if let Some(s) = map.get(*key).and_then(Value::as_str) {
            out.push(s.to_owned());
        }
    }
    if let Some(list) = map.get("filePaths").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
    }
}

fn push_unique(list: &mut Vec<String>, seen: &mut HashSet<String>, path: String) {
    if seen.insert(path.clone()) {
        list.push(path);
    }
}

#[cfg(test)]
mod tests;
