//! Reading a git work tree for code anchors (issue 38): where the work tree of a directory is,
//! which commit HEAD names (read from `.git` directly: no process), and — one `git` process per
//! batch of paths — the blob ids of files at a commit and of the content on disk, hashed as git
//! hashes a blob so the two compare. `git` runs hardened ([`crate::guard::git`]: nothing a
//! repository configures runs), and is given paths relative to the work tree after `--`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::FreshnessError;

/// One work tree: its top directory and its git directory (`.git`, or where a `.git` file points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub root: PathBuf,
    pub git_dir: PathBuf,
}

/// The work tree holding `dir` (walking up), or None outside one.
pub fn discover(dir: &Path) -> Option<Repo> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        let dot = d.join(".git");
        if dot.is_dir() {
            return Some(Repo {
                root: d.to_path_buf(),
                git_dir: dot,
            });
        }
        if dot.is_file() {
            let text = std::fs::read_to_string(&dot).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            let git_dir = d.join(target);
            return Some(Repo {
                root: d.to_path_buf(),
                git_dir,
            });
        }
        cur = d.parent();
    }
    None
}

/// The branch of the work tree holding `dir`; empty outside git or on a detached HEAD (the key
/// work state is kept under).
pub fn branch_of(dir: &Path) -> String {
    discover(dir).and_then(|r| r.branch()).unwrap_or_default()
}

/// A full object id (40 or 64 hex digits).
fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Repo {
    /// Where shared refs live (a linked work tree's `commondir`, else the git directory).
    fn common_dir(&self) -> PathBuf {
        match std::fs::read_to_string(self.git_dir.join("commondir")) {
            Ok(rel) => self.git_dir.join(rel.trim()),
            Err(_) => self.git_dir.clone(),
        }
    }

    /// The commit HEAD names, read from the files (loose ref, then `packed-refs`); None for an
    /// unborn branch or an unreadable directory.
    pub fn head(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let head = head.trim();
        let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
            return is_oid(head).then(|| head.to_string());
        };
        for dir in [self.git_dir.clone(), self.common_dir()] {
            if let Ok(v) = std::fs::read_to_string(dir.join(name)) {
                let v = v.trim();
                if is_oid(v) {
                    return Some(v.to_string());
                }
            }
        }
        let packed = std::fs::read_to_string(self.common_dir().join("packed-refs")).ok()?;
        packed.lines().find_map(|l| {
            let (oid, r) = l.split_once(' ')?;
            (r.trim() == name && is_oid(oid)).then(|| oid.to_string())
        })
    }

    /// The branch HEAD is on (`main` for `ref: refs/heads/main`); None on a detached HEAD.
    pub fn branch(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let name = head.trim().strip_prefix("ref:")?.trim();
        Some(name.strip_prefix("refs/heads/").unwrap_or(name).to_string()).filter(|b| !b.is_empty())
    }

    /// Which of `paths` (relative to the root) git ignores. One process.
    pub fn ignored(&self, paths: &[String]) -> Result<std::collections::HashSet<String>, FreshnessError> {
        use std::io::Write;
        if paths.is_empty() {
            return Ok(Default::default());
        }
        let mut c = self.git();
        c.args(["check-ignore", "--stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().map_err(|e| FreshnessError::Git(format!("git: {e}")))?;
        if let Some(mut input) = child.stdin.take() {
            let _ = input.write_all((paths.join("\n") + "\n").as_bytes());
        }
        let out = child.wait_with_output().map_err(|e| FreshnessError::Git(format!("git: {e}")))?;
        // 0: some are ignored, 1: none is; anything else is an error.
        if !matches!(out.status.code(), Some(0 | 1)) {
            let msg = String::from_utf8_lossy(&out.stderr);
            return Err(FreshnessError::Git(
                msg.lines().next().unwrap_or("git check-ignore failed").to_string(),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end_matches('/').to_string())
            .collect())
    }

    /// A hardened `git -C <root>` ([`crate::guard::git::command`]).
    fn git(&self) -> Command {
        crate::guard::git::command(&self.root)
    }

    fn run(&self, mut c: Command) -> Result<Vec<u8>, FreshnessError> {
        let out = c.output().map_err(|e| FreshnessError::Git(format!("git: {e}")))?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr);
            return Err(FreshnessError::Git(msg.lines().next().unwrap_or("git failed").to_string()));
        }
        Ok(out.stdout)
    }

    /// The blob id of each of `paths` (relative to the root) at `commit`; a path absent there is
    /// absent from the map. One process.
    pub fn blobs_at(&self, commit: &str, paths: &[String]) -> Result<HashMap<String, String>, FreshnessError> {
        let mut found = HashMap::new();
        for chunk in paths.chunks(500) {
            let mut c = self.git();
            c.args(["ls-tree", "-z", "--full-tree", commit, "--"]).args(chunk);
            let out = self.run(c)?;
            for entry in out.split(|b| *b == 0).filter(|e| !e.is_empty()) {
                let entry = String::from_utf8_lossy(entry);
                let Some((meta, path)) = entry.split_once('\t') else { continue };
                let mut parts = meta.split(' ');
                if let (Some(_mode), Some("blob"), Some(oid)) = (parts.next(), parts.next(), parts.next()) {
                    found.insert(path.to_string(), oid.to_string());
                }
            }
        }
        Ok(found)
    }

    /// The blob id of the content on disk of each of `paths` that is a regular file. One process.
    pub fn hash_files(&self, paths: &[String]) -> Result<HashMap<String, String>, FreshnessError> {
        let files: Vec<&String> = paths.iter().filter(|p| self.root.join(p).is_file()).collect();
        let mut found = HashMap::new();
        for chunk in files.chunks(500) {
            let mut c = self.git();
            c.args(["hash-object", "--no-filters", "--"]).args(chunk.iter().map(|p| p.as_str()));
            let out = String::from_utf8_lossy(&self.run(c)?).into_owned();
            for (p, oid) in chunk.iter().zip(out.lines()) {
                found.insert((*p).clone(), oid.trim().to_string());
            }
        }
        Ok(found)
    }

    /// The newest commit after `since` (exclusive) up to HEAD that touched `path`: its id and
    /// commit time (epoch ms); None when none did (or `since` is unknown here).
    pub fn last_change(&self, since: Option<&str>, path: &str) -> Result<Option<(String, i64)>, FreshnessError> {
        let mut c = self.git();
        c.args([
            "log",
            "-1",
            "--no-show-signature",
            "--no-textconv",
            "--no-ext-diff",
            "--format=%H %ct",
        ]);
        match since {
            Some(s) if is_oid(s) => c.arg(format!("{s}..HEAD")),
            _ => c.arg("HEAD"),
        };
        c.args(["--", path]);
        let out = String::from_utf8_lossy(&self.run(c)?).into_owned();
        Ok(out.split_once(' ').and_then(|(h, t)| {
            let secs: i64 = t.trim().parse().ok()?;
            is_oid(h).then(|| (h.to_string(), secs * 1000))
        }))
    }
}

/// `path` (absolute, or relative to `cwd`) relative to the work tree's root, `/`-separated;
/// None when it lies outside the tree or inside `.git`.
pub fn relative_to(root: &Path, cwd: &Path, path: &str) -> Option<String> {
    let p = Path::new(path);
    let abs = if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
    let mut parts: Vec<String> = Vec::new();
    for c in abs.strip_prefix(root).ok()?.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty() && parts[0] != ".git").then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_root_or_refused() {
        let root = Path::new("/w/repo");
        let cwd = Path::new("/w/repo/sub");
        assert_eq!(relative_to(root, cwd, "a.rs").as_deref(), Some("sub/a.rs"));
        assert_eq!(relative_to(root, cwd, "../src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(relative_to(root, cwd, "/w/repo/src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(relative_to(root, cwd, "/elsewhere/a.rs"), None);
        assert_eq!(relative_to(root, cwd, "../../x.rs"), None);
        assert_eq!(relative_to(root, cwd, "/w/repo/.git/config"), None);
    }

    #[test]
    fn object_ids_are_checked() {
        assert!(is_oid(&"a".repeat(40)));
        assert!(!is_oid("abc"));
        assert!(!is_oid(&"g".repeat(40)));
    }
}
