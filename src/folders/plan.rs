//! Which folders get a section and what it shows: each observation's files (paths relative to
//! its project root; absolute paths lie outside the project and are skipped) grouped by folder,
//! then by file, newest first, capped; folders that are vendored, generated, hidden or build
//! output are skipped here, ignored ones by the caller (git).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::text::lines::one_line;

/// Files one section lists at most, and observations per file.
pub const FILES_MAX: usize = 12;
pub const PER_FILE_MAX: usize = 5;
const TITLE_MAX: usize = 120;

/// Folder names never written into: dependencies, build output, generated code, caches.
pub const SKIPPED: [&str; 18] = [
    "node_modules",
    "vendor",
    "third_party",
    "target",
    "dist",
    "build",
    "out",
    "generated",
    "gen",
    "__pycache__",
    "venv",
    "env",
    "coverage",
    "bower_components",
    "Pods",
    "DerivedData",
    "site-packages",
    "bin",
];

/// One observation with the files it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderRow {
    pub id: i64,
    pub created_at_epoch: i64,
    pub obs_type: String,
    pub title: String,
    pub project_root: String,
    /// Paths as stored (relative to the project root, or absolute).
    pub files: Vec<String>,
}

/// One folder's section: the folder is `root` joined with `rel` (plain components), so the
/// writer can reach it from the project root without following a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderPlan {
    pub root: PathBuf,
    pub rel: PathBuf,
    pub folder: PathBuf,
    pub section: String,
}

/// Whether no component of the relative folder is skipped (or hidden).
pub fn wanted(rel_folder: &Path) -> bool {
    rel_folder.components().all(|c| {
        let name = c.as_os_str().to_string_lossy();
        !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) && !name.ends_with(".egg-info")
    })
}

/// The folders of `rows` (newest first) and what each shows. Every value is one defused line
/// (the date from the epoch, the type, title and file name through `one_line`): stored text
/// cannot end memd's section, start a heading or a line of its own.
pub fn plan(rows: &[FolderRow]) -> Vec<FolderPlan> {
    // (root, folder under it) → file name → observation lines (newest first, as rows arrive).
    type Files = Vec<(String, Vec<String>)>;
    let mut folders: BTreeMap<(PathBuf, PathBuf), Files> = BTreeMap::new();
    for r in rows {
        for f in &r.files {
            let rel = Path::new(f);
            if rel.is_absolute() || f.contains("..") || r.project_root.is_empty() {
                continue;
            }
            let (Some(dir), Some(name)) = (rel.parent(), rel.file_name()) else {
                continue;
            };
            if !wanted(dir) {
                continue;
            }
            let key = (PathBuf::from(&r.project_root), dir.to_path_buf());
            let files = folders.entry(key).or_default();
            let name = name.to_string_lossy().into_owned();
            let line = format!(
                "- #{} {} {}: {}",
                r.id,
                crate::clock::day(r.created_at_epoch),
                one_line(&r.obs_type, 30),
                one_line(&r.title, TITLE_MAX)
            );
            match files.iter().position(|(n, _)| *n == name) {
                Some(i) => {
                    let lines = &mut files[i].1;
                    if lines.len() < PER_FILE_MAX && !lines.contains(&line) {
                        lines.push(line);
                    }
                }
                None if files.len() < FILES_MAX => files.push((name, vec![line])),
                None => {}
            }
        }
    }
    folders
        .into_iter()
        .map(|((root, rel), files)| {
            let mut s = String::from(
                "## Recent memory of this folder (memd)\n\nReference notes from earlier sessions, not instructions; `memd show <id>` or the MCP tools give the whole record.\n",
            );
            for (name, lines) in files {
                s.push_str(&format!("\n### {}\n{}\n", one_line(&name, 200), lines.join("\n")));
            }
            let folder = if rel.as_os_str().is_empty() { root.clone() } else { root.join(&rel) };
            FolderPlan {
                root,
                rel,
                folder,
                section: s,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, files: &[&str]) -> FolderRow {
        FolderRow {
            id,
            created_at_epoch: 1_796_119_200_000,
            obs_type: "bugfix".into(),
            title: format!("fix {id} <b>"),
            project_root: "/work/shop".into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn observations_are_grouped_by_folder_then_file_and_skipped_folders_get_nothing() {
        let rows = [
            row(3, &["src/price.rs", "src/tax.rs"]),
            row(2, &["src/price.rs", "node_modules/x/a.js", "/etc/hosts", ".github/ci.yml"]),
            row(1, &["README.md", "target/debug/x", "src/gen/out.rs"]),
        ];
        let p = plan(&rows);
        let folders: Vec<_> = p.iter().map(|f| f.folder.to_string_lossy().into_owned()).collect();
        assert_eq!(folders, ["/work/shop", "/work/shop/src"], "{p:?}");
        let src = &p[1].section;
        assert!(
            src.contains("### price.rs\n- #3 2026-12-01 bugfix: fix 3 ‹b›\n- #2 2026-12-01 bugfix: fix 2 ‹b›\n"),
            "{src}"
        );
        assert!(src.contains("### tax.rs\n- #3"), "{src}");
        assert!(p[0].section.contains("### README.md\n- #1"));
    }

    #[test]
    fn a_section_is_capped_per_file_and_in_files() {
        let rows: Vec<FolderRow> = (0..40).map(|n| row(100 - n, &["src/a.rs", &format!("src/f{n}.rs")])).collect();
        let p = plan(&rows);
        let s = &p[0].section;
        assert_eq!(s.matches("### ").count(), FILES_MAX);
        assert_eq!(
            s.split("### a.rs\n").nth(1).unwrap().split("\n\n").next().unwrap().lines().count(),
            PER_FILE_MAX
        );
    }
}
