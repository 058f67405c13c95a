//! The knowledge agent on the real Claude Code CLI (issue 41), offline against the fake Anthropic
//! API: the prime starts a `claude` session holding the corpus, a query resumes it
//! (`--resume`), no tool is offered to the model, and when the session is gone (its transcript
//! deleted) the query primes again once and answers.

use serde_json::{Value, json};

use crate::corpus::seed;
use crate::support::TestWorker;
use crate::support::claude_host::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Plan, Turn};

fn session_files(dir: &std::path::Path, session: &str) -> Vec<std::path::PathBuf> {
    crate::support::files_under(dir)
        .into_iter()
        .filter(|p| p.file_name().and_then(|n| n.to_str()) == Some(&format!("{session}.jsonl")))
        .collect()
}

#[test]
fn the_claude_cli_resumes_its_session_and_a_lost_one_is_primed_again_once() {
    let Some(bin) = claude_bin() else {
        return;
    };
    // A fresh store numbers the first memories 1, 2, 3 (asserted below).
    let answer = "Payment retries back off 1, 2 and 4 seconds (#1); exports are in UTC (#3).";
    let fake = FakeAnthropic::start(vec![Plan {
        key: "cli-notes".into(),
        turns: vec![Turn::Text(answer.into())],
    }]);
    fake.answer_toolless_sessions();
    let url = fake.url();
    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "claude-cli"),
        ("MEMD_CLAUDE_PATH", bin.as_str()),
        ("MEMD_OBSERVER_TIMEOUT_MS", "120000"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-fake-key-for-the-test-0000000000000000"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ]);
    let (kept, _, _) = seed(&w);
    assert_eq!(kept, [1, 2, 3]);
    let r = w.post("/api/corpus", &json!({"name": "cli-notes", "project": "shop"}));
    assert_eq!(r.status, 200, "{}", r.text());

    let r = w.post("/api/corpus/cli-notes/prime", &json!({}));
    assert_eq!(r.status, 200, "{}", r.text());
    let primed: Value = r.json().unwrap();
    let session = primed["session_id"].as_str().unwrap().to_string();
    assert_eq!(primed["provider"], "claude-cli");
    assert!(
        !session.starts_with("memd-") && session.len() >= 32,
        "claude's own session id: {primed}"
    );
    assert_eq!(session_files(w.data_dir(), &session).len(), 1, "claude kept the session");

    let r = w.post("/api/corpus/cli-notes/query", &json!({"question": "How do retries back off?"}));
    assert_eq!(r.status, 200, "{}", r.text());
    let a: Value = r.json().unwrap();
    assert_eq!(
        (a["cited"].clone(), a["flagged"].clone(), a["primed"].clone()),
        (json!([1, 3]), json!(false), json!(false)),
        "{a}"
    );
    assert!(a["answer"].as_str().unwrap().contains("#1"));
    let asked = fake.messages_mentioning("How do retries back off?");
    let last = asked.last().expect("the query reached the model");
    let text = serde_json::to_string(&last.body["messages"]).unwrap();
    assert!(
        text.contains("## #1") && text.contains("Knowledge corpus: cli-notes"),
        "the query resumed the primed session"
    );
    for r in fake.messages_mentioning("cli-notes") {
        let tools = r.body["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(tools, 0, "a tool was offered to the knowledge agent: {}", r.body["tools"]);
    }
    let status = w.status();
    assert!(status["provider"]["calls_today"].as_u64().unwrap() >= 2, "{}", status["provider"]);

    // The session's transcript deleted: `claude --resume` fails, memd primes again once.
    let current = a["session_id"].as_str().unwrap().to_string();
    for f in session_files(w.data_dir(), &current) {
        std::fs::remove_file(f).unwrap();
    }
    let r = w.post(
        "/api/corpus/cli-notes/query",
        &json!({"question": "Which time zone do exports use?"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let a: Value = r.json().unwrap();
    assert_eq!((a["primed"].clone(), a["cited"].clone()), (json!(true), json!([1, 3])), "{a}");
    assert_ne!(a["session_id"], current.as_str());
}
