//! Issue 38, memory that stays current, from outside: a real git repository whose commits make an
//! observation stale (and whose unrelated commits and uncommitted edits do not), explicit
//! supersession through `memd remember --supersedes` and MCP `save_memory`, and the consolidation
//! pass through its route (dry run, idempotent, loses no row, its log readable).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TestWorker, wait_until};

const DEADLINE: Duration = Duration::from_secs(30);

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn commit_file(repo: &Path, path: &str, text: &str, msg: &str) -> String {
    std::fs::write(repo.join(path), text).unwrap();
    git(repo, &["add", path]);
    git(repo, &["commit", "-q", "-m", msg]);
    git(repo, &["rev-parse", "HEAD"])
}

fn search_row(w: &TestWorker, project: &str, id: i64) -> Value {
    let v = w
        .get(&format!("/api/search?query=parse_amount&project={project}&format=json"))
        .json()
        .unwrap_or_default();
    v["observations"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == id).cloned())
        .unwrap_or_else(|| panic!("observation #{id} not found: {v}"))
}

fn session_start(w: &TestWorker, project: &str) -> String {
    w.get(&format!("/api/context/inject?projects={project}")).text()
}

#[test]
fn issue_38_a_later_commit_of_the_file_makes_its_observation_stale_and_nothing_else_does() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("ledger");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["init", "-q"]);
    commit_file(&repo, "src/b.rs", "pub fn other() {}\n", "b");
    let before = "pub fn parse_amount(s: &str) -> i64 { s.parse().unwrap() }\n";
    commit_file(&repo, "src/a.rs", before, "a");
    let after_edit = "pub fn parse_amount(s: &str) -> Option<i64> { s.parse().ok() }\n";
    std::fs::write(repo.join("src/a.rs"), after_edit).unwrap();

    let w = TestWorker::start(&[]);
    let cwd = repo.to_string_lossy().into_owned();
    let a = format!("{cwd}/src/a.rs");
    assert_eq!(
        w.post(
            "/api/sessions/init",
            &json!({"contentSessionId": "s1", "prompt": "make parsing total", "cwd": cwd})
        )
        .status,
        200
    );
    let edit = json!({
        "contentSessionId": "s1", "tool_name": "Edit", "tool_use_id": "toolu_a1", "cwd": cwd,
        "tool_input": {"file_path": a, "old_string": before.trim(), "new_string": after_edit.trim()},
        "tool_response": {"filePath": a, "success": true},
    });
    assert_eq!(w.post("/api/sessions/observations", &edit).status, 200);
    assert!(
        wait_until(DEADLINE, || w
            .count("SELECT count(*) FROM observation_anchors WHERE path = 'src/a.rs'")
            > 0),
        "the observation was never anchored: {} observations, {} queued, files {:?}, log {}",
        w.count("SELECT count(*) FROM observations"),
        w.count("SELECT count(*) FROM anchor_queue"),
        w.db()
            .prepare("SELECT path FROM observation_files")
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Vec<_>>(),
        std::fs::read_to_string(w.data_dir().join("logs/memd.log")).unwrap_or_default()
    );
    let (id, project): (i64, String) = w
        .db()
        .query_row(
            "SELECT o.id, o.project FROM observations o JOIN observation_anchors a ON a.observation_id = o.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let stale = |w: &TestWorker| {
        session_start(w, &project);
        search_row(w, &project, id)["stale"].as_bool().unwrap()
    };

    // An uncommitted edit in progress does not make it stale.
    std::fs::write(repo.join("src/a.rs"), "pub fn parse_amount(_: &str) -> Option<i64> { None }\n").unwrap();
    assert!(!stale(&w), "an uncommitted edit made it stale");
    // Committing the very edit it recorded keeps it current.
    commit_file(&repo, "src/a.rs", after_edit, "make parse_amount total");
    assert!(!stale(&w), "committing the recorded edit made it stale");
    // An unrelated commit does not.
    commit_file(&repo, "src/b.rs", "pub fn other() -> u8 { 1 }\n", "unrelated");
    assert!(!stale(&w), "an unrelated commit made it stale");
    let text = session_start(&w, &project);
    assert!(text.contains("src/a.rs") && !text.contains("changed since"), "{text}");

    // A later commit that changes src/a.rs does.
    let change = commit_file(
        &repo,
        "src/a.rs",
        "pub fn parse_amount(s: &str) -> Result<i64, String> { s.parse().map_err(|_| s.into()) }\n",
        "rewrite",
    );
    assert!(stale(&w), "a later commit of the file left it current");
    let row = search_row(&w, &project, id);
    assert_eq!(row["stale_commit"], json!(change), "{row}");
    assert_eq!(row["stale_file"], "src/a.rs");
    let text = session_start(&w, &project);
    // Nothing newer covers src/a.rs, so it is still shown, with its marker.
    assert!(
        text.contains(&format!("Edited src/a.rs [tool] (changed since {})", &change[..7])),
        "shown without its marker: {text}"
    );
    // Once a newer, current observation covers the file, the stale one is no longer injected.
    let init = json!({"contentSessionId": "s2", "prompt": "return errors from parse_amount", "cwd": cwd});
    assert_eq!(w.post("/api/sessions/init", &init).status, 200);
    let newer = json!({
        "contentSessionId": "s2", "tool_name": "Edit", "tool_use_id": "toolu_a2", "cwd": cwd,
        "tool_input": {"file_path": a, "old_string": "Option<i64>", "new_string": "Result<i64, String>"},
        "tool_response": {"filePath": a, "success": true},
    });
    assert_eq!(w.post("/api/sessions/observations", &newer).status, 200);
    assert!(wait_until(DEADLINE, || w
        .count("SELECT count(*) FROM observation_anchors WHERE path = 'src/a.rs'")
        > 1));
    let text = session_start(&w, &project);
    assert_eq!(text.matches("src/a.rs").count(), 1, "{text}");
    assert!(!text.contains("changed since"), "{text}");
    // What changed is in the record the agent reads in full.
    let full = w.get(&format!("/api/observation/{id}")).json().unwrap_or_default();
    assert_eq!(full["stale_commit"], json!(change));
    assert!(full["stale_at"].as_str().is_some_and(|t| t.starts_with("20")), "{full}");
}

#[test]
fn issue_38_a_memory_that_supersedes_ranks_first_and_alone_is_injected() {
    let w = TestWorker::start(&[]);
    let cli = |args: &[&str]| {
        let out = w.command().env("MEMD_PROJECT", "deps").args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(cli(&["remember", "we pin tokio to 1.38"]).trim(), "Saved memory #1 in deps.");
    let out = cli(&["remember", "we moved from tokio 1.38 to 1.40", "--supersedes", "1"]);
    assert!(out.contains("#1 is marked superseded by #2"), "{out}");
    let v = w.get("/api/search?query=tokio&project=deps&format=json").json().unwrap();
    let rows = v["observations"].as_array().unwrap();
    assert_eq!(rows[0]["id"], 2, "{v}");
    assert_eq!(rows[1]["id"], 1);
    assert_eq!(rows[1]["superseded_by"], 2);
    assert_eq!(rows[1]["supersede_reason"], "explicit");
    let text = session_start(&w, "deps");
    assert!(text.contains("1.40") && !text.contains("we pin tokio to 1.38"), "{text}");
    // A supersedes naming nothing is refused, and nothing is saved.
    let bad = w.post("/api/memory/save", &json!({"text": "x", "project": "deps", "supersedes": 99}));
    assert_eq!(bad.status, 404, "{}", bad.text());
    assert_eq!(w.count("SELECT count(*) FROM observations"), 2);

    // The same through MCP `save_memory`.
    let mut c = crate::mcp_stdio::initialized(&w);
    let (text, err) = c.call("save_memory", json!({"text": "we pin serde to 1.0.200", "project": "mcp-deps"}));
    assert!(!err, "{text}");
    let old: i64 = w.db().query_row("SELECT max(id) FROM observations", [], |r| r.get(0)).unwrap();
    let (text, err) = c.call(
        "save_memory",
        json!({"text": "serde is at 1.0.210 after the audit", "project": "mcp-deps", "supersedes": old}),
    );
    assert!(!err, "{text}");
    let v = w.get("/api/search?query=serde&project=mcp-deps&format=json").json().unwrap();
    let rows = v["observations"].as_array().unwrap();
    assert_eq!(rows[0]["id"], old + 1, "{v}");
    assert_eq!(rows[1]["superseded_by"], old + 1, "{v}");
    let text = session_start(&w, "mcp-deps");
    assert!(text.contains("1.0.210") && !text.contains("we pin serde"), "{text}");
}

#[test]
fn issue_38_consolidation_is_idempotent_loses_no_row_and_logs_each_change() {
    let w = TestWorker::start(&[]);
    let save = |text: &str, title: &str| {
        let r = w.post(
            "/api/memory/save",
            &json!({"text": text, "title": title, "project": "shop", "provenance": "user"}),
        );
        assert_eq!(r.status, 200, "{}", r.text());
    };
    save("Use integer cents.", "Prices are cents");
    save("use integer cents", "prices are  cents");
    save("Totals round half-even at the end", "Prices are cents");
    save("We deployed yesterday to staging", "Deploys");
    let rows = w.count("SELECT count(*) FROM observations");

    let dry = w.post("/api/admin/consolidate", &json!({"dryRun": true})).json().unwrap();
    assert_eq!(dry["total"], 2, "{dry}");
    assert_eq!(w.count("SELECT count(*) FROM consolidation_log"), 0, "a dry run writes nothing");
    let run = w.post("/api/admin/consolidate", &json!({})).json().unwrap();
    assert_eq!(run["total"], 2, "{run}");
    let again = w.post("/api/admin/consolidate", &json!({})).json().unwrap();
    assert_eq!(again["total"], 0, "a second run changed something: {again}");
    assert_eq!(w.count("SELECT count(*) FROM observations"), rows, "no row is deleted");
    assert_eq!(
        w.count("SELECT count(*) FROM observations WHERE superseded_by IS NULL"),
        rows - 1,
        "only the duplicate left the live set"
    );
    assert_eq!(w.count("SELECT count(*) FROM observations WHERE narrative LIKE '%yesterday%'"), 0);
    let log = w.get("/api/consolidation").json().unwrap();
    let actions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions.len(), 2, "{log}");
    assert!(actions.contains(&"merge") && actions.contains(&"absolute_date"), "{log}");
}

#[test]
fn issue_38_eval_what_is_true_now_before_and_after() {
    let out = Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["eval", "--paths", "truenow", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MEMD_EMBEDDINGS", "none")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["true_now"].as_array().unwrap();
    let (before, after) = (&runs[0], &runs[1]);
    assert_eq!(
        (before["freshness"].as_bool(), after["freshness"].as_bool()),
        (Some(false), Some(true))
    );
    let n = after["questions"].as_u64().unwrap();
    assert!(n >= 10, "{v}");
    assert_eq!(after["current_first"].as_u64(), Some(n), "the current edit ranks first: {v}");
    assert_eq!(after["stale_injected"].as_u64(), Some(0), "no stale edit is injected: {v}");
    assert_eq!(after["outdated_bytes"].as_u64(), Some(0), "{v}");
    assert_eq!(
        before["stale_injected"].as_u64(),
        Some(n),
        "without freshness every stale edit was injected: {v}"
    );
}
