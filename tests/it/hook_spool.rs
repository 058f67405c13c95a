//! Never lose: with the worker down, hooks spool; the worker ingests the spool at start, exactly
//! once, also when a spool file is replayed or an event was both committed and spooled.

use crate::support::hook::*;
use crate::support::{DEADLINE, TestWorker, wait_until};

const COUNT_TOOL_USES: &str = "SELECT count(*) FROM tool_uses";

#[test]
fn hundred_spooled_observations_are_ingested_exactly_once() {
    let mut w = TestWorker::start(&[("MEMD_SPOOL_SCAN_MS", "200")]);
    w.stop();
    let mut cmd_env: Vec<(&str, &str)> = vec![("MEMD_AUTOSTART", "false")];
    cmd_env.extend(w.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>());
    for i in 0..100 {
        let out = run_hook(bare_command(w.data_dir(), &cmd_env), "observation", &post_tool("spool-s", i));
        assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()), "hook {i}");
    }
    let files = spool_files(w.data_dir());
    assert_eq!(files.len(), 100);
    // Keep a copy of some files to replay them after ingestion.
    let replay: Vec<(std::path::PathBuf, Vec<u8>)> = files.iter().take(10).map(|p| (p.clone(), std::fs::read(p).unwrap())).collect();
    w.spawn();
    assert!(wait_until(DEADLINE, || spool_files(w.data_dir()).is_empty()), "spool drained");
    assert_eq!(w.count(COUNT_TOOL_USES), 100);
    let status = w.status();
    assert_eq!(status["spool"]["ingested_total"], 100);
    assert_eq!(status["spool"]["pending_files"], 0);
    for (path, bytes) in replay {
        std::fs::write(path, bytes).unwrap();
    }
    assert!(
        wait_until(DEADLINE, || spool_files(w.data_dir()).is_empty()),
        "replayed files drained"
    );
    assert_eq!(w.count(COUNT_TOOL_USES), 100, "a replayed spool stores nothing twice");
}

#[test]
fn an_event_both_committed_and_spooled_is_stored_once() {
    let w = TestWorker::start(&[("MEMD_SPOOL_SCAN_MS", "100")]);
    let out = run_hook(w.command(), "observation", POST_TOOL);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(w.count(COUNT_TOOL_USES), 1);
    // The same event (same tool_use_id, other event id) arrives again through the spool.
    let line = serde_json::json!({"v":1,"event_id":"e-dup","spooled_at":"2026-10-02T09:14:00.000Z","platform":"claude-code",
        "handler":"observation","method":"POST","path":"/api/sessions/observations",
        "body":{"contentSessionId": SESSION, "platformSource":"claude","tool_name":"Bash","tool_use_id":"toolu_01Qm4","eventId":"e-dup","cwd":"/home/dev/shop"}});
    std::fs::write(w.data_dir().join("spool").join("1-1.jsonl"), format!("{line}\n")).unwrap();
    let bad = r#"{"v":1,"event_id":"e-bad","path":"/api/sessions/observations","body":{"tool_name":"Bash"}}"#;
    std::fs::write(w.data_dir().join("spool").join("1-2.jsonl"), format!("{bad}\n")).unwrap();
    assert!(wait_until(DEADLINE, || spool_files(w.data_dir()).is_empty()));
    assert_eq!(w.count(COUNT_TOOL_USES), 1);
    assert!(
        w.data_dir().join("spool/rejected/e-bad.json").exists(),
        "an invalid line is kept in rejected/"
    );
}
