//! Folder context files (issue 39; `MEMD_FOLDER_CONTEXT`, `memd folders`): the recent rows,
//! [`crate::folders::plan`] for what each folder shows, git for what it ignores, then each
//! folder's context file spliced ([`crate::folders::splice`]) — written through
//! [`crate::guard::write`]: reached from the project root with no link below it, atomically, never
//! into a folder that does not exist. The files memd has written
//! are kept in `<data>/folder-files.json` so a section whose observations aged out is removed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::plan::{FolderPlan, plan};
use super::storage::FolderRows;
use super::{Splice, splice};
use crate::clock::now_ms;
use crate::config::FolderSettings;
use crate::freshness::git::{Repo, discover};
use crate::guard::write::{Mode, Place, WriteError};
use crate::retrieval::RetrievalError;

const ROWS_MAX: usize = 5_000;
const DAY_MS: i64 = 86_400_000;
/// Between two passes of the worker's loop.
pub const INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);

/// What a pass did (or, dry, would do) to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FolderChange {
    pub file: String,
    /// `create`, `update`, `remove`, `unchanged` or `skipped`.
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The generated section (None when it is removed or skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// Which files earlier passes wrote (`<data>/folder-files.json`).
fn ledger(data_dir: &Path) -> PathBuf {
    data_dir.join("folder-files.json")
}

/// Which plans are in folders git ignores (one `git check-ignore` per work tree).
fn ignored(plans: &[FolderPlan]) -> BTreeSet<PathBuf> {
    let mut by_repo: HashMap<PathBuf, (Repo, Vec<(String, PathBuf)>)> = HashMap::new();
    for p in plans {
        let Some(repo) = discover(&p.folder) else { continue };
        let Ok(rel) = p.folder.strip_prefix(&repo.root) else { continue };
        let rel = rel.to_string_lossy().into_owned();
        if rel.is_empty() {
            continue;
        }
        let entry = by_repo.entry(repo.root.clone()).or_insert_with(|| (repo, Vec::new()));
        entry.1.push((rel, p.folder.clone()));
    }
    let mut out = BTreeSet::new();
    for (repo, pairs) in by_repo.into_values() {
        let rels: Vec<String> = pairs.iter().map(|(r, _)| r.clone()).collect();
        match repo.ignored(&rels) {
            Ok(set) => out.extend(pairs.into_iter().filter(|(r, _)| set.contains(r)).map(|(_, f)| f)),
            Err(e) => tracing::warn!(root = %repo.root.display(), error = %e, "git check-ignore failed; folders kept"),
        }
    }
    out
}

/// A file memd wrote: the project root it was reached from and its folder under that root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
struct Written {
    root: PathBuf,
    rel: PathBuf,
    name: String,
}

impl Written {
    fn path(&self) -> PathBuf {
        self.root.join(&self.rel).join(&self.name)
    }
}

/// A person's context file larger than this is left alone.
const FILE_MAX: u64 = 1_048_576;

/// The change for one file, applied unless `dry`. The file is reached from its project root
/// through [`crate::guard::write::Place`]: a link anywhere below the root, a FIFO or a folder at
/// the file's name is skipped with the reason, never written through.
fn apply(w: &Written, section: Option<&str>, dry: bool) -> FolderChange {
    let name = w.path().to_string_lossy().into_owned();
    let skipped = |reason: String| FolderChange {
        file: name.clone(),
        action: "skipped",
        reason: Some(reason),
        section: None,
    };
    let place = match Place::open(&w.root, &w.rel, None) {
        Ok(p) => p,
        Err(WriteError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return skipped("the folder does not exist".into());
        }
        Err(e) => return skipped(e.to_string()),
    };
    let existing = match place.read(&w.name, FILE_MAX) {
        Ok(None) => None,
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(t) => Some(t),
            Err(_) => return skipped("not UTF-8".into()),
        },
        Err(e) => return skipped(e.to_string()),
    };
    let (action, result) = match splice(existing.as_deref(), section) {
        Splice::Leave if existing.as_deref().is_some_and(|t| !crate::folders::intact(t)) => {
            return skipped("its markers are damaged; a person's edit is never overwritten".into());
        }
        Splice::Leave => ("unchanged", Ok(())),
        Splice::Delete => ("remove", if dry { Ok(()) } else { place.remove(&w.name).map(drop) }),
        Splice::Write(text) => {
            let action = if existing.is_some() { "update" } else { "create" };
            // A person's file keeps its mode and owner.
            let write = || place.write(&w.name, text.as_bytes(), Mode::KeepOr(0o644));
            (action, if dry { Ok(()) } else { write() })
        }
    };
    match result {
        Ok(()) => FolderChange {
            file: name,
            action,
            reason: None,
            section: section.map(str::to_string).filter(|_| action != "unchanged"),
        },
        Err(e) => skipped(format!("write failed: {e}")),
    }
}

/// One pass: every folder of the recent rows, and every file written before that now has
/// nothing to show. `dry`: nothing is written and the ledger is not touched.
pub async fn run(storage: &dyn FolderRows, cfg: FolderSettings, data_dir: &Path, dry: bool) -> Result<Vec<FolderChange>, RetrievalError> {
    let since = now_ms() - cfg.days as i64 * DAY_MS;
    let rows = storage.folder_rows(since, ROWS_MAX).await?;
    let ledger = ledger(data_dir);
    let changes = tokio::task::spawn_blocking(move || pass(&plan(&rows), &cfg.file_name, &ledger, dry))
        .await
        .map_err(|e| RetrievalError::Store(crate::store::StoreError::Internal(format!("folder files: {e}"))))?;
    let written = changes
        .iter()
        .filter(|c| matches!(c.action, "create" | "update" | "remove"))
        .count();
    tracing::info!(files = changes.len(), written, dry, "folder context files");
    Ok(changes)
}

fn pass(plans: &[FolderPlan], file_name: &str, ledger: &Path, dry: bool) -> Vec<FolderChange> {
    let ignored = ignored(plans);
    // A ledger written before files were kept by root (or unreadable) is read as empty.
    let before: BTreeSet<Written> = std::fs::read_to_string(ledger)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut changes = Vec::new();
    let mut kept = BTreeSet::new();
    for p in plans {
        let w = Written {
            root: p.root.clone(),
            rel: p.rel.clone(),
            name: file_name.to_string(),
        };
        if ignored.contains(&p.folder) {
            changes.push(FolderChange {
                file: w.path().to_string_lossy().into_owned(),
                action: "skipped",
                reason: Some("git ignores the folder".into()),
                section: None,
            });
            continue;
        }
        let c = apply(&w, Some(&p.section), dry);
        if matches!(c.action, "create" | "update" | "unchanged") {
            kept.insert(w);
        }
        changes.push(c);
    }
    for old in before.difference(&kept) {
        changes.push(apply(old, None, dry));
    }
    if !dry && let Ok(text) = serde_json::to_string(&kept) {
        let _ = crate::data_dir::write_private(ledger, text.as_bytes());
    }
    changes
}
