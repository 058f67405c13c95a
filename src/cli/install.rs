//! `memd install [--settings F] [--no-mcp] [--dry-run] [--uninstall] [--plugin DIR]`.
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
}

pub fn run(args: &InstallArgs, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("locating the memd executable")?;
    let memd = exe.to_string_lossy().into_owned();
    let lines = match &args.plugin {
        Some(dir) => write_plugin(dir, &memd)?,
        None => {
            let opts = InstallOptions {
                settings: args.settings.clone(),
                no_mcp: args.no_mcp,
                dry_run: args.dry_run,
                uninstall: args.uninstall,
            };
            crate::install::run(&opts, env, &memd)?
        }
    };
    for l in lines {
        println!("{l}");
    }
    Ok(ExitCode::SUCCESS)
}
