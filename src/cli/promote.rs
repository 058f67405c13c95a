//! `memd promote <id> [--to memory|claude-md] [--dry-run]` (issue 39): writes a memory into
//! Claude Code's own memory the way Claude Code writes it — a topic file plus a `MEMORY.md` line
//! in the project's auto-memory directory, or a bullet line in the project's `CLAUDE.md` (at the
//! git root, else here). `--dry-run` prints the files and their new content, writing nothing.
//! Files are written through [`crate::guard::write`] (a link below the root is refused, never
//! followed); a quarantined record is refused without `--force`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::{CliContext, call_json};
use crate::bridge::files::{FILE_MAX, auto_memory_dir, config_dir};
use crate::bridge::promote::{Promoted, to_auto_memory, to_claude_md};
use crate::guard::write::{Mode, Place, WriteError, split_under};
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
    /// Promote a quarantined record anyway (it read as an instruction to an agent).
    #[arg(long)]
    pub force: bool,
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
        say_err!("memd: no observation #{id}");
        return Ok(ExitCode::from(1));
    };
    let s = |k: &str| row[k].as_str().unwrap_or_default().to_string();
    if row["quarantined"].as_bool() == Some(true) && !a.force {
        let reason = crate::text::terminal::line(&s("quarantine_reason")).into_owned();
        say_err!(
            "memd: #{id} is quarantined ({reason}): it reads as an instruction to an agent, and Claude Code loads what promote writes into every session. Review it with `memd show {id}`; `memd promote {id} --force` writes it anyway."
        );
        return Ok(ExitCode::from(1));
    }
    let text = match s("narrative") {
        n if n.trim().is_empty() => s("title"),
        n => n,
    };
    let m = Promoted {
        id,
        title: s("title"),
        text,
        date: crate::clock::day(row["created_at_epoch"].as_i64().unwrap_or_default()),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let home = PathBuf::from(env.get("HOME").cloned().unwrap_or_default());
    let config = config_dir(&home, env.get("CLAUDE_CONFIG_DIR").map(String::as_str));
    // Where the files go: a folder reached from a root without following a link below it.
    let place = match a.to {
        Target::Memory => {
            let dir = auto_memory_dir(&cwd, &config);
            let (root, rel) = match split_under(&config, &dir.join("MEMORY.md")) {
                Some((rel, _)) => (config.clone(), rel),
                // `autoMemoryDirectory` set by the user: that folder is the root.
                None => (dir.clone(), PathBuf::new()),
            };
            if !a.dry_run {
                std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
            }
            Place::open(&root, &rel, (!a.dry_run).then_some(0o700))
        }
        Target::ClaudeMd => {
            let root = crate::freshness::git::discover(&cwd).map_or(cwd.clone(), |r| r.root);
            Place::open(&root, Path::new(""), None)
        }
    };
    let place = match place {
        Ok(p) => Some(p),
        // A dry run of a memory folder not made yet reads as empty.
        Err(WriteError::Io { source, .. }) if a.dry_run && source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => anyhow::bail!("{e}"),
    };
    let refusal = std::cell::RefCell::new(None);
    let read = |path: &Path| -> Option<String> {
        let (place, name) = (place.as_ref()?, path.file_name()?.to_str()?);
        match place.read(name, FILE_MAX) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(e) => {
                refusal.borrow_mut().get_or_insert(e.to_string());
                None
            }
        }
    };
    let dir = place
        .as_ref()
        .map_or_else(|| auto_memory_dir(&cwd, &config), |p| p.path().to_path_buf());
    let edits = match a.to {
        Target::Memory => to_auto_memory(&m, &dir, read),
        Target::ClaudeMd => to_claude_md(&m, &dir.join("CLAUDE.md"), read),
    };
    if let Some(why) = refusal.into_inner() {
        anyhow::bail!("{why}; nothing written");
    }
    if edits.is_empty() {
        say!("#{id} is already there; nothing to write.");
    }
    for e in &edits {
        let verb = match (a.dry_run, e.created) {
            (true, true) => "would create",
            (true, false) => "would update",
            (false, true) => "created",
            (false, false) => "updated",
        };
        say!("{verb} {}", e.path.display());
        if a.dry_run {
            for line in e.content.lines() {
                say!("  | {}", crate::text::terminal::safe(line));
            }
            continue;
        }
        let (Some(place), Some(name)) = (place.as_ref(), e.path.file_name().and_then(|n| n.to_str())) else {
            anyhow::bail!("{}: no folder to write into", e.path.display());
        };
        place.write(name, e.content.as_bytes(), Mode::KeepOr(0o644))?;
    }
    Ok(ExitCode::SUCCESS)
}
