//! What the graph (issue 41) adds to storing a batch and to the database, on the recorded sessions
//! and on synthetic observations. One-shot report, then criterion on one batch's graph.
//!
//! Each stored batch runs `store_batch` (observations, sources, raw index queue, supersession
//! rules, token usage — and the graph) in its own transaction on a file database in WAL mode
//! (`synchronous=NORMAL`: the worker's default FULL adds an fsync per group commit, which would
//! only make the graph's share smaller). The same sessions are stored into two databases, with
//! `MEMD_GRAPH` off and on (`store::graph::set_enabled`), batch by batch alternately, and the
//! times compared: of `store_batch` alone, and of the calls' ingest plus `store_batch`.
//! Size: the graph database vacuumed with and without the graph's rows.
//! Run: `cargo bench --bench graph` (`MEMD_TRANSCRIPTS_DIR` = the recorded sessions, else the
//! trimmed fixtures; `GRAPH_BENCH_OBSERVATIONS` synthetic observations, default 100,000).
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use memd::observer::types::{BatchMeta, BatchOutput, ObservationDraft};
use memd::replay::event::EventKind;
use memd::store::batch::store_batch;
use memd::store::graph::{GraphBatch, record_batch};
use memd::store::sessions::{SessionKey, SessionSeed};
use memd::store::tool_events::{ToolEventIn, ingest_tool_event};
use rusqlite::Connection;

const T0: i64 = 1_787_011_200_000;
/// Calls per observer batch: the recorded sessions' median is under 2 (`memd replay --observer-cost`:
/// 628 calls in 413 batches); three keeps an edit pair and a test run together.
const BATCH: usize = 3;

/// One call to store: tool, input JSON, response, failed.
type Call = (String, String, String, bool);
/// One session: its key, project, root and calls in order.
struct Session {
    key: String,
    project: String,
    root: String,
    calls: Vec<Call>,
}

fn open(path: &Path) -> Connection {
    let mut c = Connection::open(path).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        .unwrap();
    memd::store::migrations::migrate(&mut c, T0).unwrap();
    c
}

fn event(s: &Session, n: usize, call: &Call) -> ToolEventIn {
    ToolEventIn {
        seed: SessionSeed {
            key: SessionKey::new("claude", &s.key),
            project: s.project.clone(),
            project_root: Some(s.root.clone()),
            transcript_path: None,
            custom_title: None,
        },
        tool_use_id: Some(format!("{}-{n}", s.key)),
        tool_name: call.0.clone(),
        tool_input: call.1.clone(),
        tool_response: call.2.clone(),
        is_error: call.3,
        cwd: Some(s.root.clone()),
        agent_id: None,
        agent_type: None,
        duration_ms: None,
        input_chars: call.1.len() as i64,
        response_chars: call.2.len() as i64,
        truncated: 0,
        images_stripped: 0,
        redactions: 0,
        prompt_id: None,
        event_id: None,
        occurred_at: T0 + n as i64,
        now: T0 + n as i64,
    }
}

/// Time of one batch: the calls' ingest transactions and `store_batch`.
#[derive(Default, Clone, Copy)]
struct Took {
    ingest: Duration,
    store: Duration,
}

/// Ingests one batch of calls and stores its observation, the graph on or off.
fn store_one(c: &Connection, s: &Session, b: usize, chunk: &[Call], graph: bool) -> Took {
    memd::store::graph::set_enabled(graph);
    let t = Instant::now();
    let mut rows = Vec::new();
    for (i, call) in chunk.iter().enumerate() {
        // Each call its own transaction, as each hook request is.
        let tx = c.unchecked_transaction().unwrap();
        ingest_tool_event(&tx, &event(s, b * BATCH + i, call)).unwrap();
        rows.push(tx.last_insert_rowid());
        tx.commit().unwrap();
    }
    let ingest = t.elapsed();
    let (sid, memory): (i64, String) = c
        .query_row(
            "SELECT id, memory_session_id FROM sdk_sessions WHERE content_session_id = ?1",
            [&s.key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let meta = BatchMeta::first_prompt((sid, &memory, &s.key), &s.project, &s.root, T0);
    let o = ObservationDraft {
        obs_type: "change".into(),
        title: Some(format!("{} batch {b}", s.key)),
        narrative: Some(format!("{} calls of {}", chunk.len(), s.key)),
        concepts: vec!["bench".into()],
        ..Default::default()
    };
    let t = Instant::now();
    let tx = c.unchecked_transaction().unwrap();
    store_batch(&tx, &meta, &BatchOutput::extractive(vec![o], None, rows), T0).unwrap();
    tx.commit().unwrap();
    let store = t.elapsed();
    memd::store::graph::set_enabled(true);
    Took { ingest, store }
}

/// Stores every session into `off` (no graph) and `on` (the graph), batch by batch alternately so
/// both see the same machine; returns their total times and the number of batches.
fn store_all(off: &Connection, on: &Connection, sessions: &[Session]) -> (Took, Took, usize) {
    let (mut a, mut b, mut batches) = (Took::default(), Took::default(), 0);
    for s in sessions {
        for (n, chunk) in s.calls.chunks(BATCH).enumerate() {
            let x = store_one(off, s, n, chunk, false);
            let y = store_one(on, s, n, chunk, true);
            (a.ingest, a.store, b.ingest, b.store) = (a.ingest + x.ingest, a.store + x.store, b.ingest + y.ingest, b.store + y.store);
            batches += 1;
        }
    }
    (a, b, batches)
}

/// Bytes of the database vacuumed, with and without the graph's rows.
fn sizes(db: &Path) -> (u64, u64) {
    let dir = db.parent().unwrap();
    let (with, without) = (dir.join("with.db"), dir.join("without.db"));
    let c = Connection::open(db).unwrap();
    c.execute(&format!("VACUUM INTO '{}'", with.display()), []).unwrap();
    let w = Connection::open(&with).unwrap();
    w.execute_batch("PRAGMA foreign_keys=ON; DELETE FROM entities; DELETE FROM meta WHERE key LIKE 'graph_%';")
        .unwrap();
    w.execute(&format!("VACUUM INTO '{}'", without.display()), []).unwrap();
    (std::fs::metadata(&with).unwrap().len(), std::fs::metadata(&without).unwrap().len())
}

fn recorded() -> Vec<Session> {
    let dir =
        std::env::var("MEMD_TRANSCRIPTS_DIR").unwrap_or_else(|_| format!("{}/tests/fixtures/transcripts", env!("CARGO_MANIFEST_DIR")));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Ok(s) = memd::replay::convert::convert_file(&path) else {
            continue;
        };
        let mut calls = Vec::new();
        let mut root = String::new();
        for e in &s.events {
            if !matches!(e.kind, EventKind::PostToolUse | EventKind::PostToolUseFailure) {
                continue;
            }
            root = e.payload["cwd"].as_str().unwrap_or("").to_string();
            let response = match e.kind {
                EventKind::PostToolUseFailure => serde_json::json!({"error": e.payload["error"]}).to_string(),
                _ => e.payload["tool_response"].to_string(),
            };
            let name = e.tool_name().unwrap_or("").to_string();
            calls.push((
                name,
                e.payload["tool_input"].to_string(),
                response,
                e.kind == EventKind::PostToolUseFailure,
            ));
        }
        if !calls.is_empty() {
            out.push(Session {
                key: s.session_id.clone(),
                project: "recorded".into(),
                root,
                calls,
            });
        }
    }
    out
}

/// `n` observations' worth of sessions of ten batches: each batch edits two of its project's 100
/// files and runs a test command (a tenth of the runs fail; the same command passes later).
fn synthetic(n: usize) -> Vec<Session> {
    let sessions = n.div_ceil(10);
    (0..sessions)
        .map(|s| {
            let (project, root) = (format!("p{}", s % 20), format!("/w/p{}", s % 20));
            let mut calls = Vec::new();
            for b in 0..10 {
                let file = |k: usize| format!("{root}/src/m{}.rs", (s * 7 + b * 3 + k) % 100);
                for k in 0..2 {
                    let input =
                        serde_json::json!({"file_path": file(k), "old_string": "a", "new_string": format!("pub fn f{}_{k}() {{}}", b)});
                    calls.push(("Edit".into(), input.to_string(), "{}".into(), false));
                }
                let fail = (s + b) % 10 == 0;
                let out = if fail {
                    r#"{"stdout":"test m::t ... FAILED"}"#
                } else {
                    r#"{"stdout":"test result: ok"}"#
                };
                calls.push((
                    "Bash".into(),
                    serde_json::json!({"command": format!("cargo test m{}", b % 5)}).to_string(),
                    out.into(),
                    fail,
                ));
            }
            Session {
                key: format!("syn-{s}"),
                project,
                root,
                calls,
            }
        })
        .collect()
}

/// The same sessions stored twice, into two databases: without the graph, then with it.
fn report(name: &str, sessions: &[Session]) {
    let dir = tempfile::tempdir().unwrap();
    let (off_db, on_db) = (dir.path().join("off.db"), dir.path().join("on.db"));
    let (x, y, batches) = store_all(&open(&off_db), &open(&on_db), sessions);
    let (in_off, off, in_on, on) = (x.ingest, x.store, y.ingest, y.store);
    let (with, without) = sizes(&on_db);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / batches.max(1) as f64;
    let (total_off, total_on) = ((in_off + off).as_secs_f64(), (in_on + on).as_secs_f64());
    println!(
        "{name}: {batches} batches; store_batch {:.1} µs a batch without the graph, {:.1} µs with it (+{:.1} %); \
         ingest of the calls + store_batch {:.1} → {:.1} µs (+{:.1} %); database {without} → {with} bytes with the graph (+{:.1} %)",
        per(off),
        per(on),
        100.0 * (on.as_secs_f64() - off.as_secs_f64()) / off.as_secs_f64().max(1e-9),
        per(in_off + off),
        per(in_on + on),
        100.0 * (total_on - total_off) / total_off.max(1e-9),
        100.0 * (with as f64 - without as f64) / without.max(1) as f64
    );
}

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("GRAPH_BENCH_OBSERVATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    report("recorded sessions", &recorded());
    report(&format!("{n} synthetic observations"), &synthetic(n));
    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir.path().join("memd.db"));
    let sessions = synthetic(10);
    for s in &sessions {
        for (n, chunk) in s.calls.chunks(BATCH).enumerate() {
            store_one(&conn, s, n, chunk, true);
        }
    }
    let calls: Vec<i64> = (1..=BATCH as i64).collect();
    // One observation per batch of BATCH calls: the first batch's.
    let sid: i64 = conn.query_row("SELECT min(id) FROM sdk_sessions", [], |r| r.get(0)).unwrap();
    let obs: i64 = conn.query_row("SELECT min(id) FROM observations", [], |r| r.get(0)).unwrap();
    c.bench_function("graph of one batch of 3 calls", |b| {
        b.iter(|| {
            let tx = conn.unchecked_transaction().unwrap();
            let b = GraphBatch {
                project: "p0",
                project_root: Some("/w/p0"),
                session_db_id: sid,
                source_rows: &calls,
                observation_ids: &[obs],
                proposals: &[],
            };
            record_batch(&tx, &b, T0).unwrap();
            tx.commit().unwrap();
        })
    });
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
