//! `memd replay` over HTTP against a fresh `memd serve`: every transcript, then 50 copies of a short
//! one with 50 sessions in parallel; the loss check must pass both times.

use crate::support;
use std::process::Command;

use crate::support::TestWorker;
use serde_json::Value;

fn replay(w: &TestWorker, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memd"))
        .arg("replay")
        .args(args)
        .args(["--json", "--drain-timeout", "120s"])
        .env("MEMD_DATA_DIR", w.data_dir())
        .env("HOME", w.data_dir())
        .output()
        .expect("run memd replay");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn all_transcripts_replay_without_loss() {
    let Some(files) = support::transcripts::session_files() else {
        return;
    };
    let w = TestWorker::start(&[]);
    let paths: Vec<&str> = files.iter().filter_map(|p| p.to_str()).collect();
    let (code, report, stderr) = replay(&w, &paths);
    assert_eq!(code, 0, "report: {report:#}\nstderr: {stderr}");
    let loss = &report["loss_check"];
    assert_eq!(loss["drain"]["drained"], true);
    assert_eq!(loss["missing_rows"], 0);
    assert!(loss["expected_rows"].as_u64().unwrap() > 600, "{loss}");
    assert!(loss["skipped"].as_u64().unwrap() > 0, "TodoWrite calls are skipped, not lost");
    for kind in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
        "PreCompact",
        "SubagentStart",
        "SubagentStop",
    ] {
        assert!(
            report["events"][kind]["converted"].as_u64().is_some_and(|n| n > 0),
            "{kind} missing from the report"
        );
    }
    for kind in ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"] {
        let k = &report["events"][kind];
        assert_eq!(k["sent"], k["converted"], "{kind}");
        assert_eq!(k["errors"], serde_json::json!({}), "{kind}");
    }
    let rows = w.count("SELECT count(*) FROM tool_uses");
    assert_eq!(rows as u64, loss["expected_rows"].as_u64().unwrap());
}

#[test]
fn fifty_copies_in_parallel_replay_without_loss() {
    let short = support::transcripts::fixture("DRMacIver__claude-reliability__coverage-test-fix.transcript.jsonl");
    let w = TestWorker::start(&[]);
    let (code, report, stderr) = replay(&w, &[short.to_str().unwrap_or(""), "--multiply", "50", "--concurrency", "50"]);
    assert_eq!(code, 0, "report: {report:#}\nstderr: {stderr}");
    assert_eq!(report["sessions"], 50);
    let loss = &report["loss_check"];
    assert_eq!(loss["sessions"], 50);
    assert_eq!(loss["missing_rows"], 0);
    assert_eq!(report["errors"], serde_json::json!({}));
    let sessions = w.count("SELECT count(DISTINCT content_session_id) FROM tool_uses");
    assert_eq!(sessions, 50);
}
