//! Alerts (issue 39) to a fake webhook on loopback: each observation of an alert type is
//! delivered exactly once across a worker restart, a failing answer is retried, the text is
//! redacted, other types never go out, `memd status` shows the deliveries; off without a URL.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_server::FakeServer;
use crate::support::{TestWorker, wait_until};

/// Observation ids whose first attempt was answered 500.
static FAILED_ONCE: Mutex<Option<HashSet<i64>>> = Mutex::new(None);

fn webhook(_method: &str, path: &str, body: &Value) -> Option<(&'static str, &'static str, String)> {
    if path != "/hook" {
        return None;
    }
    let id = body["observation_id"].as_i64().unwrap_or(-1);
    let mut failed = FAILED_ONCE.lock().unwrap();
    let first = failed.get_or_insert_with(HashSet::new).insert(id);
    Some(match first {
        true => ("500 Internal Server Error", "text/plain", "try later".into()),
        false => ("200 OK", "application/json", "{\"ok\":true}".into()),
    })
}

/// Successful deliveries per observation id (every id's first attempt failed on purpose).
fn delivered(hook: &FakeServer) -> HashMap<i64, usize> {
    let mut n: HashMap<i64, usize> = HashMap::new();
    for r in hook.requests() {
        *n.entry(r["observation_id"].as_i64().unwrap()).or_default() += 1;
    }
    n.into_iter().map(|(id, attempts)| (id, attempts - 1)).collect()
}

fn save(w: &TestWorker, kind: &str, text: &str) -> i64 {
    let r = w.post("/api/memory/save", &json!({"text": text, "type": kind, "project": "shop"}));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json().unwrap()["id"].as_i64().unwrap()
}

#[test]
fn each_alerting_observation_is_delivered_once_across_a_restart() {
    let hook = FakeServer::start(webhook);
    let url = format!("http://127.0.0.1:{}/hook", hook.port);
    let mut w = TestWorker::start(&[("MEMD_ALERT_WEBHOOK_URL", url.as_str())]);
    let a = save(
        &w,
        "security_alert",
        "the deploy key AKIAIOSFODNN7EXAMPLE was committed to the repo",
    );
    save(&w, "discovery", "the build uses sccache");
    let s = save(&w, "sensitive", "customer emails are written to the debug log");
    assert!(
        wait_until(Duration::from_secs(30), || delivered(&hook).values().filter(|n| **n == 1).count()
            == 2),
        "both alerts delivered after a retry: {:?}",
        hook.requests()
    );
    let first = hook.requests().into_iter().find(|r| r["observation_id"] == a).unwrap();
    assert_eq!(first["type"], "security_alert");
    assert!(!first.to_string().contains("AKIAIOSFODNN7EXAMPLE"), "redacted: {first}");
    let status = w.status();
    assert_eq!(
        (status["alerts"]["sent"].as_i64(), status["alerts"]["pending"].as_i64()),
        (Some(2), Some(0)),
        "{}",
        status["alerts"]
    );
    assert!(!status.to_string().contains(&url), "the webhook URL is a secret");
    let job = &status["jobs"]["alerts"];
    assert!(
        job["on"] == true && job["passes"].as_u64() > Some(0),
        "the alerts job has its status: {job}"
    );

    w.stop();
    w.spawn();
    let after = save(&w, "security_alert", "a second leaked token, after the restart");
    assert!(
        wait_until(Duration::from_secs(30), || delivered(&hook).get(&after) == Some(&1)),
        "the alert after the restart arrives"
    );
    std::thread::sleep(Duration::from_secs(3));
    let n = delivered(&hook);
    assert_eq!(n.len(), 3, "only alert types go out: {n:?}");
    for id in [a, s, after] {
        assert_eq!(n.get(&id), Some(&1), "#{id} delivered exactly once: {n:?}");
    }
}

#[test]
fn without_a_webhook_nothing_is_queued() {
    let w = TestWorker::start(&[]);
    save(&w, "security_alert", "a token in the logs");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(w.count("SELECT count(*) FROM alert_outbox"), 0);
    let status = w.status();
    assert!(status["alerts"].is_null());
    assert_eq!(status["jobs"]["alerts"]["on"], false, "without a webhook the alerts job is off");
    let jobs: Vec<&String> = status["jobs"].as_object().unwrap().keys().collect();
    for job in [
        "spool scanner",
        "anchoring",
        "staleness check",
        "notes import",
        "folder files",
        "retention",
        "consolidation",
        "backups",
    ] {
        assert!(jobs.iter().any(|j| *j == job), "{job} has its status line: {jobs:?}");
    }
}
