//! `memd hook claude-code observation` as a whole process (fork + exec + stdin + HTTP + exit):
//! against a ready worker, and with the worker down (`MEMD_AUTOSTART=false`: the spool path); in
//! the same run, the PreToolUse `action-context` hook (issue 53) before a command that failed in an
//! earlier session (its one lookup; the session was warned on the first run, so the rest are the
//! common silent answer) and before a command with no history.
//! Run: `cargo bench --bench hook`. Criterion reports the median per process.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

const PAYLOAD: &str = r#"{"session_id":"bench-session","cwd":"/home/dev/shop","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cargo test -p checkout"},"tool_response":{"stdout":"running 12 tests\ntest result: ok. 12 passed","stderr":""}}"#;

const FAILED: &str = r#"{"session_id":"earlier-session","cwd":"/home/dev/shop","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"cargo test -p checkout"},"error":"Exit code 101\ntest checkout::rounds ... FAILED"}"#;
const PRE_FAILED: &str = r#"{"session_id":"bench-session","cwd":"/home/dev/shop","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test -p checkout"}}"#;
const PRE_NEW: &str = r#"{"session_id":"bench-session","cwd":"/home/dev/shop","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test -p cart"}}"#;

fn hook(data: &Path, extra: &[(&str, &str)]) {
    run(data, "observation", PAYLOAD, extra);
}

fn run(data: &Path, handler: &str, payload: &str, extra: &[(&str, &str)]) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_clear().env("HOME", data).env("MEMD_DATA_DIR", data).env("MEMD_PORT", "0");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(["hook", "claude-code", handler])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hook");
    if let Some(mut s) = child.stdin.take() {
        let _ = s.write_all(payload.as_bytes());
    }
    let status = child.wait().expect("wait hook");
    assert!(status.success());
}

struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_worker(data: &Path) -> Worker {
    let worker = Worker(
        Command::new(env!("CARGO_BIN_EXE_memd"))
            .arg("serve")
            .env_clear()
            .env("HOME", data)
            .env("MEMD_DATA_DIR", data)
            .env("MEMD_PORT", "0")
            .env("MEMD_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn worker"),
    );
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        let ready = memd::data_dir::read_pid_file(&data.join("memd.pid"))
            .filter(|p| p.port != 0)
            .and_then(|p| {
                let req = memd::client::http::Request {
                    method: "GET",
                    path: "/api/readiness",
                    ..Default::default()
                };
                memd::client::http::send(([127, 0, 0, 1], p.port).into(), &req, Duration::from_secs(1)).ok()
            })
            .is_some_and(|r| r.status == 200);
        if ready {
            return worker;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("worker did not become ready");
}

fn bench(c: &mut Criterion) {
    let up = tempfile::tempdir().expect("tempdir");
    let _worker = start_worker(up.path());
    c.bench_function("hook observation, worker up", |b| b.iter(|| hook(up.path(), &[])));
    run(up.path(), "observation", FAILED, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let first = Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["hook", "claude-code", "action-context"])
        .env_clear()
        .env("HOME", up.path())
        .env("MEMD_DATA_DIR", up.path())
        .env("MEMD_PORT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().expect("stdin").write_all(PRE_FAILED.as_bytes())?;
            child.wait_with_output()
        })
        .expect("the first action-context run");
    let first = String::from_utf8_lossy(&first.stdout);
    assert!(first.contains("memd action memory"), "the seeded failure is warned once: {first}");
    c.bench_function("hook action-context, worker up, a command that failed before", |b| {
        b.iter(|| run(up.path(), "action-context", PRE_FAILED, &[]))
    });
    c.bench_function("hook action-context, worker up, a command with no history", |b| {
        b.iter(|| run(up.path(), "action-context", PRE_NEW, &[]))
    });
    let down = tempfile::tempdir().expect("tempdir");
    c.bench_function("hook observation, worker down (spool)", |b| {
        b.iter(|| hook(down.path(), &[("MEMD_AUTOSTART", "false")]))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(200).measurement_time(Duration::from_secs(10));
    targets = bench
}
criterion_main!(benches);
