//! `--settings`: copy the claude-mem settings that have a memd equivalent into
//! `<data>/settings.json`, only for keys memd's file does not set yet (docs/spec/storage.md §7.4).
//! Provider keys and ports are never copied.

use std::path::Path;

use serde_json::{Map, Value};

use super::ImportError;

const MAPPING: &[(&str, &str)] = &[
    ("CLAUDE_MEM_EXCLUDED_PROJECTS", "MEMD_EXCLUDED_PROJECTS"),
    ("CLAUDE_MEM_SKIP_TOOLS", "MEMD_SKIP_TOOLS"),
    ("CLAUDE_MEM_MODE", "MEMD_MODE"),
    ("CLAUDE_MEM_CONTEXT_OBSERVATIONS", "MEMD_CONTEXT_OBSERVATIONS"),
    ("CLAUDE_MEM_CONTEXT_SESSION_COUNT", "MEMD_CONTEXT_SESSION_COUNT"),
    ("CLAUDE_MEM_SEMANTIC_INJECT", "MEMD_SEMANTIC_INJECT"),
];

fn read_object(path: &Path) -> Result<Map<String, Value>, ImportError> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(ImportError::Source(format!("{} is not a JSON object", path.display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(ImportError::Source(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Copies mapped keys from `claude_settings` into `memd_settings`; returns the memd keys written.
pub fn copy_settings(claude_settings: &Path, memd_settings: &Path) -> Result<Vec<String>, ImportError> {
    let source = read_object(claude_settings)?;
    // claude-mem nests its values under "env" in some versions.
    let flat = match source.get("env") {
        Some(Value::Object(env)) => env.clone(),
        _ => source,
    };
    let mut target = read_object(memd_settings)?;
    let mut written = Vec::new();
    for (from, to) in MAPPING {
        if target.contains_key(*to) {
            continue;
        }
        if let Some(v) = flat.get(*from) {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            target.insert((*to).to_string(), Value::String(s));
            written.push((*to).to_string());
        }
    }
    if !written.is_empty() {
        let text = serde_json::to_string_pretty(&Value::Object(target)).unwrap_or_default();
        crate::data_dir::write_private(memd_settings, text.as_bytes()).map_err(|e| ImportError::Source(e.to_string()))?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_only_unset_mapped_keys() {
        let dir = tempfile::tempdir().unwrap();
        let cm = dir.path().join("cm.json");
        let memd = dir.path().join("settings.json");
        std::fs::write(
            &cm,
            r#"{"CLAUDE_MEM_MODE":"code--chill","CLAUDE_MEM_SKIP_TOOLS":"X","CLAUDE_MEM_WORKER_PORT":"1"}"#,
        )
        .unwrap();
        std::fs::write(&memd, r#"{"MEMD_SKIP_TOOLS":"Y"}"#).unwrap();
        assert_eq!(copy_settings(&cm, &memd).unwrap(), ["MEMD_MODE"]);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&memd).unwrap()).unwrap();
        assert_eq!(v["MEMD_SKIP_TOOLS"], "Y");
        assert_eq!(v["MEMD_MODE"], "code--chill");
        assert!(v.get("MEMD_PORT").is_none());
    }
}
