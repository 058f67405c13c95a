//! The bridge to Claude Code's own memory (issue 39) with real files in a project: a
//! `CLAUDE.md` and the auto-memory `MEMORY.md` where Claude Code keeps them. An observation that
//! only restates one of their lines is left out of the SessionStart index; reading `MEMORY.md`
//! (through the real PreToolUse hook) adds memd's note of a decision superseded since; `memd
//! promote` writes a topic file and its index line the way Claude Code does, once; Markdown notes
//! from a configured root are imported with `import` provenance and imported again on change.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::support::hook::{run_hook, stdout};
use crate::support::seed::enc;
use crate::support::{TestWorker, wait_until};

fn age(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs)).unwrap();
}

fn save(w: &TestWorker, text: &str, supersedes: Option<i64>) -> i64 {
    let mut body = json!({"text": text, "project": "shop"});
    if let Some(old) = supersedes {
        body["supersedes"] = json!(old);
    }
    let r = w.post("/api/memory/save", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json().unwrap()["id"].as_i64().unwrap()
}

/// The project and its auto-memory directory under the worker's HOME (its data dir).
fn project(w: &TestWorker) -> (tempfile::TempDir, PathBuf) {
    let proj = tempfile::tempdir().unwrap();
    std::fs::write(
        proj.path().join("CLAUDE.md"),
        "# Shop\n\n- Prices are stored as integer cents, never floats.\n- Run `cargo test` before every commit.\n",
    )
    .unwrap();
    let sanitized: String = proj
        .path()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let memory = w.data_dir().join(".claude/projects").join(sanitized).join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(
        memory.join("MEMORY.md"),
        "- [Tokio pin](tokio.md) — We pin tokio to 1.38 in every crate of the workspace\n",
    )
    .unwrap();
    age(&memory.join("MEMORY.md"), 3_600);
    (proj, memory)
}

#[test]
fn claude_codes_memory_files_are_context_memd_does_not_repeat_and_gets_notes_on() {
    let w = TestWorker::start(&[]);
    let (proj, memory) = project(&w);
    let cwd = proj.path().to_str().unwrap();
    save(&w, "Prices are stored as integer cents", None);
    save(&w, "Refunds round half-even since the audit of March", None);
    let with_files = w.get(&format!("/api/context/inject?projects=shop&cwd={}", enc(cwd))).text();
    assert!(with_files.contains("Refunds round half-even"), "{with_files}");
    assert!(
        !with_files.contains("Prices are stored as integer cents"),
        "the restatement is left out: {with_files}"
    );
    let without = w.get("/api/context/inject?projects=shop").text();
    assert!(
        without.contains("Prices are stored as integer cents"),
        "without the files it is shown: {without}"
    );

    // A decision superseded since MEMORY.md was written: reading it gets memd's note.
    let old = save(&w, "we pin tokio to 1.38 in every crate", None);
    let new = save(&w, "the workspace moved to tokio 1.40", Some(old));
    let index = memory.join("MEMORY.md");
    let mut cmd = w.command();
    cmd.env("MEMD_PROJECT", "shop");
    let event = json!({"session_id": "s-read", "hook_event_name": "PreToolUse", "tool_name": "Read", "cwd": cwd,
                       "tool_input": {"file_path": index}});
    let out = stdout(&run_hook(cmd, "file-context", &event.to_string()));
    assert!(out.contains("memd has newer evidence about lines of MEMORY.md"), "{out}");
    assert!(
        out.contains(&format!("superseded since — #{new} the workspace moved to tokio 1.40")),
        "{out}"
    );

    // memd promote: a topic file and one index line, the second time nothing.
    let promote = |dry: bool| {
        let mut args = vec!["promote".to_string(), format!("#{new}")];
        if dry {
            args.push("--dry-run".into());
        }
        let o = w.command().args(&args).current_dir(proj.path()).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let dry = promote(true);
    assert!(
        dry.contains("would create") && dry.contains("the-workspace-moved-to-tokio-1-40.md"),
        "{dry}"
    );
    assert!(
        !memory.join("the-workspace-moved-to-tokio-1-40.md").exists(),
        "a dry run writes nothing"
    );
    promote(false);
    let topic = std::fs::read_to_string(memory.join("the-workspace-moved-to-tokio-1-40.md")).unwrap();
    assert!(
        topic.starts_with("---\nname: the-workspace-moved-to-tokio-1-40\ndescription: "),
        "{topic}"
    );
    let index_text = std::fs::read_to_string(&index).unwrap();
    assert!(
        index_text.starts_with("- [Tokio pin](tokio.md)"),
        "the index keeps its lines: {index_text}"
    );
    assert!(
        index_text.contains("(the-workspace-moved-to-tokio-1-40.md) — the workspace moved to tokio 1.40\n"),
        "{index_text}"
    );
    assert!(promote(false).contains("already there"));
}

#[test]
fn markdown_notes_are_imported_with_import_provenance_and_again_on_change() {
    let notes = tempfile::tempdir().unwrap();
    let file = notes.path().join("deploys.md");
    std::fs::write(&file, "# Deploys\n\nStaging first, then production, never on Fridays.\n").unwrap();
    age(&file, 600);
    std::fs::write(notes.path().join("fresh.md"), "# Being written\n").unwrap();
    let roots = notes.path().to_str().unwrap().to_string();
    let mut w = TestWorker::start(&[("MEMD_NOTES_ROOTS", roots.as_str())]);
    let q = "SELECT count(*) FROM observations WHERE provenance = 'import' AND imported_from LIKE 'notes:%'";
    assert!(
        wait_until(Duration::from_secs(10), || w.count(q) == 1),
        "the stable note is imported, the fresh one not yet"
    );
    let hit = w.get("/api/search?query=Fridays&project=*").text();
    assert!(hit.contains("Deploys"), "{hit}");

    std::fs::write(&file, "# Deploys\n\nStaging first, then a canary, then production.\n").unwrap();
    age(&file, 600);
    w.stop();
    w.spawn();
    assert!(
        wait_until(Duration::from_secs(10), || w.count(q) == 2),
        "the changed note is imported again"
    );
    assert_eq!(
        w.count("SELECT count(*) FROM observations WHERE imported_from LIKE 'notes:%deploys.md' AND superseded_by IS NOT NULL"),
        1,
        "the earlier version is kept, superseded"
    );
}
