//! `memd replay --via-hook`: real `memd hook` processes against a worker that is SIGKILLed and
//! restarted mid-run; the hooks spool while it is down, the restarted worker ingests the spool, and
//! the loss check passes.

use crate::support;
use std::process::{Command, Stdio};

use crate::support::{DEADLINE, TestWorker, wait_until};
use serde_json::Value;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

#[test]
fn worker_killed_and_restarted_mid_run_loses_nothing() {
    let file = support::transcripts::fixture("DRMacIver__claude-reliability__coverage-test-fix.transcript.jsonl");
    let port = free_port().to_string();
    let mut w = TestWorker::start(&[("MEMD_PORT", &port), ("MEMD_SPOOL_SCAN_MS", "200")]);
    let child = Command::new(env!("CARGO_BIN_EXE_memd"))
        .arg("replay")
        .arg(&file)
        .args([
            "--via-hook",
            "--multiply",
            "6",
            "--concurrency",
            "3",
            "--rate",
            "30",
            "--json",
            "--drain-timeout",
            "120s",
        ])
        .env("MEMD_DATA_DIR", w.data_dir())
        .env("HOME", w.data_dir())
        .env("MEMD_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start memd replay");
    assert!(
        wait_until(DEADLINE, || w.count("SELECT count(*) FROM tool_uses") >= 8),
        "replay did not start storing"
    );
    w.kill9();
    std::thread::sleep(std::time::Duration::from_millis(700));
    w.spawn();
    let out = child.wait_with_output().expect("replay finishes");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "report: {report:#}\nstderr: {stderr}");
    let loss = &report["loss_check"];
    assert_eq!(loss["missing_rows"], 0, "{loss:#}");
    assert_eq!(loss["sessions"], 6);
    assert!(loss["expected_rows"].as_u64().is_some_and(|n| n >= 60), "{loss:#}");
    let ingested = w.status()["spool"]["ingested_total"].as_u64().unwrap_or(0);
    assert!(ingested > 0, "the gap was covered by the spool");
}
