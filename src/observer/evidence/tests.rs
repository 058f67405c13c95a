//! Unit tests of file evidence: conformance cases F1, F2, F3, F5, F6
//! (`docs/spec/pipeline.md` §20) plus normalisation and patch-header edge cases.

use serde_json::{Value, json};

use super::{PatchOp, collect, correct, normalize, patch_headers};
use crate::observer::types::{ObservationDraft, ToolEvent};

fn ev(tool: &str, input: Value) -> ToolEvent {
    ToolEvent {
        row_id: 1,
        tool_name: tool.to_owned(),
        tool_input: input,
        tool_response: json!({}),
        is_error: false,
        cwd: Some("/r".to_owned()),
        occurred_at_epoch: 0,
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn f1_evidence_and_model_claims() {
    let events = vec![
        ev("Read", json!({"file_path": "/r/src/read.ts"})),
        ev("Write", json!({"file_path": "/r/src/write.ts", "content": "x"})),
        ev(
            "apply_patch",
            json!("*** Begin Patch\n*** Update File: src/patch.ts\n@@\n-a\n+b\n*** End Patch"),
        ),
        ev(
            "apply_patch",
            json!({"patch": "--- a/src/json-patch.ts\n+++ b/src/json-patch.ts\n@@ -1 +1 @@\n-a\n+b"}),
        ),
    ];
    let evidence = collect(&events, "/r");
    let mut draft = ObservationDraft {
        files_modified: strings(&["src/other.ts"]),
        files_read: strings(&["src/model-read.ts"]),
        ..Default::default()
    };
    correct(&mut draft, &evidence, "/r");
    assert_eq!(draft.files_read, strings(&["src/read.ts", "src/model-read.ts"]));
    assert_eq!(
        draft.files_modified,
        strings(&["src/write.ts", "src/patch.ts", "src/json-patch.ts"])
    );
}

#[test]
fn f2_model_modified_list_discarded() {
    let events = vec![ev("Read", json!({"file_path": "/r/src/a.ts"}))];
    let mut draft = ObservationDraft {
        files_modified: strings(&["src/a.ts"]),
        ..Default::default()
    };
    correct(&mut draft, &collect(&events, "/r"), "/r");
    assert!(draft.files_modified.is_empty());
    assert_eq!(draft.files_read, strings(&["src/a.ts"]));
}

#[test]
fn f3_patch_headers() {
    let deleted = vec![ev(
        "apply_patch",
        json!({"patch": "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x"}),
    )];
    assert_eq!(collect(&deleted, "/r").modified, strings(&["old.txt"]));
    let moved = vec![ev("apply_patch", json!("*** Update File: src/old.rs\n*** Move to: src/new.rs"))];
    assert_eq!(collect(&moved, "/r").modified, strings(&["src/old.rs", "src/new.rs"]));
}

#[test]
fn f5_outside_root_multiedit_and_windows_root() {
    let events = vec![
        ev(
            "Edit",
            json!({"file_path": "/elsewhere/x.rs", "old_string": "a", "new_string": "b"}),
        ),
        ev(
            "MultiEdit",
            json!({"file_path": "/r/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
    ];
    assert_eq!(collect(&events, "/r").modified, strings(&["/elsewhere/x.rs", "a.rs"]));
    let mut win = ev("Edit", json!({"file_path": "C:\\r\\b.rs"}));
    win.cwd = Some("C:\\r".to_owned());
    assert_eq!(collect(&[win], "C:/r").modified, strings(&["b.rs"]));
}

#[test]
fn f6_failed_write_is_no_evidence() {
    let mut failed = ev("Edit", json!({"file_path": "/r/c.rs"}));
    failed.is_error = true;
    failed.tool_response = json!({"error": "String not found", "is_interrupt": false});
    let evidence = collect(&[failed], "/r");
    assert!(evidence.modified.is_empty() && evidence.read.is_empty());
}

#[test]
fn read_fields_and_edits_items() {
    let events = vec![
        ev("NotebookRead", json!({"notebookPath": "nb.ipynb"})),
        ev("read_file", json!({"path": "docs/x.md"})),
        ev(
            "Read",
            json!({"path": "ignored-for-Read.md", "filePaths": ["/r/p1", 7, "/r/p1", "q2"]}),
        ),
        ev(
            "MultiEdit",
            json!({"edits": [{"file_path": "/r/e1.rs"}, {"path": "e2.rs"}, "junk"]}),
        ),
        ev("Grep", json!({"pattern": "x", "path": "/r/src"})),
    ];
    let evidence = collect(&events, "/r");
    assert_eq!(evidence.read, strings(&["nb.ipynb", "docs/x.md", "p1", "q2"]));
    assert_eq!(evidence.modified, strings(&["e1.rs", "e2.rs"]));
}

#[test]
fn relative_paths_resolve_against_cwd_and_root() {
    let mut e = ev("Edit", json!({"file_path": "../lib/./x.rs"}));
    e.cwd = Some("/r/app/src".to_owned());
    assert_eq!(collect(&[e], "/r").modified, strings(&["app/lib/x.rs"]));
    let mut draft = ObservationDraft {
        files_read: strings(&["./a/../b.rs", "/r/b.rs", "", "/abs/c.rs", "../up.rs"]),
        ..Default::default()
    };
    correct(&mut draft, &Default::default(), "/r/");
    assert_eq!(draft.files_read, strings(&["b.rs", "/abs/c.rs", "/up.rs"]));
}

#[test]
fn normalisation_edges() {
    assert_eq!(normalize("/rr/x", "/r", "/r").as_deref(), Some("/rr/x"));
    assert_eq!(normalize("/r", "/r", "/r").as_deref(), Some("."));
    assert_eq!(normalize("/../../etc//passwd", "/", "/r").as_deref(), Some("/etc/passwd"));
    assert_eq!(normalize("c:\\R\\x.rs", "", "C:/R").as_deref(), Some("x.rs"));
    assert_eq!(normalize("D:\\x\\..\\y", "", "C:/r").as_deref(), Some("D:/y"));
    assert_eq!(normalize("x.rs", "", "").as_deref(), Some("x.rs"));
    assert_eq!(normalize("../x.rs", "rel", "").as_deref(), Some("x.rs"));
    assert_eq!(normalize("../../x.rs", "rel", "/r").as_deref(), Some("../x.rs"));
    assert_eq!(normalize("   ", "/r", "/r"), None);
    assert_eq!(normalize("é/ü.rs", "/r/ß", "/r").as_deref(), Some("ß/é/ü.rs"));
}

#[test]
fn patch_header_details() {
    let text =
        "--- /dev/null\n+++ b/new.rs\t2024-01-01\n@@\n--- sql comment removed\n-x\n+++ added line\n*** Add File: z.rs\n*** Delete File: \n";
    assert_eq!(
        patch_headers(text),
        vec![(PatchOp::Add, "new.rs".to_owned()), (PatchOp::Add, "z.rs".to_owned())]
    );
    assert!(patch_headers("").is_empty());
    assert!(patch_headers("--- a/x").is_empty());
}

#[test]
fn odd_inputs_never_panic() {
    let odd = [
        json!(null),
        json!(42),
        json!([1, 2]),
        json!("plain"),
        json!({"file_path": 5, "edits": "no"}),
    ];
    for input in odd {
        for tool in ["Read", "Edit", "apply_patch", "Bash"] {
            let mut e = ev(tool, input.clone());
            e.cwd = None;
            let evidence = collect(&[e], "");
            assert!(evidence.modified.len() <= 1);
        }
    }
}
