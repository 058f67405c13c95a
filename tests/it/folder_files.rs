//! Folder context files (issue 39) in a real git work tree: edits recorded by the extractive
//! observer become a section between memd's markers in each folder's `CLAUDE.md`; `memd folders
//! --dry-run` shows it and writes nothing; vendored and git-ignored folders get nothing; a
//! person's text outside the markers survives ten regenerations byte for byte; off by default.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::{TestWorker, wait_until};

const BEGIN: &str = "<!-- memd:begin";
const END: &str = "<!-- memd:end -->";

fn memd(w: &TestWorker, args: &[&str]) -> (bool, String, String) {
    let out = w.command().args(args).output().expect("run memd");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// One session that writes `files` (paths under `proj`), completed; waits for its observation.
fn edit(w: &TestWorker, proj: &Path, session: &str, files: &[&str]) {
    let before = w.count("SELECT count(*) FROM observations");
    let cwd = proj.to_str().unwrap();
    let init = json!({"contentSessionId": session, "prompt": "edit the shop", "cwd": cwd});
    assert_eq!(w.post("/api/sessions/init", &init).status, 200);
    for (i, f) in files.iter().enumerate() {
        let body = json!({
            "contentSessionId": session, "tool_name": "Write", "cwd": cwd,
            "tool_input": {"file_path": proj.join(f), "content": format!("// {session} {f}\nfn step_{i}() {{}}\n")},
            "tool_response": {"type": "create", "filePath": proj.join(f)},
            "tool_use_id": format!("toolu_{session}_{i}"),
        });
        assert_eq!(w.post("/api/sessions/observations", &body).status, 200);
    }
    assert_eq!(w.post("/api/sessions/complete", &json!({"contentSessionId": session})).status, 200);
    assert!(
        wait_until(Duration::from_secs(30), || w.count("SELECT count(*) FROM observations") > before),
        "the observer recorded {session}"
    );
}

fn outside(text: &str) -> String {
    let (b, e) = (
        text.find(BEGIN).expect("begin marker"),
        text.find(END).expect("end marker") + END.len(),
    );
    format!("{}{}", &text[..b], &text[e..])
}

#[test]
fn folder_files_keep_a_persons_text_and_skip_vendored_and_ignored_folders() {
    let repo = tempfile::tempdir().unwrap();
    let proj = repo.path();
    for d in ["src", "docs", "node_modules/left-pad", "cache"] {
        std::fs::create_dir_all(proj.join(d)).unwrap();
    }
    std::fs::write(proj.join(".gitignore"), "cache/\n").unwrap();
    let person = "# Pricing code\n\nOur rule: never floats.\r\nKeep this   \n\tline.";
    std::fs::write(proj.join("src/CLAUDE.md"), person).unwrap();
    let git = Command::new("git").arg("-C").arg(proj).args(["init", "-q"]).status().unwrap();
    assert!(git.success());

    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "extractive"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50"),
        ("MEMD_FOLDER_CONTEXT", "true"),
    ]);
    edit(
        &w,
        proj,
        "f-0",
        &["src/price.rs", "docs/guide.md", "node_modules/left-pad/index.js", "cache/blob.rs"],
    );

    let (ok, stdout, stderr) = memd(&w, &["folders", "--dry-run"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(&format!("update  {}", proj.join("src/CLAUDE.md").display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("create  {}", proj.join("docs/CLAUDE.md").display())),
        "{stdout}"
    );
    assert!(stdout.contains("cache/CLAUDE.md  (git ignores the folder)"), "{stdout}");
    assert!(stdout.contains("| ### price.rs"), "the dry run shows the section: {stdout}");
    assert!(!stdout.contains("node_modules"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(proj.join("src/CLAUDE.md")).unwrap(),
        person,
        "a dry run writes nothing"
    );
    assert!(!proj.join("docs/CLAUDE.md").exists());

    let (ok, _, stderr) = memd(&w, &["folders"]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(proj.join("src/CLAUDE.md")).unwrap();
    assert!(text.starts_with(person), "{text}");
    assert!(text.contains("### price.rs\n- #"), "{text}");
    assert!(std::fs::read_to_string(proj.join("docs/CLAUDE.md")).unwrap().starts_with(BEGIN));
    assert!(!proj.join("cache/CLAUDE.md").exists() && !proj.join("node_modules/left-pad/CLAUDE.md").exists());
    assert!(!proj.join("CLAUDE.md").exists(), "no file where nothing was observed");

    let kept = outside(&text);
    for n in 1..=10 {
        edit(&w, proj, &format!("f-{n}"), &[&format!("src/step_{n}.rs")]);
        assert!(memd(&w, &["folders"]).0);
        let now = std::fs::read_to_string(proj.join("src/CLAUDE.md")).unwrap();
        assert_eq!(outside(&now), kept, "regeneration {n}: the person's text is unchanged");
        assert!(now.contains(&format!("### step_{n}.rs")), "regeneration {n}: {now}");
    }
}

#[test]
fn folder_files_are_off_by_default() {
    let w = TestWorker::start(&[]);
    let (ok, _, stderr) = memd(&w, &["folders"]);
    assert!(!ok);
    assert!(stderr.contains("MEMD_FOLDER_CONTEXT=true"), "{stderr}");
    let (ok, stdout, _) = memd(&w, &["folders", "--dry-run"]);
    assert!(ok && stdout.contains("No folder has recent observations"), "{stdout}");
}
