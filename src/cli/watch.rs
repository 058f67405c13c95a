//! `memd watch [ROOT…] [--once] [--interval-ms N] [--idle-ms N]`: the transcript watcher
//! ([`crate::watch`]) in the foreground. Roots, interval and idle time default to the
//! `MEMD_WATCH_*` settings the worker's watcher reads (roots: Claude Code's projects and Codex's
//! rollouts). Each pass finds the
//! worker again (its PID file), so a restarted worker on a new port is picked up; a pass the
//! worker does not acknowledge is retried on the next one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::client_context::CliContext;
use crate::client::worker::Worker;
use crate::replay::deliver::{HttpTarget, send_http};
use crate::watch::{ScanRules, WatchState, scan};

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Directories (searched recursively) or files of Claude Code sessions or Codex rollouts.
    pub roots: Vec<PathBuf>,
    /// One pass, then exit (1 when the worker did not acknowledge everything).
    #[arg(long)]
    pub once: bool,
    /// Time between passes (default `MEMD_WATCH_INTERVAL_MS`).
    #[arg(long)]
    pub interval_ms: Option<u64>,
    /// A file unchanged this long is finished: its last turn and session end are delivered
    /// (default `MEMD_WATCH_IDLE_MS`).
    #[arg(long)]
    pub idle_ms: Option<u64>,
}

pub fn run(env: &HashMap<String, String>, args: WatchArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let watch = &ctx.settings.watch;
    let roots = if args.roots.is_empty() {
        watch.roots.clone()
    } else {
        args.roots.clone()
    };
    let interval = Duration::from_millis(args.interval_ms.unwrap_or(watch.interval_ms));
    let idle = Duration::from_millis(args.idle_ms.unwrap_or(watch.idle_ms));
    let state_path = ctx.dir.root.join("watch-state.json");
    let mut state = WatchState::load(&state_path);
    loop {
        let worker = Worker::locate(&ctx.dir, ctx.settings.port);
        let target = HttpTarget {
            addr: worker.addr,
            token: worker.token.clone(),
            timeout: Duration::from_secs(10),
        };
        let rules = ScanRules {
            idle,
            now_ms: crate::clock::now_ms(),
            history_before: None,
        };
        let outcome = scan(&roots, &mut state, &state_path, rules, &mut |call| send_http(&target, call));
        match &outcome {
            Ok(p) if p.delivered + p.duplicates + p.skipped > 0 => {
                say_err!(
                    "memd watch: {} files read, {} delivered, {} already there, {} skipped",
                    p.files_read,
                    p.delivered,
                    p.duplicates,
                    p.skipped
                );
            }
            Ok(_) => {}
            Err(e) => say_err!("memd watch: {e}"),
        }
        if args.once {
            return Ok(if outcome.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(1) });
        }
        std::thread::sleep(interval);
    }
}
