//! Text helpers of the extractive observer (`docs/spec/pipeline.md` §16): the
//! `<arg>` shown for a tool call, MCP display names, error and output lines,
//! the per-event facts of write tools, the first paragraph of a message, and
//! char-based truncation with a trailing `…`.

use serde_json::Value;

use crate::observer::evidence::{self, PatchOp, READ_TOOLS, WRITE_TOOLS};
use crate::observer::tool_names::as_claude_tool;
use crate::observer::types::ToolEvent;

/// What a fetch is known by: Claude Code's `url`, else Gemini CLI's `prompt` (its URLs are in it).
const FETCH_FIELDS: &[&str] = &["url", "prompt"];

/// Shell tools by their Claude Code name (`tool_names`; group X, `<arg>` from `description` /
/// `command`).
const SHELL: &[&str] = &["Bash", "PowerShell", "BashOutput"];

/// `s` cut to at most `max` chars (Unicode scalar values); when cut, the last
/// kept char is `…`.
pub(super) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    if max > 0 {
        out.push('…');
    }
    out
}

/// First non-blank line of `s`, trimmed.
pub(super) fn first_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).find(|l| !l.is_empty())
}

/// The first of `keys` holding a string in object `v`.
pub(super) fn str_field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// Tool name for display: `mcp__<server>__<tool>` → `<server>/<tool>`.
pub(super) fn display_name(name: &str) -> String {
    match name.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
            format!("{server}/{tool}")
        }
        _ => name.to_owned(),
    }
}

/// `<tool> <arg>` (just `<tool>` when the arg is empty).
pub(super) fn join_tool(e: &ToolEvent, root: &str) -> String {
    let tool = display_name(&e.tool_name);
    match arg(e, root) {
        a if a.is_empty() => tool,
        a => format!("{tool} {a}"),
    }
}

/// What group X shows for a call: the shell `<arg>`, or `<tool> <arg>` for a
/// tool that is not a shell.
pub(super) fn command_label(e: &ToolEvent, root: &str) -> String {
    if SHELL.contains(&as_claude_tool(&e.tool_name)) {
        let a = arg(e, root);
        if !a.is_empty() {
            return a;
        }
    }
    join_tool(e, root)
}

/// The `<arg>` of a tool call (§16).
pub(super) fn arg(e: &ToolEvent, root: &str) -> String {
    let input = &e.tool_input;
    let name = as_claude_tool(&e.tool_name);
    let text = |keys: &[&str]| str_field(input, keys).unwrap_or_default().trim().to_owned();
    if SHELL.contains(&name)
        && let Some(a) = shell_arg(input)
    {
        return a;
    }
    match name {
        "Grep" => {
            let path = path_arg(e, root).unwrap_or_else(|| ".".to_owned());
            format!("\"{}\" in {path}", text(&["pattern"]))
        }
        "Glob" => text(&["pattern"]),
        "WebFetch" => text(FETCH_FIELDS),
        "WebSearch" => text(&["query"]),
        "LS" => path_arg(e, root).unwrap_or_default(),
        "apply_patch" => evidence::event_paths(e, root).join(", "),
        n if READ_TOOLS.contains(&n) || WRITE_TOOLS.contains(&n) => evidence::event_paths(e, root).into_iter().next().unwrap_or_default(),
        _ => generic_arg(input),
    }
}

/// Search term for an R title `Searched for "<term>"` (None for file reads).
pub(super) fn search_term(e: &ToolEvent, root: &str) -> Option<String> {
    let input = &e.tool_input;
    let term = match as_claude_tool(&e.tool_name) {
        "Grep" | "Glob" => str_field(input, &["pattern"]).map(str::to_owned),
        "WebSearch" => str_field(input, &["query"]).map(str::to_owned),
        "WebFetch" => str_field(input, FETCH_FIELDS).map(str::to_owned),
        "LS" => path_arg(e, root),
        _ => None,
    }?;
    let term = term.trim();
    (!term.is_empty()).then(|| term.to_owned())
}

/// The whole error text of a failed call (its `error`, else the response text).
pub(super) fn error_text(e: &ToolEvent) -> String {
    let resp = &e.tool_response;
    match resp.get("error") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => match resp {
            Value::String(s) => s.clone(),
            _ => output_text(resp),
        },
        Some(other) => other.to_string(),
    }
}

/// Whether a failed call was interrupted (`is_interrupt`).
pub(super) fn is_interrupted(e: &ToolEvent) -> bool {
    e.tool_response.get("is_interrupt").and_then(Value::as_bool) == Some(true)
}

/// stdout and stderr of a shell response (or its text), joined.
pub(crate) fn output_text(resp: &Value) -> String {
    let parts: Vec<&str> = ["stdout", "stderr"].iter().filter_map(|k| str_field(resp, &[k])).collect();
    if !parts.is_empty() {
        return parts.join("\n");
    }
    result_text(resp)
}

/// The text of a non-shell response: a string, content blocks, or the first non-blank of an
/// object's `output` / `result` / `content` / `text`.
fn result_text(resp: &Value) -> String {
    match resp {
        Value::String(s) => s.clone(),
        Value::Array(_) => blocks_text(resp),
        Value::Object(map) => ["output", "result", "content", "text"]
            .iter()
            .filter_map(|k| map.get(*k))
            .map(blocks_text)
            .find(|t| !t.trim().is_empty())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The file text a `Read` returned (`file.content`, or the response text).
pub(super) fn read_content(e: &ToolEvent) -> String {
    let resp = &e.tool_response;
    match resp.get("file").and_then(|f| f.get("content")).and_then(Value::as_str) {
        Some(c) => c.to_owned(),
        None => output_text(resp),
    }
}

/// The old and new text of a write call (an edit's strings, a whole file's content).
pub(crate) fn change_text(input: &Value) -> (String, String) {
    let s = |v: &Value, keys: &[&str]| str_field(v, keys).unwrap_or("").to_owned();
    match input.get("edits").and_then(Value::as_array) {
        Some(edits) => {
            let old = edits
                .iter()
                .map(|e| s(e, &["old_string", "oldString"]))
                .collect::<Vec<_>>()
                .join("\n");
            let new = edits
                .iter()
                .map(|e| s(e, &["new_string", "newString"]))
                .collect::<Vec<_>>()
                .join("\n");
            (old, new)
        }
        None => (
            s(input, &["old_string", "oldString"]),
            s(input, &["new_string", "newString", "content", "new_source"]),
        ),
    }
}

/// The line a command's output is known by: its test totals, else the last line that is not
/// noise — of stdout, else of stderr, else of the result text.
pub(super) fn result_line(resp: &Value) -> Option<String> {
    for key in ["stdout", "stderr"] {
        if let Some(l) = str_field(resp, &[key]).and_then(super::salient::result_line) {
            return Some(l);
        }
    }
    super::salient::result_line(&result_text(resp))
}

/// Text of a string, or of an array of strings / `{"text": …}` content blocks.
fn blocks_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().or_else(|| str_field(i, &["text"])))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Shell `<arg>`: `description`, else the first line of `command` / `cmd`
/// (a string or an argv array), ≤ 80 chars.
fn shell_arg(input: &Value) -> Option<String> {
    if let Some(d) = str_field(input, &["description"]).and_then(first_line) {
        return Some(cut(d, 80));
    }
    let command = ["command", "cmd"].iter().find_map(|k| match input.get(*k)? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let argv: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            Some(argv.join(" "))
        }
        _ => None,
    })?;
    first_line(&command).map(|l| cut(l, 80))
}

/// `path` field of a search tool, normalised like evidence paths.
fn path_arg(e: &ToolEvent, root: &str) -> Option<String> {
    let p = str_field(&e.tool_input, &["path", "dir_path"])?;
    evidence::normalize(p, evidence::event_base(e, root), root)
}

/// Other tools: first line of the first non-blank string field (≤ 80), else
/// the compact input JSON (≤ 60); empty for a null or empty input.
fn generic_arg(input: &Value) -> String {
    match input {
        Value::Null => String::new(),
        Value::String(s) => first_line(s).map(|l| cut(l, 80)).unwrap_or_default(),
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Object(map) => match map.values().find_map(|v| v.as_str().and_then(first_line)) {
            Some(l) => cut(l, 80),
            None => cut(&input.to_string(), 60),
        },
        _ => cut(&input.to_string(), 60),
    }
}

/// Fact of one write event and whether the event created its file(s).
pub(super) fn write_fact(e: &ToolEvent, root: &str) -> (String, bool) {
    let input = &e.tool_input;
    let paths = evidence::event_paths(e, root);
    let p = paths.first().map_or("?", String::as_str);
    // Facts name the host's own tool; the arm is the Claude Code tool it stands for.
    let name = e.tool_name.as_str();
    match as_claude_tool(name) {
        "Edit" => {
            let old = line_count(str_field(input, &["old_string", "oldString"]).unwrap_or(""));
            let new = line_count(str_field(input, &["new_string", "newString"]).unwrap_or(""));
            let fact = format!("{name} {p}: replaced {old} line(s) with {new} line(s)");
            (fact, false)
        }
        "MultiEdit" => {
            let k = input.get("edits").and_then(|v| v.as_array()).map_or(0, Vec::len);
            (format!("MultiEdit {p}: {k} edits"), false)
        }
        "NotebookEdit" => {
            let mode = str_field(input, &["edit_mode"]).filter(|m| !m.is_empty()).unwrap_or("edit");
            let cell = match input.get("cell_id") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => "?".to_owned(),
            };
            (format!("NotebookEdit {p}: {mode} cell {cell}"), false)
        }
        "apply_patch" => {
            let headers: Vec<(PatchOp, String)> = evidence::patch_texts(input)
                .iter()
                .flat_map(|t| evidence::patch_headers(t))
                .collect();
            let created = !headers.is_empty() && headers.iter().all(|(op, _)| *op == PatchOp::Add);
            let mut fact = format!("apply_patch: {} file(s)", paths.len());
            if !paths.is_empty() {
                fact = format!("{fact}: {}", paths.join(", "));
            }
            (fact, created)
        }
        _ => {
            // Write, write_file: created iff the response says so.
            let created = e.tool_response.get("type").and_then(|v| v.as_str()) == Some("create");
            let verb = if created { "created" } else { "overwrote" };
            let lines = str_field(input, &["content"])
                .map(|c| format!(" ({} lines)", line_count(c)))
                .unwrap_or_default();
            (format!("{} {p}: {verb}{lines}", display_name(name)), created)
        }
    }
}

/// Number of lines of a text (`""` → 0, a trailing newline adds none).
fn line_count(s: &str) -> usize {
    s.lines().count()
}

/// First paragraph (up to the first blank line) of `text`, trimmed.
pub(super) fn first_paragraph(text: &str) -> Option<String> {
    let para: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let joined = para.join("\n");
    let trimmed = joined.trim();
    first_line(trimmed).map(|_| trimmed.to_owned())
}
