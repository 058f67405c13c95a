//! Finding the worker and starting it when nothing listens (spec/hooks.md §2.6, minimal form):
//! spawn lock, `memd serve` detached in its own session, readiness polled every 50 ms.
//! TODO(dedup): the hook's auto-start in `src/hook/` does the same; keep one implementation.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::client::worker::Worker;
use crate::data_dir::DataDir;

const SPAWN_LOCK_STALE: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum AutostartError {
    #[error("memd worker is not running; start it with \"memd serve\"")]
    NotRunning,
    #[error("cannot start the worker: {0}")]
    Spawn(String),
}

/// Is the worker ready (readiness 200 with a token on disk)?
pub fn ready(w: &Worker) -> bool {
    w.token.is_some() && w.get("/api/readiness", Duration::from_millis(500)).is_ok_and(|r| r.status == 200)
}

/// Creates `<data>/spawn.lock` exclusively; true when this process should spawn.
fn take_spawn_lock(path: &Path) -> bool {
    for _ in 0..2 {
        match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(mut f) => {
                let body = serde_json::json!({"pid": std::process::id(), "started_at": crate::clock::iso(crate::clock::now_ms())});
                let _ = f.write_all(body.to_string().as_bytes());
                return true;
            }
            Err(_) => {
                let age = std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok());
                if age.is_some_and(|a| a < SPAWN_LOCK_STALE) {
                    return false;
                }
                let _ = std::fs::remove_file(path);
            }
        }
    }
    false
}

/// Spawns `<exe> serve` detached (new session, null stdin, output appended to `logs/serve.out`).
fn spawn_serve(exe: &Path, dir: &DataDir) -> Result<(), AutostartError> {
    dir.ensure_root().map_err(|e| AutostartError::Spawn(e.to_string()))?;
    dir.ensure_subdir(&dir.logs()).map_err(|e| AutostartError::Spawn(e.to_string()))?;
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.logs().join("serve.out"))
        .map_err(|e| AutostartError::Spawn(e.to_string()))?;
    let err = out.try_clone().map_err(|e| AutostartError::Spawn(e.to_string()))?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve")
        .current_dir(&dir.root)
        .env("MEMD_DATA_DIR", &dir.root)
        .env_remove("MEMD_INTERNAL")
        .env_remove("MEMD_PROJECT")
        .env("MEMD_SPAWNED_BY", "mcp")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    // Never waited on: the worker outlives us.
    cmd.spawn().map(drop).map_err(|e| AutostartError::Spawn(e.to_string()))
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
    let lock = dir.root.join("spawn.lock");
    if dir.root.exists() || dir.ensure_root().is_ok() {
        let ours = take_spawn_lock(&lock);
        if ours {
            let exe = exe.or_else(|| std::env::current_exe().ok()).ok_or(AutostartError::NotRunning)?;
            tracing::info!(data = %dir.root.display(), "starting the worker");
            spawn_serve(&exe, dir)?;
        }
        let deadline = Instant::now() + budget;
        while Instant::now() < deadline {
            let w = Worker::locate(dir, port);
            if ready(&w) {
                if ours {
                    let _ = std::fs::remove_file(&lock);
                }
                return Ok(w);
            }
            std::thread::sleep(POLL);
        }
    }
    Err(AutostartError::NotRunning)
}
