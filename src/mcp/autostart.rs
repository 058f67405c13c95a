//! Finding the worker for `memd mcp` and starting it when nothing listens (docs/spec/hooks.md §2.6):
//! the spawn lock and the detached `memd serve` of [`crate::client::spawn`] (shared with the hook),
//! readiness polled every 50 ms.

use crate::protocol::paths;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::client::spawn::{SpawnEnv, acquire_spawn_lock, release_spawn_lock, spawn_serve, worker_holds_lock};
use crate::client::worker::Worker;
use crate::data_dir::DataDir;

const POLL: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum AutostartError {
    #[error("memd worker is not running; start it with \"memd serve\"")]
    NotRunning,
    #[error("cannot start the worker: {0}")]
    Spawn(String),
    /// Started, but it did not come up: why, as far as can be told (issue 37).
    #[error("memd worker did not start: {0}")]
    DidNotStart(String),
}

/// Why a started worker is not answering: the port held by someone else, else the last error
/// line of `<data>/logs/serve.out`.
pub fn why_not_running(dir: &DataDir, port: u16) -> Option<String> {
    let token = std::fs::read_to_string(dir.token()).ok();
    if let Some(line) = crate::client::worker::who_holds(port, token.as_deref()).explain(port) {
        return Some(line);
    }
    let out = std::fs::read_to_string(dir.logs().join("serve.out")).ok()?;
    out.lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with("memd:") || l.contains("cannot listen") || l.contains("Error"))
        .map(|l| l.trim_start_matches("memd:").trim().to_string())
}

/// Is the worker ready (readiness 200 with a token on disk)?
pub fn ready(w: &Worker) -> bool {
    w.token.is_some() && w.get(paths::READINESS, Duration::from_millis(500)).is_ok_and(|r| r.status == 200)
}

/// The worker, started when nothing answers and `autostart` allows it; waits up to `budget`.
pub fn ensure_worker(dir: &DataDir, port: u16, autostart: bool, exe: Option<PathBuf>, budget: Duration) -> Result<Worker, AutostartError> {
    let w = Worker::locate(dir, port);
    if ready(&w) {
        return Ok(w);
    }
    if !autostart {
        return Err(AutostartError::NotRunning);
    }
    if dir.root.exists() || dir.ensure_root().is_ok() {
        let ours = acquire_spawn_lock(dir) && !worker_holds_lock(dir);
        if ours {
            let exe = exe.or_else(|| std::env::current_exe().ok()).ok_or(AutostartError::NotRunning)?;
            tracing::info!(data = %dir.root.display(), "starting the worker");
            if let Err(e) = spawn_serve(dir, &exe, SpawnEnv::Inherit, "mcp") {
                release_spawn_lock(dir);
                return Err(AutostartError::Spawn(e.to_string()));
            }
        } else {
            // Ours only if we created it (a running worker may still be taking memd.lock).
            release_spawn_lock(dir);
        }
        let deadline = Instant::now() + budget;
        while Instant::now() < deadline {
            let w = Worker::locate(dir, port);
            if ready(&w) {
                if ours {
                    release_spawn_lock(dir);
                }
                return Ok(w);
            }
            std::thread::sleep(POLL);
        }
        if let Some(why) = why_not_running(dir, port) {
            return Err(AutostartError::DidNotStart(why));
        }
    }
    Err(AutostartError::NotRunning)
}
