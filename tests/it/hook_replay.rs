//! Replaying a real Claude Code transcript through `memd hook` processes (a reduced form of the
//! replay rules of docs/spec/hooks.md §6, main thread only): every tool call is stored; the next
//! session's SessionStart injects a non-empty index (needs the retrieval branch's route).

use crate::support;
use serde_json::{Value, json};

use crate::support::hook::*;
use crate::support::{DEADLINE, TestWorker, wait_until};

const TRANSCRIPT: &str = "marot__spotter__short.jsonl";

fn transcript_path() -> std::path::PathBuf {
    support::transcripts::fixture(TRANSCRIPT)
}

fn text_blocks(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// (handler, payload) in file order.
fn events(path: &std::path::Path) -> Vec<(&'static str, Value)> {
    let text = std::fs::read_to_string(path).expect("transcript");
    let records: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let main: Vec<&Value> = records
        .iter()
        .filter(|r| r["isSidechain"] != true && matches!(r["type"].as_str(), Some("user" | "assistant" | "system")))
        .collect();
    let Some(first) = main.first() else { return Vec::new() };
    let session = first["sessionId"].as_str().unwrap_or("s").to_string();
    let base = |r: &Value, event: &str| json!({"session_id": session, "cwd": r["cwd"], "hook_event_name": event, "transcript_path": path});
    let mut out = vec![("context", {
        let mut p = base(first, "SessionStart");
        p["source"] = json!("startup");
        p
    })];
    let mut tool_uses = std::collections::HashMap::new();
    let mut last_text = String::new();
    for r in &main {
        let content = &r["message"]["content"];
        match r["type"].as_str() {
            Some("user") => {
                let results: Vec<&Value> = content
                    .as_array()
                    .map(|b| b.iter().filter(|x| x["type"] == "tool_result").collect())
                    .unwrap_or_default();
                if results.is_empty() && r["isMeta"] != true {
                    let mut p = base(r, "UserPromptSubmit");
                    p["prompt"] = json!(text_blocks(content));
                    out.push(("session-init", p));
                }
                for res in results {
                    let Some((name, input)) = tool_uses.get(res["tool_use_id"].as_str().unwrap_or("")) else {
                        continue;
                    };
                    let is_error = res["is_error"] == true;
                    let mut p = base(r, if is_error { "PostToolUseFailure" } else { "PostToolUse" });
                    p["tool_name"] = json!(name);
                    p["tool_input"] = Value::clone(input);
                    p["tool_use_id"] = res["tool_use_id"].clone();
                    if is_error {
                        p["error"] = json!(text_blocks(&res["content"]));
                    } else {
                        p["tool_response"] = if r["toolUseResult"].is_null() {
                            json!(text_blocks(&res["content"]))
                        } else {
                            r["toolUseResult"].clone()
                        };
                    }
                    out.push(("observation", p));
                }
            }
            Some("assistant") => {
                for b in content.as_array().into_iter().flatten() {
                    if b["type"] == "tool_use" {
                        tool_uses.insert(
                            b["id"].as_str().unwrap_or("").to_string(),
                            (b["name"].as_str().unwrap_or("").to_string(), b["input"].clone()),
                        );
                    }
                }
                let t = text_blocks(content);
                if !t.trim().is_empty() {
                    last_text = t;
                }
            }
            _ => {}
        }
    }
    let last = main.last().copied().unwrap_or(first);
    let mut stop = base(last, "Stop");
    stop["last_assistant_message"] = json!(last_text);
    stop["stop_hook_active"] = json!(false);
    out.push(("summarize", stop));
    let mut end = base(last, "SessionEnd");
    end["reason"] = json!("other");
    out.push(("complete", end));
    out
}

fn replay(w: &TestWorker) -> usize {
    let evs = events(&transcript_path());
    let observations = evs.iter().filter(|(h, _)| *h == "observation").count();
    for (handler, payload) in &evs {
        let out = run_hook(w.command(), handler, &payload.to_string());
        assert_eq!(out.status.code(), Some(0), "{handler}: {}", String::from_utf8_lossy(&out.stderr));
    }
    observations
}

#[test]
fn replaying_a_transcript_stores_every_tool_call() {
    let w = TestWorker::start(&[("MEMD_SKIP_TOOLS", "")]);
    let expected = replay(&w);
    assert!(expected >= 2, "the transcript has tool calls");
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), expected as i64);
    assert!(w.count("SELECT count(*) FROM user_prompts") >= 1);
    assert!(spool_files(w.data_dir()).is_empty());
}

#[test]

fn the_next_session_start_injects_a_non_empty_index() {
    let w = TestWorker::start(&[("MEMD_SKIP_TOOLS", "")]);
    replay(&w);
    assert!(
        wait_until(DEADLINE, || w.count("SELECT count(*) FROM observations") > 0),
        "observations made"
    );
    let first = events(&transcript_path()).remove(0).1;
    let mut next = first;
    next["session_id"] = json!("next-session");
    let out = run_hook(w.command(), "context", &next.to_string());
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(!context.is_empty());
    // Issue 36: one fence with a per-response nonce, the note line first inside it.
    let lines: Vec<&str> = context.lines().collect();
    let open = lines[0];
    assert!(open.starts_with("<memd-recall id=\"") && open.ends_with("\">"), "{context}");
    assert_eq!(lines[1], memd::protocol::fence::FENCE_NOTE);
    assert!(lines[2].starts_with("# ["), "the index follows the note: {context}");
    let close = open.replacen("<memd-recall", "</memd-recall", 1);
    assert_eq!(*lines.last().unwrap(), close);
    assert_eq!(context.matches("memd-recall").count(), 2, "{context}");
}
