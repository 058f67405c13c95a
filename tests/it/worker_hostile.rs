//! Issue 14: hostile local clients. A process that holds sockets open — silent, trickling its
//! headers, or stalling mid-body — cannot lock the worker out: with `RLIMIT_NOFILE=1024`, 1,100 idle
//! and 300 slowloris connections open, `/api/health` and ingest still answer, and the worker's open
//! descriptors return to where they were once the clients go.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use memd::client::http::{self, Request};

use crate::support::{DEADLINE, TestWorker, observation_body, wait_until};

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Raises this test process's own soft fd limit (it opens 1,400+ sockets).
fn raise_own_limit() {
    // SAFETY: getrlimit/setrlimit on this process with owned structs.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

fn one_second_request(w: &TestWorker, method: &str, path: &str, body: Option<&[u8]>) -> u16 {
    let req = Request {
        method,
        path,
        token: Some(&w.token),
        body,
        ..Default::default()
    };
    http::send(w.addr(), &req, Duration::from_secs(1)).map_or(0, |r| r.status)
}

#[test]
fn idle_and_slowloris_connections_cannot_lock_the_worker_out() {
    raise_own_limit();
    let mut w = TestWorker::prepared(&[("MEMD_HTTP_HEADER_TIMEOUT_MS", "3000")]);
    w.fd_limit = Some(1024);
    w.spawn();
    let pid = w.pid().unwrap();
    let baseline = open_fds(pid);
    let mut held = Vec::new();
    for _ in 0..1_100 {
        held.push(TcpStream::connect(w.addr()).expect("connect idle"));
    }
    for _ in 0..300 {
        let mut s = TcpStream::connect(w.addr()).expect("connect slowloris");
        let _ = s.write_all(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
        held.push(s);
    }
    // A stalled body: headers promise 1,000 bytes, 10 arrive.
    let mut stalled = TcpStream::connect(w.addr()).unwrap();
    let head = format!(
        "POST /api/sessions/observations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"content",
        w.token
    );
    stalled.write_all(head.as_bytes()).unwrap();
    assert!(open_fds(pid) < 1024, "the worker stays below its fd limit");
    assert_eq!(one_second_request(&w, "GET", "/api/health", None), 200, "health answers within 1 s");
    for i in 0..5 {
        let body = observation_body("hostile", i).to_string();
        let status = one_second_request(&w, "POST", "/api/sessions/observations", Some(body.as_bytes()));
        assert_eq!(status, 200, "ingest {i} answers within 1 s");
    }
    // The stalled body gets 408 once its body timeout (10 s) passes, or its connection is shed.
    stalled.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut answer = String::new();
    let _ = stalled.read_to_string(&mut answer);
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer}");
    drop(held);
    drop(stalled);
    assert!(
        wait_until(DEADLINE, || open_fds(pid) <= baseline + 2),
        "open fds back to the baseline {baseline}: {}",
        open_fds(pid)
    );
    assert_eq!(w.count("SELECT count(*) FROM tool_uses WHERE content_session_id = 'hostile'"), 5);
}

/// Issue 14: 1,000 busy sessions against a provider that accepts and never answers hold at most
/// `MEMD_OBSERVER_CONCURRENCY` (default 4) provider connections.
#[test]
fn a_hung_provider_gets_at_most_the_call_cap_of_connections() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (open, peak, total) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    {
        let (open, peak, total) = (open, peak.clone(), total.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                total.fetch_add(1, Ordering::Relaxed);
                let now = open.fetch_add(1, Ordering::Relaxed) + 1;
                peak.fetch_max(now, Ordering::Relaxed);
                let open = open.clone();
                std::thread::spawn(move || {
                    // Read until the worker gives up on the connection; never answer.
                    let mut conn = conn;
                    let mut buf = [0u8; 4096];
                    while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
                    open.fetch_sub(1, Ordering::Relaxed);
                });
            }
        });
    }
    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_BASE_URL", &url),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-api03-test"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "10"),
    ]);
    for i in 0..1_000 {
        let r = w.post("/api/sessions/observations", &observation_body(&format!("busy-{i}"), 0));
        assert_eq!(r.status, 200);
    }
    assert!(
        wait_until(DEADLINE, || total.load(Ordering::Relaxed) >= 4),
        "the provider was called"
    );
    std::thread::sleep(Duration::from_secs(3));
    let (peak, status) = (peak.load(Ordering::Relaxed), w.status());
    assert!(peak <= 4, "at most 4 provider connections were open at once, saw {peak}");
    assert_eq!(status["provider"]["calls_max"], 4);
    assert!(status["provider"]["calls_open"].as_u64().unwrap() <= 4, "{}", status["provider"]);
}
