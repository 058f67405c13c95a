//! `memd install [--host claude|codex|gemini] [--settings F] [--no-mcp] [--dry-run] [--uninstall] [--plugin DIR]`.
//! Exit 0 on success, 1 on any error (the file is then untouched).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::install::{InstallOptions, plugin::write_plugin};

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Settings file to edit instead of `$CLAUDE_CONFIG_DIR/settings.json` (or `~/.claude/settings.json`).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Leave the MCP server entry alone.
    #[arg(long)]
    pub no_mcp: bool,
    /// Print the planned changes without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove exactly what memd added.
    #[arg(long)]
    pub uninstall: bool,
    /// Write a Claude Code plugin folder here instead of editing settings.
    #[arg(long)]
    pub plugin: Option<PathBuf>,
    /// Hook commands through the shell (`exec memd hook …`), for a Claude Code that predates
    /// exec-form hooks (`args`).
    #[arg(long)]
    pub shell_form: bool,
    /// Do not add memd's MCP tools to `permissions.allow` (they then ask before running).
    #[arg(long)]
    pub no_permissions: bool,
    /// The agent host: claude (Claude Code), codex (Codex CLI) or gemini (Gemini CLI).
    #[arg(long, default_value = "claude")]
    pub host: String,
}

pub fn run(args: &InstallArgs, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("locating the memd executable")?;
    let memd = exe.to_string_lossy().into_owned();
    // The lean hook binary when it sits beside memd (`cargo install` puts both there).
    let lean = exe.with_file_name(crate::install::hooks_config::HOOK_BINARY);
    let hook = if lean.is_file() {
        lean.to_string_lossy().into_owned()
    } else {
        memd.clone()
    };
    let host = match args.host.as_str() {
        "claude" | "claude-code" => None,
        other => Some(crate::hook::hosts::Host::parse(other).with_context(|| format!("unknown host {other:?}: claude, codex or gemini"))?),
    };
    let lines = match (&args.plugin, host) {
        (_, Some(host)) => crate::install::hosts::run(host, env, &memd, &hook, args.dry_run, args.uninstall, args.no_mcp)?,
        (Some(dir), None) => write_plugin(dir, &memd, &hook)?,
        (None, None) => {
            let opts = InstallOptions {
                settings: args.settings.clone(),
                no_mcp: args.no_mcp,
                dry_run: args.dry_run,
                uninstall: args.uninstall,
                shell_form: args.shell_form,
                no_permissions: args.no_permissions,
            };
            crate::install::run(&opts, env, &memd, &hook)?
        }
    };
    let nothing = lines.is_empty();
    for l in lines {
        say!("{l}");
    }
    if args.dry_run || args.plugin.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    match args.uninstall {
        true => after_uninstall(env, nothing),
        false => after_install(env, nothing, host),
    }
    Ok(ExitCode::SUCCESS)
}

/// What an install means for the user (issue 37): that nothing changed on a second run, which
/// observer runs and what it costs, what to do next.
fn after_install(env: &HashMap<String, String>, nothing: bool, host: Option<crate::hook::hosts::Host>) {
    if nothing {
        say!("memd is already installed: nothing changed.");
    }
    let ctx = super::client_context::CliContext::load(env, None);
    let (_, observer) = super::doctor_checks::observer_line(&ctx.settings);
    say!("Observer: {observer}.");
    use crate::hook::hosts::Host;
    let (name, program) = match host {
        None | Some(Host::ClaudeCode) => ("Claude Code", "claude"),
        Some(Host::Codex) => ("Codex CLI", "codex"),
        Some(Host::Gemini) => ("Gemini CLI", "gemini"),
    };
    let on_path = env
        .get("PATH")
        .is_some_and(|p| std::env::split_paths(p).any(|d| d.join(program).is_file()));
    if !on_path {
        say!("{name} (`{program}`) is not on PATH: install it, then start a session; memd is ready for it.");
    }
    say!(
        "Next: restart {name} (running sessions keep their old hooks), run `memd doctor` to check, and `memd open` to watch memories arrive."
    );
}

/// After an uninstall: the worker stopped (or still running), and what stays on disk.
fn after_uninstall(env: &HashMap<String, String>, nothing: bool) {
    if nothing {
        say!("memd was not installed here: nothing changed.");
    }
    let ctx = super::client_context::CliContext::load(env, None);
    if ctx.worker_running() {
        match super::stop::run(env) {
            Ok(code) if code == ExitCode::SUCCESS => {}
            _ => say!("The worker still runs: `memd stop` stops it."),
        }
    }
    let size = dir_size(&ctx.dir.root);
    say!(
        "Kept: your memories in {} ({}). Delete that folder to remove them too (`rm -rf {}`).",
        ctx.dir.root.display(),
        super::status::human_bytes(size),
        ctx.dir.root.display()
    );
}

fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
