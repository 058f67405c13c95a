//! Memory at the point of action (issue 53) through the real PreToolUse hook and worker: a check
//! command that failed before (this session or an earlier one) and has not passed since is warned
//! about once per session (with what failed and what made it pass before); a command that passed
//! since, another test name or subcommand, and the setting off are silent; an edit of a file whose
//! edit failed in an earlier session is warned, the session's own failed edit is not; with the
//! worker down the hook answers nothing and starts nothing.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestWorker;
use crate::support::hook::{bare_command, run_hook, stdout};

const FAILED: &str =
    "Exit code 101\nrunning 3 tests\ntest parser::tests::parses_empty ... FAILED\nfailures:\n    parser::tests::parses_empty";

fn post(w: &TestWorker, body: Value) {
    assert_eq!(w.post("/api/sessions/observations", &body).status, 200, "{body}");
}

fn bash(w: &TestWorker, proj: &Path, session: &str, id: &str, command: &str, failed: bool) {
    let response = if failed {
        json!({ "error": FAILED })
    } else {
        json!({ "stdout": "test result: ok. 3 passed", "stderr": "", "interrupted": false })
    };
    post(
        w,
        json!({"contentSessionId": session, "tool_name": "Bash", "cwd": proj, "tool_use_id": id,
               "tool_input": {"command": command}, "tool_response": response, "is_error": failed}),
    );
}

fn edit(w: &TestWorker, proj: &Path, session: &str, id: &str, file: &str, failed: bool) {
    let response = if failed {
        json!({ "error": "String to replace not found in file.\nString: fn parse(" })
    } else {
        json!({ "filePath": proj.join(file) })
    };
    post(
        w,
        json!({"contentSessionId": session, "tool_name": "Edit", "cwd": proj, "tool_use_id": id,
               "tool_input": {"file_path": proj.join(file), "old_string": "fn parse(", "new_string": "fn parse_all("},
               "tool_response": response, "is_error": failed}),
    );
}

fn pre_tool(cmd: std::process::Command, proj: &Path, session: &str, tool: &str, input: Value) -> String {
    let event = json!({"session_id": session, "hook_event_name": "PreToolUse", "tool_name": tool, "cwd": proj, "tool_input": input});
    stdout(&run_hook(cmd, "action-context", &event.to_string()))
}

fn warning(out: &str) -> Option<String> {
    let v: Value = serde_json::from_str(out.trim()).ok()?;
    v["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_string)
}

#[test]
fn a_repeated_failure_is_warned_once_with_its_line_and_fix_and_silence_is_the_default() {
    let proj = tempfile::tempdir().unwrap();
    let p = proj.path();
    let w = TestWorker::start(&[("MEMD_PROVIDER", "extractive"), ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")]);
    // Session 1: the parser test fails, an edit of src/parser.rs makes it pass; the lexer test
    // fails (with a temp path in it) and is left failing; an edit of src/gen.rs fails.
    assert_eq!(
        w.post(
            "/api/sessions/init",
            &json!({"contentSessionId": "s1", "prompt": "fix the parser", "cwd": p})
        )
        .status,
        200
    );
    bash(&w, p, "s1", "t1", "cargo test parser", true);
    edit(&w, p, "s1", "t2", "src/parser.rs", false);
    bash(&w, p, "s1", "t3", "cargo test parser 2>&1 | tail -20", false);
    bash(&w, p, "s1", "t4", "cargo test lexer --target-dir /tmp/tgt-aaa", true);
    edit(&w, p, "s1", "t5", "src/gen.rs", true);
    // A repeat in the same session is warned too, said as this session's; its own failed edit
    // (the tool result it just read) is not.
    let own = pre_tool(
        w.command(),
        p,
        "s1",
        "Bash",
        json!({"command": "cargo test lexer --target-dir /tmp/tgt-aaa"}),
    );
    let text = warning(&own).unwrap_or_else(|| panic!("a warning in the same session: {own}"));
    assert!(text.contains("in this session and has not passed since"), "{text}");
    let own_edit = pre_tool(w.command(), p, "s1", "Edit", json!({"file_path": p.join("src/gen.rs")}));
    assert_eq!(warning(&own_edit), None, "{own_edit}");

    // Session 2: the same lexer command with another temp path is warned, once.
    let out = pre_tool(
        w.command(),
        p,
        "s2",
        "Bash",
        json!({"command": "cd /x && cargo test lexer --target-dir /tmp/tgt-zzz"}),
    );
    let text = warning(&out).unwrap_or_else(|| panic!("a warning: {out}"));
    assert!(text.starts_with("<memd-recall"), "fenced: {text}");
    assert!(text.contains("memd action memory"), "labelled: {text}");
    assert!(
        text.contains("`cargo test lexer --target-dir /tmp/tgt-aaa` failed here") && text.contains("in an earlier session"),
        "{text}"
    );
    assert!(text.contains("parser::tests::parses_empty ... FAILED"), "the failure line: {text}");
    let inner = text
        .lines()
        .filter(|l| !l.starts_with("<") && !l.starts_with("Recalled"))
        .collect::<String>();
    assert!(inner.chars().count() <= 600, "{inner}");
    let again = pre_tool(
        w.command(),
        p,
        "s2",
        "Bash",
        json!({"command": "cargo test lexer --target-dir /tmp/tgt-zzz"}),
    );
    assert_eq!(warning(&again), None, "once per session: {again}");
    // Silence: passed since, another test name, another subcommand, not a check.
    for command in ["cargo test parser", "cargo test tokens", "cargo build", "ls src"] {
        let out = pre_tool(w.command(), p, "s2", "Bash", json!({ "command": command }));
        assert_eq!(warning(&out), None, "{command}: {out}");
    }
    // The edit case: an edit of a file whose edit failed in an earlier session.
    let out = pre_tool(
        w.command(),
        p,
        "s2",
        "Edit",
        json!({"file_path": p.join("src/gen.rs"), "old_string": "a", "new_string": "b"}),
    );
    let text = warning(&out).unwrap_or_else(|| panic!("an edit warning: {out}"));
    assert!(
        text.contains("src/gen.rs") && text.contains("String to replace not found"),
        "{text}"
    );
    let out = pre_tool(w.command(), p, "s2", "Edit", json!({"file_path": p.join("src/other.rs")}));
    assert_eq!(warning(&out), None, "{out}");

    // The parser test fails again in s2: recurred, so s3 is warned, with what fixed it before.
    bash(&w, p, "s2", "t6", "cargo test parser", true);
    let out = pre_tool(w.command(), p, "s3", "Bash", json!({"command": "cargo test parser"}));
    let text = warning(&out).unwrap_or_else(|| panic!("a recurrence warning: {out}"));
    assert!(text.contains("these files were edited: src/parser.rs"), "{text}");

    // A piped run hides the check's exit status: its output decides. The failing `npm test`
    // piped into `tail` (no error flag) opens its key, and the plain command is warned later.
    let piped = json!({"contentSessionId": "s3", "tool_name": "Bash", "cwd": p, "tool_use_id": "t7",
        "tool_input": {"command": "npm test 2>&1 | tail -5"},
        "tool_response": {"stdout": FAILED, "stderr": "", "interrupted": false}, "is_error": false});
    post(&w, piped);
    let out = pre_tool(w.command(), p, "s4", "Bash", json!({"command": "npm test"}));
    let text = warning(&out).unwrap_or_else(|| panic!("a piped failure is a failure: {out}"));
    assert!(text.contains("`npm test` failed here"), "{text}");
    // A file note older than 30 days says little about the file as it is now.
    rusqlite::Connection::open(w.db_path())
        .unwrap()
        .execute("UPDATE action_file_notes SET at_epoch = at_epoch - 31 * 86400000", [])
        .unwrap();
    let out = pre_tool(w.command(), p, "s4", "Edit", json!({"file_path": p.join("src/gen.rs")}));
    assert_eq!(warning(&out), None, "an old note: {out}");

    // Off: silent.
    let mut off = w.command();
    off.env("MEMD_ACTION_MEMORY", "false");
    let out = pre_tool(off, p, "s4", "Bash", json!({"command": "cargo test parser"}));
    assert_eq!(warning(&out), None, "{out}");
    // The injections were recorded, once each.
    assert_eq!(w.count("SELECT count(*) FROM injections WHERE source = 'action'"), 5);
}

#[test]
fn with_the_worker_down_the_hook_answers_nothing_and_starts_nothing() {
    let data = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let cmd = bare_command(data.path(), &[("MEMD_AUTOSTART", "true")]);
    let out = pre_tool(cmd, proj.path(), "s1", "Bash", json!({"command": "cargo test"}));
    assert_eq!(out.trim(), "{}");
    std::thread::sleep(Duration::from_millis(300));
    for f in ["memd.pid", "memd.lock", "memd.db"] {
        assert!(!data.path().join(f).exists(), "no worker was started ({f})");
    }
}

#[test]
fn the_route_refuses_a_request_without_its_fields() {
    let w = TestWorker::start(&[]);
    assert_eq!(w.get("/api/action-warning?project=p&command=cargo%20test").status, 400);
    assert_eq!(w.get("/api/action-warning?contentSessionId=s&project=p").status, 400);
    let long = "x".repeat(9_000);
    assert_eq!(
        w.get(&format!("/api/action-warning?contentSessionId=s&project=p&command={long}"))
            .status,
        400
    );
    let r = w.get("/api/action-warning?contentSessionId=s&project=p&command=cargo%20test");
    assert_eq!(r.status, 200);
}

#[test]
fn a_record_fetched_by_id_counts_as_used_and_an_ignored_one_as_injected_only() {
    let proj = tempfile::tempdir().unwrap();
    let p = proj.path();
    let project = p.file_name().unwrap().to_str().unwrap().to_string();
    let w = TestWorker::start(&[("MEMD_PROVIDER", "extractive"), ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")]);
    // Session 1 leaves two observations (one per edited file).
    assert_eq!(
        w.post("/api/sessions/init", &json!({"contentSessionId": "u1", "prompt": "tidy", "cwd": p}))
            .status,
        200
    );
    edit(&w, p, "u1", "e1", "src/alpha.rs", false);
    assert_eq!(
        w.post(
            "/api/sessions/summarize",
            &json!({"contentSessionId": "u1", "last_assistant_message": "done"})
        )
        .status,
        200
    );
    edit(&w, p, "u1", "e2", "src/beta.rs", false);
    assert_eq!(w.post("/api/sessions/complete", &json!({"contentSessionId": "u1"})).status, 200);
    assert!(
        crate::support::wait_until(Duration::from_secs(30), || w.count("SELECT count(*) FROM observations") >= 2),
        "two observations"
    );
    let ids: Vec<i64> = {
        let db = w.db();
        let mut stmt = db.prepare("SELECT id FROM observations ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    // Session 2 starts: the index shows both; its transcript fetches the first by id.
    let transcript = p.join("u2.jsonl");
    assert_eq!(
        w.post(
            "/api/sessions/init",
            &json!({"contentSessionId": "u2", "prompt": "go on", "cwd": p, "transcriptPath": transcript})
        )
        .status,
        200
    );
    let ctx = w.get(&format!("/api/context/inject?projects={project}&sessionId=u2"));
    assert_eq!(ctx.status, 200);
    let context = String::from_utf8_lossy(&ctx.body).into_owned();
    assert!(
        crate::support::wait_until(Duration::from_secs(10), || w
            .count("SELECT count(*) FROM injections WHERE source = 'index'")
            >= 2),
        "the index rows are recorded as injected"
    );
    let lines = [
        json!({"type": "attachment", "attachment": {"type": "hook_additional_context", "hookEvent": "SessionStart", "content": [context]}}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "m1", "name": "mcp__plugin_memd_memd__get_observations", "input": {"ids": [ids[0]]}}]}}),
    ];
    std::fs::write(&transcript, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")).unwrap();
    assert_eq!(w.post("/api/sessions/complete", &json!({"contentSessionId": "u2"})).status, 200);
    assert!(
        crate::support::wait_until(Duration::from_secs(10), || w.count("SELECT coalesce(sum(used), 0) FROM memory_use")
            >= 1),
        "the use check ran"
    );
    let out = w.command().args(["stats", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let index = &doc["memory_use"]["sources"]["index"];
    assert_eq!(index["injected"], 2, "{doc}");
    assert_eq!(index["delivered"], 2, "{doc}");
    assert_eq!(index["used"], 1, "{doc}");
    assert_eq!(doc["memory_use"]["projects"][&project]["index"]["used"], 1, "{doc}");
    let used: Vec<(i64, i64)> = {
        let db = w.db();
        let mut stmt = db
            .prepare("SELECT observation_id, used FROM record_use ORDER BY observation_id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(used, vec![(ids[0], 1), (ids[1], 0)]);
    let status = w.status();
    assert_eq!(status["memory_use"]["sources"]["index"]["used"], 1, "{status}");
}
