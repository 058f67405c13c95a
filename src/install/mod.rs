//! `memd install` (docs/spec/hooks.md §5): memd's hooks into Claude Code's settings, its MCP server
//! into `.claude.json`, idempotently and reversibly; or a plugin folder with `--plugin`; Codex CLI
//! and Gemini CLI with `--host` ([`hosts`]).
//!
//! Files are edited as order-preserving documents ([`json_doc`]), backed up before a change,
//! written through a temp file + rename that keeps the file's mode and owner (`.claude.json`
//! holds OAuth state: 0600 stays 0600; a new one is created 0600), re-read when Claude Code
//! changed them meanwhile.
//! `<data>/install-state.json` remembers what memd created, so `--uninstall` removes only that.

pub mod edit;
pub mod hooks_config;
pub mod hosts;
pub mod json_doc;
pub mod plugin;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::config::data_dir_from_env;
use hooks_config::HookForm;
use json_doc::Doc;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a JSON object ({detail}); nothing was changed")]
    NotAnObject { path: PathBuf, detail: String },
    #[error("{0} kept changing while memd wrote it; try again")]
    Busy(PathBuf),
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |source| InstallError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    pub settings: Option<PathBuf>,
    pub no_mcp: bool,
    pub dry_run: bool,
    pub uninstall: bool,
    /// Shell-form hook commands (`exec memd hook …`) for a Claude Code without exec-form `args`.
    pub shell_form: bool,
    /// Leave `permissions.allow` alone (memd's MCP tools then ask before they run).
    pub no_permissions: bool,
}

/// The mode a file written by memd gets when it did not exist: `.claude.json` holds credentials.
pub(crate) fn new_file_mode(path: &Path) -> u32 {
    if path.file_name().is_some_and(|n| n == ".claude.json") {
        0o600
    } else {
        0o644
    }
}

/// Writes `text` to `path` with `like`'s mode and owner (when given), else `mode`.
pub(crate) fn write_like(path: &Path, text: &str, like: Option<&std::fs::Metadata>, mode: u32) -> Result<(), InstallError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let mode = like.map_or(mode, |m| m.mode() & 0o7777);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(io(path))?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io(path))?;
    // The umask may have narrowed the mode at creation; and an existing temp file keeps its own.
    file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(io(path))?;
    if let Some(m) = like {
        // Only root can give a file away; for anyone else this is a no-op on their own file.
        let _ = std::os::unix::fs::fchown(&file, Some(m.uid()), Some(m.gid()));
    }
    file.sync_all().map_err(io(path))
}

/// Where Claude Code keeps user settings and user-scope MCP servers.
pub struct ClaudePaths {
    pub settings: PathBuf,
    pub mcp: PathBuf,
    pub state: PathBuf,
}

impl ClaudePaths {
    pub fn resolve(env: &HashMap<String, String>, settings: Option<PathBuf>) -> Self {
        let home = env.get("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
        let config = env.get("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()).map(PathBuf::from);
        let (default_settings, mcp) = match config {
            Some(dir) => (dir.join("settings.json"), dir.join(".claude.json")),
            None => (home.join(".claude").join("settings.json"), home.join(".claude.json")),
        };
        Self {
            settings: settings.unwrap_or(default_settings),
            mcp,
            state: data_dir_from_env(env).join("install-state.json"),
        }
    }
}

/// One pass of reading, editing and writing a JSON file. `edit` returns the change lines.
pub(crate) fn edit_file(
    path: &Path,
    dry_run: bool,
    backup: bool,
    mut edit: impl FnMut(&mut Doc) -> Vec<String>,
) -> Result<(Vec<String>, Option<PathBuf>), InstallError> {
    for _ in 0..3 {
        let (text, mtime) = match std::fs::read_to_string(path) {
            Ok(t) => (Some(t), std::fs::metadata(path).and_then(|m| m.modified()).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => return Err(io(path)(e)),
        };
        let mut doc = match text.as_deref() {
            None => Doc::Obj(Vec::new()),
            Some(t) if t.trim().is_empty() => Doc::Obj(Vec::new()),
            Some(t) => Doc::parse(t).map_err(|e| InstallError::NotAnObject {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?,
        };
        if !matches!(doc, Doc::Obj(_)) {
            return Err(InstallError::NotAnObject {
                path: path.to_path_buf(),
                detail: "top level is not an object".into(),
            });
        }
        let changes = edit(&mut doc);
        let mut new_text = doc.pretty();
        if text.as_deref().is_none_or(|t| t.ends_with('\n')) {
            new_text.push('\n');
        }
        if dry_run || text.as_deref() == Some(new_text.as_str()) || changes.is_empty() {
            return Ok((changes, None));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let original = std::fs::metadata(path).ok();
        // An uninstall puts back what was there and leaves no backup of its own (issue 37).
        let backup = match &text {
            Some(t) if backup => Some(write_backup(path, t, original.as_ref())?),
            _ => None,
        };
        let tmp = path.with_extension("memd-tmp");
        write_like(&tmp, &new_text, original.as_ref(), new_file_mode(path))?;
        let now_mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if now_mtime != mtime {
            let _ = std::fs::remove_file(&tmp);
            continue;
        }
        std::fs::rename(&tmp, path).map_err(io(path))?;
        return Ok((changes, backup));
    }
    Err(InstallError::Busy(path.to_path_buf()))
}

fn stamp() -> String {
    let ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let iso = crate::clock::iso(ms);
    // 2026-10-02T09:14:03.123Z → 20261002T091403Z
    format!("{}Z", iso[..19].replace(['-', ':'], ""))
}

pub(crate) fn write_backup(path: &Path, text: &str, like: Option<&std::fs::Metadata>) -> Result<PathBuf, InstallError> {
    let base = format!("{}.memd-backup-{}", path.display(), stamp());
    let mut candidate = PathBuf::from(&base);
    let mut n = 1;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    write_like(&candidate, text, like, new_file_mode(path))?;
    Ok(candidate)
}

fn read_state(path: &Path) -> Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({"files": {}, "backups": []}))
}

fn save_state(path: &Path, state: &Value) -> Result<(), InstallError> {
    if let Some(parent) = path.parent() {
        // The data dir: created 0700 like `memd serve` creates it.
        crate::data_dir::DataDir::new(parent.to_path_buf())
            .ensure_root()
            .map_err(|e| InstallError::Io {
                path: parent.to_path_buf(),
                source: std::io::Error::other(e),
            })?;
    }
    crate::data_dir::write_private(path, serde_json::to_string_pretty(state).unwrap_or_default().as_bytes()).map_err(|e| InstallError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })
}

fn file_state<'a>(state: &'a mut Value, path: &Path) -> &'a mut Value {
    let key = path.display().to_string();
    let files = &mut state["files"];
    if !files.is_object() {
        *files = json!({});
    }
    if files.get(&key).is_none() {
        files[&key] = json!({});
    }
    &mut files[&key]
}

/// Installs or uninstalls; `memd` is the binary the MCP entry runs, `hook` the one hooks run
/// (`memd-hook` beside it, or `memd` itself).
pub fn run(opts: &InstallOptions, env: &HashMap<String, String>, memd: &str, hook: &str) -> Result<Vec<String>, InstallError> {
    let form = if opts.shell_form { HookForm::Shell } else { HookForm::Exec };
    let paths = ClaudePaths::resolve(env, opts.settings.clone());
    let mut state = read_state(&paths.state);
    let mut lines = Vec::new();
    let mut backups = Vec::new();
    let mut targets = vec![(paths.settings.clone(), true)];
    if !opts.no_mcp {
        targets.push((paths.mcp.clone(), false));
    }
    for (path, is_settings) in targets {
        let prior = file_state(&mut state, &path).clone();
        let flag = |k: &str| prior.get(k).and_then(Value::as_bool).unwrap_or(false);
        let mut created = None;
        let mut permissions: Option<Vec<String>> = None;
        let added_before: Vec<String> = prior
            .get("permissions_added")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default();
        let existed = path.exists();
        let (changes, backup) = edit_file(&path, opts.dry_run, !opts.uninstall, |doc| match (opts.uninstall, is_settings) {
            (false, true) => {
                let added = edit::add_hooks(doc, hook, form);
                created = Some(added.created_hooks);
                let mut changes = added.changes;
                if !opts.no_permissions {
                    let (lines, new) = edit::add_permissions(doc);
                    changes.extend(lines);
                    permissions = Some(new);
                }
                changes
            }
            (false, false) => {
                let (changes, made) = edit::add_mcp(doc, memd);
                created = Some(made);
                changes
            }
            (true, true) => {
                let mut changes = edit::remove_hooks(doc, flag("created_hooks"));
                changes.extend(edit::remove_permissions(doc, &added_before));
                changes
            }
            (true, false) => edit::remove_mcp(doc, flag("created_mcp_servers")),
        })?;
        let key = if is_settings { "created_hooks" } else { "created_mcp_servers" };
        if !opts.dry_run && !changes.is_empty() {
            let entry = file_state(&mut state, &path);
            if opts.uninstall {
                entry[key] = json!(false);
                if is_settings {
                    entry["permissions_added"] = json!([]);
                }
                // A file memd created and emptied again goes away.
                let empty = std::fs::read_to_string(&path).is_ok_and(|t| t.trim() == "{}");
                if flag("created_file") && empty {
                    std::fs::remove_file(&path).map_err(io(&path))?;
                }
                entry["created_file"] = json!(false);
            } else {
                if created == Some(true) || flag(key) {
                    entry[key] = json!(true);
                }
                if let Some(new) = &permissions {
                    let mut all = added_before.clone();
                    all.extend(new.iter().cloned());
                    entry["permissions_added"] = json!(all);
                }
                if !existed || flag("created_file") {
                    entry["created_file"] = json!(true);
                }
            }
        }
        let verb = if opts.dry_run { "would change" } else { "changed" };
        lines.extend(changes.into_iter().map(|c| format!("{verb} {}: {c}", path.display())));
        backups.extend(backup);
    }
    let changed = lines.iter().any(|l| !l.contains(": warning:"));
    if !opts.dry_run && changed {
        if let Some(list) = state["backups"].as_array_mut() {
            list.extend(backups.iter().map(|b| json!(b.display().to_string())));
        } else {
            state["backups"] = json!(backups.iter().map(|b| b.display().to_string()).collect::<Vec<_>>());
        }
        save_state(&paths.state, &state)?;
    }
    if opts.uninstall && lines.is_empty() {
        lines.push("nothing to remove".into());
    }
    lines.extend(warnings(&paths.settings));
    Ok(lines)
}

/// Warnings that do not stop the install: hooks disabled, claude-mem also capturing.
fn warnings(settings: &Path) -> Vec<String> {
    let Some(doc) = std::fs::read_to_string(settings).ok().and_then(|t| Doc::parse(&t).ok()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if doc.get("disableAllHooks") == Some(&Doc::Bool(true)) {
        out.push("warning: disableAllHooks is true in the settings; no hook will run".into());
    }
    let claude_mem_plugin =
        matches!(doc.get("enabledPlugins"), Some(Doc::Obj(p)) if p.iter().any(|(k, v)| k.contains("claude-mem") && *v == Doc::Bool(true)));
    let claude_mem_hook = doc.get("hooks").is_some_and(|h| h.pretty().contains("claude-mem"));
    if claude_mem_plugin || claude_mem_hook {
        out.push("warning: claude-mem is also enabled; both would capture every session".into());
    }
    out
}
