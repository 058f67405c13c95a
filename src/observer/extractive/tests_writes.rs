//! Unit tests of the extractive observer, part 2: write-group facts and
//! types, fact bounds, mode mapping and the extractive summary
//! (`docs/spec/pipeline.md` §16).

use serde_json::json;

use super::tests::{bash, edit, ok, run, titles};
use super::{observe, summarize};
use crate::observer::types::ToolEvent;

#[test]
fn write_create_versus_overwrite() {
    let create = ok(
        "Write",
        json!({"file_path": "/r/new.rs", "content": "a\nb\nc\n"}),
        json!({"type": "create", "filePath": "/r/new.rs"}),
    );
    let update = ok(
        "Write",
        json!({"file_path": "/r/old.rs", "content": "a"}),
        json!({"type": "update", "filePath": "/r/old.rs"}),
    );
    let obs = run(std::slice::from_ref(&create));
    assert_eq!((obs[0].obs_type.as_str(), titles(&obs)[0]), ("feature", "Created new.rs"));
    assert_eq!(obs[0].facts, vec!["Write new.rs: created (3 lines)"]);
    let obs = run(std::slice::from_ref(&update));
    assert_eq!((obs[0].obs_type.as_str(), titles(&obs)[0]), ("change", "Edited old.rs"));
    assert_eq!(obs[0].facts, vec!["Write old.rs: overwrote (1 lines)"]);
    let obs = run(&[create.clone(), create.clone(), update]);
    assert_eq!(obs[0].obs_type, "change");
    assert_eq!(obs[0].subtitle.as_deref(), Some("Write ×3"));
    let added = ok(
        "apply_patch",
        json!({"input": "*** Begin Patch\n*** Add File: src/n.rs\n+x\n*** End Patch"}),
        json!("Done"),
    );
    let obs = run(&[create, added]);
    assert_eq!(obs[0].obs_type, "feature");
    assert_eq!(obs[0].title.as_deref(), Some("Edited 2 files: new.rs, src/n.rs"));
    assert_eq!(obs[0].facts[1], "apply_patch: 1 file(s): src/n.rs");
}

#[test]
fn multiedit_notebook_and_patch_facts() {
    let multi = ok("MultiEdit", json!({"file_path": "/r/m.rs", "edits": [{}, {}]}), json!({}));
    let nb = ok(
        "NotebookEdit",
        json!({"notebook_path": "/r/n.ipynb", "edit_mode": "insert"}),
        json!({}),
    );
    let nb2 = ok("NotebookEdit", json!({"notebook_path": "/r/n.ipynb", "cell_id": "c1"}), json!({}));
    let patch = ok(
        "apply_patch",
        json!("*** Update File: a.rs\n*** Move to: b.rs\n*** Delete File: c.rs"),
        json!({}),
    );
    let obs = run(&[multi, nb, nb2, patch]);
    let facts = &obs[0].facts;
    assert_eq!(facts[0], "MultiEdit m.rs: 2 edits");
    assert_eq!(facts[1], "NotebookEdit n.ipynb: insert cell ?");
    assert_eq!(facts[2], "NotebookEdit n.ipynb: edit cell c1");
    assert_eq!(facts[3], "apply_patch: 3 file(s): a.rs, b.rs, c.rs");
    assert_eq!(obs[0].subtitle.as_deref(), Some("MultiEdit ×1, NotebookEdit ×2, apply_patch ×1"));
}

#[test]
fn facts_are_bounded() {
    let long_out = "é".repeat(500);
    let events: Vec<ToolEvent> = (0..15).map(|i| bash(&format!("cmd{i} {}", "x".repeat(400)), &long_out)).collect();
    let obs = run(&events);
    assert_eq!(obs[0].facts.len(), 10);
    for fact in &obs[0].facts {
        assert!(fact.chars().count() <= 300, "{fact}");
        assert!(fact.starts_with("`cmd") && fact.ends_with('…'));
    }
    let arg = obs[0].facts[0].split('`').nth(1).unwrap_or_default();
    assert_eq!(arg.chars().count(), 80);
    let huge = ok("Edit", json!({"file_path": format!("/r/{}", "p".repeat(400))}), json!({}));
    let fact = &run(&[huge])[0].facts[0];
    assert_eq!(fact.chars().count(), 300);
}

#[test]
fn types_and_concepts_follow_the_mode() {
    let obs = observe(&[edit("/r/a.rs")], "/r", &["bugfix", "discovery"], &["gotcha"]);
    assert_eq!(obs[0].obs_type, "bugfix");
    assert!(obs[0].concepts.is_empty());
    let obs = observe(&[bash("ls", "")], "/r", &[], &[]);
    assert_eq!(obs[0].obs_type, "discovery");
}

#[test]
fn summary_fields() {
    let titles = vec!["Edited a.rs".to_owned(), " ".to_owned(), "Ran cargo test".to_owned()];
    let s = summarize(Some("  Fix the login bug "), &titles, "\n\nFixed it.\nAll green.\n\nNext: docs.");
    let s = s.unwrap_or_default();
    assert_eq!(s.request.as_deref(), Some("Fix the login bug"));
    assert_eq!(s.investigated.as_deref(), Some("Edited a.rs; Ran cargo test"));
    assert_eq!(s.completed.as_deref(), Some("Fixed it.\nAll green."));
    assert_eq!((s.learned, s.next_steps), (None, None));
    assert_eq!(s.notes.as_deref(), Some("extractive summary (no LLM)"));
    let long = summarize(Some(&"p".repeat(900)), &[], &"c".repeat(900)).unwrap_or_default();
    assert_eq!(long.request.map(|r| r.chars().count()), Some(500));
    assert_eq!(long.completed.map(|c| c.chars().count()), Some(600));
    assert_eq!(long.investigated, None);
    assert_eq!(summarize(None, &titles, " \n "), None);
    assert_eq!(summarize(Some(""), &[], ""), None);
    let only_completed = summarize(None, &[], "Done.").unwrap_or_default();
    assert_eq!((only_completed.request, only_completed.completed.as_deref()), (None, Some("Done.")));
}

/// Gemini CLI's tools (`run_shell_command`, `read_file`, `replace`, `write_file`, `grep_search`,
/// `list_directory`) give the titles, types and file evidence Claude Code's give.
#[test]
fn gemini_tools_read_as_claude_codes() {
    let batch = |shell: &str, read: &str, grep: &str, ls: &str, edit: &str, write: &str| {
        vec![
            ok(
                shell,
                json!({"command": "cargo test"}),
                json!({"output": "test result: ok. 3 passed; 0 failed"}),
            ),
            ok(
                read,
                json!({"file_path": "/r/src/lib.rs"}),
                json!({"output": "pub fn parse_all() {}\n"}),
            ),
            ok(
                grep,
                json!({"pattern": "parse_all", "path": "/r/src"}),
                json!({"output": "src/lib.rs:1"}),
            ),
            ok(ls, json!({"path": "/r/docs"}), json!({"output": "a.md"})),
            ok(
                edit,
                json!({"file_path": "/r/src/main.rs", "old_string": "x", "new_string": "fn run_all() {}"}),
                json!({"output": "ok"}),
            ),
            ok(
                write,
                json!({"file_path": "/r/notes.md", "content": "a\nb"}),
                json!({"output": "ok"}),
            ),
        ]
    };
    let shape = |obs: Vec<crate::observer::types::ObservationDraft>| -> Vec<_> {
        obs.into_iter()
            .map(|o| (o.obs_type, o.title, o.files_read, o.files_modified))
            .collect()
    };
    let claude = shape(run(&batch("Bash", "Read", "Grep", "LS", "Edit", "Write")));
    let gemini = shape(run(&batch(
        "run_shell_command",
        "read_file",
        "grep_search",
        "list_directory",
        "replace",
        "write_file",
    )));
    assert_eq!(gemini, claude);
    let modified: Vec<&String> = gemini.iter().flat_map(|o| &o.3).collect();
    assert_eq!(modified, ["src/main.rs", "notes.md"], "{gemini:?}");
    assert!(gemini.iter().any(|o| o.2 == ["src/lib.rs"]), "the read is recorded: {gemini:?}");
}

#[test]
fn issue_35_edits_and_failed_runs_are_named_in_facts_and_concepts() {
    let e = ok(
        "Edit",
        json!({"file_path": "/r/src/tokenizer.js", "old_string": "function updateTokens() {}",
               "new_string": "function debouncedUpdateTokens() {}\nconst renderTokenAndText = () => {}"}),
        json!({"filePath": "/r/src/tokenizer.js"}),
    );
    let obs = run(&[e]);
    assert_eq!(
        obs[0].title.as_deref(),
        Some("Edited src/tokenizer.js: debouncedUpdateTokens, renderTokenAndText")
    );
    assert!(
        obs[0].facts[0].ends_with("added debouncedUpdateTokens, renderTokenAndText; removed updateTokens"),
        "{:?}",
        obs[0].facts
    );
    for name in ["debouncedUpdateTokens", "renderTokenAndText", "updateTokens"] {
        assert!(obs[0].concepts.iter().any(|c| c == name), "{name} in {:?}", obs[0].concepts);
    }
    let run_out = "test math::tests::test_negative_input_error_display ... FAILED\ntest result: FAILED. 3 passed; 1 failed";
    let f = super::tests::failed("Bash", json!({"command": "cargo test"}), run_out, false);
    let obs = run(&[f]);
    assert_eq!(obs[0].facts[0], "failed tests: math::tests::test_negative_input_error_display");
    assert!(
        obs[0]
            .concepts
            .iter()
            .any(|c| c == "math::tests::test_negative_input_error_display")
    );
}
