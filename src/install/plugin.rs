//! `memd install --plugin <dir>`: a Claude Code plugin folder instead of settings edits —
//! `.claude-plugin/plugin.json`, `hooks/hooks.json` (the same groups) and `.mcp.json`.

use std::path::Path;

use super::hooks_config::hooks_object;
use super::json_doc::Doc;
use super::{InstallError, io};

pub fn write_plugin(dir: &Path, memd: &str, hook: &str) -> Result<Vec<String>, InstallError> {
    let manifest = Doc::Obj(vec![
        ("name".into(), Doc::str("memd")),
        ("version".into(), Doc::str(env!("CARGO_PKG_VERSION"))),
        ("description".into(), Doc::str("memd: persistent memory for Claude Code sessions")),
    ]);
    let hooks = Doc::Obj(vec![
        ("description".into(), Doc::str("memd memory capture")),
        ("hooks".into(), hooks_object(hook, super::hooks_config::HookForm::Exec)),
    ]);
    let server = Doc::Obj(vec![
        ("command".into(), Doc::str(memd)),
        ("args".into(), Doc::Arr(vec![Doc::str("mcp")])),
    ]);
    let mcp = Doc::Obj(vec![("mcpServers".into(), Doc::Obj(vec![("memd".into(), server)]))]);
    let files = [
        (dir.join(".claude-plugin").join("plugin.json"), manifest),
        (dir.join("hooks").join("hooks.json"), hooks),
        (dir.join(".mcp.json"), mcp),
    ];
    let mut lines = Vec::new();
    for (path, doc) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, format!("{}\n", doc.pretty())).map_err(io(&path))?;
        lines.push(format!("wrote {}", path.display()));
    }
    Ok(lines)
}
