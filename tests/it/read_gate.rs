//! The read gate (issue 39, opt-in) through the real PreToolUse hook and worker: a whole-file Read
//! of a large code file memd recorded is denied with its outline and the offset/limit advice; the
//! second whole read, a read with offset/limit, a small file, a file without history, and any
//! read with the gate off pass untouched.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::hook::{run_hook, stdout};
use crate::support::{TestWorker, wait_until};

fn big_source(fns: usize) -> String {
    (0..fns)
        .map(|i| {
            format!(
                "pub fn handler_{i}(req: &Request) -> Response {{\n    let body = render_page_{i}(req);\n    Response::ok(body)\n}}\n\n"
            )
        })
        .collect()
}

/// A session that read `file` whole and then edited it: the observer records an observation
/// about the file whose sources hold the Read's full text.
fn recorded(w: &TestWorker, proj: &Path, file: &Path, text: &str) {
    let cwd = proj.to_str().unwrap();
    let s = "gate-1";
    assert_eq!(
        w.post("/api/sessions/init", &json!({"contentSessionId": s, "prompt": "fix", "cwd": cwd}))
            .status,
        200
    );
    let lines = text.lines().count();
    let read = json!({"contentSessionId": s, "tool_name": "Read", "cwd": cwd, "tool_use_id": "toolu_gate_read",
        "tool_input": {"file_path": file},
        "tool_response": {"type": "text", "file": {"filePath": file, "content": text, "numLines": lines, "startLine": 1, "totalLines": lines}}});
    let edit = json!({"contentSessionId": s, "tool_name": "Edit", "cwd": cwd, "tool_use_id": "toolu_gate_edit",
        "tool_input": {"file_path": file, "old_string": "handler_3(", "new_string": "handler_three("},
        "tool_response": {"filePath": file}});
    assert_eq!(w.post("/api/sessions/observations", &read).status, 200);
    assert_eq!(w.post("/api/sessions/observations", &edit).status, 200);
    assert_eq!(w.post("/api/sessions/complete", &json!({"contentSessionId": s})).status, 200);
    assert!(
        wait_until(Duration::from_secs(30), || w.count("SELECT count(*) FROM observation_files") > 0),
        "the observer recorded the file"
    );
}

fn read_hook(w: &TestWorker, proj: &Path, session: &str, input: Value) -> String {
    let cmd = w.command();
    let event = json!({"session_id": session, "hook_event_name": "PreToolUse", "tool_name": "Read",
                       "cwd": proj, "tool_input": input});
    stdout(&run_hook(cmd, "file-context", &event.to_string()))
}

fn denied(out: &str) -> bool {
    out.contains("\"permissionDecision\":\"deny\"")
}

#[test]
fn a_whole_read_of_a_large_recorded_code_file_gets_its_outline_once() {
    let proj = tempfile::tempdir().unwrap();
    let (big, other, small) = (
        proj.path().join("server.rs"),
        proj.path().join("client.rs"),
        proj.path().join("tiny.rs"),
    );
    let text = big_source(400);
    assert!(text.len() > 40_000);
    for (f, t) in [(&big, text.clone()), (&other, big_source(400)), (&small, big_source(3))] {
        std::fs::write(f, t).unwrap();
    }
    let w = TestWorker::start(&[
        ("MEMD_READ_GATE", "true"),
        ("MEMD_PROVIDER", "extractive"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50"),
    ]);
    recorded(&w, proj.path(), &big, &text);
    recorded(&w, proj.path(), &small, &big_source(3));

    let out = read_hook(&w, proj.path(), "s1", json!({"file_path": big}));
    assert!(denied(&out), "{out}");
    let reason: Value = serde_json::from_str(&out).unwrap();
    let reason = reason["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("memd read gate:") && reason.contains("server.rs is"), "{reason}");
    assert!(
        reason.contains("      1-5     fn handler_0\n") && reason.contains("… 340 more"),
        "{reason}"
    );
    assert!(reason.contains("Read the part you need with offset and limit"), "{reason}");
    assert!(reason.starts_with("<memd-recall"), "the reason is fenced: {reason}");

    assert!(
        !denied(&read_hook(&w, proj.path(), "s1", json!({"file_path": big}))),
        "the second whole read passes"
    );
    assert!(
        denied(&read_hook(&w, proj.path(), "s2", json!({"file_path": big}))),
        "another session is gated on its own"
    );
    assert!(!denied(&read_hook(
        &w,
        proj.path(),
        "s3",
        json!({"file_path": big, "offset": 120, "limit": 40})
    )));
    assert!(
        !denied(&read_hook(&w, proj.path(), "s3", json!({"file_path": small}))),
        "a small file passes"
    );
    assert!(
        !denied(&read_hook(&w, proj.path(), "s3", json!({"file_path": other}))),
        "no history: passes"
    );

    let off = TestWorker::start(&[]);
    assert!(
        !denied(&read_hook(&off, proj.path(), "s4", json!({"file_path": big}))),
        "off by default"
    );
}
