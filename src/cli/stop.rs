//! `memd stop`: asks the worker to shut down (`POST /api/admin/shutdown`, the normal drain) and
//! waits until it no longer answers and its PID file is gone. `memd restart`: that, then a new
//! worker, waited for until ready.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::client_context::CliContext;
use crate::protocol::paths;

pub fn run(env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let mut ctx = CliContext::load(env, None);
    ctx.autostart = false;
    if !ctx.worker_running() {
        say!("memd is not running");
        return Ok(ExitCode::SUCCESS);
    }
    let ans = ctx
        .link()
        .call("POST", paths::SHUTDOWN, None)
        .context("asking the worker to stop")?;
    if ans.status >= 300 {
        anyhow::bail!("the worker answered {}: {}", ans.status, ans.detail());
    }
    let deadline = Instant::now() + crate::worker::running::SHUTDOWN_BUDGET + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !ctx.worker_running() && !ctx.dir.pid_file().exists() {
            say!("memd stopped");
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    say_err!("memd: the worker is still shutting down; `memd status` shows when it is gone");
    Ok(ExitCode::from(1))
}

/// `memd restart`: [`run`], then a worker started the way every command starts one (detached,
/// output in `<data>/logs/serve.out`), waited for until it is ready.
pub fn restart(env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let stopped = run(env)?;
    if stopped != ExitCode::SUCCESS {
        return Ok(stopped);
    }
    let mut ctx = CliContext::load(env, None);
    ctx.autostart = true;
    let ans = ctx.link().call("GET", paths::READINESS, None).context("starting the worker")?;
    if ans.status != 200 {
        anyhow::bail!("the new worker is not ready: {} {}", ans.status, ans.detail());
    }
    let pid = crate::data_dir::read_pid_file(&ctx.dir.pid_file()).map(|p| p.pid.to_string());
    say!("memd started (pid {})", pid.unwrap_or_else(|| "unknown".into()));
    Ok(ExitCode::SUCCESS)
}
