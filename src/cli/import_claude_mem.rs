//! `memd import-claude-mem [PATH]` (docs/spec/storage.md §7): through the worker when one runs (progress
//! from `GET /api/status`), else in-process holding the data-dir lock. Prints a progress bar and a
//! final count. Exit 1 when the source is unreadable or not a claude-mem database.

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use super::client_context::CliContext;
use crate::clock::now_ms;
use crate::import::{ImportError, ImportOptions, ImportProgress};
use crate::store::import_rows::{dry_chunk, write_chunk};
use crate::store::{migrations, open};

/// The worker answers when the import is done.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// claude-mem database (default ~/.claude-mem/claude-mem.db).
    pub path: Option<PathBuf>,
    /// Report counts; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only these source projects (repeatable).
    #[arg(long = "project")]
    pub projects: Vec<String>,
    /// Import sessions, observations and summaries, not the prompts.
    #[arg(long)]
    pub no_prompts: bool,
    /// A claude-mem settings.json whose mapped keys are copied (docs/spec/storage.md §7.4).
    #[arg(long)]
    pub settings: Option<PathBuf>,
}

fn bar() -> ProgressBar {
    let b = ProgressBar::new(0);
    b.set_style(
        ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b
}

pub fn run(env: &HashMap<String, String>, a: ImportArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let path = a
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(env.get("HOME").cloned().unwrap_or_default()).join(".claude-mem/claude-mem.db"));
    let opts = ImportOptions {
        path: std::fs::canonicalize(&path).unwrap_or(path),
        dry_run: a.dry_run,
        projects: a.projects.clone(),
        no_prompts: a.no_prompts,
    };
    let result = if ctx.worker_running() {
        via_worker(&ctx, &opts, &a)?
    } else {
        in_process(&ctx, &opts, &a)?
    };
    match result {
        Ok(doc) => {
            print_report(&doc);
            Ok(ExitCode::SUCCESS)
        }
        Err(msg) => {
            say_err!("memd: {msg}");
            Ok(ExitCode::from(1))
        }
    }
}

fn print_report(doc: &Value) {
    let verb = if doc["dryRun"] == json!(true) { "would import" } else { "imported" };
    for table in ["sessions", "prompts", "observations", "summaries"] {
        let t = &doc["tables"][table];
        say!(
            "{table:>13}: read {}, {verb} {}, skipped {} mapped before, {} duplicate, {} filtered, {} invalid",
            t["read"],
            t["imported"],
            t["mapped"],
            t["duplicate"],
            t["filtered"],
            t["invalid"]
        );
    }
    say!("redactions {}, {} ms", doc["redactions"], doc["elapsedMs"]);
}

fn via_worker(ctx: &CliContext, opts: &ImportOptions, a: &ImportArgs) -> anyhow::Result<Result<Value, String>> {
    let mut body = json!({"path": opts.path, "dryRun": opts.dry_run, "projects": opts.projects, "noPrompts": opts.no_prompts});
    if let Some(s) = &a.settings {
        body["settings"] = json!(s);
    }
    let done = Arc::new(AtomicBool::new(false));
    let b = bar();
    let poller = {
        let (link, done, b) = (ctx.link(), done.clone(), b.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                if let Ok(ans) = link.call("GET", paths::STATUS, None)
                    && let Ok(doc) = serde_json::from_str::<crate::status::StatusDoc>(&ans.body)
                    && let Some(p) = doc.import
                {
                    b.set_length(p.total);
                    b.set_position(p.done);
                    b.set_message(p.table);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let ans = ctx
        .link()
        .call_with_timeout("POST", paths::IMPORT_CLAUDE_MEM, Some(&body), IMPORT_TIMEOUT);
    done.store(true, Ordering::Release);
    let _ = poller.join();
    b.finish_and_clear();
    let ans = ans.context("asking the worker to import")?;
    Ok(if ans.status == 200 {
        Ok(ans.json().unwrap_or_default())
    } else {
        Err(ans.detail())
    })
}

fn in_process(ctx: &CliContext, opts: &ImportOptions, a: &ImportArgs) -> anyhow::Result<Result<Value, String>> {
    ctx.dir.ensure_root()?;
    let _lock = ctx.dir.lock().context("taking the data-dir lock")?;
    let mut conn = open::open_writer(&ctx.dir.db(), true).context("opening the database")?;
    migrations::migrate(&mut conn, now_ms()).context("migrating the database")?;
    let privacy = ctx.privacy();
    let progress = Arc::new(ImportProgress::default());
    progress.try_begin();
    let source = crate::import::source_key(&opts.path);
    let done = Arc::new(AtomicBool::new(false));
    let b = bar();
    let ticker = {
        let (p, done, b) = (progress.clone(), done.clone(), b.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                b.set_length(p.total());
                b.set_position(p.done());
                if let Some(s) = p.snapshot() {
                    b.set_message(s.table);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let mut write = |chunk| -> Result<_, ImportError> {
        if opts.dry_run {
            return Ok(dry_chunk(&conn, &source, &chunk)?);
        }
        let tx = conn.transaction().map_err(crate::store::StoreError::from)?;
        let out = write_chunk(&tx, &source, &chunk)?;
        tx.commit().map_err(crate::store::StoreError::from)?;
        Ok(out)
    };
    let result = crate::import::run(opts, &privacy, &progress, &mut write);
    done.store(true, Ordering::Release);
    let _ = ticker.join();
    b.finish_and_clear();
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    let mut doc = match result {
        Ok(r) => r.to_json(),
        Err(ImportError::Source(m)) => return Ok(Err(m)),
        Err(e) => return Err(e.into()),
    };
    if let Some(s) = a.settings.as_ref().filter(|_| !opts.dry_run) {
        let written = crate::import::settings_map::copy_settings(s, &ctx.dir.root.join("settings.json"))?;
        doc["settingsCopied"] = json!(written);
    }
    Ok(Ok(doc))
}
