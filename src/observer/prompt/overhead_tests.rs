//! Observer prompt overhead (issue 3 target, reported, not a timing): fixed prefix chars,
//! average chars per event over real-looking tool events, and a 20-event batch ≤ 40,000 chars.

use super::{PromptEvent, PromptSession, build_observation_request, part_a};
use crate::modes::load_mode;
use serde_json::json;

fn event(i: usize) -> PromptEvent {
    let (tool, input, response) = match i % 4 {
        0 => (
            "Read",
            json!({"file_path": format!("/home/u/shop/src/module_{i}.rs")}),
            json!({"file": {"content": "fn main() {\n    println!(\"hi\");\n}\n".repeat(20)}}),
        ),
        1 => (
            "Bash",
            json!({"command": "cargo test -p shop", "description": "Run tests"}),
            json!({"stdout": "running 12 tests\ntest ok\n".repeat(15), "stderr": ""}),
        ),
        2 => (
            "Edit",
            json!({"file_path": "/home/u/shop/src/cart.rs", "old_string": "let total = 0;", "new_string": "let mut total = 0;"}),
            json!({"success": true}),
        ),
        _ => (
            "Grep",
            json!({"pattern": "fn checkout", "path": "src"}),
            json!({"matches": ["src/cart.rs:12: fn checkout()"]}),
        ),
    };
    PromptEvent {
        tool_name: tool.into(),
        tool_input: input,
        tool_response: response,
        is_error: false,
        cwd: Some("/home/u/shop".into()),
        occurred_at_iso: "2026-10-02T09:14:03.120Z".into(),
    }
}

#[test]
fn prompt_overhead_is_reported_and_a_twenty_event_batch_fits_the_bound() {
    let (mode, _) = load_mode("code", &[]);
    let session = PromptSession {
        prompt_number: 1,
        user_request: "make checkout compute totals correctly".into(),
        is_private: false,
        requested_at_date: "2026-10-02".into(),
    };
    let prefix = part_a(&mode).chars().count();
    let empty = build_observation_request(&mode, &session, &[], 16_000).total_chars();
    let events: Vec<PromptEvent> = (0..20).map(event).collect();
    let full = build_observation_request(&mode, &session, &events, 16_000).total_chars();
    let per_event = (full - empty) / events.len();
    println!(
        "observer prompt: fixed prefix (Part A) {prefix} chars; request without events {empty} chars; {per_event} chars per event on average; 20-event batch {full} chars"
    );
    assert!(full <= 40_000, "a 20-event batch takes {full} chars");
}
