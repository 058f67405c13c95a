//! Edits of the two Claude Code files: memd's matcher groups in a settings `hooks` object and
//! `mcpServers.memd` in `.claude.json`. Each edit returns one line per change; an edit that
//! changes nothing returns no lines (so a second install writes nothing).

use super::hooks_config::{REGISTRATIONS, group_doc, handler_doc, is_memd_mcp, owned_handler};
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
    h.get("command")
        .and_then(Doc::as_str)
        .and_then(owned_handler)
        .is_some_and(|owned| name.is_none_or(|n| owned.name() == n))
}

pub fn add_hooks(doc: &mut Doc, memd: &str) -> HooksAdded {
    let mut out = HooksAdded::default();
    if !matches!(doc.get("hooks"), Some(Doc::Obj(_))) {
        doc.set("hooks", Doc::Obj(Vec::new()));
        out.created_hooks = true;
    }
    let Some(hooks) = doc.get_mut("hooks") else { return out };
    for r in &REGISTRATIONS {
        let wanted = handler_doc(memd, r);
        if !matches!(hooks.get(r.event), Some(Doc::Arr(_))) {
            hooks.set(r.event, Doc::Arr(Vec::new()));
        }
        let Some(Doc::Arr(groups)) = hooks.get_mut(r.event) else { continue };
        let existing = groups
            .iter_mut()
            .filter_map(handlers_mut)
            .flat_map(|hs| hs.iter_mut())
            .find(|h| is_memd_handler(h, Some(r.handler.name())));
        match existing {
            Some(h) if *h == wanted => {}
            Some(h) => {
                for key in ["command", "timeout"] {
                    if let Some(v) = wanted.get(key) {
                        h.set(key, v.clone());
                    }
                }
                match r.is_async {
                    true => h.set("async", Doc::Bool(true)),
                    false => {
                        h.remove("async");
                    }
                }
                out.changes.push(format!("updated {} hook ({})", r.event, r.handler.name()));
            }
            None => {
                groups.push(group_doc(memd, r));
                out.changes.push(format!("added {} hook ({})", r.event, r.handler.name()));
            }
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
