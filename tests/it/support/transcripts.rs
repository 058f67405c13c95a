//! Where the real transcripts live for replay tests: `$MEMD_TRANSCRIPTS_DIR`, else
//! `<crate>/../shared/data/transcripts` (main checkout), else `<crate>/../../shared/…` (worktrees).
#![allow(dead_code)]

use std::path::PathBuf;

use memd::replay::transcript::is_subagent_file;

pub fn transcripts_dir() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("MEMD_TRANSCRIPTS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([root.join("../shared/data/transcripts"), root.join("../../shared/data/transcripts")])
        .find(|d| d.is_dir())
}

/// The session files (subagent files are found from them), sorted; `None` (with a message) when absent.
pub fn session_files() -> Option<Vec<PathBuf>> {
    let Some(dir) = transcripts_dir() else {
        eprintln!("skipped: ../shared/data/transcripts not present");
        return None;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !is_subagent_file(p))
        .collect();
    files.sort();
    (!files.is_empty()).then_some(files)
}
