//! Issue 2 acceptance over real HTTP against a real `memd serve`.

use crate::support;
use crate::support::{TestWorker, init_body, observation_body, wait_until};
use serde_json::json;

#[test]
fn thousand_observations_are_all_processed_by_the_extractive_observer() {
    let w = TestWorker::start_in_process(&[]);
    assert_eq!(w.post("/api/sessions/init", &init_body("s1", "build the thing")).status, 200);
    for i in 0..1000 {
        let r = w.post("/api/sessions/observations", &observation_body("s1", i));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json().unwrap()["status"], "queued");
    }
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), 1000);
    let drained = wait_until(support::DEADLINE, || w.count("SELECT count(*) FROM pending_messages") == 0);
    assert!(drained, "pending rows left: {}", w.count("SELECT count(*) FROM pending_messages"));
    let observations = w.count("SELECT count(*) FROM observations WHERE origin = 'extractive'");
    assert!(
        observations >= 50,
        "1,000 events in batches of ≤ 20 make at least 50 observations, got {observations}"
    );
    let sources = w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources");
    assert_eq!(sources, 1000, "every event is linked to the observation made from it");
}

#[test]
fn a_repeated_tool_use_id_is_acknowledged_but_queued_once() {
    let w = TestWorker::start_in_process(&[]);
    let mut body = observation_body("s1", 1);
    body["eventId"] = json!("e1");
    assert_eq!(w.post("/api/sessions/observations", &body).json().unwrap()["status"], "queued");
    body["eventId"] = json!("e2");
    let second = w.post("/api/sessions/observations", &body);
    assert_eq!((second.status, second.json().unwrap()["status"].clone()), (200, json!("duplicate")));
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), 1);
}

#[test]
fn bad_requests_store_nothing_and_the_worker_keeps_serving() {
    let w = TestWorker::start_in_process(&[]);
    let send = |body: &[u8]| w.request("POST", "/api/sessions/observations", Some(body));
    let malformed = send(b"{\"x\":");
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json().unwrap()["error"], "bad_request");
    let missing = send(br#"{"tool_name":"Bash"}"#);
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json().unwrap()["detail"], "missing field contentSessionId");
    let big = format!(
        r#"{{"contentSessionId":"s","tool_name":"Bash","tool_input":"{}"}}"#,
        "a".repeat(6 * 1024 * 1024)
    );
    let too_big = send(big.as_bytes());
    assert_eq!(too_big.status, 413);
    let wrong_token = memd::client::http::send(
        w.addr(),
        &memd::client::http::Request {
            method: "POST",
            path: "/api/sessions/observations",
            token: Some("nope"),
            body: Some(b"{}"),
            ..Default::default()
        },
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(wrong_token.status, 401);
    assert_eq!(wrong_token.header("www-authenticate"), Some("Bearer"));
    let body = observation_body("s", 1).to_string();
    let foreign = memd::client::http::send(
        w.addr(),
        &memd::client::http::Request {
            method: "POST",
            path: "/api/sessions/observations",
            host: Some("evil.example:37842"),
            token: Some(&w.token),
            body: Some(body.as_bytes()),
            ..Default::default()
        },
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.json().unwrap()["error"], "forbidden_host");
    let health_foreign = memd::client::http::send(
        w.addr(),
        &memd::client::http::Request {
            method: "GET",
            path: "/api/health",
            host: Some("evil.example"),
            ..Default::default()
        },
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(health_foreign.status, 403, "DNS rebinding is refused on health too");
    assert_eq!(
        w.count("SELECT count(*) FROM tool_uses") + w.count("SELECT count(*) FROM sdk_sessions"),
        0
    );
    assert_eq!(
        w.post("/api/sessions/observations", &observation_body("s", 1)).status,
        200,
        "still serving"
    );
}

#[test]
fn summary_and_completion_drain_the_session() {
    let w = TestWorker::start_in_process(&[]);
    w.post("/api/sessions/init", &init_body("s1", "fix the login bug"));
    for i in 0..3 {
        w.post("/api/sessions/observations", &observation_body("s1", i));
    }
    let s = w.post(
        "/api/sessions/summarize",
        &json!({"contentSessionId": "s1", "last_assistant_message": "Fixed the login bug.\n\nDetails follow."}),
    );
    assert_eq!(s.json().unwrap()["status"], "queued");
    let c = w.post("/api/sessions/complete", &json!({"contentSessionId": "s1", "reason": "clear"}));
    assert_eq!(c.status, 200);
    assert!(wait_until(support::DEADLINE, || w
        .count("SELECT count(*) FROM sdk_sessions WHERE status = 'completed'")
        == 1));
    let completed: String = w
        .db()
        .query_row("SELECT completed FROM session_summaries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(completed, "Fixed the login bug.");
    assert_eq!(w.count("SELECT count(*) FROM pending_messages"), 0);
    let unknown = w.post("/api/sessions/complete", &json!({"contentSessionId": "nope"}));
    assert_eq!(unknown.json().unwrap()["status"], "unknown_session");
}

#[test]
fn status_lists_live_session_actors_with_queue_depth() {
    // A long debounce keeps the events queued while status is read.
    let w = TestWorker::start_in_process(&[
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "600000"),
        ("MEMD_OBSERVER_BATCH_MAX_EVENTS", "500"),
    ]);
    for i in 0..5 {
        w.post("/api/sessions/observations", &observation_body("alpha", i));
    }
    w.post("/api/sessions/observations", &observation_body("beta", 0));
    let mut doc = serde_json::Value::Null;
    let seen = wait_until(support::DEADLINE, || {
        doc = w.status();
        doc["sessions"]["live"] == 2
    });
    assert!(seen, "{doc:#}");
    let items = doc["sessions"]["items"].as_array().unwrap();
    let alpha = items.iter().find(|i| i["content_session_id"] == "alpha").unwrap();
    assert_eq!(alpha["queue_depth"], 5);
    assert_eq!(alpha["state"], "idle");
    assert!(doc["store"]["batch_size"]["max"].as_u64().unwrap() >= 1);
    let cli = w.command().args(["status", "--json"]).output().unwrap();
    assert!(cli.status.success());
    let printed: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(printed["sessions"]["live"], 2);
}

#[test]
fn the_reaper_stops_idle_session_actors_and_completes_their_sessions() {
    let w = TestWorker::start_in_process(&[("MEMD_SESSION_IDLE_MS", "300"), ("MEMD_REAPER_INTERVAL_MS", "100")]);
    w.post("/api/sessions/observations", &observation_body("s1", 0));
    let reaped = wait_until(support::DEADLINE, || {
        let doc = w.status();
        doc["sessions"]["live"] == 0 && doc["reaper"]["idle_actors_stopped"].as_u64().unwrap_or(0) >= 1
    });
    assert!(reaped, "{:#}", w.status());
    assert_eq!(w.count("SELECT count(*) FROM pending_messages"), 0);
    assert!(wait_until(support::DEADLINE, || w.count(
        "SELECT count(*) FROM sdk_sessions WHERE status = 'completed' AND completed_reason = 'idle'"
    ) == 1));
    // A new event starts a fresh actor for the same session.
    assert_eq!(
        w.post("/api/sessions/observations", &observation_body("s1", 1)).json().unwrap()["status"],
        "queued"
    );
    assert!(wait_until(support::DEADLINE, || w
        .count("SELECT count(*) FROM observation_sources")
        == 2));
}
