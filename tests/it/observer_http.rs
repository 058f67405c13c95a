//! Issue 3 acceptance against a fake LLM server (Anthropic, OpenAI and Gemini wire formats) and
//! a real `memd serve`. Timing facts are checked on the fake server's request timestamps only.

use crate::support;
use std::time::Duration;

use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::{DEADLINE, TestWorker, init_body, observation_body, wait_until};
use serde_json::{Value, json};

fn anthropic_worker(fake: &FakeLlm, extra: &[(&str, &str)]) -> TestWorker {
    let base = fake.base_url();
    let mut env = vec![
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-test-key-not-real"),
        ("MEMD_ANTHROPIC_BASE_URL", base.as_str()),
    ];
    env.extend_from_slice(extra);
    TestWorker::start(&env)
}

fn post_events(w: &TestWorker, session: &str, range: std::ops::Range<usize>) {
    for i in range {
        let r = w.post("/api/sessions/observations", &observation_body(session, i));
        assert_eq!(r.status, 200, "{}", r.text());
    }
}

fn drained(w: &TestWorker) -> bool {
    wait_until(DEADLINE, || w.count("SELECT count(*) FROM pending_messages") == 0)
}

fn provider(w: &TestWorker) -> Value {
    w.status()["provider"].clone()
}

#[test]
fn fifty_events_take_at_most_five_calls_and_are_all_stored() {
    let fake = FakeLlm::start();
    let w = anthropic_worker(&fake, &[("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "1000")]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "wire the observer")).status, 200);
    post_events(&w, "s1", 0..50);
    assert!(drained(&w), "pending rows left");
    assert!(fake.count() <= 5, "{} provider calls for 50 events", fake.count());
    assert!(w.count("SELECT count(*) FROM observations WHERE origin = 'observer'") >= 1);
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), 50);
    let req = &fake.requests()[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some("sk-ant-test-key-not-real"));
    assert_eq!(req.body["system"][0]["cache_control"]["type"], "ephemeral");
    let p = provider(&w);
    assert_eq!(
        (p["name"].as_str(), p["calls_today"].as_u64()),
        (Some("anthropic"), Some(fake.count() as u64))
    );
    assert_eq!(p["tokens_today"], json!(150 * fake.count()));
    assert!(p["prefix_sha256"]["code"].as_str().is_some_and(|h| h.len() == 64));
    let log = std::fs::read_to_string(w.data_dir().join("logs/memd.log")).unwrap_or_default();
    assert!(!log.contains("sk-ant-test-key-not-real"), "the key reached the log");
}

#[test]
fn two_sessions_share_the_fixed_prefix_byte_for_byte() {
    let fake = FakeLlm::start();
    let w = anthropic_worker(&fake, &[]);
    for (s, prompt) in [("a", "fix the login bug"), ("b", "write the docs")] {
        assert_eq!(w.post("/api/sessions/init", &init_body(s, prompt)).status, 200);
        post_events(&w, s, 0..3);
    }
    assert!(drained(&w));
    let reqs = fake.requests();
    assert!(reqs.len() >= 2);
    let a = reqs
        .iter()
        .find(|r| r.first_user_text().contains("fix the login bug"))
        .expect("session a");
    let b = reqs
        .iter()
        .find(|r| r.first_user_text().contains("write the docs"))
        .expect("session b");
    assert!(!a.system_text().is_empty());
    assert_eq!(a.system_text().as_bytes(), b.system_text().as_bytes());
}

#[test]
fn retry_after_is_honoured_with_exactly_one_probe_and_nothing_lost() {
    let fake = FakeLlm::start();
    fake.push(Reply::too_many("2"));
    fake.push(Reply::Slow(
        Duration::from_millis(300),
        Box::new(Reply::text(&support::fake_llm::default_xml(900))),
    ));
    let w = anthropic_worker(&fake, &[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("q1", "first")).status, 200);
    post_events(&w, "q1", 0..3);
    assert!(wait_until(DEADLINE, || fake.count() >= 1));
    assert!(wait_until(DEADLINE, || provider(&w)["breakers"]["quota"]["state"] == "open"));
    // While the breaker is open new events are acknowledged and kept.
    assert_eq!(w.post("/api/sessions/init", &init_body("q2", "second")).status, 200);
    post_events(&w, "q2", 0..3);
    post_events(&w, "q1", 3..5);
    assert!(w.count("SELECT count(*) FROM pending_messages") >= 5);
    assert!(drained(&w), "rows were not processed after the breaker closed");
    let reqs = fake.requests();
    assert!(reqs.len() >= 2);
    assert!(
        reqs[1].at.duration_since(reqs[0].at) >= Duration::from_secs(2),
        "a call before Retry-After elapsed"
    );
    if let Some(third) = reqs.get(2) {
        assert!(
            third.at.duration_since(reqs[1].at) >= Duration::from_millis(300),
            "a second call while the probe was in flight"
        );
    }
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), 8);
    assert_eq!(w.count("SELECT count(*) FROM observations WHERE origin = 'extractive'"), 0);
    assert_eq!(provider(&w)["breakers"]["quota"]["state"], "closed");
}

#[test]
fn unauthorized_opens_the_auth_breaker_and_events_go_extractive() {
    let fake = FakeLlm::start();
    fake.push(Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    ));
    let w = anthropic_worker(&fake, &[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "auth")).status, 200);
    post_events(&w, "s1", 0..3);
    assert!(drained(&w));
    post_events(&w, "s1", 3..6);
    assert!(drained(&w));
    assert_eq!(fake.count(), 1, "no call while the auth breaker is open");
    let p = provider(&w);
    assert_eq!(p["breakers"]["auth"]["state"], "open");
    assert_eq!(p["using_fallback"], true);
    assert_eq!(p["failures_today"], 1);
    assert!(w.count("SELECT count(*) FROM observations WHERE origin = 'extractive'") >= 2);
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), 6);
}

#[test]
fn prose_is_reasked_once_then_goes_extractive_without_losing_rows() {
    let fake = FakeLlm::start();
    fake.push(Reply::text("I reviewed the tool calls and everything looks fine."));
    fake.push(Reply::text("As I said, nothing noteworthy happened here."));
    let w = anthropic_worker(&fake, &[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "prose")).status, 200);
    post_events(&w, "s1", 0..4);
    assert!(drained(&w));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2, "exactly one re-ask");
    assert_eq!(reqs[1].turns(), 3, "request + prose as assistant turn + corrective turn");
    assert_eq!(reqs[1].body["messages"][1]["role"], "assistant");
    assert_eq!(
        reqs[1].body["messages"][1]["content"],
        "I reviewed the tool calls and everything looks fine."
    );
    assert_eq!(reqs[1].first_user_text(), reqs[0].first_user_text());
    assert!(w.count("SELECT count(*) FROM observations WHERE origin = 'extractive'") >= 1);
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), 4);
}

#[test]
fn fenced_xml_after_a_server_error_is_stored_and_the_retry_counted() {
    let fake = FakeLlm::start();
    fake.push(Reply::status(500, "internal error"));
    fake.push(Reply::text(&format!("```xml\n{}\n```", support::fake_llm::default_xml(7))));
    let w = anthropic_worker(&fake, &[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "retry")).status, 200);
    post_events(&w, "s1", 0..2);
    assert!(wait_until(DEADLINE, || w
        .count("SELECT count(*) FROM pending_messages WHERE attempts = 1")
        == 2));
    assert!(drained(&w));
    assert_eq!(w.count("SELECT count(*) FROM observations WHERE title = 'Fake observation 7'"), 1);
    assert_eq!(fake.count(), 2);
}

#[test]
fn budget_exhausted_sends_the_remaining_batches_to_the_extractive_observer() {
    let fake = FakeLlm::start();
    fake.set_usage(400, 200);
    let w = anthropic_worker(&fake, &[("MEMD_DAILY_TOKEN_BUDGET", "1000")]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "budget")).status, 200);
    for round in 0..3 {
        post_events(&w, "s1", round * 2..round * 2 + 2);
        assert!(drained(&w));
    }
    assert_eq!(fake.count(), 2, "600 + 600 tokens reach the 1,000 budget");
    assert!(w.count("SELECT count(*) FROM observations WHERE origin = 'extractive'") >= 1);
    let p = provider(&w);
    assert_eq!(
        (p["tokens_today"].as_i64(), p["budget"].as_i64(), p["budget_left"].as_i64()),
        (Some(1200), Some(1000), Some(0))
    );
    assert_eq!(p["using_fallback"], true);
    let usage = w.count("SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM token_usage WHERE provider = 'anthropic'");
    assert_eq!(usage, 1200);
}

#[test]
fn claimed_modifications_without_a_write_tool_are_not_stored_as_modified() {
    let fake = FakeLlm::start();
    fake.push(Reply::text(
        "<observation><type>change</type><title>Rewrote the parser</title><narrative>Edited it.</narrative>\
         <files_read><file>/tmp/proj/src/parser.rs</file></files_read>\
         <files_modified><file>/tmp/proj/src/parser.rs</file></files_modified></observation>",
    ));
    let w = anthropic_worker(&fake, &[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "read only")).status, 200);
    let read = json!({"contentSessionId": "s1", "tool_name": "Read", "tool_input": {"file_path": "/tmp/proj/src/parser.rs"},
        "tool_response": {"file": {"content": "fn main() {}"}}, "tool_use_id": "toolu_read", "cwd": "/tmp/proj"});
    assert_eq!(w.post("/api/sessions/observations", &read).status, 200);
    assert!(drained(&w));
    let (modified, files_read): (String, String) = w
        .db()
        .query_row(
            "SELECT files_modified, files_read FROM observations WHERE title = 'Rewrote the parser'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("stored");
    assert_eq!(modified, "[]");
    assert!(files_read.contains("parser.rs"), "{files_read}");
}

#[test]
fn openai_and_gemini_wire_formats_work_end_to_end() {
    let fake = FakeLlm::start();
    let base = fake.base_url();
    let openai_base = format!("{base}/v1");
    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "openai"),
        ("MEMD_OPENAI_BASE_URL", &openai_base),
        ("MEMD_MODEL", "local-model"),
    ]);
    assert_eq!(w.post("/api/sessions/init", &init_body("o1", "openai")).status, 200);
    post_events(&w, "o1", 0..2);
    assert!(drained(&w));
    let req = &fake.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.body["model"], "local-model");
    assert_eq!(req.body["messages"][0]["role"], "system");
    drop(w);
    let g = TestWorker::start(&[
        ("MEMD_PROVIDER", "gemini"),
        ("MEMD_GEMINI_BASE_URL", &base),
        ("MEMD_GEMINI_API_KEY", "g-key"),
    ]);
    assert_eq!(g.post("/api/sessions/init", &init_body("g1", "gemini")).status, 200);
    post_events(&g, "g1", 0..2);
    assert!(drained(&g));
    let req = fake.requests().pop().expect("gemini call");
    assert!(req.path.ends_with(":generateContent"), "{}", req.path);
    assert_eq!(req.header("x-goog-api-key"), Some("g-key"));
    assert!(!req.path.contains("g-key"));
    assert_eq!(g.count("SELECT count(*) FROM observations WHERE origin = 'observer'"), 1);
}

#[test]
fn a_prompt_too_long_answer_splits_the_batch() {
    let fake = FakeLlm::start();
    fake.push(Reply::prompt_too_long());
    let w = anthropic_worker(&fake, &[("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "500")]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "overflow")).status, 200);
    post_events(&w, "s1", 0..4);
    assert!(drained(&w));
    assert_eq!(fake.count(), 3, "one overflow, then the two halves");
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), 4);
}
