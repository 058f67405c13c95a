//! Starting the worker from a client process (docs/spec/hooks.md §2.6), shared by the hook and
//! `memd mcp`: the spawn lock (`<data>/spawn.lock`, created `O_EXCL`, stale after 90 s), the probe
//! of the worker's own `memd.lock`, and `memd serve` started detached — own session, stdin from
//! /dev/null, output appended to `<data>/logs/serve.out`. Callers never wait for or kill the child;
//! `memd serve` itself refuses to run twice (and removes `spawn.lock` once it holds `memd.lock`).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use crate::clock::{iso, now_ms};
use crate::data_dir::DataDir;

pub const SPAWN_LOCK: &str = "spawn.lock";
const STALE_AFTER: Duration = Duration::from_secs(90);

fn lock_path(dir: &DataDir) -> PathBuf {
    dir.root.join(SPAWN_LOCK)
}

fn try_create(path: &Path) -> bool {
    match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(mut f) => {
            let body = serde_json::json!({"pid": std::process::id(), "started_at": iso(now_ms())});
            let _ = f.write_all(body.to_string().as_bytes());
            true
        }
        Err(_) => false,
    }
}

/// Takes the spawn lock: true when this process should start the worker. A lock older than 90 s
/// (unchanged between two looks) is stale and replaced.
pub fn acquire_spawn_lock(dir: &DataDir) -> bool {
    let path = lock_path(dir);
    if try_create(&path) {
        return true;
    }
    let Some(first) = std::fs::metadata(&path).and_then(|m| m.modified()).ok() else {
        // Vanished between our create and stat: whoever held it has finished; try once more.
        return try_create(&path);
    };
    if SystemTime::now().duration_since(first).unwrap_or_default() < STALE_AFTER {
        return false;
    }
    if std::fs::metadata(&path).and_then(|m| m.modified()).ok() == Some(first) {
        let _ = std::fs::remove_file(&path);
        return try_create(&path);
    }
    false
}

/// Deletes the spawn lock only when it still holds our pid.
pub fn release_spawn_lock(dir: &DataDir) {
    let path = lock_path(dir);
    let ours = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["pid"].as_u64() == Some(u64::from(std::process::id())));
    if ours {
        let _ = std::fs::remove_file(&path);
    }
}

/// Whether some process holds the worker's exclusive `flock` on `<data>/memd.lock` (a worker is
/// running or starting).
pub fn worker_holds_lock(dir: &DataDir) -> bool {
    let Ok(file) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir.lock_file())
    else {
        return false;
    };
    // SAFETY: flock on a valid, owned descriptor; the probe lock is released when `file` drops.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    rc != 0
}

/// Which environment the worker gets.
pub enum SpawnEnv<'a> {
    /// Exactly these variables (the hook passes the environment it read once).
    Only(&'a HashMap<String, String>),
    /// This process's environment with `MEMD_DATA_DIR` set to the data dir.
    Inherit,
}

/// Starts `<exe> serve` detached; `spawned_by` is recorded as `MEMD_SPAWNED_BY`. Returns its pid.
pub fn spawn_serve(dir: &DataDir, exe: &Path, env: SpawnEnv<'_>, spawned_by: &str) -> std::io::Result<u32> {
    dir.ensure_root().map_err(std::io::Error::other)?;
    let logs = dir.logs();
    dir.ensure_subdir(&logs).map_err(std::io::Error::other)?;
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(crate::data_dir::NO_FOLLOW)
        .open(logs.join("serve.out"))?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve").current_dir(&dir.root).stdin(Stdio::null()).stdout(out).stderr(err);
    match env {
        SpawnEnv::Only(vars) => {
            cmd.env_clear()
                .envs(vars.iter().filter(|(k, _)| *k != "MEMD_INTERNAL" && *k != "MEMD_PROJECT"));
        }
        SpawnEnv::Inherit => {
            cmd.env("MEMD_DATA_DIR", &dir.root)
                .env_remove("MEMD_INTERNAL")
                .env_remove("MEMD_PROJECT");
        }
    }
    cmd.env("MEMD_SPAWNED_BY", spawned_by);
    // SAFETY: setsid, sigemptyset and sigprocmask are async-signal-safe and touch only the child's
    // own process state. The mask is cleared because a hook blocks SIGTERM/SIGINT/SIGHUP while it
    // delivers (hook/signals.rs) and a blocked mask is inherited: the worker must see its signals.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        });
    }
    Ok(cmd.spawn()?.id())
}
