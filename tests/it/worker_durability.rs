//! Issue 2 durability acceptance: kill -9, SIGTERM under load, a second worker on the same data dir.

use crate::support;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{TestWorker, observation_body, wait_until};
use memd::client::http::{Request, send};

#[test]
fn kill_9_after_acknowledgements_loses_nothing_and_duplicates_nothing() {
    // A long debounce keeps every event pending when the worker dies.
    let mut w = TestWorker::start(&[
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "600000"),
        ("MEMD_OBSERVER_BATCH_MAX_EVENTS", "500"),
    ]);
    const N: usize = 200;
    for i in 0..N {
        let r = w.post("/api/sessions/observations", &observation_body("s1", i));
        assert_eq!(r.json().unwrap()["status"], "queued");
    }
    w.kill9();
    w.env.retain(|(k, _)| k != "MEMD_OBSERVER_BATCH_DEBOUNCE_MS");
    w.spawn();
    // A hook that never saw its answer would re-send: the repeat must not be queued twice.
    let again = w.post("/api/sessions/observations", &observation_body("s1", 0));
    assert_eq!(again.json().unwrap()["status"], "duplicate");
    let drained = wait_until(support::DEADLINE, || w.count("SELECT count(*) FROM pending_messages") == 0);
    assert!(
        drained,
        "pending left after restart: {}",
        w.count("SELECT count(*) FROM pending_messages")
    );
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), N as i64);
    assert_eq!(
        w.count("SELECT count(*) FROM observation_sources"),
        N as i64,
        "each event observed exactly once"
    );
    assert_eq!(w.count("SELECT count(DISTINCT tool_use_row_id) FROM observation_sources"), N as i64);
}

#[test]
fn sigterm_under_64_clients_exits_zero_with_every_acknowledged_event_stored() {
    let mut w = TestWorker::start(&[]);
    let status = sigterm_under_64_clients(&mut w);
    assert!(status.success(), "exit status {status:?}");
}

/// 64 clients post observations; after 500 acknowledgements the worker gets SIGTERM. Asserts that
/// every acknowledged event is stored and the PID file is gone; answers the exit status.
pub fn sigterm_under_64_clients(w: &mut TestWorker) -> std::process::ExitStatus {
    let acked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let (addr, token) = (w.addr(), w.token.clone());
    let clients: Vec<_> = (0..64)
        .map(|c| {
            let (acked, stop, token) = (acked.clone(), stop.clone(), token.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && i < 2_000 {
                    let body = observation_body(&format!("c{c}"), i).to_string();
                    let req = Request {
                        method: "POST",
                        path: "/api/sessions/observations",
                        token: Some(&token),
                        body: Some(body.as_bytes()),
                        ..Default::default()
                    };
                    match send(addr, &req, Duration::from_secs(10)) {
                        Ok(r) if r.status == 200 && r.json().is_some_and(|v| v["status"] == "queued") => {
                            acked.lock().unwrap().insert(format!("toolu_c{c}_{i}"));
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                    i += 1;
                }
            })
        })
        .collect();
    assert!(
        wait_until(support::DEADLINE, || acked.lock().unwrap().len() >= 500),
        "load did not start"
    );
    let status = w.stop();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert!(!w.data_dir().join("memd.pid").exists(), "PID file removed at shutdown");
    let db = w.db();
    let mut stmt = db.prepare("SELECT tool_use_id FROM tool_uses").unwrap();
    let stored: HashSet<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    let acked = acked.lock().unwrap();
    let missing: Vec<_> = acked.iter().filter(|id| !stored.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged events missing, e.g. {:?}",
        missing.len(),
        missing.first()
    );
    assert!(acked.len() >= 500);
    status
}

#[test]
fn a_second_worker_on_the_same_data_dir_refuses_and_touches_nothing() {
    let w = TestWorker::start(&[]);
    let names = |w: &TestWorker| {
        let mut v: Vec<_> = std::fs::read_dir(w.data_dir()).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    // The first worker's files, once it has made them all: it answers health before every one
    // exists (a loaded CI run once listed 7 of its 8 here, and the comparison below failed).
    let mut before = names(&w);
    assert!(
        wait_until(support::DEADLINE, || {
            std::thread::sleep(Duration::from_millis(100));
            let now = names(&w);
            std::mem::replace(&mut before, now) == before
        }),
        "the first worker's files kept changing"
    );
    let pid_file = std::fs::read_to_string(w.data_dir().join("memd.pid")).unwrap();
    let out = w.command().arg("serve").output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("already running") && stderr.contains(&w.pid().unwrap().to_string()),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(w.data_dir().join("memd.pid")).unwrap(), pid_file);
    let after = names(&w);
    assert_eq!(before.len(), after.len());
    assert_eq!(w.get("/api/health").status, 200, "the first worker is unaffected");
}

#[test]
fn status_exits_1_when_no_worker_runs() {
    let mut w = TestWorker::start(&[]);
    w.stop();
    let out = w.command().arg("status").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not running"));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_database_from_a_newer_memd_is_opened_read_only_and_ingest_answers_503() {
    let mut w = TestWorker::start(&[]);
    w.stop();
    let conn = rusqlite::Connection::open(w.db_path()).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    w.spawn();
    let r = w.post("/api/sessions/observations", &observation_body("s1", 0));
    assert_eq!(r.status, 503);
    let body = r.json().unwrap();
    assert_eq!(body["error"], "unavailable");
    assert!(body["detail"].as_str().unwrap().contains("newer memd"));
    assert_eq!(r.header("retry-after"), Some("1"));
    let warnings = w.status()["warnings"].to_string();
    assert!(warnings.contains("newer memd"), "{warnings}");
}
