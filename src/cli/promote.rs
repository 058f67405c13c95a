//! `memd promote <id> [--to memory|claude-md] [--dry-run]` (issue 39): writes a memory into
//! Claude Code's own memory the way Claude Code writes it — a topic file plus a `MEMORY.md` line
//! in the project's auto-memory directory, or a bullet line in the project's `CLAUDE.md` (at the
//! git root, else here). `--dry-run` prints the files and their new content, writing nothing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::{CliContext, call_json};
use crate::bridge::files::{auto_memory_dir, config_dir, read};
use crate::bridge::promote::{Promoted, to_auto_memory, to_claude_md};
use crate::protocol::paths;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// The auto-memory directory: a topic file and its MEMORY.md line.
    Memory,
    /// The project's CLAUDE.md: one bullet line.
    ClaudeMd,
}

#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// The observation to promote (12 or #12).
    pub id: String,
    /// Where: the auto-memory directory (a topic file + MEMORY.md line) or the project's CLAUDE.md.
    #[arg(long, value_enum, default_value = "memory")]
    pub to: Target,
    /// Print what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(env: &HashMap<String, String>, a: PromoteArgs) -> anyhow::Result<ExitCode> {
    let id: i64 =
        a.id.trim()
            .trim_start_matches('#')
            .parse()
            .with_context(|| format!("not an observation id: {:?}", a.id))?;
    let ctx = CliContext::load(env, None);
    let body = json!({"ids": [format!("#{id}")]});
    let row = match call_json(&ctx.link(), "POST", paths::OBSERVATIONS_BATCH, Some(&body))? {
        Value::Array(rows) => rows.into_iter().next(),
        _ => anyhow::bail!("the worker answered something other than a list of records"),
    };
    let Some(row) = row else {
        eprintln!("memd: no observation #{id}");
        return Ok(ExitCode::from(1));
    };
    let s = |k: &str| row[k].as_str().unwrap_or_default().to_string();
    let text = match s("narrative") {
        n if n.trim().is_empty() => s("title"),
        n => n,
    };
    let m = Promoted {
        id,
        title: s("title"),
        text,
        date: s("created_at"),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let home = PathBuf::from(env.get("HOME").cloned().unwrap_or_default());
    let config = config_dir(&home, env.get("CLAUDE_CONFIG_DIR").map(String::as_str));
    let edits = match a.to {
        Target::Memory => to_auto_memory(&m, &auto_memory_dir(&cwd, &config), read),
        Target::ClaudeMd => {
            let root = crate::freshness::git::discover(&cwd).map_or(cwd.clone(), |r| r.root);
            to_claude_md(&m, &root.join("CLAUDE.md"), read)
        }
    };
    if edits.is_empty() {
        println!("#{id} is already there; nothing to write.");
    }
    for e in &edits {
        let verb = match (a.dry_run, e.created) {
            (true, true) => "would create",
            (true, false) => "would update",
            (false, true) => "created",
            (false, false) => "updated",
        };
        println!("{verb} {}", e.path.display());
        if a.dry_run {
            for line in e.content.lines() {
                println!("  | {line}");
            }
            continue;
        }
        if let Some(dir) = e.path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&e.path, &e.content).with_context(|| format!("writing {}", e.path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
