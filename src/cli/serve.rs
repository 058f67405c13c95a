//! `memd serve`: take the data-dir lock first (a second worker touches nothing), then log and run.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;

use crate::config::{RawSettings, Settings, data_dir_from_env};
use crate::data_dir::DataDir;

/// `memd serve [--port N] [--data-dir DIR]`: the flags win over `MEMD_PORT` / `MEMD_DATA_DIR`.
pub fn run(env: &HashMap<String, String>, port: Option<u16>, data_dir: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    crate::allocator::reexec_without_thread_caches();
    let mut env = env.clone();
    if let Some(p) = port {
        env.insert("MEMD_PORT".into(), p.to_string());
    }
    if let Some(d) = data_dir {
        env.insert("MEMD_DATA_DIR".into(), d.to_string_lossy().into_owned());
    }
    let env = &env;
    let dir = DataDir::new(data_dir_from_env(env));
    dir.ensure_root()?;
    let lock = dir.lock()?;
    dir.ensure_subdir(&dir.logs())?;
    let (raw, file_warnings) = RawSettings::load(&dir.root, env);
    if let Some(e) = crate::config::port_error(&raw) {
        anyhow::bail!("{e}");
    }
    let settings = Settings::from_raw(dir.root.clone(), &raw, file_warnings, env);
    crate::logging::init(Some(dir.logs()), "memd", &settings.log_filter, None);
    crate::allocator::tune();
    unblock_stop_signals();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("memd")
        .build()
        .context("starting the runtime")?;
    let life = crate::server::Lifecycle {
        service: crate::service::ServiceEnv::from_env(env, std::process::id()),
        env: env.clone(),
        raw: Some(raw),
        reload: Default::default(),
    };
    runtime.block_on(crate::server::run(settings, dir, &lock, life))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
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
