//! `memd replay [TRANSCRIPTS…]`: converts recorded Claude Code sessions into hook events, replays
//! them against a worker (HTTP, or `memd hook` processes with `--via-hook`), prints the report and,
//! for memd, runs the loss check. Exit 1 when the loss check fails.

use crate::protocol::paths;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::{DataDir, read_pid_file};
use crate::replay::bodies::Target;
use crate::replay::convert::convert_file;
use crate::replay::deliver::{HookRunner, HttpTarget};
use crate::replay::event::SessionEvents;
use crate::replay::loss::{check, wait_drained};
use crate::replay::multiply::multiply;
use crate::replay::proc_stats;
use crate::replay::report::{Report, WorkerUsage};
use crate::replay::runner::{Mode, RunOptions, run as run_replay};
use crate::replay::transcript::is_subagent_file;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    Memd,
    ClaudeMem,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Session `.jsonl` files or directories of them (subagent files are found next to them).
    #[arg(required = true)]
    pub transcripts: Vec<PathBuf>,
    /// Worker URL (`http://127.0.0.1:<port>`); default: the local worker from `<data>/memd.pid`.
    #[arg(long)]
    pub url: Option<String>,
    /// Data directory of the memd worker (token, memd.pid, memd.db); default `MEMD_DATA_DIR`.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Deliver through `memd hook claude-code <handler>` processes instead of HTTP.
    #[arg(long)]
    pub via_hook: bool,
    /// Sessions replayed in parallel.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Copies of each session with fresh session and tool_use ids.
    #[arg(long, default_value_t = 1)]
    pub multiply: usize,
    /// Cap on events per second over all sessions (default: unthrottled).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Stop sending after this long (`90`, `90s`, `2m`).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Stop after this many events.
    #[arg(long)]
    pub events: Option<u64>,
    /// The worker's protocol: memd's, or claude-mem's (to compare the two).
    #[arg(long, value_enum, default_value_t = TargetArg::Memd)]
    pub target: TargetArg,
    /// Worker pid for RSS/CPU figures (default: the pid in memd.pid for a local memd).
    #[arg(long)]
    pub pid: Option<u32>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Skip the loss check.
    #[arg(long)]
    pub no_loss_check: bool,
    /// How long the loss check waits for the queue to drain.
    #[arg(long, value_parser = parse_duration, default_value = "180s")]
    pub drain_timeout: Duration,
    /// Per-request timeout (HTTP) or per-process timeout (hook).
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub timeout: Duration,
    /// Send nothing: estimate what the read gate (MEMD_READ_GATE) would have done on these sessions.
    #[arg(long)]
    pub read_gate: bool,
    /// The read gate's size threshold for `--read-gate`.
    #[arg(long, default_value_t = 32_768)]
    pub read_gate_min_bytes: u64,
    /// Send nothing: estimate the LLM observer's calls per session and tokens per call on these
    /// sessions (the batch settings of this data dir, on the recorded timing).
    #[arg(long)]
    pub observer_cost: bool,
    /// Send nothing: estimate what warning before a repeated failing check (issue 53) would have
    /// done on these sessions: opportunities, warnings, fixes named, false alarms per project.
    #[arg(long)]
    pub action_memory: bool,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len()));
    let n: f64 = num.parse().map_err(|_| format!("not a duration: {s}"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("unknown unit in {s} (use ms, s, m, h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

pub(super) fn session_files(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            std::fs::read_dir(p).with_context(|| format!("read {}", p.display()))?;
            super::import_sessions::find_session_files(p, 0, &mut out);
        } else if !is_subagent_file(p) {
            out.push(p.clone());
        }
    }
    if out.is_empty() {
        bail!("no session transcripts among the arguments");
    }
    Ok(out)
}

fn parse_url(url: &str) -> anyhow::Result<SocketAddr> {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = host_port.replace("localhost", "127.0.0.1");
    host_port
        .parse()
        .with_context(|| format!("--url must be http://<ip>:<port>, got {url}"))
}

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

pub fn run(args: ReplayArgs, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    if args.read_gate {
        return super::replay_estimates::read_gate(&args);
    }
    if args.action_memory {
        return super::replay_estimates::action_memory(&args);
    }
    let root = args.data_dir.clone().unwrap_or_else(|| data_dir_from_env(env));
    if args.observer_cost {
        return super::replay_estimates::observer_cost(&args, &Settings::load(root.clone(), env), &root);
    }
    let dir = DataDir::new(root.clone());
    let settings = Settings::load(dir.root.clone(), env);
    let target = match args.target {
        TargetArg::Memd => Target::Memd,
        TargetArg::ClaudeMem => Target::ClaudeMem,
    };
    let local = args.url.is_none() && target == Target::Memd;
    let locate = || -> (SocketAddr, Option<String>) {
        let w = Worker::locate(&dir, settings.port);
        (w.addr, w.token)
    };
    let (addr, token) = match (&args.url, target) {
        (Some(u), Target::Memd) => (parse_url(u)?, locate().1),
        (Some(u), Target::ClaudeMem) => (parse_url(u)?, None),
        (None, Target::Memd) => locate(),
        (None, Target::ClaudeMem) => (SocketAddr::from(([127, 0, 0, 1], (37700 + uid() % 100) as u16)), None),
    };
    let files = session_files(&args.transcripts)?;
    let mut sessions: Vec<SessionEvents> = Vec::new();
    for f in &files {
        sessions.push(convert_file(f).with_context(|| format!("convert {}", f.display()))?);
    }
    let sessions = multiply(&sessions, args.multiply);
    let mode = if args.via_hook {
        let mut hook_env = vec![
            ("MEMD_DATA_DIR".to_string(), root.to_string_lossy().into_owned()),
            ("MEMD_PORT".to_string(), addr.port().to_string()),
        ];
        if !env.contains_key("MEMD_AUTOSTART") {
            hook_env.push(("MEMD_AUTOSTART".into(), "false".into()));
        }
        Mode::Hook(HookRunner {
            exe: std::env::current_exe().context("locate the memd executable")?,
            env: hook_env,
            timeout: args.timeout,
        })
    } else {
        Mode::Http(HttpTarget {
            addr,
            token,
            timeout: args.timeout,
        })
    };
    let pid = || {
        args.pid
            .or_else(|| local.then(|| read_pid_file(&dir.pid_file()).map(|p| p.pid)).flatten())
    };
    let pid_before = pid();
    let before = pid_before.and_then(proc_stats::sample);
    let opts = RunOptions {
        mode,
        target,
        concurrency: args.concurrency,
        rate: args.rate,
        duration: args.duration,
        max_events: args.events,
        home: settings.home.clone(),
        progress: !args.json,
        import: false,
    };
    let result = run_replay(&sessions, &opts);
    let mode_name = if args.via_hook { "hook" } else { "http" };
    let target_name = match target {
        Target::Memd => "memd",
        Target::ClaudeMem => "claude-mem",
    };
    let tally = result.tally.clone();
    let mut report = Report::new(
        mode_name,
        target_name,
        files.len(),
        &sessions,
        result.tally,
        result.elapsed.as_secs_f64(),
        result.bounded,
    );
    if target == Target::Memd && !args.no_loss_check {
        let fixed = args.url.as_ref().map(|_| (addr, locate().1));
        let drain = wait_drained(args.drain_timeout, || {
            let (a, t) = fixed.clone().unwrap_or_else(locate);
            Worker { addr: a, token: t }
                .get(paths::STATUS, Duration::from_secs(5))
                .ok()
                .filter(|r| r.status == 200)
                .and_then(|r| serde_json::from_slice::<crate::replay::loss::Backlog>(&r.body).ok())
        });
        let skip_tools = settings.skip_tools.clone();
        let rule = move |tool: &str| {
            skip_tools.iter().any(|t| t == tool) || crate::ingest::is_memd_tool(tool) || crate::ingest::META_TOOLS.contains(&tool)
        };
        let via_hook = args.via_hook;
        report.loss_check = Some(check(&dir.db(), &tally, drain, |t| via_hook && rule(t)).context("loss check")?);
    }
    if let Some(p) = pid_before.or_else(pid) {
        let after_pid = pid().unwrap_or(p);
        report.worker = Some(WorkerUsage {
            pid: after_pid,
            before,
            after: proc_stats::sample(after_pid),
        });
    }
    if args.json {
        say_json!(&report);
    } else {
        say_part!("{}", report.render());
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_urls() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_url("http://127.0.0.1:37777").unwrap().port(), 37777);
        assert_eq!(parse_url("localhost:5/").unwrap().port(), 5);
    }
}
