//! Where Claude Code's memory files are for a working directory (docs/spec/native-memory.md §1):
//! `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` in the directory and each parent (an
//! `AGENTS.md` where a directory has no `CLAUDE.md`), the user's `~/.claude/CLAUDE.md`, and the
//! auto-memory directory — `autoMemoryDirectory` of the user's settings, else
//! `<config>/projects/<git root or cwd, each non-alphanumeric character a dash>/memory/` —
//! with its `MEMORY.md` index and topic files.

use std::path::{Path, PathBuf};

/// Bytes read of one memory file at most.
pub const FILE_MAX: u64 = 256 * 1024;
/// Topic files of the auto-memory directory read at most.
const TOPICS_MAX: usize = 50;

/// Claude Code's configuration directory: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(home: &Path, claude_config_dir: Option<&str>) -> PathBuf {
    match claude_config_dir.map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home.join(".claude"),
    }
}

/// A path as Claude Code names its project folders: every character not `[A-Za-z0-9]` → `-`.
pub fn sanitize(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The auto-memory directory of `cwd`.
pub fn auto_memory_dir(cwd: &Path, config: &Path) -> PathBuf {
    let settings = std::fs::read_to_string(config.join("settings.json")).unwrap_or_default();
    let custom = serde_json::from_str::<serde_json::Value>(&settings)
        .ok()
        .and_then(|v| v.get("autoMemoryDirectory").and_then(|d| d.as_str()).map(PathBuf::from))
        .filter(|d| d.is_absolute());
    if let Some(dir) = custom {
        return dir;
    }
    let root = crate::freshness::git::discover(cwd).map_or_else(|| cwd.to_path_buf(), |r| r.root);
    config.join("projects").join(sanitize(&root)).join("memory")
}

/// The memory files Claude Code loads at start for `cwd` that exist, most general first.
pub fn memory_files(cwd: &Path, config: &Path) -> Vec<PathBuf> {
    let mut out = vec![config.join("CLAUDE.md")];
    let mut dirs: Vec<&Path> = cwd.ancestors().filter(|d| d.parent().is_some()).collect();
    dirs.reverse();
    for d in dirs {
        let claude = d.join("CLAUDE.md");
        let has_claude = claude.is_file();
        out.push(claude);
        out.push(d.join(".claude/CLAUDE.md"));
        out.push(d.join("CLAUDE.local.md"));
        if !has_claude {
            out.push(d.join("AGENTS.md"));
        }
    }
    let memory = auto_memory_dir(cwd, config);
    out.push(memory.join("MEMORY.md"));
    if let Ok(entries) = std::fs::read_dir(&memory) {
        let mut topics: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("MEMORY.md"))
            .collect();
        topics.sort();
        out.extend(topics.into_iter().take(TOPICS_MAX));
    }
    out.retain(|p| p.is_file());
    out.dedup();
    out
}

/// Whether a path read by the agent is one of Claude Code's memory files (by name, or inside an
/// auto-memory directory).
pub fn is_memory_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    matches!(name.as_str(), "CLAUDE.md" | "CLAUDE.local.md" | "AGENTS.md" | "MEMORY.md")
        || (name.ends_with(".md") && path.parent().is_some_and(|p| p.ends_with("memory")) && path.to_string_lossy().contains("/projects/"))
}

/// A memory file's text, at most [`FILE_MAX`] bytes, None when unreadable.
pub fn read(path: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    f.take(FILE_MAX).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_of_a_project_are_found_as_claude_code_finds_them() {
        let tmp = tempfile::tempdir().unwrap();
        let (config, proj) = (tmp.path().join("home/.claude"), tmp.path().join("work/shop"));
        std::fs::create_dir_all(proj.join("sub")).unwrap();
        std::fs::write(tmp.path().join("work/AGENTS.md"), "agents").unwrap();
        std::fs::write(proj.join("CLAUDE.md"), "project").unwrap();
        std::fs::write(proj.join("AGENTS.md"), "ignored: a CLAUDE.md is here").unwrap();
        let memory = auto_memory_dir(&proj.join("sub"), &config);
        assert_eq!(memory, config.join("projects").join(sanitize(&proj.join("sub"))).join("memory"));
        let memory = auto_memory_dir(&proj, &config);
        std::fs::create_dir_all(&memory).unwrap();
        std::fs::write(memory.join("MEMORY.md"), "- [a](a.md) — x").unwrap();
        std::fs::write(memory.join("a.md"), "topic").unwrap();
        let found = memory_files(&proj, &config);
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(tmp.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names[0], "work/AGENTS.md");
        assert_eq!(names[1], "work/shop/CLAUDE.md");
        assert!(
            names[2].ends_with("memory/MEMORY.md") && names[3].ends_with("memory/a.md"),
            "{names:?}"
        );
        assert_eq!(names.len(), 4);
        assert!(sanitize(Path::new("/home/u/my.proj")) == "-home-u-my-proj");
        assert!(is_memory_file(&memory.join("a.md")) && is_memory_file(Path::new("/x/CLAUDE.md")));
        assert!(!is_memory_file(Path::new("/x/src/notes.md")));
    }
}
