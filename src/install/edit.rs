//! Edits of the two Claude Code files: memd's matcher groups and `permissions.allow` entries in a
//! settings file, and `mcpServers.memd` in `.claude.json`. Each edit returns one line per change;
//! an edit that changes nothing returns no lines (so a second install writes nothing).

use super::hooks_config::{HookForm, REGISTRATIONS, group_doc, handler_doc, is_memd_mcp, owned_handler_doc};
use super::json_doc::Doc;

/// What an install into one settings file did.
#[derive(Debug, Default)]
pub struct HooksAdded {
    pub changes: Vec<String>,
    pub created_hooks: bool,
}

fn handlers_mut(group: &mut Doc) -> Option<&mut Vec<Doc>> {
    match group.get_mut("hooks") {
        Some(Doc::Arr(items)) => Some(items),
        _ => None,
    }
}

fn is_memd_handler(h: &Doc, name: Option<&str>) -> bool {
    owned_handler_doc(h).is_some_and(|owned| name.is_none_or(|n| owned.name() == n))
}

/// A group that holds memd's handler and nobody else's: its matcher is memd's to set.
fn only_memd(group: &Doc) -> bool {
    matches!(group.get("hooks"), Some(Doc::Arr(hs)) if !hs.is_empty() && hs.iter().all(|h| is_memd_handler(h, None)))
}

pub fn add_hooks(doc: &mut Doc, memd: &str, form: HookForm) -> HooksAdded {
    let mut out = HooksAdded::default();
    if !matches!(doc.get("hooks"), Some(Doc::Obj(_))) {
        doc.set("hooks", Doc::Obj(Vec::new()));
        out.created_hooks = true;
    }
    let Some(hooks) = doc.get_mut("hooks") else { return out };
    for r in &REGISTRATIONS {
        let wanted = handler_doc(memd, r, form);
        if !matches!(hooks.get(r.event), Some(Doc::Arr(_))) {
            hooks.set(r.event, Doc::Arr(Vec::new()));
        }
        let Some(Doc::Arr(groups)) = hooks.get_mut(r.event) else { continue };
        let group = groups
            .iter_mut()
            .find(|g| matches!(g.get("hooks"), Some(Doc::Arr(hs)) if hs.iter().any(|h| is_memd_handler(h, Some(r.handler.name())))));
        let Some(group) = group else {
            groups.push(group_doc(memd, r, form));
            out.changes.push(format!("added {} hook ({})", r.event, r.handler.name()));
            continue;
        };
        let mut changed = false;
        if only_memd(group) && group.get("matcher").and_then(Doc::as_str) != r.matcher {
            match r.matcher {
                Some(m) => group.set("matcher", Doc::str(m)),
                None => {
                    group.remove("matcher");
                }
            }
            changed = true;
        }
        let h = handlers_mut(group)
            .and_then(|hs| hs.iter_mut().find(|h| is_memd_handler(h, Some(r.handler.name()))))
            .expect("the group holds memd's handler");
        if *h != wanted {
            for key in ["command", "args", "timeout", "async"] {
                match wanted.get(key) {
                    Some(v) => h.set(key, v.clone()),
                    None => {
                        h.remove(key);
                    }
                }
            }
            changed = true;
        }
        if changed {
            out.changes.push(format!("updated {} hook ({})", r.event, r.handler.name()));
        }
    }
    out
}

/// Removes memd's handlers, then the groups and events that this emptied, then `hooks` itself
/// when memd created it and it is empty.
pub fn remove_hooks(doc: &mut Doc, created_hooks: bool) -> Vec<String> {
    let mut changes = Vec::new();
    let Some(Doc::Obj(events)) = doc.get_mut("hooks") else {
        return changes;
    };
    for (event, groups) in events.iter_mut() {
        let Doc::Arr(groups) = groups else { continue };
        groups.retain_mut(|group| {
            let Some(handlers) = handlers_mut(group) else { return true };
            let before = handlers.len();
            handlers.retain(|h| !is_memd_handler(h, None));
            let removed = before - handlers.len();
            if removed > 0 {
                changes.push(format!("removed {removed} memd hook(s) from {event}"));
            }
            !(removed > 0 && handlers.is_empty())
        });
    }
    let emptied: Vec<String> = events
        .iter()
        .filter(|(_, g)| matches!(g, Doc::Arr(a) if a.is_empty()))
        .map(|(k, _)| k.clone())
        .filter(|k| REGISTRATIONS.iter().any(|r| r.event == k) && changes.iter().any(|c| c.ends_with(&format!(" from {k}"))))
        .collect();
    events.retain(|(k, _)| !emptied.contains(k));
    if created_hooks && events.is_empty() && !changes.is_empty() {
        doc.remove("hooks");
    }
    changes
}

/// Adds the tools that run without asking (`allowed` in the MCP tool table) to `permissions.allow`; returns (changes, the entries it added — only
/// those go again at uninstall).
pub fn add_permissions(doc: &mut Doc) -> (Vec<String>, Vec<String>) {
    if !matches!(doc.get("permissions"), Some(Doc::Obj(_))) {
        doc.set("permissions", Doc::Obj(Vec::new()));
    }
    let Some(perms) = doc.get_mut("permissions") else {
        return (Vec::new(), Vec::new());
    };
    if !matches!(perms.get("allow"), Some(Doc::Arr(_))) {
        perms.set("allow", Doc::Arr(Vec::new()));
    }
    let Some(Doc::Arr(allow)) = perms.get_mut("allow") else {
        return (Vec::new(), Vec::new());
    };
    let mut added = Vec::new();
    for tool in crate::mcp::schema::allowed_tools() {
        if !allow.iter().any(|a| a.as_str() == Some(tool.as_str())) {
            allow.push(Doc::str(&tool));
            added.push(tool);
        }
    }
    let changes = if added.is_empty() {
        Vec::new()
    } else {
        vec![format!("allowed memd's MCP tools ({})", added.join(", "))]
    };
    (changes, added)
}

/// Removes the `permissions.allow` entries memd added (`added`), then `allow` and `permissions`
/// when that emptied them.
pub fn remove_permissions(doc: &mut Doc, added: &[String]) -> Vec<String> {
    let Some(perms) = doc.get_mut("permissions") else {
        return Vec::new();
    };
    let Some(Doc::Arr(allow)) = perms.get_mut("allow") else {
        return Vec::new();
    };
    let before = allow.len();
    allow.retain(|a| !a.as_str().is_some_and(|s| added.iter().any(|x| x == s)));
    let removed = before - allow.len();
    if removed == 0 {
        return Vec::new();
    }
    if allow.is_empty() {
        perms.remove("allow");
    }
    if matches!(perms, Doc::Obj(f) if f.is_empty()) {
        doc.remove("permissions");
    }
    vec![format!("removed {removed} memd permission(s)")]
}

/// `mcpServers.memd = {"type":"stdio","command":…,"args":["mcp"],"env":{}}`; returns (changes,
/// created `mcpServers`). A foreign `memd` entry is left alone with a warning line.
pub fn add_mcp(doc: &mut Doc, memd: &str) -> (Vec<String>, bool) {
    let wanted = Doc::Obj(vec![
        ("type".into(), Doc::str("stdio")),
        ("command".into(), Doc::str(memd)),
        ("args".into(), Doc::Arr(vec![Doc::str("mcp")])),
        ("env".into(), Doc::Obj(Vec::new())),
    ]);
    let mut created = false;
    if !matches!(doc.get("mcpServers"), Some(Doc::Obj(_))) {
        doc.set("mcpServers", Doc::Obj(Vec::new()));
        created = true;
    }
    let Some(servers) = doc.get_mut("mcpServers") else {
        return (Vec::new(), created);
    };
    match servers.get("memd") {
        Some(e) if *e == wanted => (Vec::new(), created),
        Some(e) if !is_memd_mcp(e) => (vec!["warning: mcpServers.memd is not memd's; left alone".into()], created),
        Some(_) => {
            servers.set("memd", wanted);
            (vec!["updated MCP server memd".into()], created)
        }
        None => {
            servers.set("memd", wanted);
            (vec!["added MCP server memd".into()], created)
        }
    }
}

pub fn remove_mcp(doc: &mut Doc, created: bool) -> Vec<String> {
    let Some(servers) = doc.get_mut("mcpServers") else {
        return Vec::new();
    };
    if !servers.get("memd").is_some_and(is_memd_mcp) {
        return Vec::new();
    }
    servers.remove("memd");
    let empty = matches!(servers, Doc::Obj(f) if f.is_empty());
    if created && empty {
        doc.remove("mcpServers");
    }
    vec!["removed MCP server memd".into()]
}
