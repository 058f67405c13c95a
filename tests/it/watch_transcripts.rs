//! Issue 18: `memd watch` — a Claude Code session file written while the watcher runs, the worker
//! killed with SIGKILL mid-file and restarted: every record ingested exactly once (the same rows
//! as an uninterrupted run). And the hook and the watcher on one session: no duplicate rows. And a
//! Codex rollout, through the watcher and `memd replay`, stored once under platform `codex`. The
//! same two guarantees for the watcher running inside the worker (`MEMD_WATCH=true`).

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::support::{self, TestWorker, transcripts::fixture, wait_until};

const FILE: &str = "DRMacIver__claude-reliability__coverage-test-fix.transcript.jsonl";

/// (tool uses, distinct tool_use_ids, prompts) stored.
fn rows(w: &TestWorker) -> (i64, i64, i64) {
    (
        w.count("SELECT count(*) FROM tool_uses"),
        w.count("SELECT count(DISTINCT tool_use_id) FROM tool_uses"),
        w.count("SELECT count(*) FROM user_prompts"),
    )
}

fn watch_once(w: &TestWorker, root: &Path) -> String {
    let out = w.command().args(["watch", "--once", "--idle-ms", "0"]).arg(root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn watcher(w: &TestWorker, root: &Path) -> Child {
    w.command()
        .args(["watch", "--interval-ms", "50", "--idle-ms", "1500"])
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `memd replay <file> <args>` against `w`.
fn replay(w: &TestWorker, file: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_memd"))
        .arg("replay")
        .arg(file)
        .args(args)
        .env("MEMD_DATA_DIR", w.data_dir())
        .env("HOME", w.data_dir())
        .env("MEMD_LOG", "warn")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The rows one uninterrupted pass over the whole file stores.
fn reference() -> (i64, i64, i64) {
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(FILE), root.path().join(FILE)).unwrap();
    watch_once(&w, root.path());
    rows(&w)
}

/// Writes the fixture session to `path` a quarter at a time, as Claude Code would; once half is
/// written and some of it stored, the worker is killed with SIGKILL and started again.
fn write_killing_the_worker_halfway(w: &mut TestWorker, path: &Path) {
    let text = std::fs::read_to_string(fixture(FILE)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut file = std::fs::File::create(path).unwrap();
    for (i, chunk) in lines.chunks(lines.len().div_ceil(4)).enumerate() {
        for l in chunk {
            writeln!(file, "{l}").unwrap();
        }
        file.flush().unwrap();
        if i == 1 {
            assert!(
                wait_until(support::DEADLINE, || w.count("SELECT count(*) FROM tool_uses") > 0),
                "the watcher delivered nothing of the first half"
            );
            w.kill9();
            w.spawn();
        }
    }
}

#[test]
fn issue_18_watcher_with_the_worker_killed_mid_file_ingests_every_record_once() {
    let expected = reference();
    assert!(expected.0 >= 10 && expected.2 >= 1, "{expected:?}");
    assert_eq!(expected.0, expected.1, "one row per tool_use_id");

    let mut w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("-home-dev-claude-reliability");
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = watcher(&w, root.path());
    write_killing_the_worker_halfway(&mut w, &dir.join(FILE));
    let done = wait_until(support::DEADLINE, || rows(&w) == expected);
    let _ = child.kill();
    let _ = child.wait();
    assert!(done, "stored {:?}, an uninterrupted run stored {expected:?}", rows(&w));
    // A later pass finds nothing new.
    watch_once(&w, root.path());
    assert_eq!(rows(&w), expected);
}

#[test]
fn issue_18_hook_and_watcher_on_one_session_store_no_duplicates() {
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let root = tempfile::tempdir().unwrap();
    let copy = root.path().join(FILE);
    std::fs::copy(fixture(FILE), &copy).unwrap();
    // The hook path: every event of the session through real `memd hook` processes.
    replay(&w, &copy, &["--via-hook", "--no-loss-check", "--concurrency", "1"]);
    let by_hook = rows(&w);
    assert!(by_hook.0 >= 10, "{by_hook:?}");
    // Then the watcher over the same file.
    watch_once(&w, root.path());
    assert_eq!(rows(&w), by_hook, "the watcher added rows the hook had stored");
}

#[test]
fn issue_18_codex_rollouts_replay_and_watch_under_platform_codex_once() {
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let rollout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex/rollout-probe.jsonl");
    let root = tempfile::tempdir().unwrap();
    let day = root.path().join("sessions/2026/12/01");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(&rollout, day.join("rollout-probe.jsonl")).unwrap();
    watch_once(&w, root.path());
    let q =
        "SELECT count(*) FROM tool_uses WHERE platform_source = 'codex' AND tool_name = 'Bash' AND tool_input LIKE '%memd-codex-probe%'";
    assert_eq!(w.count(q), 1);
    assert_eq!(
        w.count("SELECT count(*) FROM user_prompts WHERE platform_source = 'codex' AND prompt_text = 'say hi'"),
        1
    );
    // `memd replay` reads the same rollout; the rows are already there, so nothing is added.
    replay(&w, &rollout, &["--no-loss-check", "--json"]);
    assert_eq!(w.count(q), 1, "replay and watcher store the call once");
    assert_eq!(w.count("SELECT count(*) FROM tool_uses WHERE platform_source = 'claude'"), 0);
}

/// A worker running its own watcher (`MEMD_WATCH=true`) over `root`.
fn worker_watching(root: &Path) -> TestWorker {
    let roots = root.to_string_lossy().into_owned();
    TestWorker::start(&[
        ("MEMD_EMBEDDINGS", "none"),
        ("MEMD_WATCH", "true"),
        ("MEMD_WATCH_ROOTS", &roots),
        ("MEMD_WATCH_INTERVAL_MS", "50"),
        ("MEMD_WATCH_IDLE_MS", "1500"),
    ])
}

#[test]
fn issue_18_the_worker_s_own_watcher_killed_mid_file_ingests_every_record_once() {
    let expected = reference();
    let root = tempfile::tempdir().unwrap();
    let mut w = worker_watching(root.path());
    assert_eq!(w.status()["watcher"]["files_tracked"], 0, "{}", w.status()["watcher"]);
    write_killing_the_worker_halfway(&mut w, &root.path().join(FILE));
    let done = wait_until(support::DEADLINE, || rows(&w) == expected);
    assert!(done, "stored {:?}, an uninterrupted run stored {expected:?}", rows(&w));
    let status = w.status();
    let watcher = &status["watcher"];
    assert_eq!(watcher["files_tracked"], 1, "{watcher}");
    assert!(watcher["last_error"].is_null(), "{watcher}");
}

#[test]
fn issue_18_hook_and_the_worker_s_own_watcher_store_no_duplicates() {
    let root = tempfile::tempdir().unwrap();
    let w = worker_watching(root.path());
    // The hook delivers the session from a copy outside the watched root …
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join(FILE);
    std::fs::copy(fixture(FILE), &copy).unwrap();
    replay(&w, &copy, &["--via-hook", "--no-loss-check", "--concurrency", "1"]);
    let by_hook = rows(&w);
    assert!(by_hook.0 >= 10, "{by_hook:?}");
    // … then the same session file lands where the watcher looks.
    std::fs::copy(fixture(FILE), root.path().join(FILE)).unwrap();
    let seen = wait_until(support::DEADLINE, || {
        let s = w.status();
        s["watcher"]["files_tracked"] == 1 && s["watcher"]["duplicates"].as_u64().unwrap_or(0) > 0
    });
    assert!(seen, "the watcher did not read the file: {}", w.status()["watcher"]);
    assert_eq!(rows(&w), by_hook, "the watcher added rows the hook had stored");
}
