//! Helpers for the hook tests: run `memd hook claude-code <handler>` as a real process with a
//! payload on stdin, and the payloads of docs/spec/hooks.md §3.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use super::wait_until;

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
pub fn run_hook(cmd: Command, handler: &str, stdin: &str) -> Output {
    run_host_hook(cmd, "claude-code", handler, stdin)
}

/// Runs `memd hook <host> <event>` with `cmd`'s environment and `stdin`.
pub fn run_host_hook(mut cmd: Command, host: &str, event: &str, stdin: &str) -> Output {
    let mut child = cmd
        .args(["hook", host, event])
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

/// What a signal storm left behind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Storm {
    pub runs: usize,
    /// Events found in the spool (the worker never answers, so this is every event kept).
    pub spooled: usize,
    pub lost: usize,
    /// `.jsonl.tmp` files left half written.
    pub tmp_left: usize,
    /// Runs whose exit status was not 0.
    pub nonzero: usize,
}

/// Whether process `pid` blocks SIGTERM (`SigBlk` of `/proc/<pid>/status`), or is gone.
fn sigterm_blocked(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
}

/// The hook binary `memd install` registers (the lean `memd-hook`).
pub const HOOK_BIN: &str = env!("CARGO_BIN_EXE_memd-hook");

/// Runs `n` observation hooks (`bin`: [`HOOK_BIN`], or `memd` for `memd hook`) the way Claude Code
/// runs them — in their own process group, through `/bin/sh -c "exec …"` (`shell`) or exec form,
/// the event on stdin — against a worker that accepts and never answers, and SIGTERMs each group
/// `delays` ms after spawn (spread evenly) — or, with `from_block`, that long after the hook has
/// blocked its stop signals (what memd controls; the window before it is the host's scheduling).
pub fn signal_storm(bin: &str, n: usize, delays: std::ops::Range<u64>, shell: bool, parallel: usize, from_block: bool) -> Storm {
    use std::os::unix::process::CommandExt;
    use std::time::Duration;
    let data = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(
        data.path().join("memd.pid"),
        format!("{{\"pid\":{},\"port\":{port},\"started_at_epoch\":0}}", std::process::id()),
    )
    .unwrap();
    std::fs::write(data.path().join("token"), "a".repeat(64)).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    let memd_hook = bin == HOOK_BIN;
    let span = delays.end.saturating_sub(delays.start).max(1);
    let mut storm = Storm {
        runs: n,
        ..Default::default()
    };
    let mut next = 0;
    while next < n {
        let batch: Vec<usize> = (next..(next + parallel).min(n)).collect();
        next += batch.len();
        let mut children = Vec::new();
        for &i in &batch {
            let args = if memd_hook {
                "claude-code observation"
            } else {
                "hook claude-code observation"
            };
            let mut cmd = if shell {
                let mut c = Command::new("/bin/sh");
                c.arg("-c").arg(format!("exec '{bin}' {args}"));
                c
            } else {
                let mut c = Command::new(bin);
                c.args(args.split(' '));
                c
            };
            cmd.env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", data.path())
                .env("MEMD_DATA_DIR", data.path())
                .env("MEMD_AUTOSTART", "false")
                .env("MEMD_HOOK_ASYNC_BUDGET_MS", "20000")
                .process_group(0)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // Like Claude Code's spawn (libuv waits for the exec), `spawn` returns once the child
            // runs the new program: the delay counts from there.
            let mut child = cmd.spawn().expect("spawn hook");
            if from_block {
                wait_until(std::time::Duration::from_secs(5), || sigterm_blocked(child.id()));
            }
            let started = std::time::Instant::now();
            if let Some(mut s) = child.stdin.take() {
                let _ = s.write_all(post_tool("storm", i).as_bytes());
            }
            let delay = Duration::from_millis(delays.start + (i as u64 * 7919) % span);
            children.push((child, started + delay));
        }
        for (child, at) in &children {
            std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
            // SAFETY: SIGTERM to the process group of our own child (its pid is the group id).
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGTERM) };
        }
        for (mut child, _) in children {
            let status = child.wait().expect("wait for the hook");
            if status.code() != Some(0) {
                storm.nonzero += 1;
            }
        }
    }
    let mut ids = std::collections::HashSet::new();
    for f in spool_files(data.path()) {
        for line in std::fs::read_to_string(&f).unwrap_or_default().lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                ids.insert(v["body"]["tool_use_id"].as_str().unwrap_or("").to_string());
            }
        }
    }
    storm.spooled = (0..n).filter(|i| ids.contains(&format!("toolu_storm_{i}"))).count();
    storm.lost = n - storm.spooled;
    storm.tmp_left = std::fs::read_dir(data.path().join("spool"))
        .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).count())
        .unwrap_or(0);
    storm
}
