//! Command-line interface: one file per subcommand.

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
    /// Replay recorded Claude Code transcripts as hook events against a worker (load test + loss check).
    Replay(replay::ReplayArgs),
}

pub fn run(cli: Cli, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve => serve::run(env),
        Command::Status { json } => status::run(env, json),
        Command::Replay(args) => replay::run(args, env),
    }
}
