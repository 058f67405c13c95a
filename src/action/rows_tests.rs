use serde_json::{Value, json};

use super::*;

fn conn() -> Connection {
    let mut c = Connection::open_in_memory().unwrap();
    crate::store::migrations::migrate(&mut c, 0).unwrap();
    c
}

const ROOT: &str = "/home/dev/app";

fn call<'a>(session: &'a str, tool: &'a str, input: &'a Value, response: &'a str, is_error: bool, row: i64, at: i64) -> Call<'a> {
    Call {
        project: "app",
        root: Some(ROOT),
        session,
        tool,
        input,
        response,
        is_error,
        row,
        at,
    }
}

fn bash(c: &Connection, session: &str, command: &str, failed: bool, row: i64, at: i64) {
    let input = json!({ "command": command });
    let response = if failed {
        r#"{"error":"Exit code 101\n---- parser::tests::parses_empty stdout ----\ntest parser::tests::parses_empty ... FAILED"}"#
    } else {
        r#"{"stdout":"test result: ok"}"#
    };
    note_call(c, &call(session, "Bash", &input, response, failed, row, at)).unwrap();
}

fn edit(c: &Connection, session: &str, file: &str, failed: bool, row: i64, at: i64) {
    let input = json!({ "file_path": format!("{ROOT}/{file}"), "old_string": "a", "new_string": "b" });
    let response = if failed {
        r#"{"error":"String to replace not found in file.\nString: a"}"#
    } else {
        "{}"
    };
    note_call(c, &call(session, "Edit", &input, response, failed, row, at)).unwrap();
}

#[test]
fn a_failure_opens_its_key_and_a_pass_closes_it_with_the_files_that_fixed_it() {
    let c = conn();
    edit(&c, "s1", "src/parser.rs", false, 1, 1_000);
    bash(&c, "s1", "cargo test parser", true, 2, 2_000);
    let key = command_key("cargo test parser", Some(ROOT)).unwrap();
    let open = open_failure(&c, "app", &key).unwrap().expect("open after a failure");
    assert_eq!(open.failed_session, "s1");
    assert!(open.failure_line.as_deref().unwrap().contains("parses_empty"), "{open:?}");
    assert!(open.fix.is_empty(), "nothing known to fix it yet");

    edit(&c, "s1", "src/parser.rs", false, 3, 3_000);
    bash(&c, "s1", "cargo test parser", false, 4, 4_000);
    assert_eq!(open_failure(&c, "app", &key).unwrap(), None, "a pass closes the key");

    // It fails again in a later session: open, and what fixed it last time is known.
    bash(&c, "s2", "cargo test parser", true, 5, 10_000);
    let again = open_failure(&c, "app", &key).unwrap().unwrap();
    assert_eq!(again.failed_session, "s2");
    assert_eq!(
        again.fix,
        vec![FixFile {
            file: "src/parser.rs".into(),
            observation_id: None
        }]
    );
}

#[test]
fn the_same_command_with_another_temp_path_shares_a_key_another_test_or_subcommand_does_not() {
    let a = command_key(
        "cd /home/dev/app && cargo test parser -- --test-threads=1 --out /tmp/run-aaa/x",
        Some(ROOT),
    );
    let b = command_key(
        "cargo test parser -- --test-threads=1 --out /tmp/run-zzz/x 2>&1 | tail -20",
        Some(ROOT),
    );
    assert_eq!(a, b);
    assert_ne!(
        a,
        command_key("cargo test lexer -- --test-threads=1 --out /tmp/run-aaa/x", Some(ROOT))
    );
    assert_ne!(
        command_key("cargo build", Some(ROOT)),
        command_key("cargo test", Some(ROOT)),
        "another subcommand"
    );
    assert_eq!(command_key("ls -la", Some(ROOT)), None, "not a check");
}

#[test]
fn a_changed_file_before_a_failure_that_a_later_edit_fixed_gets_a_note() {
    let c = conn();
    edit(&c, "s1", "src/lexer.rs", false, 1, 1_000);
    bash(&c, "s1", "cargo test", true, 2, 2_000);
    edit(&c, "s1", "src/lexer.rs", false, 3, 3_000);
    edit(&c, "s1", "src/token.rs", false, 4, 3_500);
    bash(&c, "s1", "cargo test", false, 5, 4_000);
    let notes = file_notes(&c, "app", "src/lexer.rs").unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].kind, NoteKind::BrokeCheck);
    assert_eq!(notes[0].command.as_deref(), Some("cargo test"));
    let fixed: Vec<&str> = notes[0].fix.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(fixed, ["src/token.rs", "src/lexer.rs"]);
    assert!(
        file_notes(&c, "app", "src/token.rs").unwrap().is_empty(),
        "not edited before the failure"
    );
}

#[test]
fn a_suspect_the_fix_left_alone_gets_no_note() {
    let c = conn();
    edit(&c, "s1", "src/readme.rs", false, 1, 1_000);
    edit(&c, "s1", "src/lexer.rs", false, 2, 1_500);
    bash(&c, "s1", "cargo test", true, 3, 2_000);
    edit(&c, "s1", "src/lexer.rs", false, 4, 3_000);
    bash(&c, "s1", "cargo test", false, 5, 4_000);
    assert_eq!(file_notes(&c, "app", "src/lexer.rs").unwrap().len(), 1);
    assert!(
        file_notes(&c, "app", "src/readme.rs").unwrap().is_empty(),
        "edited before the failure, untouched by the fix"
    );
}

#[test]
fn a_failed_edit_leaves_a_note_that_a_later_successful_edit_resolves() {
    let c = conn();
    edit(&c, "s1", "src/gen.rs", true, 1, 1_000);
    let notes = file_notes(&c, "app", "src/gen.rs").unwrap();
    assert_eq!(notes[0].kind, NoteKind::EditFailed);
    assert!(notes[0].line.as_deref().unwrap().contains("String to replace not found"));
    edit(&c, "s1", "src/gen.rs", false, 2, 2_000);
    assert!(file_notes(&c, "app", "src/gen.rs").unwrap().is_empty(), "resolved");
    edit(&c, "s2", "src/gen.rs", true, 3, 3_000);
    assert_eq!(file_notes(&c, "app", "src/gen.rs").unwrap().len(), 1, "recurred");
}

#[test]
fn another_project_keeps_its_own_index() {
    let c = conn();
    bash(&c, "s1", "cargo test parser", true, 1, 1_000);
    let key = command_key("cargo test parser", Some(ROOT)).unwrap();
    assert!(open_failure(&c, "app", &key).unwrap().is_some());
    assert!(open_failure(&c, "other", &key).unwrap().is_none());
}
