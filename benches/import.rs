//! Timed import of 100,000 claude-mem observations (issue target: ≤ 30 s): in-process, again
//! (all mapped), and through a running worker. Prints the figures, asserts no timing. Run:
//! `cargo bench --bench import`
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::time::Instant;

use support::TestWorker;

const SESSIONS: usize = 1_000;
const PER_SESSION: usize = 100;

fn main() {
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("claude-mem.db");
    let t = Instant::now();
    let f = support::claude_mem::build(&src, false, SESSIONS, PER_SESSION);
    println!(
        "fixture: {} observations built in {:.1} s",
        f.observations,
        t.elapsed().as_secs_f64()
    );

    // In-process (no worker): the CLI takes the data-dir lock and writes directly.
    let data = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["import-claude-mem"])
        .arg(&src)
        .env("MEMD_DATA_DIR", data.path())
        .env("MEMD_PORT", "1")
        .env("MEMD_LOG", "warn")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    println!("in-process import: {:.2} s", t.elapsed().as_secs_f64());
    print!("{}", String::from_utf8_lossy(&out.stdout));
    let t = Instant::now();
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["import-claude-mem"])
        .arg(&src)
        .env("MEMD_DATA_DIR", data.path())
        .env("MEMD_PORT", "1")
        .env("MEMD_LOG", "warn")
        .output()
        .unwrap();
    assert!(again.status.success());
    println!("in-process second run (all mapped): {:.2} s", t.elapsed().as_secs_f64());

    // Through a running worker (its store writer, one transaction per 1,000 rows).
    let w = TestWorker::start(&[]);
    let t = Instant::now();
    let out = w.command().arg("import-claude-mem").arg(&src).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    println!("worker import: {:.2} s", t.elapsed().as_secs_f64());
    assert_eq!(w.count("SELECT count(*) FROM observations"), f.observations as i64);
}
