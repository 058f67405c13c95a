//! Vector benchmarks. Needs the model at `MEMD_TEST_MODEL_DIR` (else only the synthetic parts run).
//!
//! A one-shot report prints the figures the issue asks for, then criterion measures the same paths:
//! - embedding throughput (sentences/s, batches of 16 and 64 short sentences);
//! - nearest-neighbour query p50 over 100,000 documents in sqlite-vec (vectors are synthetic random
//!   unit vectors: embedding 100,000 texts would take ~30 min here) — with and without a project scope;
//! - RSS of this process before and after loading the model, and of a worker after its backfill;
//! - ingest throughput (acknowledged observations/s, 8 clients) and acknowledgement p50/p99 of a worker
//!   with vectors enabled, its backfill busy through the round, vs `MEMD_EMBEDDINGS=none`: 7 pairs of
//!   rounds in alternating order, the median of the pairs' ratios (embedding runs after the
//!   acknowledgement).
//!
//! Run: `MEMD_TEST_MODEL_DIR=<dir> cargo bench --bench vectors`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use memd::config::EncoderKind;
use memd::vectors::documents::DocKind;
use memd::vectors::embedder::DIM;
use memd::vectors::encoder::Encoder;
use memd::vectors::index::{register_extension, to_stored_blob};
use memd::vectors::nearest::{VectorScope, nearest};

const DOCS: usize = 100_000;

fn model_dir() -> Option<PathBuf> {
    std::env::var("MEMD_TEST_MODEL_DIR")
        .ok()
        .map(PathBuf::from)
        .filter(|d| d.join("model.safetensors").is_file())
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

fn sentences(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("observation {i}: the worker drains in-flight requests and flushes the store before exit"))
        .collect()
}

/// xorshift: deterministic pseudo-random unit vectors.
fn random_unit(seed: &mut u64) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    for x in v.iter_mut() {
        *x /= n;
    }
    v
}

/// A database of `DOCS` synthetic observation documents with the v1+v2 schema and `vectors_bin`.
fn synthetic_db(dir: &std::path::Path) -> rusqlite::Connection {
    register_extension();
    let mut conn = rusqlite::Connection::open(dir.join("bench.db")).unwrap();
    memd::store::migrations::migrate(&mut conn, 0).unwrap();
    let tx = conn.transaction().unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    {
        let mut ins = tx
            .prepare(
                "INSERT INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
                 VALUES (?1, 'observation', ?2, 'narrative', ?3, 'claude', ?2, 'all-MiniLM-L6-v2', 384, ?4)",
            )
            .unwrap();
        for i in 0..DOCS {
            let blob = to_stored_blob(&random_unit(&mut seed));
            let id = format!("obs_{i}_narrative");
            ins.execute(rusqlite::params![id, i as i64, format!("p{}", i % 10), blob]).unwrap();
        }
    }
    // Built from `vectors`, as on an upgrade.
    memd::vectors::index::ensure_vec_table(&tx).unwrap();
    tx.commit().unwrap();
    conn
}

fn p50(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn report(conn: &rusqlite::Connection) {
    let mut seed = 42u64;
    let queries: Vec<Vec<f32>> = (0..50).map(|_| random_unit(&mut seed)).collect();
    for (label, scope) in [
        ("unscoped", VectorScope::default()),
        (
            "project-scoped (1 of 10 projects)",
            VectorScope {
                kinds: vec![DocKind::Observation],
                projects: vec!["p3".into()],
                ..Default::default()
            },
        ),
    ] {
        let times: Vec<Duration> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                let (found, _) = nearest(conn, None, q, &scope, 100).unwrap();
                assert!(!found.is_empty());
                t.elapsed()
            })
            .collect();
        println!("sqlite-vec nearest 100 of {DOCS} docs, {label}: p50 {:.1} ms", p50(times));
    }
    let Some(dir) = model_dir() else {
        println!("MEMD_TEST_MODEL_DIR unset: embedding figures skipped");
        return;
    };
    let texts = sentences(64);
    for kind in [EncoderKind::Static, EncoderKind::Transformer] {
        let before = rss_mb();
        let e = Encoder::load(&dir, kind, memd_bert::Kernel::best()).unwrap();
        e.embed(&texts[..4]).unwrap();
        let name = kind.model_name();
        println!("RSS: {before:.0} MB before {name}, {:.0} MB with it loaded and warm", rss_mb());
        for batch in [1usize, 16, 64] {
            let t = Instant::now();
            let mut n = 0;
            while t.elapsed() < Duration::from_secs(5) {
                e.embed(&texts[..batch]).unwrap();
                n += batch;
            }
            println!("{name}, batch {batch}: {:.0} sentences/s", n as f64 / t.elapsed().as_secs_f64());
        }
    }
}

/// A release `memd serve` in a temp dir.
struct Worker {
    _dir: tempfile::TempDir,
    child: std::process::Child,
    addr: std::net::SocketAddr,
    token: String,
}

impl Worker {
    fn start(env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memd"));
        cmd.arg("serve")
            .env("MEMD_DATA_DIR", dir.path())
            .env("MEMD_PORT", "0")
            .env("MEMD_LOG", "warn")
            .env("MEMD_PROVIDER", "extractive")
            .env("MEMD_OBSERVER_BATCH_MAX_EVENTS", "1")
            .env("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "0")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let t0 = Instant::now();
        let addr = loop {
            if let Some(p) = memd::data_dir::read_pid_file(&dir.path().join("memd.pid")).filter(|p| p.pid == child.id() && p.port != 0) {
                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], p.port));
                let req = memd::client::http::Request {
                    method: "GET",
                    path: "/api/readiness",
                    ..Default::default()
                };
                if memd::client::http::send(addr, &req, Duration::from_secs(1)).is_ok_and(|r| r.status == 200) {
                    break addr;
                }
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "worker not ready");
            std::thread::sleep(Duration::from_millis(5));
        };
        let token = std::fs::read_to_string(dir.path().join("token")).unwrap().trim().to_string();
        Self {
            _dir: dir,
            child,
            addr,
            token,
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&str>) -> memd::client::http::Response {
        let req = memd::client::http::Request {
            method,
            path,
            token: Some(&self.token),
            body: body.map(str::as_bytes),
            ..Default::default()
        };
        memd::client::http::send(self.addr, &req, Duration::from_secs(30)).unwrap()
    }

    fn rss_mb(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    }

    /// Posts `total` observations from 8 clients: acknowledged observations per second, and each
    /// request's time to its acknowledgement.
    fn ingest(&self, total: usize, round: usize) -> (f64, Vec<Duration>) {
        let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let t0 = Instant::now();
        let latencies = std::thread::scope(|s| {
            let clients: Vec<_> = (0..8)
                .map(|c| {
                    let next = next.clone();
                    s.spawn(move || {
                        let mut took = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if i >= total {
                                return took;
                            }
                            let body = serde_json::json!({
                                "contentSessionId": format!("bench-{round}-{c}"), "tool_name": "Bash",
                                "tool_input": {"command": format!("cargo test case_{round}_{i}"), "description": format!("run test case {i} of suite {c}")},
                                "tool_response": {"stdout": format!("test case_{i} ... ok ({} ms)", i * 7 % 1000), "stderr": ""},
                                "tool_use_id": format!("toolu_{round}_{c}_{i}"), "cwd": "/home/dev/shop",
                            })
                            .to_string();
                            let t = Instant::now();
                            assert_eq!(self.call("POST", "/api/sessions/observations", Some(&body)).status, 200);
                            took.push(t.elapsed());
                        }
                    })
                })
                .collect();
            clients.into_iter().flat_map(|c| c.join().unwrap()).collect::<Vec<_>>()
        });
        (total as f64 / t0.elapsed().as_secs_f64(), latencies)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the worker has stored and embedded everything; the seconds it took.
fn drain(w: &Worker) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(600) {
        let st: serde_json::Value = w.call("GET", "/api/status", None).json().unwrap_or_default();
        let b = &st["vectors"]["backfill"];
        let drained = st["pending"]["pending"].as_i64() == Some(0) && st["pending"]["processing"].as_i64().unwrap_or(0) == 0;
        if drained && st["vectors"]["state"] == "ok" && b["done"] == b["total"] && b["total"].as_i64().unwrap_or(0) > 0 {
            return Some(t0.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

fn percentile_ms(v: &mut [Duration], q: f64) -> f64 {
    v.sort();
    v[((v.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0
}

/// Ingest with vectors off and on: `PAIRS` pairs of rounds of 1,500 observations, the order within
/// a pair alternating (off-on, on-off, …) so that a drift of the machine falls on both sides. The
/// vectors-on worker embeds the round's observations while it ingests them (its backfill, on both
/// cores at nice 10, is busy for the whole round and ~30 s after) and is drained before the next
/// round of either worker, so the vectors-off rounds never share the machine with an embedding.
/// Reported: the median of the pairs' rate ratios, and acknowledgement p50/p99 over all rounds.
fn ingest_report() {
    const PAIRS: usize = 7;
    let Some(model) = model_dir() else { return };
    let model = model.to_string_lossy().to_string();
    let off = Worker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let on = Worker::start(&[("MEMD_EMBED_MODEL_DIR", &model)]);
    let (mut lat_off, mut lat_on, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..PAIRS {
        let run_off = |lat: &mut Vec<Duration>| {
            let (rate, l) = off.ingest(1_500, round);
            lat.extend(l);
            rate
        };
        let run_on = |lat: &mut Vec<Duration>| {
            let (rate, l) = on.ingest(1_500, round);
            lat.extend(l);
            let took = drain(&on).unwrap_or(f64::NAN);
            (rate, took)
        };
        let (rate_off, (rate_on, took)) = if round % 2 == 0 {
            let r = run_off(&mut lat_off);
            (r, run_on(&mut lat_on))
        } else {
            let r = run_on(&mut lat_on);
            (run_off(&mut lat_off), r)
        };
        ratios.push(rate_on / rate_off);
        println!("  round {round}: {rate_off:.0} obs/s off, {rate_on:.0} obs/s on; embedded after ingest in {took:.1} s");
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "ingest, {PAIRS} alternating pairs of rounds of 1,500 observations from 8 clients: vectors on / off, median {:+.1} % (pairs {:+.1} … {:+.1} %)",
        (ratios[PAIRS / 2] - 1.0) * 100.0,
        (ratios[0] - 1.0) * 100.0,
        (ratios[PAIRS - 1] - 1.0) * 100.0
    );
    println!(
        "acknowledgement p50 / p99: {:.2} / {:.2} ms with vectors off, {:.2} / {:.2} ms with vectors on",
        percentile_ms(&mut lat_off, 0.5),
        percentile_ms(&mut lat_off, 0.99),
        percentile_ms(&mut lat_on, 0.5),
        percentile_ms(&mut lat_on, 0.99)
    );
    println!(
        "worker RSS with the model loaded, after embedding {} observations: {:.0} MB",
        PAIRS * 1_500,
        on.rss_mb()
    );
}

fn bench_vectors(c: &mut Criterion) {
    ingest_report();
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let conn = synthetic_db(dir.path());
    println!("built {DOCS} synthetic vectors in {:.1} s", t.elapsed().as_secs_f64());
    report(&conn);
    let mut g = c.benchmark_group("vectors");
    g.sample_size(20);
    let mut seed = 7u64;
    let q = random_unit(&mut seed);
    g.bench_function("sqlite_vec_nearest_100_of_100k", |b| {
        b.iter(|| nearest(&conn, None, &q, &VectorScope::default(), 100).unwrap())
    });
    if let Some(model) = model_dir() {
        let texts = sentences(16);
        g.throughput(Throughput::Elements(16));
        for kind in [EncoderKind::Static, EncoderKind::Transformer] {
            let e = Encoder::load(&model, kind, memd_bert::Kernel::best()).unwrap();
            g.bench_function(format!("embed_batch_16_{}", kind.model_name()), |b| {
                b.iter(|| e.embed(&texts).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_vectors);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
