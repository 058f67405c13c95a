//! Issue 14: memory returns after load. 4,000 sessions each get a prompt and a tool use, the
//! extractive observer processes them, the idle reaper stops every actor; the worker's resident
//! set must fall back near its starting footprint (≤ 60 MB). A memory figure, not a timing one.
use crate::support::*;
use std::time::Duration;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn rss_falls_back_after_4000_sessions_are_reaped() {
    let w = TestWorker::start(&[
        ("MEMD_EMBEDDINGS", "none"),
        ("MEMD_SESSION_IDLE_MS", "300"),
        ("MEMD_REAPER_INTERVAL_MS", "100"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "10"),
    ]);
    let pid = w.pid().unwrap();
    let start = rss_kib(pid);
    std::thread::scope(|s| {
        for t in 0..8 {
            let w = &w;
            s.spawn(move || {
                for i in (t..4_000).step_by(8) {
                    let id = format!("mem-{i}");
                    assert_eq!(w.post("/api/sessions/init", &init_body(&id, "fix the build")).status, 200);
                    assert_eq!(w.post("/api/sessions/observations", &observation_body(&id, i)).status, 200);
                }
            });
        }
    });
    let mut peak = rss_kib(pid);
    let reaped = wait_until(Duration::from_secs(120), || {
        peak = peak.max(rss_kib(pid));
        let s = w.status();
        s["sessions"]["live"] == 0 && s["pending"]["pending"] == 0 && s["pending"]["processing"] == 0
    });
    assert!(reaped, "every session was processed and reaped: {}", w.status()["sessions"]["live"]);
    assert_eq!(w.count("SELECT count(*) FROM tool_uses"), 4_000);
    // Give the allocator's return path (trim after a reap) a moment; poll rather than sleep.
    let mut after = rss_kib(pid);
    wait_until(Duration::from_secs(10), || {
        after = rss_kib(pid);
        after <= 60 * 1024
    });
    let memory = &w.status()["memory"];
    assert!(
        memory["rss_bytes"].as_u64().unwrap() > 0,
        "status reports the resident set: {memory}"
    );
    eprintln!("memory status after reaping: {memory}");
    eprintln!("rss: start {start} KiB, peak {peak} KiB, after reaping {after} KiB");
    assert!(
        after <= 60 * 1024,
        "RSS after reaping 4,000 sessions: {after} KiB (start {start} KiB, peak {peak} KiB)"
    );
}

/// Issue 34: `memd serve` runs with glibc's per-thread caches off (it re-executes itself once,
/// keeping its pid), and a tunable the user set is kept as set.
#[test]
fn the_worker_runs_with_glibcs_thread_caches_off() {
    let environ = |pid: u32| {
        let raw = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        String::from_utf8_lossy(&raw)
            .split('\0')
            .find_map(|kv| kv.strip_prefix("GLIBC_TUNABLES=").map(String::from))
    };
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    assert_eq!(environ(w.pid().unwrap()).as_deref(), Some("glibc.malloc.tcache_count=0"));
    let mine = TestWorker::start(&[("MEMD_EMBEDDINGS", "none"), ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=3")]);
    assert_eq!(environ(mine.pid().unwrap()).as_deref(), Some("glibc.malloc.tcache_count=3"));
    assert_eq!(w.get("/api/readiness").status, 200);
}
