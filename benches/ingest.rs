//! Ingest benchmarks against a real `memd serve` (release build) on loopback.
//!
//! Criterion measures the time per acknowledged observation with 1 and with 64 concurrent clients
//! (one connection per request, as the hook does). Before that, a one-shot report prints the
//! figures the issue asks for: acknowledged observations/s and p50/p99 latency at 1 and 64
//! clients, idle RSS, start-to-readiness, and RSS with 1,000 live session actors.
//! Run: `cargo bench --bench ingest`. `INGEST_ALERTS=1` instead compares ingest latency with
//! alerts off and with every observation alerting to a dead webhook (a listener that accepts and
//! never answers), the extractive observer on (issue 39). `MEMD_BENCH_BINARY=<path>` runs another build of memd (an
//! A/B against an older commit); `INGEST_RESPONSE_BYTES=4096` pads each tool response with code
//! (distinct identifiers per event) to about that size.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use memd::client::http::{Request, send};

struct Worker {
    _dir: tempfile::TempDir,
    child: Child,
    addr: SocketAddr,
    token: String,
    ready_after: Duration,
}

impl Worker {
    fn start(extra: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let bin = std::env::var("MEMD_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_memd").to_string());
        let mut cmd = Command::new(bin);
        cmd.arg("serve")
            .env("MEMD_DATA_DIR", dir.path())
            .env("MEMD_PORT", "0")
            .env("MEMD_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let (addr, ready_after) = wait_ready(dir.path(), child.id(), t0);
        let token = std::fs::read_to_string(dir.path().join("token")).unwrap().trim().to_string();
        Self {
            _dir: dir,
            child,
            addr,
            token,
            ready_after,
        }
    }

    fn post(&self, path: &str, body: &str) -> u16 {
        let req = Request {
            method: "POST",
            path,
            token: Some(&self.token),
            body: Some(body.as_bytes()),
            ..Default::default()
        };
        send(self.addr, &req, Duration::from_secs(30)).map(|r| r.status).unwrap_or(0)
    }

    fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_ready(dir: &Path, pid: u32, t0: Instant) -> (SocketAddr, Duration) {
    loop {
        if let Some(p) = memd::data_dir::read_pid_file(&dir.join("memd.pid")).filter(|p| p.pid == pid && p.port != 0) {
            let addr = SocketAddr::from(([127, 0, 0, 1], p.port));
            let req = Request {
                method: "GET",
                path: "/api/readiness",
                ..Default::default()
            };
            if send(addr, &req, Duration::from_secs(1)).is_ok_and(|r| r.status == 200) {
                return (addr, t0.elapsed());
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "worker not ready");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Code-like text of about `bytes` bytes whose identifiers differ per event `i`.
fn padding(i: usize, bytes: usize) -> String {
    let mut s = String::new();
    let mut n = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "fn handle_request_{i}_{n}(ctx: &mut Context{n}) -> Result<Value{i}> {{ parse_header_{n}(ctx) }}\n"
        ));
        n += 1;
    }
    s
}

fn body(session: &str, i: usize) -> String {
    let pad: usize = std::env::var("INGEST_RESPONSE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    serde_json::json!({
        "contentSessionId": session, "tool_name": "Bash",
        "tool_input": {"command": format!("cargo test --lib case_{i}"), "description": "run the unit tests"},
        "tool_response": {"stdout": format!("running 12 tests\n{}test result: ok. 12 passed; 0 failed", padding(i, pad)), "stderr": ""},
        "tool_use_id": format!("toolu_{session}_{i}"), "cwd": "/home/dev/shop",
    })
    .to_string()
}

/// Posts `total` observations from `clients` threads; returns (elapsed, sorted latencies).
fn load(w: &Worker, clients: usize, total: usize, tag: &str) -> (Duration, Vec<Duration>) {
    let next = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (next, addr, token, tag) = (next.clone(), w.addr, w.token.clone(), tag.to_string());
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        return lat;
                    }
                    let b = body(&format!("{tag}-{}", c % 16), i);
                    let req = Request {
                        method: "POST",
                        path: "/api/sessions/observations",
                        token: Some(&token),
                        body: Some(b.as_bytes()),
                        ..Default::default()
                    };
                    let s = Instant::now();
                    let ok = send(addr, &req, Duration::from_secs(30)).is_ok_and(|r| r.status == 200);
                    assert!(ok, "request failed");
                    lat.push(s.elapsed());
                }
            })
        })
        .collect();
    let mut all: Vec<Duration> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    let elapsed = t0.elapsed();
    all.sort();
    (elapsed, all)
}

fn pct(v: &[Duration], p: usize) -> f64 {
    v.get((v.len() * p / 100).min(v.len() - 1))
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn report() {
    let mut starts: Vec<Duration> = (0..5).map(|_| Worker::start(&[]).ready_after).collect();
    starts.sort();
    println!("start to readiness: median {:.1} ms (5 starts)", starts[2].as_secs_f64() * 1000.0);
    let w = Worker::start(&[]);
    std::thread::sleep(Duration::from_millis(500));
    println!("idle RSS: {:.1} MB", w.rss_kb() as f64 / 1024.0);
    for (clients, total) in [(1usize, 3_000usize), (64, 20_000)] {
        let (elapsed, lat) = load(&w, clients, total, &format!("r{clients}"));
        println!(
            "{clients:>2} client(s): {total} acknowledged in {:.2} s = {:.0} obs/s; latency p50 {:.2} ms p99 {:.2} ms",
            elapsed.as_secs_f64(),
            total as f64 / elapsed.as_secs_f64(),
            pct(&lat, 50),
            pct(&lat, 99)
        );
    }
    drop(w);
    // 1,000 live session actors: one event each; a long debounce keeps every actor alive.
    let w = Worker::start(&[("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "600000")]);
    for s in 0..1000 {
        assert_eq!(w.post("/api/sessions/observations", &body(&format!("live{s}"), 0)), 200);
    }
    std::thread::sleep(Duration::from_millis(500));
    println!("RSS with 1,000 live session actors: {:.1} MB", w.rss_kb() as f64 / 1024.0);
}

/// Ingest with alerts off, then with every observation type alerting to a webhook that never
/// answers: the same load, p50 and p99 side by side.
fn report_alerts() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", dead.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in dead.incoming().flatten() {
            held.push(s);
        }
    });
    let all = "bugfix,feature,refactor,change,discovery,decision,security_alert,security_note,sensitive";
    let base = [("MEMD_PROVIDER", "extractive"), ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")];
    for (label, alerts) in [("alerts off", None), ("dead webhook", Some(url.as_str()))] {
        let mut env = base.to_vec();
        if let Some(u) = alerts {
            env.extend([("MEMD_ALERT_WEBHOOK_URL", u), ("MEMD_ALERT_TYPES", all)]);
        }
        let w = Worker::start(&env);
        for (clients, total) in [(1usize, 3_000usize), (64, 20_000)] {
            let (elapsed, lat) = load(&w, clients, total, &format!("a{clients}"));
            println!(
                "{label:>12}, {clients:>2} client(s): {total} in {:.2} s; latency p50 {:.2} ms p99 {:.2} ms",
                elapsed.as_secs_f64(),
                pct(&lat, 50),
                pct(&lat, 99)
            );
        }
    }
}

fn bench_ingest(c: &mut Criterion) {
    let w = Worker::start(&[]);
    let mut g = c.benchmark_group("ingest");
    g.sample_size(10);
    let round = AtomicUsize::new(0);
    for clients in [1usize, 64] {
        g.bench_function(format!("observation_ack_{clients}_clients"), |b| {
            b.iter_custom(|iters| {
                let tag = format!("c{clients}-{}", round.fetch_add(1, Ordering::Relaxed));
                let total = (iters as usize).max(clients);
                let (elapsed, _) = load(&w, clients, total, &tag);
                elapsed.mul_f64(iters as f64 / total as f64)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_ingest);

fn main() {
    if std::env::var("INGEST_ALERTS").is_ok() {
        report_alerts();
        return;
    }
    report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
