//! `memd import-sessions [paths…]`: the backfill for a person (issue 37). Reads Claude Code session
//! files and Codex rollouts (default: `~/.claude/projects` and `~/.codex/sessions`, searched
//! recursively), sends their events to the worker as the hooks would have, each with its recorded
//! time and an id derived from its session and position — so running it again stores nothing
//! twice — and ends with what was imported. A progress bar only on a terminal. `memd replay` stays
//! the load tool.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::client_context::CliContext;
use crate::client::worker::Worker;
use crate::protocol::paths;
use crate::replay::convert::convert_file;
use crate::replay::event::{EventKind, SessionEvents};
use crate::replay::runner::{RunOptions, run as run_replay};
use crate::replay::stats::Tally;
use crate::replay::transcript::is_subagent_file;

#[derive(Debug, Args)]
pub struct ImportSessionsArgs {
    /// Session files or directories, searched recursively (default: ~/.claude/projects and ~/.codex/sessions).
    pub paths: Vec<PathBuf>,
    /// List what would be imported; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Directory levels searched below each path (Codex keeps rollouts in `YYYY/MM/DD/`).
const MAX_DEPTH: usize = 6;

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct ImportSummary {
    pub files: usize,
    pub unreadable: Vec<String>,
    pub sessions: usize,
    /// Tool calls stored now, and ones memd already had (from the hooks or an earlier import).
    pub tool_calls_new: u64,
    pub tool_calls_known: u64,
    pub prompts_new: u64,
    pub prompts_known: u64,
    /// Events the worker did not take: by reason (skipped tools, private, …) and by error.
    pub skipped: u64,
    pub errors: u64,
}

/// Session files under `root` (itself when it is a file), sorted; subagent files are read with
/// their session, never alone.
pub fn find_session_files(root: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if root.is_file() {
        if root.extension().is_some_and(|x| x == "jsonl") && !is_subagent_file(root) {
            out.push(root.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let is_dir = p.is_dir();
        if is_dir && (depth == 0 || p.file_name().is_some_and(|n| n == "subagents")) {
            continue;
        }
        find_session_files(&p, depth.saturating_sub(1), out);
    }
}

/// What the worker answered, per kind of event.
pub fn summarise(files: usize, unreadable: Vec<String>, sessions: usize, tally: &Tally) -> ImportSummary {
    let mut s = ImportSummary {
        files,
        unreadable,
        sessions,
        ..Default::default()
    };
    for (kind, k) in &tally.kinds {
        match kind {
            EventKind::PostToolUse | EventKind::PostToolUseFailure => {
                s.tool_calls_new += k.acknowledged;
                s.tool_calls_known += k.duplicates;
            }
            EventKind::UserPromptSubmit => {
                s.prompts_new += k.acknowledged;
                s.prompts_known += k.duplicates;
            }
            _ => {}
        }
        s.skipped += k.skipped.values().sum::<u64>();
        s.errors += k.errors.values().sum::<u64>();
    }
    s
}

fn default_roots(home: Option<&Path>) -> Vec<PathBuf> {
    let Some(home) = home else { return Vec::new() };
    [".claude/projects", ".codex/sessions"]
        .iter()
        .map(|p| home.join(p))
        .filter(|p| p.is_dir())
        .collect()
}

fn print_summary(s: &ImportSummary) {
    say!(
        "Imported {} sessions from {} files: {} tool calls and {} prompts new; {} tool calls and {} prompts memd already had.",
        s.sessions,
        s.files,
        s.tool_calls_new,
        s.prompts_new,
        s.tool_calls_known,
        s.prompts_known
    );
    if s.skipped > 0 {
        say!(
            "{} events were not kept by design (skipped tools, memd's own calls, private prompts).",
            s.skipped
        );
    }
    for f in &s.unreadable {
        say!("Could not read {f}.");
    }
    if s.errors > 0 {
        say!(
            "{} events were not acknowledged by the worker: run the same command again (nothing is stored twice).",
            s.errors
        );
    }
    if s.tool_calls_new > 0 {
        say!("The observer turns the new calls into memories over the next minutes: `memd status` shows the queue.");
    }
}

pub fn run(env: &HashMap<String, String>, args: ImportSessionsArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let roots = match args.paths.is_empty() {
        true => default_roots(ctx.settings.home.as_deref()),
        false => args.paths.clone(),
    };
    if roots.is_empty() {
        anyhow::bail!("no sessions to import: neither ~/.claude/projects nor ~/.codex/sessions exists; name files or directories");
    }
    let mut files = Vec::new();
    for r in &roots {
        anyhow::ensure!(r.exists(), "{} does not exist", r.display());
        find_session_files(r, MAX_DEPTH, &mut files);
    }
    let (mut sessions, mut unreadable): (Vec<SessionEvents>, Vec<String>) = (Vec::new(), Vec::new());
    for f in &files {
        match convert_file(f) {
            Ok(s) if !s.events.is_empty() => sessions.push(s),
            Ok(_) => {}
            Err(e) => unreadable.push(format!("{} ({e})", f.display())),
        }
    }
    if args.dry_run {
        let calls: usize = sessions
            .iter()
            .map(|s| s.count(EventKind::PostToolUse, None) + s.count(EventKind::PostToolUseFailure, None))
            .sum();
        say!(
            "Would import {} sessions from {} files ({calls} tool calls); nothing sent.",
            sessions.len(),
            files.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Starts the worker when it is not running (as every command that needs it does).
    let health = ctx.link().call("GET", paths::HEALTH, None).context("asking the worker")?;
    anyhow::ensure!(health.status == 200, "the worker answered {}: {}", health.status, health.detail());
    let w = Worker::locate(&ctx.dir, ctx.settings.port);
    let opts = RunOptions {
        progress: std::io::stderr().is_terminal() && !args.json,
        import: true,
        ..RunOptions::to_local_worker(w.addr, w.token, ctx.settings.home)
    };
    let result = run_replay(&sessions, &opts);
    let summary = summarise(files.len(), unreadable, sessions.len(), &result.tally);
    if args.json {
        say_json!(&summary);
    } else {
        print_summary(&summary);
    }
    Ok(if summary.errors > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_files_are_found_below_project_and_date_folders_but_not_subagents() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "projects/-r-shop/a.jsonl",
            "projects/-r-shop/a/subagents/agent-1.jsonl",
            "projects/-r-web/b.jsonl",
            "projects/-r-web/notes.txt",
            "sessions/2026/12/04/rollout-c.jsonl",
            "projects/-r-web/agent-9.jsonl",
        ] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "{}\n").unwrap();
        }
        let mut found = Vec::new();
        find_session_files(d.path(), MAX_DEPTH, &mut found);
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            vec![
                "projects/-r-shop/a.jsonl",
                "projects/-r-web/b.jsonl",
                "sessions/2026/12/04/rollout-c.jsonl"
            ]
        );
        let mut shallow = Vec::new();
        find_session_files(d.path(), 1, &mut shallow);
        assert!(shallow.is_empty(), "depth bounds the walk: {shallow:?}");
    }
}
