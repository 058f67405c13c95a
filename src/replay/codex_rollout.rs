//! A Codex CLI rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, docs/spec/hosts.md §1) →
//! the same hook event stream a Claude Code transcript gives, so `memd replay` and `memd watch`
//! read both. Records are `{timestamp, type, payload}`: `session_meta` (id, cwd), `turn_context`
//! (cwd), `response_item` (`message` by role, `function_call` {name, arguments, call_id},
//! `function_call_output` {call_id, output}), `event_msg` (`task_complete` with
//! `last_agent_message`). Events carry `platform_source: codex`. Pure.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::ReplayError;
use super::event::{EventKind, HookEvent, Origin, SessionEvents};
use super::record;

/// Every JSON record of `path` when it is a Codex rollout (its first line is `session_meta`),
/// else None (a Claude Code transcript, read by [`super::transcript::read_records`]).
pub fn read_rollout(path: &std::path::Path) -> Result<Option<Vec<Value>>, ReplayError> {
    let read = |source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(file));
    let first: Option<Value> = match lines.next() {
        Some(l) => serde_json::from_str(&l.map_err(read)?).ok(),
        None => None,
    };
    let Some(first) = first.filter(|f| f["type"] == "session_meta") else {
        return Ok(None);
    };
    let mut out = vec![first];
    for l in lines {
        // A line being written (no newline yet, half a JSON object) is left for the next read.
        if let Ok(v) = serde_json::from_str::<Value>(&l.map_err(read)?) {
            out.push(v);
        }
    }
    Ok(Some(out))
}

/// Whether `records` are a Codex rollout (its first record is the session's metadata).
pub fn is_rollout(records: &[Value]) -> bool {
    records.first().is_some_and(|r| r["type"] == "session_meta")
}

/// The typed text of a user message (context blocks Codex adds, `<environment_context>` and the
/// like, are not the user's prompt).
fn user_text(p: &Value) -> Option<String> {
    if p["type"] != "message" || p["role"] != "user" {
        return None;
    }
    let text: String = p["content"]
        .as_array()?
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let t = text.trim();
    (!t.is_empty() && !t.starts_with('<')).then(|| t.to_string())
}

/// Codex's shell tools are Bash to memd's observer; their argument is `cmd` or `command`.
fn tool_of(name: &str, arguments: &str) -> (String, Value) {
    let args: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({"arguments": arguments}));
    match name {
        "exec_command" | "shell" | "shell_command" | "local_shell" => {
            let command = match (&args["cmd"], &args["command"]) {
                (Value::String(c), _) | (_, Value::String(c)) => c.clone(),
                (_, Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "),
                _ => String::new(),
            };
            ("Bash".into(), json!({"command": command}))
        }
        other => (other.to_string(), args),
    }
}

pub fn convert(records: &[Value], transcript_path: &str) -> SessionEvents {
    let meta = &records[0]["payload"];
    let session_id = meta["id"].as_str().or(meta["session_id"].as_str()).unwrap_or("").to_string();
    let mut cwd = meta["cwd"].as_str().unwrap_or("").to_string();
    let mut out = SessionEvents {
        session_id: session_id.clone(),
        transcript_path: transcript_path.to_string(),
        ..Default::default()
    };
    let mut at = 0i64;
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let push = |out: &mut SessionEvents, kind: EventKind, at: i64, cwd: &str, extra: Value| {
        let mut payload = json!({"session_id": session_id, "transcript_path": transcript_path, "cwd": cwd,
            "hook_event_name": kind.name(), "platform_source": "codex"});
        if let (Value::Object(p), Value::Object(e)) = (&mut payload, extra) {
            p.extend(e);
        }
        out.events.push(HookEvent {
            kind,
            origin: Origin::Main,
            at_ms: at,
            payload,
        });
    };
    push(
        &mut out,
        EventKind::SessionStart,
        record::timestamp_ms(&records[0]).unwrap_or(0),
        &cwd,
        json!({"source": "startup"}),
    );
    for r in records {
        if let Some(t) = record::timestamp_ms(r) {
            at = at.max(t);
        }
        let p = &r["payload"];
        match (r["type"].as_str(), p["type"].as_str()) {
            (Some("turn_context"), _) => {
                if let Some(c) = p["cwd"].as_str() {
                    cwd = c.to_string();
                }
            }
            (Some("response_item"), Some("message")) => {
                if let Some(prompt) = user_text(p) {
                    push(&mut out, EventKind::UserPromptSubmit, at, &cwd, json!({"prompt": prompt}));
                }
            }
            (Some("response_item"), Some("function_call")) => {
                let (name, input) = tool_of(p["name"].as_str().unwrap_or(""), p["arguments"].as_str().unwrap_or(""));
                calls.insert(p["call_id"].as_str().unwrap_or("").to_string(), (name, input));
            }
            (Some("response_item"), Some("function_call_output")) => {
                let id = p["call_id"].as_str().unwrap_or("");
                match calls.remove(id) {
                    Some((name, input)) => push(
                        &mut out,
                        EventKind::PostToolUse,
                        at,
                        &cwd,
                        json!({"tool_name": name, "tool_input": input, "tool_response": p["output"], "tool_use_id": id}),
                    ),
                    None => out.dropped_main.unmatched_results += 1,
                }
            }
            (Some("event_msg"), Some("task_complete")) => {
                push(
                    &mut out,
                    EventKind::Stop,
                    at,
                    &cwd,
                    json!({"last_assistant_message": p["last_agent_message"]}),
                );
            }
            _ => {}
        }
    }
    push(&mut out, EventKind::SessionEnd, at, &cwd, json!({"reason": "other"}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rollout Codex 0.171.0 wrote (trimmed to the records memd reads).
    const ROLLOUT: &str = include_str!("../../tests/fixtures/codex/rollout-probe.jsonl");

    #[test]
    fn a_rollout_becomes_prompt_tool_use_stop_and_end() {
        let records: Vec<Value> = ROLLOUT.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(is_rollout(&records));
        let s = convert(&records, "/r.jsonl");
        let kinds: Vec<EventKind> = s.events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::SessionStart,
                EventKind::UserPromptSubmit,
                EventKind::PostToolUse,
                EventKind::Stop,
                EventKind::SessionEnd
            ]
        );
        let tool = &s.events[2].payload;
        assert_eq!(tool["tool_name"], "Bash");
        assert_eq!(tool["tool_input"]["command"], "echo memd-codex-probe");
        assert_eq!(tool["tool_use_id"], "call_probe_1");
        assert_eq!(s.events[1].payload["prompt"], "say hi");
        assert_eq!(s.events[3].payload["last_assistant_message"], "All done.");
        assert!(
            s.events
                .iter()
                .all(|e| e.payload["platform_source"] == "codex" && e.session_id() == s.session_id)
        );
    }

    #[test]
    fn shell_arguments_of_every_form() {
        assert_eq!(tool_of("exec_command", r#"{"cmd":"ls"}"#).1, json!({"command": "ls"}));
        assert_eq!(
            tool_of("shell", r#"{"command":["bash","-lc","ls"]}"#).1,
            json!({"command": "bash -lc ls"})
        );
        assert_eq!(
            tool_of("apply_patch", r#"{"input":"x"}"#),
            ("apply_patch".into(), json!({"input": "x"}))
        );
    }
}
