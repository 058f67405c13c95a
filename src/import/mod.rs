//! `memd import-claude-mem`: sessions, prompts, observations and summaries from a claude-mem
//! database (docs/spec/storage.md §7). The driver reads the source in id order, 1,000 rows at a time,
//! cleans each row ([`clean`]) and hands the chunk to a writer closure — the worker's store writer
//! (`POST /api/admin/import-claude-mem`) or a direct transaction (CLI without a worker); both run
//! [`crate::store::import_rows::write_chunk`], so a second run maps everything as done.

pub mod clean;
pub mod settings_map;
pub mod source;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{Value, json};

use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::RedactionCounts;
use crate::store::StoreError;
use crate::store::import_rows::{ChunkOutcome, ImportChunk};
use clean::Cleaner;
use source::{OBSERVATION_COLUMNS, PROMPT_COLUMNS, SESSION_COLUMNS, SUMMARY_COLUMNS, Source, SourceRow};

pub const CHUNK_ROWS: usize = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Source(String),
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("an import is already running")]
    Busy,
}

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub path: PathBuf,
    pub dry_run: bool,
    /// Source projects to import (empty = all).
    pub projects: Vec<String>,
    pub no_prompts: bool,
}

/// Live progress, read by `GET /api/status` (`import`) and the CLI's progress bar.
#[derive(Debug, Default)]
pub struct ImportProgress {
    running: AtomicBool,
    table: Mutex<String>,
    done: AtomicU64,
    total: AtomicU64,
}

impl ImportProgress {
    /// Marks an import as running; false when one already runs.
    pub fn try_begin(&self) -> bool {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(0, Ordering::Relaxed);
        self.running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
    pub fn end(&self) {
        self.running.store(false, Ordering::Release);
    }
    fn set_table(&self, t: &str) {
        if let Ok(mut g) = self.table.lock() {
            *g = t.to_string();
        }
    }
    /// `{"table","done","total"}` while an import runs, else `null`.
    /// The `import` part of `GET /api/status`: None when no import runs.
    pub fn snapshot(&self) -> Option<ImportSnapshot> {
        if !self.running.load(Ordering::Acquire) {
            return None;
        }
        Some(ImportSnapshot {
            table: self.table.lock().map(|g| g.clone()).unwrap_or_default(),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
        })
    }
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

/// A running import's progress.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportSnapshot {
    pub table: String,
    pub done: u64,
    pub total: u64,
}

/// Per table: rows read, imported, and skipped by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TableReport {
    pub read: u64,
    pub imported: u64,
    pub mapped: u64,
    pub duplicate: u64,
    pub filtered: u64,
    pub invalid: u64,
}

impl TableReport {
    fn add(&mut self, o: ChunkOutcome) {
        self.imported += o.imported;
        self.mapped += o.mapped_before;
        self.duplicate += o.duplicate;
        self.invalid += o.invalid;
    }
    pub fn skipped(&self) -> u64 {
        self.mapped + self.duplicate + self.filtered + self.invalid
    }
}

#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    pub sessions: TableReport,
    pub prompts: TableReport,
    pub observations: TableReport,
    pub summaries: TableReport,
    pub redactions: u64,
    pub elapsed_ms: u64,
    pub dry_run: bool,
}

impl ImportReport {
    /// The answer of `POST /api/admin/import-claude-mem` (docs/spec/api.md §6.7) plus per-table detail.
    pub fn to_json(&self) -> Value {
        let t = [&self.sessions, &self.prompts, &self.observations, &self.summaries];
        json!({
            "success": true, "dryRun": self.dry_run,
            "sessions": self.sessions.imported, "prompts": self.prompts.imported,
            "observations": self.observations.imported, "summaries": self.summaries.imported,
            "skipped": t.iter().map(|r| r.skipped()).sum::<u64>(),
            "redactions": self.redactions, "elapsedMs": self.elapsed_ms,
            "tables": {"sessions": self.sessions, "prompts": self.prompts, "observations": self.observations, "summaries": self.summaries},
        })
    }
}

/// `claude-mem:<canonical path>`: the `import_map.source` of this file.
pub fn source_key(path: &Path) -> String {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("claude-mem:{}", canonical.display())
}

/// Which source session each child row belongs to, and which sessions the filter dropped.
#[derive(Default)]
struct SessionIndex {
    by_msid: HashMap<String, i64>,
    by_content: HashMap<String, i64>,
    filtered: HashSet<i64>,
}

/// Runs the import; `write` commits one chunk (or, for a dry run, only classifies it).
pub fn run(
    opts: &ImportOptions,
    privacy: &Privacy,
    progress: &ImportProgress,
    write: &mut dyn FnMut(ImportChunk) -> Result<ChunkOutcome, ImportError>,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let src = Source::open(&opts.path)?;
    let prompts_table = if opts.no_prompts { 0 } else { src.count("user_prompts")? };
    let total = src.count("sdk_sessions")? + prompts_table + src.count("observations")? + src.count("session_summaries")?;
    progress.total.store(total, Ordering::Relaxed);
    let mut cleaner = Cleaner {
        privacy,
        redactions: RedactionCounts::default(),
    };
    let mut report = ImportReport {
        dry_run: opts.dry_run,
        ..Default::default()
    };
    let keep = |p: Option<String>| opts.projects.is_empty() || p.is_some_and(|p| opts.projects.iter().any(|x| *x == p.trim()));
    let mut index = SessionIndex::default();

    progress.set_table("sdk_sessions");
    each_chunk(&src, "sdk_sessions", SESSION_COLUMNS, progress, |rows| {
        let mut out = Vec::new();
        for r in rows {
            report.sessions.read += 1;
            if let Some(m) = r.text("memory_session_id") {
                index.by_msid.insert(m, r.id);
            }
            if let Some(c) = r.text("content_session_id") {
                index.by_content.entry(c).or_insert(r.id);
            }
            if !keep(r.text("project")) {
                index.filtered.insert(r.id);
                report.sessions.filtered += 1;
                continue;
            }
            match cleaner.session(r) {
                Some(s) => out.push(s),
                None => report.sessions.invalid += 1,
            }
        }
        report.sessions.add(write(ImportChunk::Sessions(out))?);
        Ok(())
    })?;

    if !opts.no_prompts {
        progress.set_table("user_prompts");
        each_chunk(&src, "user_prompts", PROMPT_COLUMNS, progress, |rows| {
            let mut out = Vec::new();
            for r in rows {
                report.prompts.read += 1;
                let sid = r
                    .int("session_db_id")
                    .or_else(|| r.text("content_session_id").and_then(|c| index.by_content.get(&c).copied()));
                match sid {
                    Some(s) if index.filtered.contains(&s) => report.prompts.filtered += 1,
                    Some(s) => match cleaner.prompt(r, s) {
                        Some(p) => out.push(p),
                        None => report.prompts.invalid += 1,
                    },
                    None => report.prompts.invalid += 1,
                }
            }
            report.prompts.add(write(ImportChunk::Prompts(out))?);
            Ok(())
        })?;
    }

    progress.set_table("observations");
    each_chunk(&src, "observations", OBSERVATION_COLUMNS, progress, |rows| {
        let mut out = Vec::new();
        for r in rows {
            report.observations.read += 1;
            match r.text("memory_session_id").and_then(|m| index.by_msid.get(&m).copied()) {
                Some(s) if index.filtered.contains(&s) || !keep(r.text("project")) => report.observations.filtered += 1,
                Some(s) => match cleaner.observation(r, s) {
                    Some(o) => out.push(o),
                    None => report.observations.invalid += 1,
                },
                None => report.observations.invalid += 1,
            }
        }
        report.observations.add(write(ImportChunk::Observations(out))?);
        Ok(())
    })?;

    progress.set_table("session_summaries");
    each_chunk(&src, "session_summaries", SUMMARY_COLUMNS, progress, |rows| {
        let mut out = Vec::new();
        for r in rows {
            report.summaries.read += 1;
            match r.text("memory_session_id").and_then(|m| index.by_msid.get(&m).copied()) {
                Some(s) if index.filtered.contains(&s) || !keep(r.text("project")) => report.summaries.filtered += 1,
                Some(s) => match cleaner.summary(r, s) {
                    Some(x) => out.push(x),
                    None => report.summaries.invalid += 1,
                },
                None => report.summaries.invalid += 1,
            }
        }
        report.summaries.add(write(ImportChunk::Summaries(out))?);
        Ok(())
    })?;

    report.redactions = cleaner.redactions.total();
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

fn each_chunk(
    src: &Source,
    table: &str,
    cols: &[(&'static str, &[&str])],
    progress: &ImportProgress,
    mut f: impl FnMut(&[SourceRow]) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    let mut after = i64::MIN;
    loop {
        let rows = src.chunk(table, cols, after, CHUNK_ROWS)?;
        let Some(last) = rows.last() else { return Ok(()) };
        after = last.id;
        f(&rows)?;
        progress.done.fetch_add(rows.len() as u64, Ordering::Relaxed);
    }
}
