//! `memd import-claude-mem` against fixture databases (docs/spec/storage.md §7, cases S9–S11), both
//! in-process (no worker) and through a running worker.

use std::path::Path;
use std::process::Command;

use crate::support::TestWorker;
use crate::support::claude_mem::{SECRET, build};
use serde_json::json;

fn counts(db: &Path) -> [i64; 4] {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let n = |t: &str| c.query_row(&format!("SELECT count(*) FROM {t} WHERE 1"), [], |r| r.get(0)).unwrap();
    [n("sdk_sessions"), n("user_prompts"), n("observations"), n("session_summaries")]
}

fn cli(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", data)
        .env("MEMD_DATA_DIR", data)
        .env("MEMD_PORT", "1")
        .env("MEMD_LOG", "warn");
    cmd
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run memd");
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn s9_s11_in_process_import_twice_gives_the_same_counts() {
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("claude-mem.db");
    let f = build(&src, false, 3, 4);
    let before = std::fs::read(&src).unwrap();
    let data = tempfile::tempdir().unwrap();

    let first = run_ok(cli(data.path()).arg("import-claude-mem").arg(&src));
    assert!(first.contains("observations: read 12, imported 12"), "{first}");
    let after_first = counts(&data.path().join("memd.db"));
    assert_eq!(after_first, [3, f.prompts as i64, f.observations as i64, 3]);

    let second = run_ok(cli(data.path()).arg("import-claude-mem").arg(&src));
    assert!(
        second.contains("observations: read 12, imported 0, skipped 12 mapped before"),
        "{second}"
    );
    assert!(second.contains("sessions: read 3, imported 0, skipped 3 mapped before"), "{second}");
    assert_eq!(counts(&data.path().join("memd.db")), after_first, "S9: the second run adds nothing");
    assert_eq!(std::fs::read(&src).unwrap(), before, "the source file is never modified");

    let db = rusqlite::Connection::open(data.path().join("memd.db")).unwrap();
    let narrative: String = db
        .query_row("SELECT narrative FROM observations ORDER BY id LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert!(narrative.contains("<redacted type='aws_access_key'/>"), "S11: {narrative}");
    assert!(!narrative.contains(SECRET));
    let (legacy, facts, ty, concepts): (String, String, String, String) = db
        .query_row(
            "SELECT narrative, (SELECT facts FROM observations WHERE id = 3), type, concepts FROM observations WHERE id = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(legacy, "legacy text body about the flaky upload");
    assert_eq!(facts, "[]");
    assert_eq!(ty, "bugfix");
    assert_eq!(concepts, r#"["gotcha"]"#);
    let (status, origin, counter): (String, String, i64) = db
        .query_row(
            "SELECT status, origin, prompt_counter FROM sdk_sessions WHERE content_session_id = 'cs-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), origin.as_str(), counter), ("completed", "import", 2));
    let request: String = db
        .query_row("SELECT request FROM session_summaries WHERE memory_session_id = 'ms-1'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(request, "make uploads reliable (version 1)", "the newest summary of a prompt wins");
}

#[test]
fn s10_old_schema_columns_are_mapped() {
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("old.db");
    build(&src, true, 2, 2);
    let data = tempfile::tempdir().unwrap();
    run_ok(cli(data.path()).arg("import-claude-mem").arg(&src));
    let db = rusqlite::Connection::open(data.path().join("memd.db")).unwrap();
    let ids: Vec<(String, String)> = db
        .prepare("SELECT content_session_id, memory_session_id FROM sdk_sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ids, [("cs-1".into(), "ms-1".into()), ("cs-2".into(), "ms-2".into())]);
    assert_eq!(counts(&data.path().join("memd.db")), [2, 4, 4, 2]);
}

#[test]
fn unreadable_or_foreign_sources_exit_1_and_dry_run_writes_nothing() {
    let data = tempfile::tempdir().unwrap();
    let out = cli(data.path())
        .arg("import-claude-mem")
        .arg(data.path().join("missing.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let foreign = data.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    let out = cli(data.path()).arg("import-claude-mem").arg(&foreign).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a claude-mem database"));
    let src = data.path().join("cm.db");
    build(&src, false, 1, 2);
    let dry = run_ok(cli(data.path()).arg("import-claude-mem").arg("--dry-run").arg(&src));
    assert!(dry.contains("observations: read 2, would import 2"), "{dry}");
    assert_eq!(counts(&data.path().join("memd.db")), [0, 0, 0, 0], "a dry run writes nothing");
}

#[test]
fn import_through_a_running_worker_is_idempotent_and_searchable() {
    let w = TestWorker::start(&[]);
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("claude-mem.db");
    let f = build(&src, false, 2, 3);
    let first = run_ok(w.command().arg("import-claude-mem").arg(&src));
    assert!(first.contains("observations: read 6, imported 6"), "{first}");
    let c1 = counts(&w.db_path());
    assert_eq!(c1, [2, f.prompts as i64, 6, 2]);
    let again = w.post("/api/admin/import-claude-mem", &json!({"path": src}));
    assert_eq!(again.status, 200, "{}", again.text());
    let again = again.json().unwrap();
    assert_eq!((again["observations"].as_i64(), again["sessions"].as_i64()), (Some(0), Some(0)));
    assert_eq!(again["skipped"].as_i64(), Some(2 + 4 + 6 + 3));
    assert_eq!(counts(&w.db_path()), c1);
    // Imported memories appear in search and in context injection.
    let search = w.get("/api/search?query=upload%20retry&project=acme&format=json").json().unwrap();
    assert_eq!(search["observations"].as_array().map(Vec::len), Some(6), "{search}");
    let context = w.get("/api/context/inject?projects=acme").text();
    assert!(context.contains("Upload retry observation 6"), "{context}");
    assert!(context.contains("make uploads reliable"), "{context}");
    let bad = w.post("/api/admin/import-claude-mem", &json!({"path": "/nonexistent/claude-mem.db"}));
    assert_eq!(bad.status, 400);
    assert!(w.status()["import"].is_null());
    // A forgotten imported observation is not brought back by a later import.
    assert_eq!(w.request("DELETE", "/api/observation/1", None).status, 200);
    w.post("/api/admin/import-claude-mem", &json!({"path": src}));
    assert_eq!(w.count("SELECT count(*) FROM observations WHERE id = 1"), 0);
}
