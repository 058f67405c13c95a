//! Work state (issue 39): the MCP pair `work_state_write`/`work_state_read` and `POST/GET
//! /api/work-state` against a real worker (latest key wins, per branch of a real git work tree,
//! cleaned like a saved memory, bad writes refused and nothing stored), the section in the
//! SessionStart context, `memd work`, and the real Claude Code CLI carrying the open items from
//! one session to the next and through a `clear`.

use std::process::Command;

use serde_json::{Value, json};

use crate::mcp_stdio::initialized;
use crate::support::TestWorker;
use crate::support::claude_host::{Host, claude_bin};
use crate::support::fake_anthropic::{Plan, Turn, tool};
use crate::support::hook::{run_hook, stdout};

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git").success();
    assert!(ok, "git {args:?}");
}

#[test]
fn work_state_through_mcp_and_http_is_per_project_and_branch_and_injected() {
    let w = TestWorker::start(&[]);
    let mut c = initialized(&w);
    let (text, err) = c.call(
        "work_state_write",
        json!({"task": "ship the export", "notes": "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD in the env",
               "items": [{"key": "parser", "text": "front matter parser", "status": "doing"},
                         {"key": "index", "text": "write the index file", "status": "todo"}]}),
    );
    assert!(!err, "{text}");
    assert_eq!(
        text,
        "Work state of acme saved: 2 open item(s), 0 done. It is shown at the next session start."
    );
    // Latest key wins; a bad status is refused by the tool and stores nothing.
    let (_, err) = c.call(
        "work_state_write",
        json!({"items": [{"key": "parser", "text": "front matter parser", "status": "done"}]}),
    );
    assert!(!err);
    let bad = c.request(
        "tools/call",
        json!({"name": "work_state_write", "arguments": {"items": [{"key": "x", "text": "y", "status": "started"}]}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let (section, err) = c.call("work_state_read", json!({}));
    assert!(!err, "{section}");
    assert!(section.contains("- [todo] index: write the index file"), "{section}");
    assert!(section.contains("Done:\n- [done] parser: front matter parser"), "{section}");
    assert!(
        !section.contains("abcdefghijklmnop"),
        "the secret in the notes was redacted: {section}"
    );

    let v = w.get("/api/work-state?project=acme").json().unwrap();
    assert_eq!(v["state"]["items"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["state"]["task"], "ship the export");
    let r = w.post(
        "/api/work-state",
        &json!({"project": "acme", "items": [{"key": "k", "text": "t", "status": "nope"}]}),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let r = w.post("/api/work-state", &json!({"project": "acme", "bogus": 1}));
    assert_eq!(r.status, 400, "an unknown field is refused");
    assert_eq!(w.count("SELECT count(*) FROM work_items"), 2, "refused writes stored nothing");

    // The SessionStart context carries the section after the index.
    let ctx = w.get("/api/context/inject?projects=acme").text();
    assert!(
        ctx.contains("## Work in progress (memd work state of acme)\nTask: ship the export"),
        "{ctx}"
    );

    // Per branch: a work tree on `feature` has its own state; its cwd selects it.
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "feature"]);
    let cwd = repo.path().to_str().unwrap();
    let r = w.post(
        "/api/work-state",
        &json!({"project": "acme", "cwd": cwd, "items": [{"key": "flag", "text": "feature-only item", "status": "todo"}]}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json().unwrap()["state"]["branch"], "feature");
    let on_feature = w
        .get(&format!(
            "/api/context/inject?projects=acme&cwd={}",
            memd::client::http::query_value(cwd)
        ))
        .text();
    assert!(
        on_feature.contains("feature-only item") && !on_feature.contains("write the index file"),
        "{on_feature}"
    );
    assert!(!ctx.contains("feature-only item"));
    let all: Value = w.get("/api/work-state").json().unwrap();
    assert_eq!(all["states"].as_array().unwrap().len(), 2, "{all}");

    // Off by setting: no section.
    drop(c);
    let off = TestWorker::start(&[("MEMD_WORK_STATE", "false")]);
    off.post("/api/work-state", &json!({"project": "acme", "task": "hidden task"}));
    assert!(!off.get("/api/context/inject?projects=acme").text().contains("hidden task"));
}

#[test]
fn memd_work_shows_and_edits_the_state() {
    let w = TestWorker::start(&[]);
    let run = |args: &[&str]| {
        let out = w.command().args(args).env("MEMD_PROJECT", "acme").output().unwrap();
        assert!(out.status.success(), "memd {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run(&["work"]).contains("No work state"), "nothing yet");
    run(&["work", "task", "migrate the billing tables"]);
    run(&["work", "add", "schema", "write the v9 migration"]);
    run(&["work", "add", "backfill", "backfill old invoices", "--status", "blocked"]);
    run(&["work", "done", "schema"]);
    let shown = run(&["work"]);
    assert!(shown.contains("Task: migrate the billing tables"), "{shown}");
    assert!(shown.contains("- [blocked] backfill: backfill old invoices"), "{shown}");
    assert!(shown.contains("- [done] schema: write the v9 migration"), "{shown}");
    run(&["work", "remove", "backfill"]);
    let v: Value = serde_json::from_str(&run(&["work", "--json"])).unwrap();
    assert_eq!(v["state"]["items"].as_array().unwrap().len(), 1, "{v}");
    let out = w
        .command()
        .args(["work", "done", "no-such-key"])
        .env("MEMD_PROJECT", "acme")
        .output()
        .unwrap();
    assert!(!out.status.success(), "done of an unknown key fails");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no item no-such-key"));
}

fn plans(_proj: &std::path::Path) -> Vec<Plan> {
    let plan = |key: &str, turns: Vec<Turn>| Plan { key: key.into(), turns };
    vec![
        plan(
            "ws-write",
            vec![
                tool(
                    "ToolSearch",
                    json!({"query": "select:mcp__memd__work_state_write", "max_results": 1}),
                ),
                tool(
                    "mcp__memd__work_state_write",
                    json!({"task": "port the invoice exporter",
                           "items": [{"key": "csv", "text": "quote fields with commas", "status": "doing"},
                                     {"key": "tz", "text": "dates in UTC", "status": "todo"},
                                     {"key": "spec", "text": "read the old exporter", "status": "done"}],
                           "notes": "customers import the CSV into Excel"}),
                ),
                Turn::Text("Recorded the plan.".into()),
            ],
        ),
        plan("ws-resume", vec![Turn::Text("Resuming.".into())]),
    ]
}

#[test]
fn claude_code_carries_open_items_to_the_next_session_and_through_clear() {
    let Some(bin) = claude_bin() else {
        return;
    };
    let h = Host::new(bin, plans);
    let install = h.memd(&["install"]);
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));

    h.claude("ws-write: record the plan", &[]);
    let reqs = h.fake.requests_of("ws-write");
    let last = reqs.iter().max_by_key(|r| r.tool_results()).expect("requests");
    assert!(
        last.conversation_text().contains("saved: 2 open item(s), 1 done"),
        "the MCP tool answered: {}",
        last.conversation_text()
    );

    h.claude("ws-resume: continue the work", &[]);
    let first = h.fake.requests_of("ws-resume").into_iter().next().expect("a request");
    let text = first.conversation_text();
    assert!(text.contains("## Work in progress"), "the section in the first request: {text}");
    assert!(
        text.contains("- [doing] csv: quote fields with commas") && text.contains("- [todo] tz: dates in UTC"),
        "{text}"
    );
    assert!(text.contains("Task: port the invoice exporter"), "{text}");

    // `clear`: `claude -p /clear` runs SessionStart with source "clear"; its hook events show what
    // memd answered for the cleared conversation.
    let mut cmd = Command::new(&h.bin);
    h.env(&mut cmd);
    let out = cmd
        .args([
            "-p",
            "/clear",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ])
        .output()
        .expect("run claude /clear");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "claude -p /clear: {stdout}");
    let cleared = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "hook_response" && v["hook_name"] == "SessionStart:clear")
        .unwrap_or_else(|| panic!("no SessionStart:clear hook event: {stdout}"));
    let answered = cleared["stdout"].as_str().unwrap_or_default();
    assert!(
        answered.contains("Work in progress") && answered.contains("quote fields with commas"),
        "the clear's context carries the open items: {answered}"
    );
}

#[test]
fn the_session_start_hook_of_a_clear_carries_the_section() {
    let w = TestWorker::start(&[]);
    w.post(
        "/api/work-state",
        &json!({"project": "acme", "items": [{"key": "k1", "text": "the open item", "status": "doing"}]}),
    );
    let mut cmd = w.command();
    cmd.env("MEMD_PROJECT", "acme");
    let out = run_hook(
        cmd,
        "context",
        &json!({"session_id": "s", "source": "compact", "cwd": "/tmp"}).to_string(),
    );
    let text = stdout(&out);
    assert!(text.contains("- [doing] k1: the open item"), "{text}");
}
