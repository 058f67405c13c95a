//! The claude-cli provider against a stub `claude` that hangs: killed at the timeout with its
//! whole process group, recorded in children.json meanwhile, the batch retried.

use std::os::unix::fs::PermissionsExt;

use crate::support::{DEADLINE, TestWorker, init_body, observation_body, wait_until};

fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

fn pids(path: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn a_hanging_claude_is_killed_with_its_group_and_the_batch_retried() {
    let stub_dir = tempfile::tempdir().unwrap();
    let log = stub_dir.path().join("calls.log");
    let stub = stub_dir.path().join("claude");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\necho \"$$ $MEMD_INTERNAL $(pwd)\" >> {}\nsleep 300 &\nwait\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stub_path = stub.to_str().unwrap().to_string();
    let mut w = TestWorker::start(&[
        ("MEMD_PROVIDER", "claude-cli"),
        ("MEMD_CLAUDE_PATH", &stub_path),
        ("MEMD_OBSERVER_TIMEOUT_MS", "500"),
    ]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "hang")).status, 200);
    assert_eq!(w.post("/api/sessions/observations", &observation_body("s1", 1)).status, 200);

    assert!(wait_until(DEADLINE, || !pids(&log).is_empty()), "the stub never ran");
    let first = pids(&log)[0];
    let line = std::fs::read_to_string(&log).unwrap();
    assert!(line.contains(" 1 "), "MEMD_INTERNAL=1 is set: {line}");
    assert!(line.trim_end().ends_with("/observer"), "cwd is <data>/observer: {line}");
    let children = w.data_dir().join("children.json");
    assert!(
        wait_until(DEADLINE, || !group_alive(first)),
        "the stub's process group survived the timeout"
    );
    assert!(wait_until(DEADLINE, || w
        .count("SELECT count(*) FROM pending_messages WHERE attempts >= 1")
        == 1));
    assert!(wait_until(DEADLINE, || pids(&log).len() >= 2), "the batch was not retried");
    let second = pids(&log)[1];
    assert!(wait_until(DEADLINE, || std::fs::read_to_string(&children)
        .is_ok_and(|t| t.contains(&second.to_string()))));
    // Shutdown kills a running child's group too.
    w.stop();
    assert!(wait_until(DEADLINE, || !group_alive(second)), "shutdown left the observer running");
    assert!(!children.exists(), "children.json is removed when no child runs");
}
