//! The transcript watcher's settings (`MEMD_WATCH*`), read the same by `memd serve` (its watcher
//! actor) and `memd watch` (the foreground command's defaults).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::RawSettings;
use super::keys::{WATCH, WATCH_IDLE_MS, WATCH_INTERVAL_MS, WATCH_ROOTS};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchSettings {
    /// The worker runs the watcher actor (`MEMD_WATCH`, off by default).
    pub enabled: bool,
    /// Directories (searched recursively) or files; never empty once resolved with the environment.
    pub roots: Vec<PathBuf>,
    pub interval_ms: u64,
    pub idle_ms: u64,
}

impl WatchSettings {
    /// The keys' values; `roots` holds what `MEMD_WATCH_ROOTS` lists (`~/` expanded), else
    /// nothing until [`WatchSettings::with_default_roots`].
    pub fn resolve(raw: &RawSettings, home: Option<&Path>, w: &mut Vec<String>) -> Self {
        Self {
            enabled: raw.flag(&WATCH, w),
            roots: raw.list(&WATCH_ROOTS).iter().map(|r| super::expand_home(r, home)).collect(),
            interval_ms: raw.int(&WATCH_INTERVAL_MS, w),
            idle_ms: raw.int(&WATCH_IDLE_MS, w),
        }
    }

    /// Empty roots become the hosts' own session directories: Claude Code's projects
    /// (`$CLAUDE_CONFIG_DIR/projects`, default `~/.claude/projects`) and Codex's rollouts
    /// (`$CODEX_HOME/sessions`, default `~/.codex/sessions`).
    pub fn with_default_roots(mut self, env: &HashMap<String, String>) -> Self {
        if self.roots.is_empty() {
            let home = env.get("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
            let dir = |key: &str, fallback: &str| {
                env.get(key)
                    .filter(|d| !d.trim().is_empty())
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(fallback))
            };
            self.roots = vec![
                dir("CLAUDE_CONFIG_DIR", ".claude").join("projects"),
                dir("CODEX_HOME", ".codex").join("sessions"),
            ];
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> WatchSettings {
        let env: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let dir = tempfile::tempdir().unwrap();
        let (raw, _) = RawSettings::load(dir.path(), &env);
        let mut w = Vec::new();
        WatchSettings::resolve(&raw, Some(Path::new("/home/dev")), &mut w).with_default_roots(&env)
    }

    #[test]
    fn off_by_default_with_the_hosts_directories() {
        let s = read(&[("HOME", "/home/dev")]);
        assert!(!s.enabled);
        assert_eq!(
            s.roots,
            [
                PathBuf::from("/home/dev/.claude/projects"),
                PathBuf::from("/home/dev/.codex/sessions")
            ]
        );
        assert_eq!((s.interval_ms, s.idle_ms), (2000, 600_000));
    }

    #[test]
    fn host_directories_and_listed_roots() {
        let s = read(&[
            ("HOME", "/home/dev"),
            ("CLAUDE_CONFIG_DIR", "/cfg/claude"),
            ("CODEX_HOME", "/cfg/codex"),
        ]);
        assert_eq!(
            s.roots,
            [PathBuf::from("/cfg/claude/projects"), PathBuf::from("/cfg/codex/sessions")]
        );
        let s = read(&[("MEMD_WATCH", "on"), ("MEMD_WATCH_ROOTS", "~/logs, /srv/t")]);
        assert!(s.enabled);
        assert_eq!(s.roots, [PathBuf::from("/home/dev/logs"), PathBuf::from("/srv/t")]);
    }
}
