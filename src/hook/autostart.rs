//! Worker auto-start from the hook (docs/spec/hooks.md §2.6): under the spawn lock, start `memd serve`
//! detached ([`crate::client::spawn`], shared with `memd mcp`) and optionally wait for readiness
//! within the hook's budget. The hook never waits for or kills the child.

use crate::protocol::paths;
use std::time::Duration;

use super::env::{Budget, HookEnv};
use super::log::hook_log;
use crate::client::http::{self, Request};
use crate::client::spawn::{SpawnEnv, acquire_spawn_lock, release_spawn_lock, spawn_serve, worker_holds_lock};

const POLL: Duration = Duration::from_millis(50);

/// Whether auto-start is allowed in this run (`MEMD_AUTOSTART` not `false`).
pub fn enabled(hook: &HookEnv<'_>) -> bool {
    hook.flag(&crate::config::keys::AUTOSTART)
}

/// Takes the spawn lock and starts the worker if nobody else is doing so. Returns whether this
/// process spawned it.
pub fn spawn_once(hook: &HookEnv<'_>, handler: &str) -> bool {
    if hook.dir.ensure_root().is_err() || !acquire_spawn_lock(&hook.dir) {
        return false;
    }
    if worker_holds_lock(&hook.dir) {
        // A worker is running or starting (it removes spawn.lock only after taking memd.lock).
        release_spawn_lock(&hook.dir);
        return false;
    }
    let spawned = worker_exe().and_then(|exe| spawn_serve(&hook.dir, &exe, SpawnEnv::Only(hook.env), "hook"));
    match spawned {
        Ok(pid) => {
            hook_log(&hook.dir, hook.started, handler, None, &format!("started the worker (pid {pid})"));
            true
        }
        Err(e) => {
            hook_log(&hook.dir, hook.started, handler, None, &format!("could not start the worker: {e}"));
            release_spawn_lock(&hook.dir);
            false
        }
    }
}

/// The binary that serves: this one, or `memd` beside the lean `memd-hook`.
fn worker_exe() -> std::io::Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let sibling = exe.with_file_name("memd");
    Ok(if exe.file_name().is_some_and(|n| n == "memd-hook") && sibling.is_file() {
        sibling
    } else {
        exe
    })
}

/// Starts the worker when needed, then polls `GET /api/readiness` until 200 or the budget ends.
pub fn start_and_wait(hook: &HookEnv<'_>, handler: &str, budget: &Budget) -> bool {
    let spawned = spawn_once(hook, handler);
    let ready = wait_ready(hook, budget);
    if ready && spawned {
        release_spawn_lock(&hook.dir);
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
            path: paths::READINESS,
            ..Default::default()
        };
        if http::send(hook.addr(), &req, left.min(Duration::from_millis(250))).is_ok_and(|r| r.status == 200) {
            return true;
        }
        std::thread::sleep(POLL.min(budget.left()));
    }
}
