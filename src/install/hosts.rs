//! `memd install --host codex|gemini` (docs/spec/hosts.md §3): memd's hooks and MCP server the way
//! each host reads them.
//!
//! - Codex CLI: hooks in `$CODEX_HOME/hooks.json` (default `~/.codex`), the same
//!   event → matcher group → handlers shape as Claude Code; the MCP server as a
//!   `[mcp_servers.memd]` table in `config.toml`, written between two marker comments so
//!   `--uninstall` removes exactly that block.
//! - Gemini CLI: hooks and `mcpServers.memd` in `~/.gemini/settings.json`.
//!
//! Files keep their mode and owner and are backed up before a change (as for Claude Code). An entry
//! is memd's when its command runs `hook <host>` of a memd binary; nothing else is touched.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::hooks_config::{HOOK_BINARY, quote_program};
use super::json_doc::Doc;
use super::{InstallError, edit_file, io, new_file_mode, write_backup, write_like};
use crate::hook::hosts::Host;

pub const TOML_BEGIN: &str = "# memd: begin (written by `memd install --host codex`; `--uninstall` removes it)";
pub const TOML_END: &str = "# memd: end";

/// The files a host's install edits.
pub struct HostPaths {
    pub hooks: PathBuf,
    /// `config.toml` (Codex) or the same settings file as the hooks (Gemini).
    pub mcp: PathBuf,
}

impl HostPaths {
    pub fn resolve(host: Host, env: &HashMap<String, String>) -> Self {
        let home = env.get("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
        match host {
            Host::Codex => {
                let dir = env
                    .get("CODEX_HOME")
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(".codex"));
                Self {
                    hooks: dir.join("hooks.json"),
                    mcp: dir.join("config.toml"),
                }
            }
            _ => {
                let dir = env
                    .get("GEMINI_CLI_HOME")
                    .filter(|d| !d.is_empty())
                    .map(|d| PathBuf::from(d).join(".gemini"))
                    .unwrap_or_else(|| home.join(".gemini"));
                Self {
                    hooks: dir.join("settings.json"),
                    mcp: dir.join("settings.json"),
                }
            }
        }
    }
}

/// The command a host runs for `event`.
fn command(host: Host, program: &str, event: &str) -> String {
    let lean = program.rsplit('/').next() == Some(HOOK_BINARY);
    let hook = if lean { "" } else { " hook" };
    format!("{}{hook} {} {event}", quote_program(program), host.name())
}

fn is_ours(host: Host, entry: &Doc) -> bool {
    entry
        .get("command")
        .and_then(Doc::as_str)
        .is_some_and(|c| (c.contains("memd") || c.contains(HOOK_BINARY)) && c.contains(&format!(" {} ", host.name())))
}

/// Timeouts: seconds for Codex, milliseconds for Gemini.
fn timeout(host: Host, event: &str) -> Doc {
    let seconds = if matches!(event, "SessionStart" | "UserPromptSubmit" | "BeforeAgent") {
        10
    } else {
        30
    };
    Doc::num(if host == Host::Gemini { seconds * 1000 } else { seconds })
}

/// Adds memd's handler to each of the host's events (already there: left as it is).
pub fn add_hooks(doc: &mut Doc, host: Host, program: &str) -> Vec<String> {
    let mut changes = Vec::new();
    if doc.get("hooks").is_none_or(|h| !matches!(h, Doc::Obj(_))) {
        doc.set("hooks", Doc::Obj(Vec::new()));
    }
    let Some(hooks) = doc.get_mut("hooks") else { return changes };
    for (event, _) in host.events() {
        if hooks.get(event).is_none_or(|g| !matches!(g, Doc::Arr(_))) {
            hooks.set(event, Doc::Arr(Vec::new()));
        }
        let Some(Doc::Arr(groups)) = hooks.get_mut(event) else { continue };
        let present = groups
            .iter()
            .any(|g| matches!(g.get("hooks"), Some(Doc::Arr(hs)) if hs.iter().any(|h| is_ours(host, h))));
        if present {
            continue;
        }
        let mut handler = vec![
            ("type".to_string(), Doc::str("command")),
            ("command".to_string(), Doc::Str(command(host, program, event))),
            ("timeout".to_string(), timeout(host, event)),
        ];
        if host == Host::Gemini {
            handler.insert(0, ("name".to_string(), Doc::str("memd")));
        }
        let matcher = if host == Host::Gemini { "*" } else { "" };
        let mut group = vec![("hooks".to_string(), Doc::Arr(vec![Doc::Obj(handler)]))];
        if !matcher.is_empty() {
            group.insert(0, ("matcher".to_string(), Doc::str(matcher)));
        }
        groups.push(Doc::Obj(group));
        changes.push(format!("added hook {event}"));
    }
    changes
}

/// Removes memd's handlers (and the groups and events that held only them).
pub fn remove_hooks(doc: &mut Doc, host: Host) -> Vec<String> {
    let mut changes = Vec::new();
    let Some(Doc::Obj(events)) = doc.get_mut("hooks") else {
        return changes;
    };
    for (event, groups) in events.iter_mut() {
        let Doc::Arr(groups) = groups else { continue };
        for g in groups.iter_mut() {
            if let Some(Doc::Arr(hs)) = g.get_mut("hooks") {
                let n = hs.len();
                hs.retain(|h| !is_ours(host, h));
                if hs.len() < n {
                    changes.push(format!("removed hook {event}"));
                }
            }
        }
        groups.retain(|g| !matches!(g.get("hooks"), Some(Doc::Arr(hs)) if hs.is_empty()));
    }
    events.retain(|(_, g)| !matches!(g, Doc::Arr(a) if a.is_empty()));
    if events.is_empty() {
        doc.remove("hooks");
    }
    changes
}

/// Gemini's `mcpServers.memd` (added when absent; a foreign `memd` entry is left alone).
pub fn add_gemini_mcp(doc: &mut Doc, memd: &str) -> Vec<String> {
    if doc.get("mcpServers").is_none_or(|m| !matches!(m, Doc::Obj(_))) {
        doc.set("mcpServers", Doc::Obj(Vec::new()));
    }
    let Some(servers) = doc.get_mut("mcpServers") else {
        return Vec::new();
    };
    if servers.get("memd").is_some() {
        return Vec::new();
    }
    let args = Doc::Arr(["mcp", "--platform", "gemini"].iter().map(|a| Doc::str(a)).collect());
    servers.set("memd", Doc::Obj(vec![("command".into(), Doc::str(memd)), ("args".into(), args)]));
    vec!["added MCP server memd".into()]
}

pub fn remove_gemini_mcp(doc: &mut Doc) -> Vec<String> {
    let Some(servers) = doc.get_mut("mcpServers") else {
        return Vec::new();
    };
    let ours = servers
        .get("memd")
        .is_some_and(|m| m.get("args").is_some_and(|a| a.pretty().contains("gemini")));
    if !ours {
        return Vec::new();
    }
    servers.remove("memd");
    if matches!(servers, Doc::Obj(f) if f.is_empty()) {
        doc.remove("mcpServers");
    }
    vec!["removed MCP server memd".into()]
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// `config.toml` with memd's MCP block added (unchanged when a `[mcp_servers.memd]` exists).
pub fn add_codex_mcp(text: &str, memd: &str) -> (String, Vec<String>) {
    if text.lines().any(|l| l.trim() == "[mcp_servers.memd]") {
        return (text.to_string(), Vec::new());
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!(
        "{TOML_BEGIN}\n[mcp_servers.memd]\ncommand = {}\nargs = [\"mcp\", \"--platform\", \"codex\"]\n{TOML_END}\n",
        toml_string(memd)
    ));
    (out, vec!["added [mcp_servers.memd]".into()])
}

/// `config.toml` without memd's marked block (and the blank line written before it).
pub fn remove_codex_mcp(text: &str) -> (String, Vec<String>) {
    let (Some(a), Some(b)) = (text.find(TOML_BEGIN), text.find(TOML_END)) else {
        return (text.to_string(), Vec::new());
    };
    if b < a {
        return (text.to_string(), Vec::new());
    }
    let end = b + TOML_END.len() + usize::from(text[b + TOML_END.len()..].starts_with('\n'));
    let head = text[..a]
        .strip_suffix("\n\n")
        .map(|h| format!("{h}\n"))
        .unwrap_or_else(|| text[..a].to_string());
    (format!("{head}{}", &text[end..]), vec!["removed [mcp_servers.memd]".into()])
}

/// Reads, edits and writes a text file (mode and owner kept, backed up first).
fn edit_text(path: &Path, dry_run: bool, edit: impl FnOnce(&str) -> (String, Vec<String>)) -> Result<Vec<String>, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(path)(e)),
    };
    let (new, changes) = edit(text.as_deref().unwrap_or(""));
    if dry_run || changes.is_empty() || text.as_deref() == Some(new.as_str()) {
        return Ok(changes);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let original = std::fs::metadata(path).ok();
    if let Some(t) = &text {
        write_backup(path, t, original.as_ref())?;
    }
    let tmp = path.with_extension("memd-tmp");
    write_like(&tmp, &new, original.as_ref(), new_file_mode(path))?;
    std::fs::rename(&tmp, path).map_err(io(path))?;
    Ok(changes)
}

/// Installs (or with `uninstall` removes) memd for `host`; the lines say what changed.
pub fn run(
    host: Host,
    env: &HashMap<String, String>,
    memd: &str,
    hook: &str,
    dry_run: bool,
    uninstall: bool,
    no_mcp: bool,
) -> Result<Vec<String>, InstallError> {
    let paths = HostPaths::resolve(host, env);
    let mut lines = Vec::new();
    let (hook_changes, _) = edit_file(&paths.hooks, dry_run, !uninstall, |doc| {
        let mut c = match uninstall {
            false => add_hooks(doc, host, hook),
            true => remove_hooks(doc, host),
        };
        if host == Host::Gemini && (!no_mcp || uninstall) {
            c.extend(match uninstall {
                false => add_gemini_mcp(doc, memd),
                true => remove_gemini_mcp(doc),
            });
        }
        c
    })?;
    // An emptied Codex hooks.json holds nothing for anyone: it goes (Gemini's settings file stays).
    let emptied = std::fs::read_to_string(&paths.hooks).is_ok_and(|t| t.trim() == "{}");
    if uninstall && !dry_run && host == Host::Codex && emptied && !hook_changes.is_empty() {
        std::fs::remove_file(&paths.hooks).map_err(io(&paths.hooks))?;
    }
    let verb = if dry_run { "would change" } else { "changed" };
    lines.extend(hook_changes.iter().map(|c| format!("{verb} {}: {c}", paths.hooks.display())));
    if host == Host::Codex && (!no_mcp || uninstall) {
        let changes = edit_text(&paths.mcp, dry_run, |t| match uninstall {
            false => add_codex_mcp(t, memd),
            true => remove_codex_mcp(t),
        })?;
        lines.extend(changes.iter().map(|c| format!("{verb} {}: {c}", paths.mcp.display())));
    }
    if uninstall && lines.is_empty() {
        lines.push("nothing to remove".into());
    }
    if host == Host::Codex && !uninstall && !hook_changes.is_empty() {
        lines.push("note: Codex asks you once to review and trust new hooks (its /hooks view) before they run".into());
    }
    Ok(lines)
}

/// The program of a command [`quote_program`] wrote (its escapes undone).
fn unquote(cmd: &str) -> String {
    let Some(rest) = cmd.strip_prefix('"') else {
        return cmd.split(' ').next().unwrap_or("").to_string();
    };
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '"' => break,
            c => out.push(c),
        }
    }
    out
}

/// What `memd doctor` finds of a host's install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInstall {
    /// The host's events without memd's hook.
    pub missing: Vec<&'static str>,
    /// The programs memd's hooks run (to check they exist).
    pub programs: Vec<String>,
    pub mcp: bool,
}

/// memd's install for `host`, or None when none of memd's hooks is there.
pub fn inspect(host: Host, env: &HashMap<String, String>) -> Option<HostInstall> {
    let paths = HostPaths::resolve(host, env);
    let doc = Doc::parse(&std::fs::read_to_string(&paths.hooks).ok()?).ok()?;
    let hooks = doc.get("hooks")?;
    let mut missing = Vec::new();
    let mut programs = Vec::new();
    for (event, _) in host.events() {
        let ours: Vec<&Doc> = match hooks.get(event) {
            Some(Doc::Arr(groups)) => groups
                .iter()
                .filter_map(|g| match g.get("hooks") {
                    Some(Doc::Arr(hs)) => Some(hs.iter().filter(|h| is_ours(host, h))),
                    _ => None,
                })
                .flatten()
                .collect(),
            _ => Vec::new(),
        };
        if ours.is_empty() {
            missing.push(*event);
        }
        for h in ours {
            let cmd = h.get("command").and_then(Doc::as_str).unwrap_or("");
            let program = unquote(cmd);
            if !programs.contains(&program) {
                programs.push(program);
            }
        }
    }
    if missing.len() == host.events().len() {
        return None;
    }
    let mcp = match host {
        Host::Codex => std::fs::read_to_string(&paths.mcp).is_ok_and(|t| t.lines().any(|l| l.trim() == "[mcp_servers.memd]")),
        _ => doc.get("mcpServers").and_then(|m| m.get("memd")).is_some(),
    };
    Some(HostInstall { missing, programs, mcp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_added_once_and_removed_exactly() {
        let original = r#"{"theme":"dark","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#;
        let mut doc = Doc::parse(original).unwrap();
        let added = add_hooks(&mut doc, Host::Codex, "/usr/bin/memd");
        assert_eq!(added.len(), 4);
        assert!(add_hooks(&mut doc, Host::Codex, "/usr/bin/memd").is_empty(), "idempotent");
        let text = doc.pretty();
        assert!(text.contains(r#""command": "\"/usr/bin/memd\" hook codex PostToolUse""#), "{text}");
        assert_eq!(remove_hooks(&mut doc, Host::Codex).len(), 4);
        assert_eq!(doc, Doc::parse(original).unwrap(), "uninstall leaves the user's hook");
    }

    #[test]
    fn gemini_hooks_and_mcp_server() {
        let mut doc = Doc::parse("{}").unwrap();
        add_hooks(&mut doc, Host::Gemini, "/x/memd-hook");
        add_gemini_mcp(&mut doc, "/x/memd");
        let text = doc.pretty();
        assert!(text.contains(r#""command": "\"/x/memd-hook\" gemini AfterTool""#), "{text}");
        assert!(text.contains(r#""timeout": 30000"#));
        assert!(text.contains(r#""--platform""#));
        remove_hooks(&mut doc, Host::Gemini);
        remove_gemini_mcp(&mut doc);
        assert_eq!(doc.pretty(), "{}");
    }

    #[test]
    fn the_codex_toml_block_comes_and_goes_byte_for_byte() {
        let original = "model = \"o4\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let (added, c) = add_codex_mcp(original, "/usr/bin/memd");
        assert_eq!(c.len(), 1);
        assert!(added.contains("[mcp_servers.memd]\ncommand = \"/usr/bin/memd\"\nargs = [\"mcp\", \"--platform\", \"codex\"]"));
        assert!(add_codex_mcp(&added, "/usr/bin/memd").1.is_empty(), "idempotent");
        assert_eq!(remove_codex_mcp(&added).0, original);
        let (fresh, _) = add_codex_mcp("", "/m");
        assert_eq!(remove_codex_mcp(&fresh).0, "");
        assert_eq!(unquote(&command(Host::Codex, "/opt/my \"x\"/memd", "Stop")), "/opt/my \"x\"/memd");
        let foreign = "[mcp_servers.memd]\ncommand = \"mine\"\n";
        assert!(add_codex_mcp(foreign, "/m").1.is_empty(), "a user's own memd entry is left alone");
    }
}
