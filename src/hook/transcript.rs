//! The transcript rule of docs/spec/hooks.md §3.5, used only when Stop carries no
//! `last_assistant_message`: the newest main-thread assistant text of the current turn, read
//! backwards from the end of the transcript (at most its last 16 MiB).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

const TAIL_MAX_BYTES: u64 = 16 * 1024 * 1024;

static REMINDER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?s)<system-reminder(?:\s[^>]*)?>.*?</system-reminder>").ok());
static BLANK_RUNS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\n{3,}").ok());

fn read_tail(path: &Path) -> Option<Vec<u8>> {
    let mut f = File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let start = meta.len().saturating_sub(TAIL_MAX_BYTES);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    Some(buf)
}

fn is_typed_prompt(record: &Value) -> bool {
    if record.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return false;
    }
    match record.pointer("/message/content") {
        Some(Value::Array(blocks)) => !blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")),
        _ => true,
    }
}

fn text_of(record: &Value) -> String {
    match record.pointer("/message/content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn clean(text: &str) -> String {
    let text = match REMINDER.as_ref() {
        Some(re) => re.replace_all(text, "").into_owned(),
        None => text.to_string(),
    };
    let text = match BLANK_RUNS.as_ref() {
        Some(re) => re.replace_all(&text, "\n\n").into_owned(),
        None => text,
    };
    text.trim().to_string()
}

pub fn last_assistant_message(path: &Path) -> Option<String> {
    let tail = read_tail(path)?;
    for line in tail.split(|b| *b == b'\n').rev() {
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if record.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let kind = record
            .get("type")
            .and_then(Value::as_str)
            .or_else(|| record.pointer("/message/role").and_then(Value::as_str));
        match kind {
            Some("user") if is_typed_prompt(&record) => return None,
            Some("assistant") => {
                let text = clean(&text_of(&record));
                if !text.is_empty() {
                    return Some(text);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_assistant_text_of_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"old prompt"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"old answer"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":"new prompt"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done <system-reminder a=1>x\ny</system-reminder>\n\n\n\nok"}]}}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"content":"side"}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"r"}]}}"#,
            "garbage",
        ];
        std::fs::write(&p, lines.join("\n")).unwrap();
        assert_eq!(last_assistant_message(&p).as_deref(), Some("done \n\nok"));
        std::fs::write(&p, lines[..3].join("\n")).unwrap();
        assert_eq!(last_assistant_message(&p), None);
    }
}
