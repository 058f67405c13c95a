//! The graph of entities and relations (issue 41) end to end: recorded sessions imported through
//! the worker and its extractive observer, then `related` over HTTP, MCP's shape and the CLI.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TestWorker, fixture_env};
use memd::graph::names::{command_name, is_check, relative_path};
use memd::replay::event::EventKind;

fn drained(w: &TestWorker) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while Instant::now() < deadline {
        let s = w.status();
        if s["pending"]["pending"] == 0 && s["pending"]["processing"] == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the observer did not drain");
}

fn related(w: &TestWorker, entity: &str, project: &str) -> Value {
    let q = format!("/api/related?entity={}&project={}", urlencode(entity), urlencode(project));
    let r = w.get(&q);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json().unwrap()
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// (absolute file, command): a check command of a session failed, the file was edited, then the
/// same command passed — read from the recordings themselves.
fn fixes_in_recordings(dir: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let Ok(s) = memd::replay::convert::convert_file(&path) else {
            continue;
        };
        let mut failed: Vec<(String, BTreeSet<String>)> = Vec::new();
        for e in &s.events {
            match (e.kind, e.tool_name()) {
                (EventKind::PostToolUse, Some("Edit" | "Write" | "MultiEdit")) => {
                    let file = e.payload["tool_input"]["file_path"].as_str().unwrap_or("");
                    for (_, edited) in &mut failed {
                        edited.insert(relative_path(file, None));
                    }
                }
                (kind, Some("Bash")) => {
                    let Some(cmd) = e.payload["tool_input"]["command"]
                        .as_str()
                        .and_then(command_name)
                        .filter(|c| is_check(c))
                    else {
                        continue;
                    };
                    if kind == EventKind::PostToolUseFailure {
                        failed.retain(|(c, _)| *c != cmd);
                        failed.push((cmd, BTreeSet::new()));
                    } else if let Some(i) = failed.iter().position(|(c, _)| *c == cmd) {
                        let (cmd, files) = failed.remove(i);
                        for f in files {
                            out.insert((f, cmd.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn issue_41_related_lists_the_other_side_of_every_fix_in_the_recorded_sessions() {
    let how = "set MEMD_TRANSCRIPTS_DIR to the recorded Claude Code sessions";
    let Some(dir) = fixture_env("MEMD_TRANSCRIPTS_DIR", how) else {
        return;
    };
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none"), ("MEMD_PROVIDER", "extractive")]);
    let out = w.command().args(["import-sessions", "--json", &dir]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drained(&w);
    let expected = fixes_in_recordings(&dir);
    assert!(!expected.is_empty(), "the recordings hold at least one failing-then-passing check");
    for (file, cmd) in &expected {
        // From the file (by its absolute path) to the command it fixed, and back, with evidence.
        let from_file = related(&w, file, "*");
        let fix = from_file["related"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["entity"] == *cmd && n["relation"] == "fixes");
        let fix = fix.unwrap_or_else(|| panic!("{file} → {cmd}: {from_file}"));
        assert_eq!(fix["direction"], "out");
        assert!(!fix["evidence"].as_array().unwrap().is_empty(), "{fix}");
        let from_cmd = related(&w, cmd, "*");
        let back = from_cmd["related"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["relation"] == "fixes" && n["entity"].as_str().is_some_and(|name| file.ends_with(&format!("/{name}"))));
        assert!(back, "{cmd} → {file}: {from_cmd}");
    }
    // Every relation shown has evidence that exists, and a file is found by the end of its path.
    let (file, _) = expected.iter().next().unwrap();
    let end = file.rsplit('/').next().unwrap();
    let v = related(&w, end, "*");
    let matched = v["matched"].as_array().unwrap();
    assert!(matched.iter().any(|m| m["name"].as_str().is_some_and(|n| file.ends_with(n))), "{v}");
    for n in v["related"].as_array().unwrap() {
        for id in n["evidence"].as_array().unwrap() {
            assert_eq!(w.get(&format!("/api/observation/{id}")).status, 200, "evidence #{id} exists");
        }
    }
    // The CLI says the same for a person.
    let out = w.command().args(["related", end, "--project", "*"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("fixes") && text.contains("Next: memd show "),
        "{text}"
    );
}

/// An LLM observer's proposed relations (the fake Anthropic provider): the one between a file and a
/// command the batch shows is stored, with the batch's observation as evidence; one naming a file no
/// call touched, and one naming a package no edit imported, are not.
#[test]
fn an_llm_observers_relations_are_kept_only_when_the_calls_show_both_ends() {
    use crate::support::fake_llm::{FakeLlm, Reply};
    use serde_json::json;
    let fake = FakeLlm::start();
    fake.push(Reply::text(
        "<observation><type>bugfix</type><title>Cart totals fixed</title><narrative>Totals round to cents.</narrative>\
         <relations><relation>src/cart.rs fixes cargo test cart</relation>\
         <relation>src/invented.rs fixes cargo test cart</relation>\
         <relation>src/cart.rs depends_on left-pad</relation></relations></observation>",
    ));
    let base = fake.base_url();
    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-test-key-not-real"),
        ("MEMD_ANTHROPIC_BASE_URL", base.as_str()),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "1000"),
    ]);
    assert_eq!(
        w.post("/api/sessions/init", &crate::support::init_body("g1", "fix the cart"))
            .status,
        200
    );
    let event = |i: usize, tool: &str, input: Value| {
        json!({"contentSessionId": "g1", "tool_name": tool, "tool_input": input, "tool_response": "ok",
               "tool_use_id": format!("toolu_g1_{i}"), "cwd": "/tmp/proj"})
    };
    let edit = json!({"file_path": "/tmp/proj/src/cart.rs", "old_string": "f64", "new_string": "fn total() -> i64 { 0 }"});
    assert_eq!(w.post("/api/sessions/observations", &event(1, "Edit", edit)).status, 200);
    let run = json!({"command": "cargo test cart"});
    assert_eq!(w.post("/api/sessions/observations", &event(2, "Bash", run)).status, 200);
    drained(&w);
    assert_eq!(fake.count(), 1, "one batch, one call");
    let v = related(&w, "src/cart.rs", "proj");
    let rows = v["related"].as_array().unwrap();
    let fix = rows
        .iter()
        .find(|n| n["relation"] == "fixes")
        .unwrap_or_else(|| panic!("no fixes edge: {v}"));
    assert_eq!(
        (fix["entity"].as_str(), fix["strength"].as_u64()),
        (Some("cargo test cart"), Some(1))
    );
    assert!(rows.iter().all(|n| n["relation"] != "depends_on"), "{v}");
    assert_eq!(related(&w, "src/invented.rs", "proj")["related"], json!([]));
}
