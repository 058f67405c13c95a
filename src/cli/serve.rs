//! `memd serve`: take the data-dir lock first (a second worker touches nothing), then log and run.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;

use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;

pub fn run(env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    dir.ensure_root()?;
    let lock = dir.lock()?;
    dir.ensure_subdir(&dir.logs())?;
    let settings = Settings::load(dir.root.clone(), env);
    crate::logging::init(Some(dir.logs()), "memd", &settings.log_filter, None);
    fixed_mmap_threshold();
    unblock_stop_signals();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("memd")
        .build()
        .context("starting the runtime")?;
    runtime.block_on(crate::server::run(settings, dir, &lock))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}

/// glibc raises its mmap threshold each time a large block is freed, after which the embedder's
/// big short-lived tensors come from the heap arenas and are never given back: the worker grew to
/// ~210 MB after a backfill. A fixed 128 KiB threshold keeps large blocks in their own mappings,
/// returned on free (~125 MB with the model loaded; docs/measurements.md).
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called once before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// A parent may have started us with SIGTERM/SIGINT/SIGHUP blocked (a blocked mask is inherited);
/// graceful shutdown needs them.
fn unblock_stop_signals() {
    // SAFETY: sigset operations on an owned, zeroed set; sigprocmask on this (still single) thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}
