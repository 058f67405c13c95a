//! Memory at the point of action under the real Claude Code CLI (issue 53), driven offline by the
//! fake Anthropic API: session 1 runs a failing check, edits the file that fixes it (the rerun is
//! warned once, as this session's failure), sees it pass, breaks it again and leaves it failing
//! (not warned twice); session 2's scripted agent runs the same check — the
//! request after that call carries memd's warning (the failure line and the file that fixed it) —
//! then edits the named file, and the use tracker marks the warning used.

use std::path::Path;

use serde_json::json;

use crate::support::DEADLINE;
use crate::support::claude_host::{Host, claude_bin};
use crate::support::fake_anthropic::{Plan, Turn, tool};
use crate::support::wait_until;

const CHECK: &str = "sh run-checks.sh";

fn plans(proj: &Path) -> Vec<Plan> {
    let lib = proj.join("src/lib.txt");
    let bash = |command: &str| tool("Bash", json!({"command": command, "description": "Run the checks"}));
    let fix = tool(
        "Edit",
        json!({"file_path": lib, "old_string": "state = broken", "new_string": "state = fixed"}),
    );
    vec![
        Plan {
            key: "act-one".into(),
            turns: vec![
                bash(CHECK),
                tool("Read", json!({ "file_path": lib })),
                fix.clone(),
                bash(CHECK),
                bash("cp src/lib.orig src/lib.txt"),
                bash(CHECK),
                Turn::Text("Left it failing.".into()),
            ],
        },
        Plan {
            key: "act-two".into(),
            turns: vec![
                bash(CHECK),
                tool("Read", json!({ "file_path": lib })),
                fix,
                Turn::Text("Fixed.".into()),
            ],
        },
    ]
}

#[test]
fn a_repeated_failing_check_is_warned_in_the_models_request_and_the_fix_marks_it_used() {
    let Some(bin) = claude_bin() else {
        return;
    };
    let h = Host::new(bin, plans);
    std::fs::write(
        h.proj.join("run-checks.sh"),
        "grep -q 'state = fixed' src/lib.txt || { echo 'FAILED: test_state_machine expected state = fixed'; exit 1; }\necho ok\n",
    )
    .unwrap();
    std::fs::write(h.proj.join("src/lib.txt"), "state = broken\n").unwrap();
    std::fs::write(h.proj.join("src/lib.orig"), "state = broken\n").unwrap();
    let install = h.memd(&["install"]);
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));

    let tools = ["--allowedTools", "Bash,Read,Edit"];
    let first = h.claude("act-one: make the checks pass", &tools);
    assert!(
        wait_until(DEADLINE, || h
            .count("SELECT count(*) FROM tool_uses WHERE content_session_id = ?1", &first)
            >= 6),
        "session 1's calls captured"
    );
    assert!(
        wait_until(DEADLINE, || h
            .count("SELECT count(*) FROM action_failures WHERE open = 1 AND command_key = ?1", CHECK)
            == 1),
        "the check is failing again at the end of session 1"
    );
    // In session 1 the rerun after the fix is warned once, as this session's failure; the third
    // run (after the file was broken again) is not warned again.
    let requests = h.fake.requests_of("act-one");
    let last = requests.last().expect("session 1's requests").conversation_text();
    assert_eq!(
        last.matches("memd action memory").count(),
        1,
        "one warning in the session of the failure: {last}"
    );
    assert!(last.contains("in this session and has not passed since"), "{last}");

    let second = h.claude("act-two: run the checks", &tools);
    let requests = h.fake.requests_of("act-two");
    let after = requests
        .iter()
        .find(|r| r.tool_results() == 1)
        .expect("the request after the check");
    let text = after.conversation_text();
    assert!(text.contains("memd action memory"), "the warning reached the model: {text}");
    assert!(text.contains("in an earlier session"), "{text}");
    assert!(text.contains("FAILED: test_state_machine"), "with the failure line: {text}");
    assert!(text.contains("src/lib.txt"), "and the file that fixed it: {text}");
    assert!(
        wait_until(DEADLINE, || h.count(
            "SELECT count(*) FROM injections WHERE content_session_id = ?1 AND source = 'action' AND delivered = 1 AND used = 1",
            &second
        ) == 1),
        "the warning was marked delivered and used"
    );
    let stats = h.memd(&["stats", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    // Session 1's warning named no fix (none was known yet): injected, not used.
    assert_eq!(doc["memory_use"]["sources"]["action"]["used"], 1, "{doc}");
    assert_eq!(doc["memory_use"]["projects"]["proj"]["action"]["injected"], 2, "{doc}");
}
