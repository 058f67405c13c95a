//! Whether what memd injected reached the agent and was used (issue 53), read from the session's
//! transcript (Claude Code's JSONL: hook context is an `attachment` of type
//! `hook_additional_context` with its hook event; tool calls are `tool_use` blocks of assistant
//! messages).
//!
//! An item is *delivered* when a memd-fenced hook context of its source's event (SessionStart for
//! the index, UserPromptSubmit for per-prompt context, PreToolUse for file context and warnings)
//! carries it — a record by its id at the start of a row, a warning by its label and what it is
//! about (the command's program, the file). It is *used* when, after that, the agent fetched it by
//! id through one of memd's MCP tools (an `id`/`ids` argument naming it), or named one of its files
//! in a tool call (an edit of the file a warning said fixed the failure, a read of the file a
//! record says was changed). Pure: the worker reads the file, the store records the marks.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::injected::{Source, UseItem, UseMark};
use crate::protocol::fence::FENCE_TAG;

/// The warning's label (`warning.rs`), what marks an action item in a hook context.
const ACTION_LABEL: &str = "memd action memory";

/// A transcript beyond this is read up to it (the check is a figure, not a record).
pub const TRANSCRIPT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The parts of a transcript the check reads, in order.
#[derive(Debug, Default)]
pub struct Transcript {
    /// memd's hook contexts: (position, hook event or "" when unknown, text).
    contexts: Vec<(usize, String, String)>,
    /// Tool calls: (position, tool name, input).
    calls: Vec<(usize, String, Value)>,
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Reads the JSONL text of a transcript (unparsable lines are skipped).
pub fn parse(text: &str) -> Transcript {
    let mut t = Transcript::default();
    for (pos, line) in text.lines().enumerate() {
        // Only hook contexts and tool calls are read (a tool result names `tool_use_id`: skipped).
        if !line.contains(FENCE_TAG) && !line.contains("\"type\":\"tool_use\"") && !line.contains("\"type\": \"tool_use\"") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        if v["type"] == "attachment" {
            let a = &v["attachment"];
            let mut texts = Vec::new();
            strings(&a["content"], &mut texts);
            let text = texts.join("\n");
            if text.contains(FENCE_TAG) {
                t.contexts
                    .push((pos, a["hookEvent"].as_str().unwrap_or_default().to_string(), text));
            }
            continue;
        }
        if v["type"] == "user" {
            // Older hosts put hook context into the user turn as text — its text, never a tool
            // result in it: a tool's output (a file read, a test log) is the repository's, and
            // a forged fence there proves nothing.
            let content = &v["message"]["content"];
            let mut texts = Vec::new();
            match content.as_array() {
                Some(blocks) => blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .for_each(|b| strings(&b["text"], &mut texts)),
                None => strings(content, &mut texts),
            }
            let text = texts.join("\n");
            if text.contains(FENCE_TAG) {
                t.contexts.push((pos, String::new(), text));
            }
        }
        if let Some(blocks) = v["message"]["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                t.calls
                    .push((pos, b["name"].as_str().unwrap_or_default().to_string(), b["input"].clone()));
            }
        }
    }
    t
}

fn event_of(source: Source) -> &'static str {
    match source {
        Source::Index => "SessionStart",
        Source::Prompt => "UserPromptSubmit",
        Source::File | Source::Action => "PreToolUse",
    }
}

/// A row of a context starts with its record's id (`412 4:05p ● …`, `**412** …`, `| 412 | …`).
static ROW_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^[\s|*#]*(\d+)\b").expect("a valid pattern"));

fn names_id(text: &str, id: i64) -> bool {
    let id = id.to_string();
    ROW_ID.captures_iter(text).any(|c| &c[1] == id.as_str())
}

/// What a warning item is about, as its text shows it: the command's program (and subcommand),
/// or the file.
fn warning_subject(item: &UseItem) -> Option<String> {
    let it = item.item.as_deref()?;
    if let Some(key) = it.strip_prefix("command:") {
        return Some(key.split(' ').take(2).collect::<Vec<_>>().join(" "));
    }
    it.strip_prefix("file:").map(str::to_string)
}

/// Where the item reached the agent, if it did.
fn delivered_at(t: &Transcript, item: &UseItem) -> Option<usize> {
    let event = event_of(item.source);
    t.contexts
        .iter()
        .filter(|(_, e, _)| e.is_empty() || e == event)
        .find(|(_, _, text)| match (item.source, item.observation_id) {
            (Source::Action, _) => text.contains(ACTION_LABEL) && warning_subject(item).is_some_and(|s| text.contains(s.as_str())),
            // Per-prompt context shows records by title, not id: its event's context is enough.
            (Source::Prompt, _) => true,
            (_, Some(id)) => names_id(text, id),
            (_, None) => false,
        })
        .map(|(pos, _, _)| *pos)
}

fn names_file(input: &Value, files: &[String]) -> bool {
    let mut texts = Vec::new();
    strings(input, &mut texts);
    files.iter().filter(|f| f.len() >= 3).any(|f| {
        texts
            .iter()
            .any(|t| t == f || t.ends_with(&format!("/{f}")) || t.contains(&format!(" {f}")))
    })
}

/// An id argument's value names `id`: the number, or a string of ids (`"41"`, `"#41"`, `"41, 42"`).
fn names_as_argument(v: &Value, id: i64) -> bool {
    match v {
        Value::Number(n) => n.as_i64() == Some(id),
        Value::String(s) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .any(|t| t.trim_start_matches('#') == id.to_string()),
        Value::Array(a) => a.iter().any(|x| names_as_argument(x, id)),
        _ => false,
    }
}

/// A memd MCP tool call whose `id`-like argument (`id`, `ids`, `observation_id`, …) names `id`;
/// a `limit` or `offset` of the same number is not a fetch.
fn fetched(name: &str, input: &Value, id: i64) -> bool {
    if !name.contains("memd") {
        return false;
    }
    input.as_object().is_some_and(|m| {
        m.iter()
            .filter(|(k, _)| {
                k.as_str() == "id"
                    || k.as_str() == "ids"
                    || k.ends_with("_id")
                    || k.ends_with("_ids")
                    || k.ends_with("Id")
                    || k.ends_with("Ids")
            })
            .any(|(_, v)| names_as_argument(v, id))
    })
}

/// The marks for `items` from `t`.
pub fn decide(t: &Transcript, items: &[UseItem]) -> Vec<UseMark> {
    items
        .iter()
        .map(|item| {
            let at = delivered_at(t, item);
            let used = at.is_some_and(|at| {
                t.calls.iter().filter(|(pos, _, _)| *pos > at).any(|(_, name, input)| {
                    item.observation_id.is_some_and(|id| fetched(name, input, id)) || names_file(input, &item.files)
                })
            });
            UseMark {
                injection_id: item.injection_id,
                delivered: at.is_some(),
                used,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "use_check_tests.rs"]
mod tests;
