//! Unit tests of the extractive observer: conformance cases E1, E2
//! (`docs/spec/pipeline.md` §20) plus the §16 table details.

use serde_json::{Value, json};

use super::observe;
use crate::observer::types::{ObservationDraft, ToolEvent};

pub(super) const TYPES: &[&str] = &[
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
    "security_alert",
    "security_note",
    "sensitive",
];
pub(super) const CONCEPTS: &[&str] = &[
    "how-it-works",
    "why-it-exists",
    "what-changed",
    "problem-solution",
    "gotcha",
    "pattern",
    "trade-off",
];

pub(super) fn ok(tool: &str, input: Value, response: Value) -> ToolEvent {
    ToolEvent {
        row_id: 1,
        tool_name: tool.to_owned(),
        tool_input: input,
        tool_response: response,
        is_error: false,
        cwd: Some("/r".to_owned()),
        occurred_at_epoch: 1_790_932_460_000,
    }
}

pub(super) fn failed(tool: &str, input: Value, error: &str, interrupt: bool) -> ToolEvent {
    let mut e = ok(tool, input, json!({"error": error, "is_interrupt": interrupt}));
    e.is_error = true;
    e
}

pub(super) fn bash(command: &str, stdout: &str) -> ToolEvent {
    let resp = json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false});
    ok("Bash", json!({"command": command}), resp)
}

pub(super) fn read(path: &str) -> ToolEvent {
    ok(
        "Read",
        json!({"file_path": path}),
        json!({"type": "text", "file": {"filePath": path}}),
    )
}

pub(super) fn edit(path: &str) -> ToolEvent {
    let input = json!({"file_path": path, "old_string": "x", "new_string": "y\nz", "replace_all": false});
    ok("Edit", input, json!({"filePath": path}))
}

pub(super) fn run(events: &[ToolEvent]) -> Vec<ObservationDraft> {
    observe(events, "/r", TYPES, CONCEPTS)
}

pub(super) fn titles(obs: &[ObservationDraft]) -> Vec<&str> {
    obs.iter().filter_map(|o| o.title.as_deref()).collect()
}

#[test]
fn e1_edit_and_cargo_test() {
    let obs = run(&[
        edit("/r/src/a.rs"),
        bash("cargo test", "running 3 tests\ntest result: ok. 3 passed"),
    ]);
    assert_eq!(obs.len(), 2);
    assert_eq!(obs[0].obs_type, "change");
    assert_eq!(obs[0].title.as_deref(), Some("Edited src/a.rs"));
    assert_eq!(obs[0].facts, vec!["Edit src/a.rs: replaced 1 line(s) with 2 line(s)"]);
    assert_eq!(obs[0].concepts, vec!["what-changed"]);
    assert_eq!(obs[0].subtitle.as_deref(), Some("Edit ×1"));
    assert_eq!(obs[0].narrative, None);
    assert_eq!(obs[1].obs_type, "discovery");
    assert_eq!(obs[1].title.as_deref(), Some("Ran cargo test: test result: ok. 3 passed"));
    assert_eq!(obs[1].facts, vec!["`cargo test` → test result: ok. 3 passed"]);
    assert_eq!(obs[1].concepts, vec!["how-it-works"]);
    // Issue 15: each observation names only the files its own events touched.
    assert_eq!(obs[0].files_modified, vec!["src/a.rs"]);
    assert!(obs[1].files_modified.is_empty(), "the test run changed no file");
    assert!(obs.iter().all(|o| o.files_read.is_empty()));
}

#[test]
fn e2_reads_then_failed_build() {
    let obs = run(&[read("/r/a.rs"), read("/r/b.rs"), read("/r/c.rs")]);
    assert_eq!(titles(&obs), vec!["Explored 3 files: a.rs, b.rs, …"]);
    assert_eq!(obs[0].obs_type, "discovery");
    assert_eq!(obs[0].facts, vec!["Read a.rs", "Read b.rs", "Read c.rs"]);
    assert_eq!(obs[0].files_read, vec!["a.rs", "b.rs", "c.rs"]);
    assert_eq!(obs[0].subtitle.as_deref(), Some("Read ×3"));
    let build = failed("Bash", json!({"command": "cargo build"}), "Exit code 101\nerror[E0308]", false);
    let obs = run(std::slice::from_ref(&build));
    // Issue 15: the failure is titled by its salient line, not by the first line printed.
    assert_eq!(titles(&obs), vec!["Bash failed: error[E0308]"]);
    assert_eq!(obs[0].obs_type, "discovery");
    assert_eq!(obs[0].facts, vec!["Bash cargo build: error[E0308]"]);
    assert_eq!(obs[0].concepts, vec!["gotcha"]);
    // In one batch a read of a file is its own observation, and only it names the file read.
    let obs = run(&[read("/r/a.rs"), build]);
    assert_eq!(titles(&obs), vec!["Bash failed: error[E0308]", "Read a.rs"]);
    assert!(obs[0].files_read.is_empty());
    assert_eq!(obs[1].files_read, vec!["a.rs"]);
}

#[test]
fn groups_in_order_w_f_x() {
    let events = [
        bash("ls", "x"),
        failed("Edit", json!({"file_path": "/r/c.rs"}), "no match", false),
        edit("/r/a.rs"),
    ];
    let obs = run(&events);
    assert_eq!(titles(&obs), vec!["Edited a.rs", "Edit failed: no match", "Ran ls"]);
    assert_eq!(obs[1].facts, vec!["Edit c.rs: no match"]);
    assert_eq!(obs[0].files_modified, vec!["a.rs"]);
    assert!(obs[1..].iter().all(|o| o.files_modified.is_empty() && o.files_read.is_empty()));
}

/// Issue 15: files come from an observation's own events; a read names the file's definitions;
/// an edit is titled by what it added; a test run by its totals; noise never titles a failure.
#[test]
fn issue_15_each_observation_names_only_its_own_files() {
    let read_app = ok(
        "Read",
        json!({"file_path": "/r/src/app.py"}),
        json!({"type": "text", "file": {"filePath": "/r/src/app.py", "content": "import os\nclass App:\n    pass\ndef load_config(path):\n    return {}\n"}}),
    );
    let edit_cfg = ok(
        "Edit",
        json!({"file_path": "/r/src/config.py", "old_string": "def load(p):", "new_string": "def load_settings(p, strict_mode=True):"}),
        json!({"filePath": "/r/src/config.py"}),
    );
    let pytest = bash(
        "uv run pytest",
        "============================= test session starts ==============================\ncollected 4 items\n\ntests/test_app.py ....\n\n============================== 4 passed in 0.12s ===============================",
    );
    let failing = failed(
        "Bash",
        json!({"command": "uv run ty check"}),
        "Exit code 1\nWARN ty is pre-release software and not ready for production use\nerror[unresolved-import]: Cannot resolve imported module `yaml`",
        false,
    );
    let listing = bash("ls", "src\ntests");
    let obs = run(&[read_app, edit_cfg, pytest, failing, listing]);
    assert_eq!(
        titles(&obs),
        vec![
            "Edited src/config.py: load_settings, strict_mode",
            "Bash failed: error[unresolved-import]: Cannot resolve imported module `yaml`",
            "Ran 2 commands: uv run pytest; ls: 4 passed in 0.12s",
            "Read src/app.py: App, load_config",
        ]
    );
    assert_eq!(obs[0].files_modified, vec!["src/config.py"]);
    assert!(obs[0].files_read.is_empty());
    for o in &obs[1..3] {
        assert!(o.files_modified.is_empty() && o.files_read.is_empty(), "{:?}", o.title);
    }
    assert_eq!(obs[3].files_read, vec!["src/app.py"]);
    assert!(obs[3].files_modified.is_empty());
    assert_eq!(obs[3].facts, vec!["Read src/app.py defines App, load_config"]);
}

#[test]
fn mcp_tools_shown_as_server_tool() {
    let input = json!({"owner": "acme", "repo": "shop", "title": "Bug"});
    let created = ok("mcp__github__create_issue", input, json!([{"type": "text", "text": "created #12"}]));
    let obs = run(&[created]);
    assert_eq!(titles(&obs), vec!["Ran github/create_issue acme"]);
    assert_eq!(obs[0].facts, vec!["`github/create_issue acme` → created #12"]);
    assert_eq!(obs[0].subtitle.as_deref(), Some("github/create_issue ×1"));
    let timeout = failed(
        "mcp__github__get_issue",
        json!({"owner": "acme", "repo": "shop", "issue_number": 77}),
        "MCP error -32001: request timed out",
        true,
    );
    let obs = run(&[timeout]);
    assert_eq!(titles(&obs), vec!["github/get_issue interrupted"]);
    assert_eq!(
        obs[0].facts,
        vec!["github/get_issue acme: MCP error -32001: request timed out (interrupted)"]
    );
}

#[test]
fn interrupted_and_multiple_failures() {
    let input = json!({"command": "cargo test", "description": "Run tests"});
    let obs = run(&[failed("Bash", input.clone(), "Interrupted by user", true)]);
    assert_eq!(titles(&obs), vec!["Bash interrupted"]);
    assert_eq!(obs[0].facts, vec!["Bash Run tests: Interrupted by user (interrupted)"]);
    let two = [
        failed("Bash", input, "", false),
        failed("Grep", json!({"pattern": "p"}), "bad regex", false),
    ];
    let obs = run(&two);
    assert_eq!(titles(&obs), vec!["2 tool calls failed; first: Bash failed"]);
    assert_eq!(obs[0].facts, vec!["Bash Run tests", "Grep \"p\" in .: bad regex"]);
}

#[test]
fn read_group_args_and_search_titles() {
    let grep = ok(
        "Grep",
        json!({"pattern": "fn main", "path": "/r/src", "output_mode": "content"}),
        json!({}),
    );
    let fetch = ok(
        "WebFetch",
        json!({"url": "https://example.com/doc", "prompt": "summarise"}),
        json!({}),
    );
    let glob = ok("Glob", json!({"pattern": "**/*.rs"}), json!({}));
    let search = ok("WebSearch", json!({"query": "rust edition 2024"}), json!({}));
    let obs = run(&[grep, fetch, glob, search]);
    assert_eq!(titles(&obs), vec!["Searched for \"fn main\""]);
    assert_eq!(
        obs[0].facts,
        vec![
            "Grep \"fn main\" in src",
            "WebFetch https://example.com/doc",
            "Glob **/*.rs",
            "WebSearch rust edition 2024"
        ]
    );
    assert_eq!(obs[0].subtitle.as_deref(), Some("Grep ×1, WebFetch ×1, Glob ×1, WebSearch ×1"));
    let obs = run(&[ok("Grep", json!({"pattern": "x"}), json!({})), read("/r/a.rs"), read("/r/a.rs")]);
    assert_eq!(titles(&obs), vec!["Read a.rs"]);
    assert_eq!(obs[0].facts, vec!["Grep \"x\" in .", "Read a.rs"]);
}

#[test]
fn many_files_and_commands_get_ellipsis() {
    assert_eq!(
        titles(&run(&[edit("/r/a.rs"), edit("/r/b.rs")])),
        vec!["Edited 2 files: a.rs, b.rs"]
    );
    let obs = run(&[edit("/r/a.rs"), edit("/r/b.rs"), edit("/r/a.rs"), edit("/x/c.rs")]);
    assert_eq!(titles(&obs), vec!["Edited 3 files: a.rs, b.rs, …"]);
    assert_eq!(obs[0].facts.len(), 3, "duplicate facts are dropped");
    let obs = run(&[bash("a", ""), bash("b", ""), bash("c", "")]);
    assert_eq!(titles(&obs), vec!["Ran 3 commands: a; b; …"]);
    assert_eq!(obs[0].facts[0], "`a` → (no output)");
    assert_eq!(titles(&run(&[bash("a", ""), bash("b", "")])), vec!["Ran 2 commands: a; b"]);
}

#[test]
fn deterministic_and_total() {
    let events = [edit("/r/a.rs"), bash("cargo test", "ok"), read("/r/b.rs")];
    assert_eq!(run(&events), run(&events));
    assert!(run(&[]).is_empty());
    let odd = [
        json!(null),
        json!("s\n"),
        json!(7),
        json!([1]),
        json!({"edits": 3, "command": ["ls", 1]}),
    ];
    for input in odd {
        for tool in ["Bash", "Edit", "Write", "apply_patch", "Grep", "LS", "NotebookEdit", "mcp__", "X"] {
            let mut events = vec![ok(tool, input.clone(), input.clone())];
            events.push(failed(tool, input.clone(), "", false));
            events[1].tool_response = input.clone();
            events[0].cwd = None;
            let obs = observe(&events, "", TYPES, CONCEPTS);
            assert!(!obs.is_empty() && obs.iter().all(|o| o.title.is_some()));
        }
    }
}
