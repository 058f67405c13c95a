//! Project identity (`docs/spec/api.md` §2.6) and project root (`docs/spec/pipeline.md` §2).
//!
//! Paths are handled lexically (`\` as `/`, `~`, `.`/`..` folded, no symlinks); the only I/O is
//! looking for `.memd-project` and `.git` while walking up from the cwd. No subprocess.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

pub const UNKNOWN_PROJECT: &str = "unknown-project";
const NAME_MAX_CHARS: usize = 200;
/// Only the start of `.memd-project` and `.git` files is read.
const FIRST_LINE_MAX_BYTES: u64 = 4096;

/// `chain` lists every project whose memories belong to the directory, primary last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectIdentity {
    pub primary: String,
    pub chain: Vec<String>,
    /// Git root, else the directory of the naming `.memd-project`, else the cwd.
    pub root: PathBuf,
}

impl ProjectIdentity {
    fn single(name: String, root: PathBuf) -> Self {
        Self {
            primary: name.clone(),
            chain: vec![name],
            root,
        }
    }
}

/// An absolute, lexically normalised path: `prefix` is `/`, `X:/` or empty (relative).
#[derive(Debug, Clone)]
struct LexicalPath {
    prefix: String,
    parts: Vec<String>,
}

impl LexicalPath {
    fn parse(path: &str) -> Self {
        let path = path.replace('\\', "/");
        let bytes = path.as_bytes();
        let (prefix, rest) = if path.starts_with('/') {
            ("/".to_owned(), path.as_str())
        } else if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            (format!("{}:/", char::from(bytes[0])), &path[2..])
        } else {
            (String::new(), path.as_str())
        };
        let mut parsed = Self { prefix, parts: Vec::new() };
        parsed.push_relative(rest);
        parsed
    }

    fn push_relative(&mut self, relative: &str) {
        for part in relative.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    self.parts.pop();
                }
                part => self.parts.push(part.to_owned()),
            }
        }
    }

    fn is_absolute(&self) -> bool {
        !self.prefix.is_empty()
    }

    fn parent(&self) -> Option<Self> {
        let mut parent = self.clone();
        parent.parts.pop().map(|_| parent)
    }

    fn to_path_buf(&self) -> PathBuf {
        PathBuf::from(format!("{}{}", self.prefix, self.parts.join("/")))
    }

    /// Project name of this directory: its basename, `drive-x` for a drive root.
    fn name(&self) -> String {
        match (self.parts.last(), self.prefix.strip_suffix(":/")) {
            (Some(last), _) => sanitize(last),
            (None, Some(drive)) => format!("drive-{}", drive.to_ascii_lowercase()),
            (None, None) => UNKNOWN_PROJECT.to_owned(),
        }
    }
}

/// Trimmed, control chars removed, at most 200 chars; empty gives `unknown-project`.
fn sanitize(name: &str) -> String {
    let cleaned: String = name.chars().filter(|c| !c.is_control()).collect();
    let cut: String = cleaned.trim().chars().take(NAME_MAX_CHARS).collect();
    let cut = cut.trim_end();
    if cut.is_empty() {
        UNKNOWN_PROJECT.to_owned()
    } else {
        cut.to_owned()
    }
}

/// The start of a file, or `None` when it cannot be read.
fn read_head(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    File::open(path).ok()?.take(FIRST_LINE_MAX_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The first non-blank line of a regular `.memd-project` file in `dir`.
fn memd_project_name(dir: &Path) -> Option<String> {
    let path = dir.join(".memd-project");
    if !path.metadata().is_ok_and(|meta| meta.is_file()) {
        return None;
    }
    let head = read_head(&path)?;
    let line = head.lines().map(str::trim).find(|line| !line.is_empty())?;
    Some(sanitize(line))
}

/// Identity of the git root `root` from its `.git` entry (directory or `gitdir:` file).
fn git_identity(root: &LexicalPath, dot_git: &Path) -> ProjectIdentity {
    let base = root.name();
    let root_path = root.to_path_buf();
    if dot_git.is_dir() {
        return ProjectIdentity::single(base, root_path);
    }
    let gitdir = read_head(dot_git).and_then(|head| {
        head.lines()
            .next()
            .and_then(|line| line.strip_prefix("gitdir:"))
            .map(str::trim)
            .map(str::to_owned)
    });
    let Some(gitdir) = gitdir else {
        return ProjectIdentity::single(base, root_path);
    };
    let mut target = LexicalPath::parse(&gitdir);
    if !target.is_absolute() {
        target = root.clone();
        target.push_relative(&gitdir.replace('\\', "/"));
    }
    let target = target.to_path_buf().to_string_lossy().into_owned();
    let parent = target.find("/.git/worktrees/").map(|at| LexicalPath::parse(&target[..at]).name());
    match parent {
        Some(parent) if parent != UNKNOWN_PROJECT => {
            let composite = sanitize(&format!("{parent}/{base}"));
            ProjectIdentity {
                primary: composite.clone(),
                chain: vec![parent, composite],
                root: root_path,
            }
        }
        // Submodules (`/.git/modules/`) and any other `.git` file: the directory is its own project.
        _ => ProjectIdentity::single(base, root_path),
    }
}

/// Maps a working directory to its project identity and root.
///
/// `env_project` is `MEMD_PROJECT` (client processes only); `home` expands a leading `~`;
/// relative paths resolve against `process_cwd`.
pub fn identify(cwd: &str, env_project: Option<&str>, home: Option<&Path>, process_cwd: &Path) -> ProjectIdentity {
    let env_name = env_project.map(str::trim).filter(|v| !v.is_empty()).map(sanitize);
    if cwd.trim().is_empty() {
        return ProjectIdentity::single(env_name.unwrap_or_else(|| UNKNOWN_PROJECT.to_owned()), PathBuf::new());
    }
    let dir = absolute_dir(cwd, home, process_cwd);
    let mut named: Option<(String, LexicalPath)> = None;
    let mut git: Option<ProjectIdentity> = None;
    let mut current = Some(dir.clone());
    while let Some(candidate) = current {
        let candidate_path = candidate.to_path_buf();
        if named.is_none() {
            named = memd_project_name(&candidate_path).map(|name| (name, candidate.clone()));
        }
        let dot_git = candidate_path.join(".git");
        if dot_git.symlink_metadata().is_ok() {
            git = Some(git_identity(&candidate, &dot_git));
            break;
        }
        current = candidate.parent();
    }
    let identity = match (named, git) {
        // A `.memd-project` at or below the git root names the project; the root stays the git root.
        (Some((name, _)), Some(git)) => ProjectIdentity::single(name, git.root),
        (Some((name, holder)), None) => ProjectIdentity::single(name, holder.to_path_buf()),
        (None, Some(git)) => git,
        (None, None) => ProjectIdentity::single(dir.name(), dir.to_path_buf()),
    };
    match env_name {
        Some(name) => ProjectIdentity::single(name, identity.root),
        None => identity,
    }
}

fn absolute_dir(cwd: &str, home: Option<&Path>, process_cwd: &Path) -> LexicalPath {
    let cwd = cwd.trim().replace('\\', "/");
    let expanded = match (cwd.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}/{rest}", home.to_string_lossy())
        }
        _ => cwd,
    };
    let parsed = LexicalPath::parse(&expanded);
    if parsed.is_absolute() {
        return parsed;
    }
    let mut resolved = LexicalPath::parse(&process_cwd.to_string_lossy());
    resolved.push_relative(&expanded);
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn identify_in(cwd: &Path) -> ProjectIdentity {
        identify(&cwd.to_string_lossy(), None, None, Path::new("/"))
    }

    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|err| panic!("tempdir: {err}"))
    }

    fn make_dir(path: &Path) -> PathBuf {
        fs::create_dir_all(path).unwrap_or_else(|err| panic!("mkdir {path:?}: {err}"));
        path.to_path_buf()
    }

    fn write(path: &Path, text: &str) {
        fs::write(path, text).unwrap_or_else(|err| panic!("write {path:?}: {err}"));
    }

    #[test]
    fn plain_git_repository() {
        let tmp = tempdir();
        let repo = make_dir(&tmp.path().join("acme"));
        make_dir(&repo.join(".git"));
        let deep = make_dir(&repo.join("src/lib"));
        let identity = identify_in(&deep);
        assert_eq!(
            (identity.primary.as_str(), identity.chain.clone()),
            ("acme", vec!["acme".to_owned()])
        );
        assert_eq!(identity.root, repo);
        let dotted = format!("{}/src/./lib/../../src", repo.display());
        assert_eq!(identify(&dotted, None, None, Path::new("/")).root, repo);
    }

    #[test]
    fn worktree_is_composite() {
        let tmp = tempdir();
        let wt = make_dir(&tmp.path().join("feature-wt"));
        write(&wt.join(".git"), "gitdir: /x/acme/.git/worktrees/feature-wt\n");
        let identity = identify_in(&wt);
        assert_eq!(identity.primary, "acme/feature-wt");
        assert_eq!(identity.chain, vec!["acme".to_owned(), "acme/feature-wt".to_owned()]);
        assert_eq!(identity.root, wt);
    }

    #[test]
    fn submodule_is_its_own_project() {
        let tmp = tempdir();
        let parent = make_dir(&tmp.path().join("parent"));
        make_dir(&parent.join(".git/modules/sub"));
        let sub = make_dir(&parent.join("sub"));
        write(&sub.join(".git"), "gitdir: ../.git/modules/sub\n");
        let identity = identify_in(&make_dir(&sub.join("src")));
        assert_eq!((identity.primary.as_str(), identity.chain.len()), ("sub", 1));
        assert_eq!(identity.root, sub);
        // A relative worktree gitdir resolves against the root.
        write(&sub.join(".git"), "gitdir: ../../main/.git/worktrees/sub");
        assert_eq!(identify_in(&sub).chain, vec!["main".to_owned(), "main/sub".to_owned()]);
    }

    #[test]
    fn memd_project_file_above_cwd() {
        let tmp = tempdir();
        let pkg = make_dir(&tmp.path().join("pkg"));
        write(&pkg.join(".memd-project"), "\n  \n  billing-api \nignored\n");
        let identity = identify_in(&make_dir(&pkg.join("a/b")));
        assert_eq!((identity.primary.as_str(), identity.root.clone()), ("billing-api", pkg.clone()));
        // Inside a repository the file names the project, but the root is the git root.
        make_dir(&tmp.path().join(".git"));
        let identity = identify_in(&pkg.join("a"));
        assert_eq!((identity.primary.as_str(), identity.root.as_path()), ("billing-api", tmp.path()));
        // A blank file is ignored.
        write(&pkg.join(".memd-project"), " \n\n");
        assert_eq!(
            identify_in(&pkg).primary,
            tmp.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        );
    }

    #[test]
    fn env_override_and_no_git() {
        let tmp = tempdir();
        let plain = make_dir(&tmp.path().join("notes"));
        let identity = identify(&plain.to_string_lossy(), Some("  forced\u{7} "), None, Path::new("/"));
        assert_eq!(
            (identity.primary.as_str(), identity.chain.len(), identity.root.clone()),
            ("forced", 1, plain.clone())
        );
        let identity = identify(&plain.to_string_lossy(), Some("   "), None, Path::new("/"));
        assert_eq!((identity.primary.as_str(), identity.root), ("notes", plain));
    }

    #[test]
    fn roots_home_relative_and_windows() {
        let root = identify("/", None, None, Path::new("/"));
        assert_eq!((root.primary.as_str(), root.root.as_path()), (UNKNOWN_PROJECT, Path::new("/")));
        assert_eq!(identify("", None, None, Path::new("/")).primary, UNKNOWN_PROJECT);
        assert_eq!(identify(r"C:\", None, None, Path::new("/")).primary, "drive-c");
        let win = identify(r"D:\work\..\Site\", None, None, Path::new("/"));
        assert_eq!((win.primary.as_str(), win.root), ("Site", PathBuf::from("D:/Site")));
        let tmp = tempdir();
        let home_project = make_dir(&tmp.path().join("proj"));
        assert_eq!(identify("~/proj", None, Some(tmp.path()), Path::new("/")).root, home_project);
        assert_eq!(identify("./proj/x/..", None, None, tmp.path()).root, home_project);
        let long = format!("/{}", "n".repeat(300));
        assert_eq!(identify(&long, None, None, Path::new("/")).primary.chars().count(), NAME_MAX_CHARS);
    }
}
