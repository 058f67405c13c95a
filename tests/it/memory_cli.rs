//! `memd remember`, `memd search`, `memd forget`, `memd gc` on the command line.

use std::process::Command;

use crate::support::TestWorker;
use serde_json::Value;

/// `memd ARGS` against `w`, in the project `cli-proj`.
fn cli(w: &TestWorker, args: &[&str]) -> Command {
    let mut c = w.command();
    c.env("MEMD_PROJECT", "cli-proj").args(args);
    c
}

fn run(mut cmd: Command) -> String {
    let out = cmd.output().expect("run memd");
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn remember_search_forget_and_gc_through_the_worker() {
    let w = TestWorker::start(&[]);
    let cli = |args: &[&str]| cli(&w, args);
    assert_eq!(
        run(cli(&["remember", "Deploys go out on Tuesdays only"])).trim(),
        "Saved memory #1 in cli-proj."
    );
    let printed = run(cli(&["search", "deploys", "tuesdays"]));
    let http = w.get("/api/search?query=deploys%20tuesdays&project=cli-proj");
    let http_text = http
        .json()
        .and_then(|v| v.pointer("/content/0/text").and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| http.text());
    // The same index as the MCP tool, its Next line naming shell commands instead of tool calls.
    let (printed_rows, printed_next) = printed.trim_end().rsplit_once('\n').unwrap();
    let (http_rows, _) = http_text.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(printed_rows, http_rows);
    assert_eq!(
        printed_next,
        "Next: `memd timeline 1` for what surrounds a hit; `memd show 1` for the whole record."
    );
    assert!(printed.contains("#1"), "{printed}");
    assert!(run(cli(&["forget", "--project", "cli-proj", "--dry-run"])).contains("Would forget 1 observations"));
    assert_eq!(run(cli(&["forget", "1"])).trim(), "Forgot #1.");
    assert_eq!(w.count("SELECT count(*) FROM observations"), 0);
    assert_eq!(run(cli(&["retry"])).trim(), "Requeued 0 rows of 0 sessions.");
    let gc = run(cli(&["gc", "--dry-run"]));
    assert!(gc.contains("would delete"), "{gc}");
}

#[test]
fn gc_in_process_without_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("MEMD_DATA_DIR", dir.path())
        .env("MEMD_PORT", "1")
        .args(["gc", "--vacuum"]);
    let out = run(cmd);
    assert!(out.contains("(vacuumed)"), "{out}");
    // Sizes in units, not raw byte counts (issue 55).
    assert!(out.contains(" KB") || out.contains(" MB"), "{out}");
    assert!(!out.contains(" bytes"), "{out}");
    let db = rusqlite::Connection::open(dir.path().join("memd.db")).unwrap();
    let n: i64 = db
        .query_row(
            "SELECT count(*) FROM meta WHERE key IN ('last_retention_epoch', 'last_vacuum_epoch')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2);
}

/// Issue 19: `memd search … | head` — a reader that closes early — is not an error: exit 0, nothing
/// on stderr. And the worker's logs carry no terminal colour codes.
#[test]
fn a_closed_stdout_is_quiet_and_logs_have_no_colour_codes() {
    let w = TestWorker::start(&[("MEMD_LOG", "info")]);
    for i in 0..30 {
        let body = serde_json::json!({"text": format!("Pagination note {i}: cursors beat offsets"), "project": "p"});
        assert_eq!(w.post("/api/memory/save", &body).status, 200);
    }
    let mut child = w
        .command()
        .args(["search", "pagination", "--project", "p"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(w.data_dir().join("logs/memd.log")).unwrap();
    assert!(log.contains("memd ready") && !log.contains('\u{1b}'), "{log}");
}

#[test]
fn issue_37_show_prints_whole_records_for_a_person_and_stop_ends_the_worker() {
    let mut w = TestWorker::start(&[]);
    let cli = |args: &[&str]| cli(&w, args);
    let text = "Deploys go out on Tuesdays only.\nThe freeze starts \u{1b}[2J on Friday noon.";
    run(cli(&["remember", text, "--title", "Deploy days"]));
    let shown = run(cli(&["show", "1"]));
    assert!(shown.starts_with("#1  "), "{shown}");
    assert!(shown.contains("project cli-proj") && shown.contains("Deploy days"), "{shown}");
    assert!(shown.contains("Tuesdays only.") && shown.contains("Friday noon."), "{shown}");
    assert!(!shown.contains('\u{1b}'), "no escape sequence reaches the terminal: {shown:?}");

    let out = cli(&["show", "#1", "42"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("#1  "));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found: #42"));
    let none = cli(&["show", "42"]).output().unwrap();
    assert_eq!(none.status.code(), Some(1), "nothing found");
    let bad = cli(&["show", "X9"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("not an id"));

    assert_eq!(run(cli(&["stop"])).trim(), "memd stopped");
    assert!(!w.data_dir().join("memd.pid").exists(), "the worker removed its PID file");
    assert_eq!(run(cli(&["stop"])).trim(), "memd is not running");
    let status = w.child.as_mut().expect("the worker process").wait().unwrap();
    assert_eq!(status.code(), Some(0), "the worker drained and exited cleanly");
}

#[test]
fn issue_37_status_json_is_json_when_the_worker_is_down() {
    let w = TestWorker::prepared(&[("MEMD_AUTOSTART", "false")]);
    let out = w.command().args(["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["worker"], "not_running", "{doc}");
    assert_eq!(doc["spooled"], 0);
    // A hook run while the worker is down spools its event: status counts it.
    let hook = crate::support::hook::run_hook(w.command(), "observation", crate::support::hook::POST_TOOL);
    assert_eq!(hook.status.code(), Some(0));
    let out = w.command().args(["status", "--json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["spooled"], 1, "{doc}");
    let plain = w.command().arg("status").output().unwrap();
    assert_eq!(plain.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&plain.stderr).contains("not running"));
}

#[test]
fn issue_37_restart_stops_the_worker_and_starts_a_ready_one() {
    let mut w = TestWorker::start(&[]);
    let old = w.pid().unwrap();
    let out = w.command().arg("restart").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("memd stopped") && said.contains("memd started (pid "), "{said}");
    assert_eq!(w.child.as_mut().unwrap().wait().unwrap().code(), Some(0), "the old worker drained");
    let pid_file: Value = serde_json::from_str(&std::fs::read_to_string(w.data_dir().join("memd.pid")).unwrap()).unwrap();
    assert_ne!(pid_file["pid"].as_u64(), Some(u64::from(old)), "a new worker runs");
    // The new worker is not this test's child: stop it the way a user would.
    assert_eq!(run(cli(&w, &["stop"])).trim(), "memd stopped");
}

#[test]
fn issue_37_timeline_prints_the_rows_around_a_record_with_a_shell_pointer() {
    let w = TestWorker::start(&[]);
    let cli = |args: &[&str]| cli(&w, args);
    run(cli(&["remember", "Deploys go out on Tuesdays only"]));
    run(cli(&["remember", "The staging database is rebuilt nightly"]));
    let out = run(cli(&["timeline", "#1"]));
    assert!(out.contains("Tuesdays") && out.contains("nightly"), "{out}");
    assert!(out.trim_end().ends_with("Full records: memd show 1 2"), "{out}");
    let missing = cli(&["timeline", "99"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn issue_37_search_json_gives_list_columns_as_arrays() {
    let w = TestWorker::start(&[]);
    run(cli(&w, &["remember", "Deploys go out on Tuesdays only"]));
    let v: Value = serde_json::from_str(&run(cli(&w, &["search", "deploys", "--json"]))).expect("JSON");
    let row = &v["observations"][0];
    for key in ["facts", "concepts", "files_read", "files_modified"] {
        assert!(row[key].is_array(), "{key}: {row}");
    }
}

#[test]
fn issue_37_status_says_the_summary_first_with_sizes_for_people_and_mints_no_code() {
    let w = TestWorker::start(&[]);
    w.post(
        "/api/memory/save",
        &serde_json::json!({"text": "prices are integer cents", "project": "acme"}),
    );
    let out = w.command().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("memd ") && first.contains(": 1 memories,") && first.contains("LLM tokens today"),
        "{text}"
    );
    assert!(
        first.contains(" KB on disk") || first.contains(" MB on disk"),
        "the database with its WAL, humanised: {first}"
    );
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("problem")), "{text}");
    assert!(!text.contains(" B wal ") && !text.contains("/viewer/login?code="), "{text}");
}

#[test]
fn issue_37_help_is_grouped_with_examples_and_completions_are_printed() {
    let w = TestWorker::prepared(&[("MEMD_AUTOSTART", "false")]);
    let help = w.command().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for heading in [
        "Everyday:\n  search",
        "Setup:\n  install",
        "Maintenance:\n",
        "Developer tools:\n",
        "Examples:\n  memd install",
    ] {
        assert!(text.contains(heading), "{heading:?} in:\n{text}");
    }
    let bash = w.command().args(["completions", "bash"]).output().unwrap();
    assert!(bash.status.success());
    let script = String::from_utf8_lossy(&bash.stdout);
    assert!(
        script.contains("_memd()") && script.contains("import-md"),
        "{}",
        &script[..script.len().min(300)]
    );
    // Issue 55: a reader that stops early (`| head -1`) is no panic (exit 101 before).
    let mut early = w.command();
    early.args(["completions", "bash"]).stdout(std::process::Stdio::piped());
    let mut child = early.spawn().unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Issue 37: `memd import-sessions` backfills recorded sessions with their own times, says what it
/// imported, and a second run stores nothing twice.
#[test]
fn import_sessions_backfills_once_with_recorded_times() {
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects/-r-log");
    std::fs::create_dir_all(&projects).unwrap();
    for f in [
        "daaain__claude-code-log__5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl",
        "DRMacIver__claude-reliability__hello-world-script.transcript.jsonl",
    ] {
        std::fs::copy(crate::support::transcripts::fixture(f), projects.join(f)).unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let dry = run(cli(&w, &["import-sessions", "--dry-run", root]));
    assert!(dry.starts_with("Would import 2 sessions from 2 files"), "{dry}");
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), 0, "a dry run sends nothing");

    let first = run(cli(&w, &["import-sessions", "--json", root]));
    let s: Value = serde_json::from_str(&first).unwrap();
    let new_calls = s["tool_calls_new"].as_i64().unwrap();
    assert!(new_calls > 5 && s["sessions"] == 2 && s["errors"] == 0, "{s}");
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), new_calls, "{s}");
    let prompts = w.count("SELECT count(*) FROM user_prompts");
    assert_eq!(prompts, s["prompts_new"].as_i64().unwrap(), "{s}");
    // The recorded times, not the time of the import (the fixtures are from 2025).
    let newest = w.count("SELECT max(occurred_at_epoch) FROM tool_uses");
    assert!(newest < memd::clock::now_ms() - 86_400_000, "{newest}");

    let again = run(cli(&w, &["import-sessions", root]));
    assert!(
        again.starts_with("Imported 2 sessions from 2 files: 0 tool calls and 0 prompts new;"),
        "{again}"
    );
    assert!(
        again.contains(&format!("{new_calls} tool calls and {prompts} prompts memd already had")),
        "{again}"
    );
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), new_calls);
    assert_eq!(w.count("SELECT count(*) FROM user_prompts"), prompts);
}
