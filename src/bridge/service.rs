//! The bridge's use-cases (issue 39; `MEMD_NATIVE_MEMORY`, docs/spec/native-memory.md): the lines
//! of the memory files a session in `cwd` loads (so SessionStart leaves out what they already
//! say), memd's note when the agent reads one of those files, and a pass importing the Markdown
//! notes of `MEMD_NOTES_ROOTS`. File reads run on the blocking pool; a failure only means no
//! lines, no note. Each takes its parts (the settings it reads, the storage area), not the worker.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::files::{config_dir, is_memory_file, memory_files, read};
use super::storage::NativeMemory;
use super::{memory_lines, note};
use crate::config::NativeMemorySettings;
use crate::pipeline::privacy::Privacy;
use crate::retrieval::Scope;

/// Lines of memory files at most (a huge CLAUDE.md is compared by its first lines).
const LINES_MAX: usize = 2_000;

fn config(home: Option<&Path>) -> Option<PathBuf> {
    Some(config_dir(home?, std::env::var("CLAUDE_CONFIG_DIR").ok().as_deref()))
}

/// The lines of the memory files loaded for `cwd` (empty when off, or `cwd` is not absolute).
pub async fn loaded_lines(cfg: &NativeMemorySettings, home: Option<&Path>, cwd: Option<&str>) -> Vec<(String, BTreeSet<String>)> {
    let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
        return Vec::new();
    };
    let Some(config) = config(home).filter(|_| cfg.enabled) else {
        return Vec::new();
    };
    let read_all = move || {
        let mut lines = Vec::new();
        for f in memory_files(&cwd, &config) {
            lines.extend(read(&f).map(|t| memory_lines(&t)).unwrap_or_default());
            if lines.len() >= LINES_MAX {
                break;
            }
        }
        lines.truncate(LINES_MAX);
        lines
    };
    tokio::task::spawn_blocking(read_all).await.unwrap_or_default()
}

/// memd's note for a memory file the agent reads (None when it is not one, or nothing is newer).
pub async fn read_note(storage: &dyn NativeMemory, enabled: bool, path: &Path, scope: Scope) -> Option<String> {
    if !enabled || !path.is_absolute() || !is_memory_file(path) {
        return None;
    }
    let p = path.to_path_buf();
    let (text, mtime) = tokio::task::spawn_blocking(move || {
        let mtime = std::fs::metadata(&p)
            .ok()?
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some((read(&p)?, mtime.as_millis() as i64))
    })
    .await
    .ok()??;
    let lines = memory_lines(&text);
    if lines.is_empty() {
        return None;
    }
    let evidence = match storage.memory_evidence(scope, mtime).await {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, "memory-file evidence unreadable");
            return None;
        }
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    note::render(&name, &lines, &evidence)
}

/// Between two passes over the notes roots.
pub const NOTES_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// One pass over `MEMD_NOTES_ROOTS`: each stable note imported (again when changed); answers how
/// many were new or updated.
pub async fn import_notes(storage: &dyn NativeMemory, privacy: &Privacy, cfg: NativeMemorySettings, home: Option<PathBuf>) -> usize {
    use super::note_rows::{NoteIn, NoteOutcome};
    let mut changed = 0;
    for root in cfg.notes_roots {
        let project = crate::pipeline::project::identify(&root.to_string_lossy(), None, home.as_deref(), &root).primary;
        let now = crate::clock::now_ms();
        let scan_root = root.clone();
        let notes = tokio::task::spawn_blocking(move || {
            super::notes::candidates(&scan_root, now)
                .into_iter()
                .filter_map(|p| Some(super::notes::note(&p, &read(&p)?)))
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        for n in notes {
            let (title, text) = (privacy.clean_text(&n.title), privacy.clean_text(&n.text));
            if text.private || text.text.trim().is_empty() {
                continue;
            }
            let note = NoteIn {
                path: n.path.to_string_lossy().into_owned(),
                project: project.clone(),
                title: if title.private { String::new() } else { title.text },
                text: text.text,
            };
            match storage.import_note(note, crate::clock::now_ms()).await {
                Ok(NoteOutcome::New(_) | NoteOutcome::Updated { .. }) => changed += 1,
                Ok(_) => {}
                Err(e) => tracing::warn!(root = %root.display(), error = %e, "note not imported"),
            }
        }
    }
    if changed > 0 {
        tracing::info!(notes = changed, "markdown notes imported");
    }
    changed
}
