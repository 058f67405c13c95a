//! `memd service install [--dry-run] [--socket]`, `memd service uninstall [--dry-run]`,
//! `memd service status`: memd as a systemd user service (Linux) or a launchd agent (macOS).

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;

use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::service::install::{self, Places, Platform, Ran};
use crate::service::units::UnitParams;

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the unit files (or the launchd agent) and load them.
    Install {
        /// Print the files and the commands; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// systemd: a `memd.socket` owns the port and the first connection starts the worker.
        #[arg(long)]
        socket: bool,
    },
    /// Unload and remove exactly what `install` wrote.
    Uninstall {
        /// Show what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// What is installed, and whether the worker runs under the service manager or on demand.
    Status,
}

struct Ctx {
    dir: DataDir,
    settings: Settings,
    places: Places,
    path_env: Option<String>,
}

fn context(env: &HashMap<String, String>) -> anyhow::Result<Ctx> {
    let dir = DataDir::new(data_dir_from_env(env));
    let settings = Settings::load(dir.root.clone(), env);
    let home = settings.home.clone().context("HOME is not set: cannot place the service files")?;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    Ok(Ctx {
        places: Places {
            home,
            xdg_config: env.get("XDG_CONFIG_HOME").filter(|v| v.starts_with('/')).map(PathBuf::from),
            uid,
        },
        path_env: env.get("PATH").cloned(),
        dir,
        settings,
    })
}

pub fn run(command: &ServiceCommand, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let ctx = context(env)?;
    match command {
        ServiceCommand::Install { dry_run, socket } => install_cmd(&ctx, *dry_run, *socket),
        ServiceCommand::Uninstall { dry_run } => uninstall_cmd(&ctx, *dry_run),
        ServiceCommand::Status => status_cmd(&ctx),
    }
}

fn shell_line(c: &[String]) -> String {
    c.iter()
        .map(|w| if w.contains(' ') { format!("'{w}'") } else { w.clone() })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints what the commands gave; exit 1 when one ran and failed.
fn report(ran: &[(Vec<String>, Ran)], tool: &str) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    let mut todo = Vec::new();
    for (c, r) in ran {
        match r {
            Ran::Ok => say!("ran: {}", shell_line(c)),
            Ran::Failed(why) => {
                say!("failed: {} — {why}", shell_line(c));
                code = ExitCode::from(1);
                todo.push(c);
            }
            Ran::NotFound => todo.push(c),
        }
    }
    if !todo.is_empty() {
        if ran.iter().all(|(_, r)| *r == Ran::NotFound) {
            say!("{tool} is not on PATH; run these yourself:");
        } else {
            say!("still to run:");
        }
        for c in todo {
            say!("  {}", shell_line(c));
        }
    }
    code
}

fn install_cmd(ctx: &Ctx, dry_run: bool, socket: bool) -> anyhow::Result<ExitCode> {
    let platform = Platform::native();
    if socket && platform == Platform::Launchd {
        say!("note: --socket is for systemd; the launchd agent is kept alive instead");
    }
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("finding the memd binary")?;
    let params = UnitParams {
        binary,
        data_dir: ctx.dir.root.clone(),
        port: ctx.settings.port,
        socket: socket && platform == Platform::Systemd,
    };
    let plan = install::install_plan(platform, &ctx.places, &params);
    if dry_run {
        for (path, text) in &plan.files {
            say!("would write {}:\n{text}", path.display());
        }
        for c in &plan.commands {
            say!("would run: {}", shell_line(c));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if Worker::locate(&ctx.dir, ctx.settings.port)
        .get(paths::HEALTH, Duration::from_millis(500))
        .is_ok()
    {
        say!(
            "note: a worker already runs on port {}; the service's worker starts once it stops (memd takes one lock per data dir)",
            ctx.settings.port
        );
    }
    ctx.dir.ensure_root()?;
    install::write_files(&plan, params.socket, &ctx.dir.root)?;
    for (path, _) in &plan.files {
        say!("wrote {}", path.display());
    }
    Ok(report(
        &install::run_commands(&plan.commands, ctx.path_env.as_deref()),
        install::tool(platform),
    ))
}

fn uninstall_cmd(ctx: &Ctx, dry_run: bool) -> anyhow::Result<ExitCode> {
    let Some(m) = install::read_manifest(&ctx.dir.root)? else {
        say!("no memd service is installed for {}", ctx.dir.root.display());
        return Ok(ExitCode::SUCCESS);
    };
    let commands = install::uninstall_commands(&m, &ctx.places);
    if dry_run {
        for c in &commands {
            say!("would run: {}", shell_line(c));
        }
        for (path, _) in &m.files {
            say!("would remove {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut code = report(
        &install::run_commands(&commands, ctx.path_env.as_deref()),
        install::tool(m.platform),
    );
    let kept = install::remove_files(&m, &ctx.dir.root)?;
    for (path, _) in &m.files {
        if kept.contains(path) {
            say!("kept {} (changed since memd wrote it)", path.display());
        } else {
            say!("removed {}", path.display());
        }
    }
    if m.platform == Platform::Systemd {
        let reload = vec![vec!["systemctl".to_string(), "--user".into(), "daemon-reload".into()]];
        let ran = install::run_commands(&reload, ctx.path_env.as_deref());
        if matches!(ran[0].1, Ran::Failed(_)) {
            code = ExitCode::from(1);
        }
    }
    Ok(code)
}

fn status_cmd(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match install::read_manifest(&ctx.dir.root)? {
        Some(m) => {
            say!("installed ({:?}{}):", m.platform, if m.socket { ", socket-activated" } else { "" });
            for (path, _) in &m.files {
                let state = if path.is_file() { "" } else { " (missing)" };
                say!("  {}{state}", path.display());
            }
            let c = install::status_command(m.platform, &ctx.places);
            if let Some(tool) = install::find_on_path(ctx.path_env.as_deref(), &c[0]) {
                let out = std::process::Command::new(tool).args(&c[1..]).output();
                let text = out
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                    .unwrap_or_default();
                say!("{}: {}", shell_line(&c), text.lines().next().unwrap_or("(no answer)"));
            }
        }
        None => say!("not installed as a service (the hooks start the worker on demand)"),
    }
    let worker = Worker::locate(&ctx.dir, ctx.settings.port);
    match worker.get(paths::STATUS, Duration::from_secs(3)) {
        Ok(r) if r.status == 200 => {
            let doc: serde_json::Value = r.json().unwrap_or_default();
            let manager = doc["supervisor"]["service_manager"]
                .as_str()
                .unwrap_or("on_demand")
                .replace('_', " ");
            say!(
                "worker: running (pid {}, port {}), started {}",
                doc["pid"],
                doc["port"],
                started_by(&manager)
            );
        }
        _ => say!("worker: not running"),
    }
    Ok(ExitCode::SUCCESS)
}

fn started_by(manager: &str) -> String {
    if manager == "on demand" {
        "on demand".into()
    } else {
        format!("by {manager}")
    }
}
