//! `memd watch [ROOT…] [--once] [--interval-ms N] [--idle-ms N]`: the transcript watcher
//! ([`crate::watch`]) in the foreground. Default roots: `~/.claude/projects` and Codex's rollouts
//! (`$CODEX_HOME/sessions`, default `~/.codex/sessions`). Each pass finds the
//! worker again (its PID file), so a restarted worker on a new port is picked up; a pass the
//! worker does not acknowledge is retried on the next one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::client_context::CliContext;
use crate::client::worker::Worker;
use crate::replay::deliver::HttpTarget;
use crate::watch::{WatchState, scan};

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Directories (searched recursively) or files of Claude Code sessions or Codex rollouts.
    pub roots: Vec<PathBuf>,
    /// One pass, then exit (1 when the worker did not acknowledge everything).
    #[arg(long)]
    pub once: bool,
    /// Time between passes.
    #[arg(long, default_value_t = 2000)]
    pub interval_ms: u64,
    /// A file unchanged this long is finished: its last turn and session end are delivered.
    #[arg(long, default_value_t = 600_000)]
    pub idle_ms: u64,
}

pub fn run(env: &HashMap<String, String>, args: WatchArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let roots = if args.roots.is_empty() {
        let home = env.get("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
        let codex = env
            .get("CODEX_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        vec![home.join(".claude").join("projects"), codex.join("sessions")]
    } else {
        args.roots.clone()
    };
    let state_path = ctx.dir.root.join("watch-state.json");
    let mut state = WatchState::load(&state_path);
    loop {
        let worker = Worker::locate(&ctx.dir, ctx.settings.port);
        let target = HttpTarget {
            addr: worker.addr,
            token: worker.token.clone(),
            timeout: Duration::from_secs(10),
        };
        let outcome = scan(
            &roots,
            &mut state,
            &state_path,
            &target,
            Duration::from_millis(args.idle_ms),
            crate::clock::now_ms(),
        );
        match &outcome {
            Ok(p) if p.delivered + p.duplicates + p.skipped > 0 => {
                eprintln!(
                    "memd watch: {} files read, {} delivered, {} already there, {} skipped",
                    p.files_read, p.delivered, p.duplicates, p.skipped
                );
            }
            Ok(_) => {}
            Err(e) => eprintln!("memd watch: {e}"),
        }
        if args.once {
            return Ok(if outcome.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(1) });
        }
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
}
