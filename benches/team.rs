//! Team memory (issue 40) against a throwaway PostgreSQL server:
//! 1. the hook's latency (`memd hook claude-code observation`, a whole process) on a worker that
//!    shares its project, with the team server up and then stopped (criterion medians);
//! 2. `TEAM_BENCH_WORKERS` (default 20) workers, each with its own data dir and member role,
//!    replaying the recorded sessions (`MEMD_TRANSCRIPTS_DIR`) concurrently with `memd replay`:
//!    convergence time, server rows, duplicates and each worker's ingest p99 (PostToolUse);
//!    with `TEAM_BENCH_BASELINE=1` the same replay with no team setting, for the p99 alone.
//!
//! Asserts nothing. Run: `MEMD_TRANSCRIPTS_DIR=../shared/data/transcripts cargo bench --bench team`
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::Value;
use support::TestWorker;
use support::hook::{post_tool, run_hook};
use support::postgres::Postgres;

fn team_worker(pg: &Postgres, role: &str, projects: &str, sync_ms: &str) -> TestWorker {
    let url = pg.url(role);
    let origin = format!("{role}@bench");
    TestWorker::start(&[
        ("MEMD_TEAM_DATABASE_URL", url.as_str()),
        ("MEMD_TEAM_PROJECTS", projects),
        ("MEMD_TEAM_ORIGIN", origin.as_str()),
        ("MEMD_TEAM_SYNC_MS", sync_ms),
        ("MEMD_EMBEDDINGS", "none"),
    ])
}

fn member(pg: &Postgres, role: &str) {
    pg.sql("memd", &format!("CREATE ROLE {role} LOGIN; GRANT memd_member TO {role};"));
}

fn team_state(w: &TestWorker) -> Value {
    w.get("/api/team").json().unwrap_or_default()
}

fn hook_latency(pg: &Postgres) {
    member(pg, "hooker");
    let w = team_worker(pg, "hooker", "shop", "300");
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(100)
        .measurement_time(Duration::from_secs(10));
    let mut i = 0;
    c.bench_function("team/hook observation, team server up", |b| {
        b.iter(|| {
            i += 1;
            run_hook(w.command(), "observation", &post_tool("team-bench", i))
        })
    });
    println!("worker's team state with the server up: {}", team_state(&w)["status"]["state"]);
    pg.stop();
    let degraded = support::wait_until(Duration::from_secs(30), || team_state(&w)["status"]["state"] == "degraded");
    println!("the server stopped; the worker says degraded: {degraded}");
    c.bench_function("team/hook observation, team server down", |b| {
        b.iter(|| {
            i += 1;
            run_hook(w.command(), "observation", &post_tool("team-bench", i))
        })
    });
    pg.start_again();
    c.final_summary();
}

fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl") && !memd::replay::transcript::is_subagent_file(p));
    files.sort();
    files
}

/// The projects the hook computes for the sessions' working directories.
fn projects_of(files: &[PathBuf]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for f in files {
        let Ok(s) = memd::replay::convert::convert_file(f) else { continue };
        for e in &s.events {
            if let Some(cwd) = e.payload["cwd"].as_str() {
                out.insert(memd::replay::bodies::project_of(cwd, None));
            }
        }
    }
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

fn count(pg: &Postgres, sql: &str) -> i64 {
    pg.sql("memd", sql).trim().parse().unwrap_or(-1)
}

/// True when every worker pushed everything and pulled every other origin's live row.
fn converged(pg: &Postgres, workers: &[(String, TestWorker)]) -> bool {
    workers.iter().all(|(role, w)| {
        let t = team_state(w);
        let others = count(
            pg,
            &format!("SELECT count(*) FROM memd.rows WHERE NOT deleted AND origin <> '{role}@bench'"),
        );
        t["local"]["queue"] == 0 && t["status"]["lag"] == 0 && t["local"]["pulled"].as_i64() == Some(others)
    })
}

fn twenty_workers(pg: &Postgres) {
    let Some(dir) = std::env::var_os("MEMD_TRANSCRIPTS_DIR").map(PathBuf::from) else {
        println!("twenty workers: skipped (set MEMD_TRANSCRIPTS_DIR to the recorded sessions)");
        return;
    };
    let n: usize = std::env::var("TEAM_BENCH_WORKERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let files = transcripts(&dir);
    let projects = projects_of(&files).join(",");
    println!("{n} workers, {} sessions each, shared projects: {projects}", files.len());
    let baseline = std::env::var("TEAM_BENCH_BASELINE").is_ok_and(|v| v == "1");
    let workers: Vec<(String, TestWorker)> = (0..n)
        .map(|k| {
            let role = format!("dev{k:02}");
            if baseline {
                return (role, TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]));
            }
            member(pg, &role);
            let w = team_worker(pg, &role, &projects, "1000");
            (role, w)
        })
        .collect();
    let start = Instant::now();
    let replays: Vec<_> = workers
        .iter()
        .map(|(_, w)| {
            w.command()
                .arg("replay")
                .arg(&dir)
                .args(["--url", &format!("http://{}", w.addr()), "--json", "--concurrency", "2"])
                .arg("--data-dir")
                .arg(w.data_dir())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("memd replay")
        })
        .collect();
    let reports: Vec<(bool, Value)> = replays
        .into_iter()
        .map(|p| {
            let out = p.wait_with_output().expect("replay");
            (out.status.success(), serde_json::from_slice(&out.stdout).unwrap_or_default())
        })
        .collect();
    let replayed = start.elapsed();
    if baseline {
        println!("baseline (no team): replays done after {:.1} s", replayed.as_secs_f64());
        for ((role, _), (ok, r)) in workers.iter().zip(&reports) {
            let post = &r["events"]["PostToolUse"];
            println!("| {role} | {ok} | {} | {} |", post["sent"], post["latency_ms"]["p99"]);
        }
        return;
    }
    let done = support::wait_until(Duration::from_secs(900), || converged(pg, &workers));
    let converged_at = start.elapsed();
    report(pg, &workers, &reports, replayed, done.then_some(converged_at));
}

fn report(pg: &Postgres, workers: &[(String, TestWorker)], reports: &[(bool, Value)], replayed: Duration, converged: Option<Duration>) {
    let rows = count(pg, "SELECT count(*) FROM memd.rows");
    let server_dupes = count(pg, "SELECT count(*) - count(DISTINCT (origin, content_hash)) FROM memd.rows");
    println!(
        "replays done after {:.1} s; converged after {}",
        replayed.as_secs_f64(),
        match converged {
            Some(d) => format!(
                "{:.1} s ({:.1} s after the last replay)",
                d.as_secs_f64(),
                (d - replayed).as_secs_f64()
            ),
            None => "— not within 15 min".into(),
        }
    );
    println!("server rows: {rows}; duplicates on the server (same origin and content hash): {server_dupes}");
    println!("| worker | replay ok (loss check) | PostToolUse sent | ingest p99 ms | pushed | pulled | duplicate pulled copies |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for ((role, w), (ok, r)) in workers.iter().zip(reports) {
        let t = team_state(w);
        let post = &r["events"]["PostToolUse"];
        let copies = w.count("SELECT count(*) FROM observations WHERE imported_from LIKE 'team:%'");
        let distinct =
            w.count("SELECT count(DISTINCT imported_from || '/' || content_hash) FROM observations WHERE imported_from LIKE 'team:%'");
        println!(
            "| {role} | {ok} | {} | {} | {} | {} | {} |",
            post["sent"],
            post["latency_ms"]["p99"],
            t["local"]["pushed"],
            t["local"]["pulled"],
            copies - distinct
        );
    }
}

fn main() {
    let Some(pg) = Postgres::start() else {
        println!("team bench: skipped (PostgreSQL's initdb/pg_ctl not found: apt install postgresql)");
        return;
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    let owner = support::hook::bare_command(scratch.path(), &[])
        .args(["team", "init", &pg.url("postgres")])
        .output()
        .expect("memd team init");
    assert!(owner.status.success(), "{}", String::from_utf8_lossy(&owner.stderr));
    if std::env::var("TEAM_BENCH_BASELINE").is_err() {
        hook_latency(&pg);
    }
    twenty_workers(&pg);
}
