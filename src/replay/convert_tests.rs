//! Conversion tests on trimmed fixtures cut from the real transcripts (`tests/fixtures/replay/`).

use std::path::PathBuf;

use super::convert::convert_file;
use super::event::{EventKind, Origin, SessionEvents};

fn fixture(name: &str) -> SessionEvents {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay").join(name);
    convert_file(&path).expect("fixture converts")
}

fn outline(s: &SessionEvents) -> Vec<String> {
    s.events
        .iter()
        .map(|e| {
            let p = &e.payload;
            let detail = p["tool_name"]
                .as_str()
                .or(p["source"].as_str())
                .or(p["reason"].as_str())
                .unwrap_or("");
            let agent = p["agent_id"].as_str().map(|a| format!(" @{a}")).unwrap_or_default();
            format!("{}:{detail}{agent}", e.kind.name())
        })
        .collect()
}

#[test]
fn parallel_calls_and_a_subagent_spliced_before_its_post() {
    let s = fixture("agents.jsonl");
    let expected = [
        "SessionStart:startup",
        "UserPromptSubmit:",
        "PreToolUse:Bash",
        "PreToolUse:ToolSearch",
        "PostToolUse:Bash",
        "PostToolUse:ToolSearch",
        "PreToolUse:Agent",
        "PreToolUse:Agent",
        "PreToolUse:Agent",
        "PostToolUse:Agent",
        "PostToolUse:Agent",
        "SubagentStart: @a36efb2a1231c41e2",
        "PreToolUse:Bash @a36efb2a1231c41e2",
        "PostToolUse:Bash @a36efb2a1231c41e2",
        "PreToolUse:Read @a36efb2a1231c41e2",
        "PostToolUse:Read @a36efb2a1231c41e2",
        "PreToolUse:Read @a36efb2a1231c41e2",
        "PostToolUse:Read @a36efb2a1231c41e2",
        "SubagentStop: @a36efb2a1231c41e2",
        "PostToolUse:Agent",
        "Stop:",
        "SessionEnd:prompt_input_exit",
    ];
    assert_eq!(outline(&s), expected);
    let sub = s
        .events
        .iter()
        .find(|e| e.origin == Origin::Subagent && e.kind == EventKind::PostToolUse)
        .unwrap();
    assert_eq!(sub.session_id(), s.session_id, "subagent events carry the parent session id");
    assert_eq!(sub.payload["agent_type"], "general-purpose");
    let post = s.events.iter().find(|e| e.kind == EventKind::PostToolUse).unwrap();
    assert!(post.payload["tool_response"].is_object(), "toolUseResult is the tool_response");
    assert!(post.payload["duration_ms"].as_i64().is_some_and(|d| d >= 0));
    let prompt = &s.events[1].payload;
    assert!(prompt["prompt"].as_str().unwrap().starts_with("OK, we're going"));
    assert_eq!(prompt["permission_mode"], "acceptEdits");
    let stop = s.events.iter().find(|e| e.kind == EventKind::Stop).unwrap();
    assert!(
        stop.payload["last_assistant_message"]
            .as_str()
            .unwrap()
            .starts_with("All three round-2 agents")
    );
    assert!(s.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms || w[1].origin != Origin::Main));
}

#[test]
fn compaction_ends_the_turn_and_restarts_with_source_compact() {
    let s = fixture("compact.jsonl");
    let expected = [
        "SessionStart:startup",
        "UserPromptSubmit:",
        "PreToolUse:Bash",
        "PostToolUse:Bash",
        "Stop:",
        "PreCompact:",
        "SessionStart:compact",
        "UserPromptSubmit:",
        "PreToolUse:Bash",
        "PostToolUse:Bash",
        "Stop:",
        "SessionEnd:other",
    ];
    assert_eq!(outline(&s), expected);
    assert_eq!(s.events[5].payload["trigger"], "manual");
    assert_eq!(s.events[7].payload["prompt"], "continue implementation");
    assert_eq!(s.events[1].payload["permission_mode"], "bypassPermissions");
}
