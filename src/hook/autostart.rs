//! Worker auto-start (spec/hooks.md §2.6): under an exclusive spawn lock (`<data>/spawn.lock`,
//! created `O_EXCL`, stale after 90 s), start `memd serve` detached — own session, stdin from
//! /dev/null, output appended to `<data>/logs/serve.out` — and optionally wait for readiness.
//! The hook never waits for or kills the child; `memd serve` itself refuses to run twice.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use super::env::{Budget, HookEnv};
use super::log::hook_log;
use crate::client::http::{self, Request};
use crate::clock::{iso, now_ms};

pub const SPAWN_LOCK: &str = "spawn.lock";
const STALE_AFTER: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(50);

/// Whether auto-start is allowed in this run (`MEMD_AUTOSTART` not `false`).
pub fn enabled(hook: &HookEnv<'_>) -> bool {
    hook.flag("MEMD_AUTOSTART")
}

/// Takes the spawn lock and starts the worker if nobody else is doing so. Returns whether this
/// process spawned it.
pub fn spawn_once(hook: &HookEnv<'_>, handler: &str) -> bool {
    if hook.dir.ensure_root().is_err() {
        return false;
    }
    if !acquire_lock(hook) {
        return false;
    }
    if worker_holds_lock(hook) {
        // A worker is running or starting (it removes spawn.lock only after taking memd.lock).
        release_lock(hook);
        return false;
    }
    match spawn_worker(hook) {
        Ok(pid) => {
            hook_log(&hook.dir, handler, None, &format!("started the worker (pid {pid})"));
            true
        }
        Err(e) => {
            hook_log(&hook.dir, handler, None, &format!("could not start the worker: {e}"));
            release_lock(hook);
            false
        }
    }
}

/// Starts the worker when needed, then polls `GET /api/readiness` until 200 or the budget ends.
pub fn start_and_wait(hook: &HookEnv<'_>, handler: &str, budget: &Budget) -> bool {
    let spawned = spawn_once(hook, handler);
    let ready = wait_ready(hook, budget);
    if ready && spawned {
        release_lock(hook);
    }
    ready
}

fn wait_ready(hook: &HookEnv<'_>, budget: &Budget) -> bool {
    loop {
        let left = budget.left();
        if left.is_zero() {
            return false;
        }
        let req = Request {
            method: "GET",
            path: "/api/readiness",
            ..Default::default()
        };
        if http::send(hook.addr(), &req, left.min(Duration::from_millis(250))).is_ok_and(|r| r.status == 200) {
            return true;
        }
        std::thread::sleep(POLL.min(budget.left()));
    }
}

fn lock_path(hook: &HookEnv<'_>) -> std::path::PathBuf {
    hook.dir.root.join(SPAWN_LOCK)
}

fn try_create(hook: &HookEnv<'_>) -> bool {
    let created = OpenOptions::new().write(true).create_new(true).mode(0o600).open(lock_path(hook));
    match created {
        Ok(mut f) => {
            let body = serde_json::json!({"pid": std::process::id(), "started_at": iso(now_ms())});
            let _ = f.write_all(body.to_string().as_bytes());
            true
        }
        Err(_) => false,
    }
}

fn acquire_lock(hook: &HookEnv<'_>) -> bool {
    if try_create(hook) {
        return true;
    }
    let path = lock_path(hook);
    let Some(first) = std::fs::metadata(&path).and_then(|m| m.modified()).ok() else {
        // Vanished between our create and stat: whoever held it has finished; try once more.
        return try_create(hook);
    };
    let age = SystemTime::now().duration_since(first).unwrap_or_default();
    if age < STALE_AFTER {
        return false;
    }
    let again = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    if again == Some(first) {
        let _ = std::fs::remove_file(&path);
        return try_create(hook);
    }
    false
}

/// Whether some process holds the worker's exclusive `flock` on `<data>/memd.lock`.
fn worker_holds_lock(hook: &HookEnv<'_>) -> bool {
    let Ok(file) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(hook.dir.lock_file())
    else {
        return false;
    };
    // SAFETY: flock on a valid, owned descriptor; the probe lock is released when `file` drops.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    rc != 0
}

/// Deletes the lock only when it still holds our pid.
fn release_lock(hook: &HookEnv<'_>) {
    let path = lock_path(hook);
    let ours = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["pid"].as_u64() == Some(u64::from(std::process::id())));
    if ours {
        let _ = std::fs::remove_file(&path);
    }
}

fn spawn_worker(hook: &HookEnv<'_>) -> std::io::Result<u32> {
    let exe = std::env::current_exe()?;
    let logs = hook.dir.logs();
    hook.dir.ensure_subdir(&logs).map_err(std::io::Error::other)?;
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(logs.join("serve.out"))?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve")
        .current_dir(&hook.dir.root)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env_clear()
        .envs(hook.env.iter().filter(|(k, _)| *k != "MEMD_INTERNAL" && *k != "MEMD_PROJECT"))
        .env("MEMD_SPAWNED_BY", "hook");
    // SAFETY: setsid is async-signal-safe and touches only the child's own process state.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    Ok(child.id())
}
