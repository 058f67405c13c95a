//! Mode lookup, `parent--override` deep merge and synthesised language variants (§18).

use super::Mode;
use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The mode used when `MEMD_MODE` is unset, invalid or cannot be resolved.
pub const DEFAULT_MODE_ID: &str = "code";

/// Mode files built into the binary from the repository's `modes/` directory.
pub const BUILTIN_MODES: &[(&str, &str)] = &[
    ("code", include_str!("../../modes/code.json")),
    ("code--chill", include_str!("../../modes/code--chill.json")),
    ("code--zh", include_str!("../../modes/code--zh.json")),
    ("code--ja", include_str!("../../modes/code--ja.json")),
    ("code--de", include_str!("../../modes/code--de.json")),
    ("code--fr", include_str!("../../modes/code--fr.json")),
    ("code--es", include_str!("../../modes/code--es.json")),
];

/// Language variants memd knows (`code--<lang>`), with the English name of the language.
pub const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("bn", "Bengali"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("es", "Spanish"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("he", "Hebrew"),
    ("hi", "Hindi"),
    ("hu", "Hungarian"),
    ("id", "Indonesian"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("nl", "Dutch"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("pt-br", "Brazilian Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sv", "Swedish"),
    ("th", "Thai"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("ur", "Urdu"),
    ("vi", "Vietnamese"),
    ("zh", "Chinese"),
];

/// Prompt keys that receive the language line in a synthesised variant.
const LANGUAGE_KEYS: &[&str] = &["footer", "continuation_instruction", "summary_footer"];

static MODE_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*(--[a-z0-9]+(-[a-z0-9]+)*)?$").expect("mode id regex"));

/// Whether `id` matches the mode id grammar of §18.
pub fn is_valid_mode_id(id: &str) -> bool {
    MODE_ID.is_match(id)
}

/// English name of a known language variant code (`zh` → `Chinese`).
pub fn language_name(code: &str) -> Option<&'static str> {
    LANGUAGES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The directories searched before the built-ins: `MEMD_MODES_DIR` (when set and not blank),
/// then `<data>/modes/`.
pub fn mode_search_dirs(modes_dir_setting: Option<&str>, data_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::with_capacity(2);
    if let Some(dir) = modes_dir_setting.map(str::trim).filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(data_dir.join("modes"));
    dirs
}

/// Resolves a mode id. Never fails: anything unusable falls back to `code`, and every fallback
/// or skipped file is described in the returned warnings (empty when all went as asked).
pub fn load_mode(id: &str, dirs: &[PathBuf]) -> (Mode, Vec<String>) {
    let mut warnings = Vec::new();
    let id = id.trim();
    if !is_valid_mode_id(id) {
        warnings.push(format!(
            "invalid mode id {id:?} (expected e.g. \"code\" or \"code--chill\"); using \"{DEFAULT_MODE_ID}\""
        ));
        let mode = load_default(dirs, &mut warnings);
        return (mode, warnings);
    }
    let mode = match resolve(id, dirs, &mut warnings) {
        Some(mode) => mode,
        None if id == DEFAULT_MODE_ID => builtin_default(),
        None => {
            warnings.push(format!("mode {id:?} unusable; using \"{DEFAULT_MODE_ID}\""));
            load_default(dirs, &mut warnings)
        }
    };
    (mode, warnings)
}

/// Objects merge key by key (recursively); arrays and scalars replace.
pub fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) if slot.is_object() && value.is_object() => deep_merge(slot, value),
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

fn load_default(dirs: &[PathBuf], warnings: &mut Vec<String>) -> Mode {
    resolve(DEFAULT_MODE_ID, dirs, warnings).unwrap_or_else(builtin_default)
}

/// The built-in `code` mode; a broken built-in is a bug caught by the unit tests.
fn builtin_default() -> Mode {
    let raw = builtin_raw(DEFAULT_MODE_ID).expect("built-in code mode is valid JSON");
    to_mode(raw, DEFAULT_MODE_ID).expect("built-in code mode is a valid mode")
}

fn resolve(id: &str, dirs: &[PathBuf], warnings: &mut Vec<String>) -> Option<Mode> {
    let (parent, override_part) = match id.split_once("--") {
        Some((parent, part)) => (parent, Some(part)),
        None => (id, None),
    };
    let Some(mut value) = find_raw(parent, dirs, warnings) else {
        warnings.push(format!("mode {parent:?} not found"));
        return None;
    };
    if let Some(part) = override_part {
        match find_raw(id, dirs, warnings) {
            Some(over) => deep_merge(&mut value, over),
            None => match language_name(part) {
                Some(language) => synthesise_language(&mut value, language),
                None => warnings.push(format!("mode override {id:?} not found; using {parent:?} alone")),
            },
        }
    }
    match to_mode(value, id) {
        Ok(mode) => Some(mode),
        Err(e) => {
            warnings.push(format!("mode {id:?} is not a valid mode: {e}"));
            None
        }
    }
}

/// First readable JSON object named `<id>.json` in `dirs`, else the built-in of that id.
fn find_raw(id: &str, dirs: &[PathBuf], warnings: &mut Vec<String>) -> Option<Value> {
    for dir in dirs {
        let path = dir.join(format!("{id}.json"));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                warnings.push(format!("cannot read mode file {}: {e}", path.display()));
                continue;
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(value) if value.is_object() => return Some(value),
            Ok(_) => warnings.push(format!("mode file {} is not a JSON object", path.display())),
            Err(e) => warnings.push(format!("mode file {} is not valid JSON: {e}", path.display())),
        }
    }
    builtin_raw(id)
}

fn builtin_raw(id: &str) -> Option<Value> {
    let (_, text) = BUILTIN_MODES.iter().find(|(name, _)| *name == id)?;
    serde_json::from_str(text).ok()
}

fn synthesise_language(value: &mut Value, language: &str) {
    let line = format!("Write all observation and summary text in {language}. Type ids, concept ids and XML tag names stay in English.");
    let Value::Object(root) = value else { return };
    let name = root.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    root.insert("name".into(), Value::String(format!("{name} ({language})")));
    let prompts = root.entry("prompts").or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(prompts) = prompts else {
        return;
    };
    for key in LANGUAGE_KEYS {
        let current = prompts.get(*key).and_then(Value::as_str).unwrap_or("");
        let text = if current.is_empty() {
            line.clone()
        } else {
            format!("{current}\n{line}")
        };
        prompts.insert((*key).into(), Value::String(text));
    }
}

/// Why a mode file is not a mode.
#[derive(Debug, thiserror::Error)]
pub enum ModeError {
    #[error("{0}")]
    Shape(#[from] serde_json::Error),
    #[error("no observation_types")]
    NoTypes,
    #[error("observation type with empty id (label {0:?})")]
    EmptyTypeId(String),
}

fn to_mode(value: Value, id: &str) -> Result<Mode, ModeError> {
    let mut mode: Mode = serde_json::from_value(value)?;
    if mode.observation_types.is_empty() {
        return Err(ModeError::NoTypes);
    }
    if let Some(bad) = mode.observation_types.iter().find(|t| t.id.trim().is_empty()) {
        return Err(ModeError::EmptyTypeId(bad.label.clone()));
    }
    mode.id = id.to_owned();
    Ok(mode)
}
