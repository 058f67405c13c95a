//! Real Claude Code transcripts: the small ones committed in `tests/fixtures/transcripts/`
//! (always there), and the whole developer set through `MEMD_TRANSCRIPTS_DIR` (CI sets it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memd::replay::transcript::is_subagent_file;

/// `tests/fixtures/transcripts/<name>`, which every checkout has.
pub fn fixture(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts").join(name);
    assert!(p.is_file(), "{} is committed", p.display());
    p
}

/// The whole transcript set (`MEMD_TRANSCRIPTS_DIR`), or None after saying it is missing.
pub fn transcripts_dir() -> Option<PathBuf> {
    let how = "set MEMD_TRANSCRIPTS_DIR to the recorded-session set (15 sessions, 23 files)";
    let dir = super::fixture_env("MEMD_TRANSCRIPTS_DIR", how).map(PathBuf::from)?;
    if !dir.is_dir() {
        super::fixture_missing(&format!("MEMD_TRANSCRIPTS_DIR={}", dir.display()), how);
        return None;
    }
    Some(dir)
}

/// The session files of the whole set (subagent files are found from them), sorted.
pub fn session_files() -> Option<Vec<PathBuf>> {
    let dir = transcripts_dir()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !is_subagent_file(p))
        .collect();
    files.sort();
    (!files.is_empty()).then_some(files)
}
