//! Markdown notes imported from configured roots (`MEMD_NOTES_ROOTS`, docs/spec/native-memory.md
//! §4): which files qualify — `.md`, at most [`NOTE_MAX_BYTES`], unchanged for
//! [`STABLE_MS`] (a file being written is taken on a later pass), not hidden, not in a
//! dependency folder — and a note's title (its first heading, else its file name).

use std::path::{Path, PathBuf};

pub const NOTE_MAX_BYTES: u64 = 64 * 1024;
pub const STABLE_MS: i64 = 30_000;
/// Files one root contributes at most per pass.
pub const FILES_MAX: usize = 2_000;

/// A note ready to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub path: PathBuf,
    pub title: String,
    pub text: String,
}

/// The qualifying `.md` files under `root` (recursively), sorted.
pub fn candidates(root: &Path, now_ms: i64) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(meta) = e.metadata() else { continue };
            if name.starts_with('.') || meta.file_type().is_symlink() {
                continue;
            }
            if meta.is_dir() {
                if !crate::folders::plan::SKIPPED.contains(&name.as_str()) {
                    stack.push(p);
                }
                continue;
            }
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(now_ms, |d| d.as_millis() as i64);
            if name.ends_with(".md") && meta.len() <= NOTE_MAX_BYTES && meta.len() > 0 && now_ms - mtime >= STABLE_MS {
                out.push(p);
            }
            if out.len() >= FILES_MAX {
                return out;
            }
        }
    }
    out.sort();
    out
}

/// The note of a file's text.
pub fn note(path: &Path, text: &str) -> Note {
    let heading = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .filter(|t| !t.is_empty());
    let title = heading.unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    Note {
        path: path.to_path_buf(),
        title,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_small_markdown_files_qualify() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("deep/node_modules")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("a.md"), "# Deploys\nstaging first").unwrap();
        std::fs::write(root.join("deep/b.md"), "no heading").unwrap();
        std::fs::write(root.join("deep/node_modules/c.md"), "vendored").unwrap();
        std::fs::write(root.join(".git/d.md"), "hidden").unwrap();
        std::fs::write(root.join("big.md"), "x".repeat(70_000)).unwrap();
        std::fs::write(root.join("e.txt"), "not markdown").unwrap();
        let now = crate::clock::now_ms();
        assert!(candidates(root, now).is_empty(), "files written just now are not stable yet");
        let later = candidates(root, now + STABLE_MS + 1_000);
        let names: Vec<_> = later.iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
        assert_eq!(names, ["a.md", "deep/b.md"]);
        assert_eq!(note(&later[0], "# Deploys\nstaging first").title, "Deploys");
        assert_eq!(note(&later[1], "no heading").title, "b");
    }
}
