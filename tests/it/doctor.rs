//! `memd doctor` in the three cases it got wrong (issue 37) — an invalid `~/.claude/settings.json`,
//! a worker that rejects this data dir's token, a stopped worker with spooled events — and its new
//! lines: the observer and what it costs, the embedding model, memd's settings file, the spool, the
//! port, and the summary; exit 1 exactly when a FAIL line is printed.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::TestWorker;

fn doctor(home: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_memd"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("MEMD_DATA_DIR", home.join(".memd"))
        .env("MEMD_LOG", "warn")
        .env("MEMD_AUTOSTART", "false")
        .envs(env.iter().copied())
        .arg("doctor")
        .output()
        .expect("run memd doctor");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn line<'a>(out: &'a str, what: &str) -> &'a str {
    out.lines()
        .find(|l| l[5..].starts_with(&format!("{what}:")))
        .unwrap_or_else(|| panic!("no {what} line:\n{out}"))
}

#[test]
fn an_invalid_claude_settings_file_is_named_and_install_is_not_suggested() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(home.path().join(".claude/settings.json"), "{\"hooks\": {,}").unwrap();
    let (ok, out) = doctor(home.path(), &[]);
    assert!(!ok, "{out}");
    let hooks = line(&out, "hooks");
    assert!(
        hooks.starts_with("FAIL") && hooks.contains("is not valid JSON") && hooks.contains("fix it by hand"),
        "{hooks}"
    );
    assert!(!hooks.contains("run `memd install`"), "{hooks}");
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("memd doctor: ") && last.contains("problems to fix"), "{last}");
    assert!(
        line(&out, "observer").contains("the deterministic extractor: no model calls, no cost"),
        "{out}"
    );
    assert!(line(&out, "embedding model").contains("memd models install"), "{out}");
}

#[test]
fn a_worker_that_rejects_this_data_dirs_token_is_not_ok() {
    let other = TestWorker::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".memd");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("token"), "ab".repeat(32)).unwrap();
    let port = other.addr().port().to_string();
    let (ok, out) = doctor(home.path(), &[("MEMD_PORT", port.as_str())]);
    assert!(!ok, "{out}");
    let worker = line(&out, "worker");
    assert!(
        worker.starts_with("FAIL") && worker.contains("rejects this data dir's token"),
        "{worker}"
    );
}

#[test]
fn a_stopped_worker_with_spooled_events_says_so() {
    let mut w = TestWorker::start(&[]);
    w.stop();
    let spool = w.data_dir().join("spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(spool.join("0001-event.jsonl"), "{}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_memd"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", w.data_dir())
        .env("MEMD_DATA_DIR", w.data_dir())
        .env("MEMD_AUTOSTART", "false")
        .arg("doctor")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(line(&out, "worker").contains("stopped"), "{out}");
    let spooled = line(&out, "spool");
    assert!(spooled.starts_with("note") && spooled.contains("1 hook events wait"), "{spooled}");
    assert!(!out.contains("not started yet (starts on first use)"), "{out}");
}
