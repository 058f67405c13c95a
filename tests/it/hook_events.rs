//! Every handler with its docs/spec/hooks.md §3 payload against a real worker: exact stdout, exit
//! code, and the rows the worker stored. Plus malformed stdin, unknown handlers and the
//! worker-down behaviour with auto-start off.

use crate::support::TestWorker;
use crate::support::hook::*;

#[test]
fn each_event_gives_the_spec_output_and_stores_its_body() {
    let w = TestWorker::start(&[]);
    let cases = [
        ("context", SESSION_START),
        ("session-init", PROMPT),
        ("file-context", PRE_READ),
        ("observation", POST_TOOL),
        ("observation", POST_FAILURE),
        ("summarize", STOP),
        ("complete", SESSION_END),
    ];
    for (handler, payload) in cases {
        let out = run_hook(w.command(), handler, payload);
        assert_eq!(out.status.code(), Some(0), "{handler}");
        assert!(
            out.stderr.is_empty(),
            "{handler}: stderr {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected = if handler == "context" {
            format!("{EMPTY_CONTEXT}\n")
        } else {
            "{}\n".to_string()
        };
        // The context route belongs to the retrieval branch; without it the reply is the empty context.
        if handler != "context" || w.get("/api/context/inject").status == 404 {
            assert_eq!(stdout(&out), expected, "{handler}");
        }
    }
    assert_eq!(w.count("SELECT count(*) FROM user_prompts"), 1);
    let db = w.db();
    let (project, prompt): (String, String) = db
        .query_row(
            "SELECT s.project, p.prompt_text FROM user_prompts p JOIN sdk_sessions s ON s.id = p.session_db_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(project, "shop");
    assert_eq!(prompt, "Why does checkout fail when the cart has a coupon?");
    let rows: Vec<(String, i64, String)> = db
        .prepare("SELECT tool_use_id, is_error, tool_response FROM tool_uses ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].0.as_str(), rows[0].1), ("toolu_01Qm4", 0));
    assert_eq!((rows[1].0.as_str(), rows[1].1), ("toolu_01Qm7", 1));
    let failure: serde_json::Value = serde_json::from_str(&rows[1].2).unwrap();
    assert_eq!(failure["is_interrupt"], false);
    assert!(failure["error"].as_str().unwrap().starts_with("Exit code 101"));
    assert!(spool_files(w.data_dir()).is_empty(), "nothing spooled with a ready worker");
}

#[test]
fn malformed_stdin_exits_2_and_unknown_handlers_print_empty() {
    let data = tempfile::tempdir().unwrap();
    for bad in ["", "[]", "\"x\"", "{", "{\"cwd\":\"/x\"}"] {
        let out = run_hook(bare_command(data.path(), &[]), "observation", bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("memd hook: malformed input:") && err.lines().count() == 1, "{err}");
    }
    let out = run_hook(bare_command(data.path(), &[]), "nosuch", SESSION_END);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()));
    let long_agent = format!(
        r#"{{"session_id":"s","cwd":"/w","tool_name":"Bash","agent_id":"{}","extra":null}}"#,
        "a".repeat(129)
    );
    let out = run_hook(
        bare_command(data.path(), &[("MEMD_AUTOSTART", "false")]),
        "observation",
        &long_agent,
    );
    assert_eq!(out.status.code(), Some(0));
    let line = std::fs::read_to_string(&spool_files(data.path())[0]).unwrap();
    assert!(!line.contains("agentId"), "agent_id of 129 characters is dropped");
}

#[test]
fn worker_down_without_autostart_spools_each_ingest_event_once() {
    let data = tempfile::tempdir().unwrap();
    let cmd = || bare_command(data.path(), &[("MEMD_AUTOSTART", "false")]);
    let out = run_hook(cmd(), "context", SESSION_START);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), format!("{EMPTY_CONTEXT}\n")));
    // A real session has a transcript by the time it ends.
    let transcript = data.path().join("session.jsonl");
    std::fs::write(&transcript, "{}\n").unwrap();
    let mut end: serde_json::Value = serde_json::from_str(SESSION_END).unwrap();
    end["transcript_path"] = serde_json::json!(transcript);
    let end = end.to_string();
    let mut expected = 0;
    for (handler, payload) in [
        ("session-init", PROMPT),
        ("observation", POST_TOOL),
        ("summarize", STOP),
        ("complete", end.as_str()),
    ] {
        let out = run_hook(cmd(), handler, payload);
        assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()), "{handler}");
        assert!(out.stderr.is_empty());
        expected += 1;
        let files = spool_files(data.path());
        assert_eq!(files.len(), expected, "{handler}");
    }
    for f in spool_files(data.path()) {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.ends_with('\n') && text.lines().count() == 1);
        let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["v"], 1);
        assert_eq!(line["event_id"], line["body"]["eventId"]);
    }
    assert!(!data.path().join("memd.pid").exists(), "no worker was started");
}

/// `claude mcp list` fires SessionEnd for a session that never was (its transcript was never
/// written): no phantom completion is spooled (issue 19).
#[test]
fn session_end_of_a_session_that_never_started_is_dropped() {
    let data = tempfile::tempdir().unwrap();
    let out = run_hook(bare_command(data.path(), &[("MEMD_AUTOSTART", "false")]), "complete", SESSION_END);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()));
    assert!(spool_files(data.path()).is_empty());
    let log = std::fs::read_to_string(data.path().join("logs/hook.log")).unwrap();
    assert!(log.contains("without a transcript; dropped") && log.contains(" ms="), "{log}");
}

#[test]
fn excluded_projects_and_internal_runs_never_reach_the_network() {
    let data = tempfile::tempdir().unwrap();
    let excluded = bare_command(
        data.path(),
        &[("MEMD_AUTOSTART", "false"), ("MEMD_EXCLUDED_PROJECTS", "/home/dev/*")],
    );
    let out = run_hook(excluded, "observation", POST_TOOL);
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()));
    let internal = bare_command(data.path(), &[("MEMD_INTERNAL", "1")]);
    let out = run_hook(internal, "context", SESSION_START);
    assert_eq!(stdout(&out), format!("{EMPTY_CONTEXT}\n"));
    assert!(spool_files(data.path()).is_empty());
}
