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
    for l in lines {
        println!("{l}");
    }
    Ok(ExitCode::SUCCESS)
}
