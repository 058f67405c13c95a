//! A one-prompt `claude -p` session (SessionStart, UserPromptSubmit, one Bash call with its
//! PostToolUse, Stop, SessionEnd) with memd installed, against a running worker and against a
//! SIGSTOPped one (issue 19 target: ≤ 2.5 s more). Real Claude Code binary (`MEMD_CLAUDE_BIN`),
//! fake Anthropic API. Prints medians of `RUNS` sessions each; asserts nothing about time.
//! Run: `MEMD_CLAUDE_BIN=<claude> cargo bench --bench claude_session`
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::claude_host::Host;
use support::fake_anthropic::{Plan, Turn, tool};

const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Ok(bin) = std::env::var("MEMD_CLAUDE_BIN") else {
        eprintln!("MEMD_CLAUDE_BIN is not set: nothing to measure");
        return;
    };
    let plans = |_: &std::path::Path| {
        vec![Plan {
            key: "bench-session".into(),
            turns: vec![
                tool("Bash", json!({"command": "echo bench", "description": "Say bench"})),
                Turn::Text("ok".into()),
            ],
        }]
    };
    let h = Host::new(bin, plans);
    assert!(h.memd(&["install"]).status.success());
    let session = |n: usize| {
        let t = Instant::now();
        h.claude(&format!("bench-session {n}"), &["--allowedTools", "Bash"]);
        t.elapsed().as_secs_f64()
    };
    session(0); // starts the worker
    let running: Vec<f64> = (1..=RUNS).map(session).collect();
    let pid = h.worker_pid().expect("worker");
    // SAFETY: stopping and continuing the worker the hooks started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(100));
    // Each session meets the hung worker for the first time (the hook breaker closed).
    let stopped: Vec<f64> = (1..=RUNS)
        .map(|n| {
            let _ = std::fs::remove_file(h.data.join("hook-breaker"));
            session(100 + n)
        })
        .collect();
    // SAFETY: continuing the worker this bench stopped; kill takes no pointer.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let (a, b) = (median(running), median(stopped));
    println!("claude -p one-prompt session, {RUNS} runs each (median):");
    println!("  worker running:     {a:.2} s");
    println!("  worker SIGSTOPped:  {b:.2} s  (+{:.2} s)", b - a);
}
