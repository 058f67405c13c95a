//! Helpers for the hook tests: run `memd hook claude-code <handler>` as a real process with a
//! payload on stdin, and the payloads of docs/spec/hooks.md §3.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

pub const SESSION: &str = "4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10";

pub const SESSION_START: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","hook_event_name":"SessionStart","source":"startup","model":"claude-sonnet-5"}"#;
pub const PROMPT: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","prompt_id":"1b0b5a55-6f7e-4d92-9d3b-2ad0c6f6b8e1","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"Why does checkout fail when the cart has a coupon?"}"#;
pub const PRE_READ: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","prompt_id":"1b0b5a55-6f7e-4d92-9d3b-2ad0c6f6b8e1","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","permission_mode":"default","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/shop/src/checkout/coupon.rs"},"tool_use_id":"toolu_01Qm3"}"#;
pub const POST_TOOL: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cargo test -p checkout","description":"Run checkout tests"},"tool_response":{"stdout":"running 12 tests\ntest result: ok. 12 passed; 0 failed\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_01Qm4","duration_ms":8125}"#;
pub const POST_FAILURE: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","permission_mode":"default","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"cargo test -p checkout","description":"Run checkout tests"},"tool_use_id":"toolu_01Qm7","error":"Exit code 101\nthread 'coupon::rounds_half_up' panicked at src/checkout/coupon.rs:9:5","is_interrupt":false,"duration_ms":6410}"#;
pub const STOP: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Fixed the rounding in coupon::apply and added a regression test; all 12 checkout tests pass.","background_tasks":[],"session_crons":[]}"#;
pub const SESSION_END: &str = r#"{"session_id":"4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10","transcript_path":"/home/dev/.claude/projects/-home-dev-shop/4f6c0e2a-1b7d-4c1e-9a55-0d3c2b1a9e10.jsonl","cwd":"/home/dev/shop","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}"#;

pub const EMPTY_CONTEXT: &str = r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":""}}"#;

/// Runs `memd hook claude-code <handler>` with `cmd`'s environment and `stdin`.
pub fn run_hook(mut cmd: Command, handler: &str, stdin: &str) -> Output {
    let mut child = cmd
        .args(["hook", "claude-code", handler])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memd hook");
    if let Some(mut s) = child.stdin.take() {
        let _ = s.write_all(stdin.as_bytes());
    }
    child.wait_with_output().expect("wait for memd hook")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A bare command for a data dir without a worker.
pub fn bare_command(data: &std::path::Path, extra: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", data)
        .env("MEMD_DATA_DIR", data)
        .env("MEMD_PORT", "0")
        .env("MEMD_LOG", "warn");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd
}

/// The spool files (`*.jsonl`) in `<data>/spool/`.
pub fn spool_files(data: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(data.join("spool"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".jsonl"))
                .collect()
        })
        .unwrap_or_default()
}

/// A PostToolUse payload with its own tool_use_id.
pub fn post_tool(session: &str, i: usize) -> String {
    serde_json::json!({
        "session_id": session, "cwd": "/home/dev/shop", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": format!("echo {i}")},
        "tool_response": {"stdout": format!("{i}"), "stderr": ""}, "tool_use_id": format!("toolu_{session}_{i}"),
    })
    .to_string()
}
