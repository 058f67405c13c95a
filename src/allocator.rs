//! Allocator tuning for a long-lived worker on glibc: what the process keeps after a load goes.
//!
//! Measured with `worker_memory` (4,000 sessions ingested, processed and reaped; docs/measurements.md):
//! glibc keeps freed heap in per-thread arenas and hands it back only from the top of each heap,
//! so after the sessions are gone the worker still held the peak. Two fixes: a small, fixed number
//! of arenas (the runtime's threads share them instead of each growing its own), and
//! `malloc_trim(0)` — which returns every whole free page of every arena to the kernel — after the
//! reaper stopped actors or saw the resident set grow. Elsewhere (musl, macOS) both are no-ops.
//!
//! A third, measured after 20,000 sessions (docs/measurements.md, issue 34): glibc's per-thread
//! caches park freed chunks that trimming cannot return, pinning their pages — 61 MB after the
//! flood with them, 46 MB without, at a cost within this machine's noise on ingest. Their size can
//! only be set before the process starts, so `memd serve` executes itself again once with
//! `glibc.malloc.tcache_count=0` added to `GLIBC_TUNABLES` (a value already there is respected).

/// Called once in `memd serve` before the runtime starts any thread.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before any other thread starts.
    unsafe {
        // glibc raises its mmap threshold each time a large block is freed, after which the
        // embedder's big short-lived tensors come from the heap arenas and are never given back
        // (~210 MB after a backfill). A fixed 128 KiB threshold keeps large blocks in their own
        // mappings, returned on free.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Re-executes this process (same pid, arguments and environment) with glibc's per-thread caches
/// off, unless `GLIBC_TUNABLES` already sets them. Returns when it did not re-execute. Call it first
/// thing in `memd serve`, before any lock, file or thread.
#[allow(clippy::print_stderr, reason = "before logging exists; says why the process runs on")]
pub fn reexec_without_thread_caches() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        const TUNABLE: &str = "glibc.malloc.tcache_count";
        let current = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        if current.contains(TUNABLE) {
            return;
        }
        let value = match current.is_empty() {
            true => format!("{TUNABLE}=0"),
            false => format!("{current}:{TUNABLE}=0"),
        };
        let mut args = std::env::args_os();
        let Some(argv0) = args.next() else { return };
        let err = std::process::Command::new("/proc/self/exe")
            .arg0(argv0)
            .args(args)
            .env("GLIBC_TUNABLES", value)
            .exec();
        eprintln!("memd: running with glibc's thread caches on (re-executing failed: {err})");
    }
}

/// Gives whole free pages back to the kernel. Takes a few milliseconds on a large heap: call it
/// from a blocking thread, after work that freed a lot (a reap), never per request.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim is thread-safe and only returns free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's resident set in bytes (`VmRSS` of `/proc/self/status`; 0 where there is none).
pub fn resident_bytes() -> u64 {
    let kib = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    kib.unwrap_or(0) * 1024
}

/// The C heap's bytes in use and free inside its arenas (glibc `mallinfo2`; zeros elsewhere).
pub fn heap_figures() -> (u64, u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 walks the arenas under their locks and returns a plain struct.
        let m = unsafe { libc::mallinfo2() };
        ((m.uordblks + m.hblkhd) as u64, m.fordblks as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        (0, 0)
    }
}
