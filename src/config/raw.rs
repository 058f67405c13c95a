//! Raw setting values — `<data>/settings.json` overridden by the environment — and the one rule per
//! kind that turns them into typed values. The hook reads through this too (a light read of the
//! same file, no validation beyond the rules), so every process parses a key the same way.
//!
//! Rules (see docs/decisions.md): a value is trimmed first; an empty value is the default. Flags:
//! `true|1|yes|on` / `false|0|no|off`, any case. Numbers: unparsable → the default, outside the
//! key's bounds → clamped to the nearest bound. Choices: any case. Anything else falls back to the
//! default with a warning.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::keys::{KEY_FALLBACKS, Key, Kind};

/// Resolved raw values: settings file merged with environment overrides.
#[derive(Clone, Default)]
pub struct RawSettings {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for RawSettings {
    // Keys only: values may hold provider keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSettings")
            .field("keys", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The flag rule. `None`: not a flag word.
pub fn parse_flag(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The largest `settings.json` read; a bigger file is ignored with a warning.
pub const SETTINGS_MAX_BYTES: u64 = 1024 * 1024;

/// Reads `path` only when it is a regular file of at most `max` bytes. Opened non-blocking, so a
/// FIFO cannot hang the reader; a device (a link to `/dev/zero`) or a directory is refused.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!("larger than {} KiB", max / 1024)));
    }
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than {} KiB", max / 1024)));
    }
    Ok(text)
}

impl RawSettings {
    /// Reads `<data>/settings.json` (missing file = empty) and applies `MEMD_*` environment values.
    /// Never writes.
    pub fn load(data_dir: &Path, env: &HashMap<String, String>) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut values = BTreeMap::new();
        let path = data_dir.join("settings.json");
        match read_bounded(&path, SETTINGS_MAX_BYTES) {
            Ok(text) => match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text) {
                Ok(map) => {
                    for (k, v) in map {
                        let s = match v {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        values.insert(k, s);
                    }
                }
                Err(e) => warnings.push(format!("settings.json ignored: {e}")),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => warnings.push(format!("settings.json unreadable: {e}")),
        }
        for (k, v) in env {
            if k.starts_with("MEMD_") {
                values.insert(k.clone(), v.clone());
            }
        }
        for (key, fallback) in KEY_FALLBACKS {
            let unset = values.get(key.name).is_none_or(|v| v.trim().is_empty());
            if let (true, Some(v)) = (unset, env.get(*fallback)) {
                values.insert(key.name.to_string(), v.clone());
            }
        }
        (Self { values }, warnings)
    }

    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self {
            values: pairs.into_iter().collect(),
        }
    }

    /// The value as written (not trimmed), if the key is set at all.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The trimmed value when set and not empty.
    pub fn given(&self, key: &Key) -> Option<&str> {
        self.get(key.name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// The trimmed value, else the default.
    pub fn text(&self, key: &Key) -> String {
        self.given(key).unwrap_or(key.default).to_string()
    }

    /// A comma list: trimmed items, empties dropped.
    pub fn list(&self, key: &Key) -> Vec<String> {
        self.text(key)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    /// A flag under the flag rule; a value that is no flag word gives the default and a warning.
    pub fn flag(&self, key: &Key, warnings: &mut Vec<String>) -> bool {
        let default = parse_flag(key.default).unwrap_or(false);
        match self.given(key) {
            None => default,
            Some(v) => parse_flag(v).unwrap_or_else(|| {
                warnings.push(format!("{}={v:?} is not true or false; using {default}", key.name));
                default
            }),
        }
    }

    /// An integer under the number rule (default when unset or unparsable, clamped to the bounds).
    pub fn int(&self, key: &Key, warnings: &mut Vec<String>) -> u64 {
        let (min, max) = match key.kind {
            Kind::Int { min, max } => (min, max),
            _ => (0, u64::MAX),
        };
        let default = key.default.parse::<u64>().unwrap_or(min).clamp(min, max);
        let Some(v) = self.given(key) else { return default };
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => n,
            Ok(n) => {
                let c = n.clamp(min, max);
                warnings.push(format!("{}={v:?} is not in {min}..={max}; using {c}", key.name));
                c
            }
            Err(_) => {
                warnings.push(format!("{}={v:?} is not a whole number; using {default}", key.name));
                default
            }
        }
    }

    /// A decimal number under the number rule.
    pub fn float(&self, key: &Key, warnings: &mut Vec<String>) -> f64 {
        let (min, max) = match key.kind {
            Kind::Float { min, max } => (min, max),
            _ => (f64::MIN, f64::MAX),
        };
        let default = key.default.parse::<f64>().unwrap_or(min).clamp(min, max);
        let Some(v) = self.given(key) else { return default };
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() && (min..=max).contains(&n) => n,
            Ok(n) if n.is_finite() => {
                let c = n.clamp(min, max);
                warnings.push(format!("{}={v:?} is not in {min}..={max}; using {c}", key.name));
                c
            }
            _ => {
                warnings.push(format!("{}={v:?} is not a number; using {default}", key.name));
                default
            }
        }
    }

    /// One of the key's choices, as written in the table (any case accepted).
    pub fn choice(&self, key: &Key, warnings: &mut Vec<String>) -> &'static str {
        let Kind::Choice(words) = key.kind else {
            return key.default;
        };
        let default = words
            .iter()
            .find(|w| w.eq_ignore_ascii_case(key.default))
            .copied()
            .unwrap_or(key.default);
        let Some(v) = self.given(key) else { return default };
        words.iter().find(|w| w.eq_ignore_ascii_case(v)).copied().unwrap_or_else(|| {
            warnings.push(format!("{}={v:?} is not one of {}; using {default}", key.name, words.join(", ")));
            default
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::keys;
    use super::*;

    #[test]
    fn a_fifo_a_device_or_an_oversize_settings_file_gives_the_defaults_and_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (s, warnings) = RawSettings::load(dir.path(), &HashMap::new());
        assert!(s.values.is_empty());
        assert!(warnings.iter().any(|w| w.contains("not a regular file")), "{warnings:?}");
        std::fs::remove_file(&path).unwrap();

        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let (_, warnings) = RawSettings::load(dir.path(), &HashMap::new());
        assert!(warnings.iter().any(|w| w.contains("not a regular file")), "{warnings:?}");
        std::fs::remove_file(&path).unwrap();

        let big = format!("{{\"MEMD_PORT\": \"1\", \"pad\": \"{}\"}}", "x".repeat(SETTINGS_MAX_BYTES as usize));
        std::fs::write(&path, big).unwrap();
        let (s, warnings) = RawSettings::load(dir.path(), &HashMap::new());
        assert!(s.values.is_empty(), "nothing of an oversize file is used");
        assert!(warnings.iter().any(|w| w.contains("larger than 1024 KiB")), "{warnings:?}");

        std::fs::write(&path, r#"{"MEMD_PORT": "40001"}"#).unwrap();
        let (s, warnings) = RawSettings::load(dir.path(), &HashMap::new());
        assert_eq!(s.values.get("MEMD_PORT").map(String::as_str), Some("40001"));
        assert!(warnings.is_empty());
    }

    fn raw(key: &Key, v: &str) -> RawSettings {
        RawSettings::from_pairs([(key.name.to_string(), v.to_string())])
    }

    #[test]
    fn one_flag_rule() {
        let mut w = Vec::new();
        for (v, want) in [
            ("", true),
            (" ", true),
            ("0", false),
            ("false", false),
            ("No", false),
            ("OFF", false),
            ("1", true),
            ("true", true),
            ("yes", true),
            ("on", true),
        ] {
            assert_eq!(raw(&keys::REDACT, v).flag(&keys::REDACT, &mut w), want, "{v:?}");
        }
        assert!(w.is_empty());
        assert!(raw(&keys::REDACT, "maybe").flag(&keys::REDACT, &mut w));
        assert!(!raw(&keys::SEMANTIC_INJECT, "maybe").flag(&keys::SEMANTIC_INJECT, &mut w));
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn one_number_rule() {
        let mut w = Vec::new();
        assert_eq!(raw(&keys::DB_READERS, "").int(&keys::DB_READERS, &mut w), 4);
        assert_eq!(raw(&keys::DB_READERS, " 8 ").int(&keys::DB_READERS, &mut w), 8);
        assert!(w.is_empty());
        assert_eq!(raw(&keys::DB_READERS, "x").int(&keys::DB_READERS, &mut w), 4);
        assert_eq!(raw(&keys::DB_READERS, "0").int(&keys::DB_READERS, &mut w), 1);
        assert_eq!(raw(&keys::DB_READERS, "1000").int(&keys::DB_READERS, &mut w), 64);
        assert_eq!(raw(&keys::DB_READERS, "-3").int(&keys::DB_READERS, &mut w), 4);
        assert_eq!(w.len(), 4);
        assert_eq!(raw(&keys::REINFORCE_ALPHA, "99").float(&keys::REINFORCE_ALPHA, &mut w), 10.0);
        assert_eq!(raw(&keys::REINFORCE_ALPHA, "NaN").float(&keys::REINFORCE_ALPHA, &mut w), 0.0);
    }

    #[test]
    fn choices_ignore_case() {
        let mut w = Vec::new();
        assert_eq!(raw(&keys::DB_SYNCHRONOUS, "normal").choice(&keys::DB_SYNCHRONOUS, &mut w), "NORMAL");
        assert_eq!(raw(&keys::DB_SYNCHRONOUS, "weird").choice(&keys::DB_SYNCHRONOUS, &mut w), "FULL");
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn every_literal_default_follows_its_own_rule() {
        for k in keys::KEYS {
            if keys::COMPUTED_DEFAULTS.contains(k) {
                continue;
            }
            match k.kind {
                Kind::Flag => assert!(parse_flag(k.default).is_some(), "{}", k.name),
                Kind::Int { min, max } => {
                    let d: u64 = k.default.parse().unwrap_or_else(|_| panic!("{}", k.name));
                    assert!((min..=max).contains(&d), "{}", k.name);
                }
                Kind::Float { min, max } => {
                    let d: f64 = k.default.parse().unwrap_or_else(|_| panic!("{}", k.name));
                    assert!((min..=max).contains(&d), "{}", k.name);
                }
                Kind::Choice(words) => assert!(words.contains(&k.default), "{}", k.name),
                Kind::Text | Kind::List | Kind::Secret => {}
            }
        }
    }
}
