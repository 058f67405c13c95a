//! hooks.md §2.7: SIGTERM, SIGINT or SIGHUP while an ingest event is unacknowledged → the event is
//! spooled and the hook exits 0. The "worker" here accepts the request and never answers, so only
//! the signal can end the hook before its budget.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::hook::*;

/// A data dir whose pid file points at a listener that reads requests and never replies.
fn silent_worker(data: &std::path::Path) -> std::sync::mpsc::Receiver<()> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(
        data.join("memd.pid"),
        format!("{{\"pid\":{},\"port\":{port},\"started_at_epoch\":0}}", std::process::id()),
    )
    .unwrap();
    std::fs::write(data.join("token"), "a".repeat(64)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = tx.send(());
            // Hold the connection open without answering.
            std::thread::sleep(Duration::from_secs(30));
            let _ = conn.flush();
        }
    });
    rx
}

fn signal_mid_delivery(sig: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let accepted = silent_worker(dir.path());
    let mut child = bare_command(dir.path(), &[("MEMD_AUTOSTART", "false"), ("MEMD_HOOK_ASYNC_BUDGET_MS", "20000")])
        .args(["hook", "claude-code", "observation"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(POST_TOOL.as_bytes()).unwrap();
    accepted.recv_timeout(Duration::from_secs(20)).expect("the hook sent its request");
    let t0 = Instant::now();
    // SAFETY: kill on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit 0 after signal {sig}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "ended by the signal, not by its budget");
    let files = spool_files(dir.path());
    assert_eq!(files.len(), 1, "the unacknowledged event is spooled");
    let line = std::fs::read_to_string(&files[0]).unwrap();
    assert!(line.contains("toolu_01Qm4") && line.contains("\"event_id\""), "{line}");
    let log = std::fs::read_to_string(dir.path().join("logs/hook.log")).unwrap_or_default();
    assert!(log.contains(&format!("signal {sig} before acknowledgement")), "{log}");
}

#[test]
fn sigterm_before_the_acknowledgement_spools_the_event() {
    signal_mid_delivery(libc::SIGTERM);
}

#[test]
fn sigint_and_sighup_do_the_same() {
    signal_mid_delivery(libc::SIGINT);
    signal_mid_delivery(libc::SIGHUP);
}

/// Issue 19: 500 installed hook commands (`memd-hook`, exec form and shell form), run as Claude
/// Code runs them (own process group, the event on stdin), each SIGTERMed to its group 0–45 ms
/// after it blocked its stop signals — while it parses its input, connects, waits for the worker
/// that never answers, or spools: every event is spooled, none lost, exit 0, no `.tmp` left.
/// The window before the block is the host's (exec and scheduling) and cannot be asserted on a
/// shared machine: `cargo bench --bench hook_signals` measures losses 0–50 ms after spawn.
#[test]
fn sigterm_to_the_group_after_the_block_loses_nothing() {
    for shell in [false, true] {
        let storm = signal_storm(HOOK_BIN, 250, 0..46, shell, 2, true);
        assert_eq!(
            (storm.lost, storm.tmp_left, storm.nonzero),
            (0, 0, 0),
            "shell form {shell}: {storm:?}"
        );
    }
}
