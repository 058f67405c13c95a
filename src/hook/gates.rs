//! The gates of docs/spec/hooks.md §2.3, checked before any network traffic: `MEMD_INTERNAL=1`, a cwd
//! inside `<data>`, an excluded project. The first that applies makes the run a no-op.

use std::path::Path;

use super::env::HookEnv;
use crate::pipeline::glob::ExcludedProjects;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    MemdInternal,
    DataDir,
    Excluded,
}

/// The gate that stops this run, if any. `cwd` is the event's cwd (already defaulted).
pub fn closed_gate(hook: &HookEnv<'_>, cwd: &str) -> Option<Gate> {
    if hook.env.get("MEMD_INTERNAL").is_some_and(|v| v.trim() == "1") {
        return Some(Gate::MemdInternal);
    }
    if Path::new(cwd).starts_with(&hook.dir.root) {
        return Some(Gate::DataDir);
    }
    let setting = hook.text(&crate::config::keys::EXCLUDED_PROJECTS);
    if setting.trim().is_empty() {
        return None;
    }
    let home = hook.home();
    let excluded = ExcludedProjects::new(&setting, home.as_deref().and_then(Path::to_str));
    excluded.matches(cwd).then_some(Gate::Excluded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn gates_in_order() {
        let data = tempfile::tempdir().unwrap();
        let mut env = HashMap::from([
            ("MEMD_DATA_DIR".to_string(), data.path().display().to_string()),
            ("MEMD_EXCLUDED_PROJECTS".to_string(), "/tmp/*, secret".to_string()),
        ]);
        let started = std::time::Instant::now();
        let hook = HookEnv::new(&env, started);
        assert_eq!(closed_gate(&hook, "/home/dev/shop"), None);
        assert_eq!(closed_gate(&hook, "/tmp/x"), Some(Gate::Excluded));
        assert_eq!(closed_gate(&hook, "/tmp/a/b"), None);
        assert_eq!(closed_gate(&hook, "/w/secret"), Some(Gate::Excluded));
        let inside = data.path().join("logs").display().to_string();
        assert_eq!(closed_gate(&hook, &inside), Some(Gate::DataDir));
        env.insert("MEMD_INTERNAL".into(), "1".into());
        let hook = HookEnv::new(&env, started);
        assert_eq!(closed_gate(&hook, "/home/dev/shop"), Some(Gate::MemdInternal));
    }
}
