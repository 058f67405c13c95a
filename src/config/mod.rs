//! Settings: every `MEMD_*` key with its default, defined once in [`DEFAULTS`].
//!
//! Values come from `<data>/settings.json` (flat string keys) overridden by the environment. The
//! environment is read once in `main.rs` and passed in as a map; loading never writes files.
//! Unparsable values fall back to the default with a warning (shown by `memd status`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

mod defaults;
mod sections;

pub use defaults::{DEFAULTS, KEY_FALLBACKS};
pub use sections::{ContextSettings, ProviderSettings, RetentionSettings, Secret};

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

impl RawSettings {
    /// Reads `<data>/settings.json` (missing file = empty) and applies `MEMD_*` environment values.
    pub fn load(data_dir: &Path, env: &HashMap<String, String>) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut values = BTreeMap::new();
        let path = data_dir.join("settings.json");
        match std::fs::read_to_string(&path) {
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
            let unset = values.get(*key).is_none_or(|v| v.trim().is_empty());
            if let (true, Some(v)) = (unset, env.get(*fallback)) {
                values.insert(key.to_string(), v.clone());
            }
        }
        (Self { values }, warnings)
    }

    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self {
            values: pairs.into_iter().collect(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// The value, else the default from [`DEFAULTS`].
    pub fn get_or_default(&self, key: &str) -> &str {
        self.get(key).unwrap_or_else(|| default_of(key))
    }
}

pub fn default_of(key: &str) -> &'static str {
    DEFAULTS.iter().find(|(k, _, _)| *k == key).map(|(_, d, _)| *d).unwrap_or("")
}

/// Typed settings of the worker.
#[derive(Debug, Clone)]
pub struct Settings {
    pub data_dir: PathBuf,
    pub port: u16,
    pub log_filter: String,
    pub db_synchronous_full: bool,
    pub db_readers: usize,
    pub group_commit_ms: u64,
    pub store_queue_max: usize,
    pub batch_max_events: usize,
    pub batch_max_chars: usize,
    pub batch_debounce_ms: u64,
    pub batch_max_wait_ms: u64,
    pub session_idle_ms: u64,
    pub reaper_interval_ms: u64,
    pub excluded_projects: String,
    pub skip_tools: Vec<String>,
    pub redact: bool,
    pub redact_disabled_builtins: String,
    pub redact_custom_patterns: String,
    pub tool_use_max_chars: usize,
    pub mode: String,
    pub modes_dir: Option<String>,
    pub observer: ProviderSettings,
    pub daily_token_budget: u64,
    pub retention: RetentionSettings,
    pub spool_scan_ms: u64,
    pub vectors: crate::vectors::settings::VectorSettings,
    pub context: ContextSettings,
    pub home: Option<PathBuf>,
    /// `PATH` of the worker's environment (where `auto` / `claude-cli` look for `claude`).
    pub path_env: Option<String>,
    pub warnings: Vec<String>,
}

impl Settings {
    pub fn resolve(data_dir: PathBuf, raw: &RawSettings, home: Option<PathBuf>) -> Self {
        let mut warnings = Vec::new();
        let mut num = |key: &str, min: u64, max: u64| -> u64 {
            let fallback: u64 = default_of(key).parse().unwrap_or(min);
            match raw.get(key) {
                None => fallback,
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if (min..=max).contains(&n) => n,
                    _ => {
                        warnings.push(format!("{key}={v:?} is not in {min}..={max}; using {fallback}"));
                        fallback
                    }
                },
            }
        };
        let port = match raw.get("MEMD_PORT") {
            Some(_) => num("MEMD_PORT", 0, 65535) as u16,
            None => default_port(),
        };
        let db_readers = num("MEMD_DB_READERS", 1, 64) as usize;
        let group_commit_ms = num("MEMD_GROUP_COMMIT_MS", 0, 50);
        let store_queue_max = num("MEMD_STORE_QUEUE_MAX", 16, 1_000_000) as usize;
        let batch_max_events = num("MEMD_OBSERVER_BATCH_MAX_EVENTS", 1, 500) as usize;
        let batch_max_chars = num("MEMD_OBSERVER_BATCH_MAX_CHARS", 1000, 10_000_000) as usize;
        let batch_debounce_ms = num("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", 0, 600_000);
        let batch_max_wait_ms = num("MEMD_OBSERVER_BATCH_MAX_WAIT_MS", 0, 3_600_000);
        let session_idle_ms = num("MEMD_SESSION_IDLE_MS", 100, 86_400_000);
        let reaper_interval_ms = num("MEMD_REAPER_INTERVAL_MS", 50, 86_400_000);
        let tool_use_max_chars = num("MEMD_TOOL_USE_MAX_CHARS", 1024, 100_000_000) as usize;
        let daily_token_budget = num("MEMD_DAILY_TOKEN_BUDGET", 0, u64::MAX);
        let retention = RetentionSettings {
            tool_uses_days: num("MEMD_RETENTION_TOOL_USES_DAYS", 0, 100_000),
            db_max_mb: num("MEMD_RETENTION_DB_MAX_MB", 0, 100_000_000),
            failed_days: num("MEMD_RETENTION_FAILED_DAYS", 0, 100_000),
            observations_days: num("MEMD_RETENTION_OBSERVATIONS_DAYS", 0, 100_000),
            summaries_days: num("MEMD_RETENTION_SUMMARIES_DAYS", 0, 100_000),
            prompts_days: num("MEMD_RETENTION_PROMPTS_DAYS", 0, 100_000),
            token_usage_days: num("MEMD_RETENTION_TOKEN_USAGE_DAYS", 0, 100_000),
        };
        let timeout_ms = num("MEMD_OBSERVER_TIMEOUT_MS", 100, 3_600_000);
        let max_attempts = num("MEMD_OBSERVER_MAX_ATTEMPTS", 1, 100) as u32;
        let max_defer_ms = num("MEMD_OBSERVER_MAX_DEFER_MS", 0, 86_400_000);
        let field_max_chars = num("MEMD_OBSERVER_FIELD_MAX_CHARS", 2_000, 1_000_000) as usize;
        let text = |key: &str| raw.get_or_default(key).trim().to_string();
        let observer = ProviderSettings {
            provider: text("MEMD_PROVIDER").to_ascii_lowercase(),
            model: text("MEMD_MODEL"),
            anthropic_api_key: Secret::new(raw.get_or_default("MEMD_ANTHROPIC_API_KEY")),
            anthropic_base_url: text("MEMD_ANTHROPIC_BASE_URL"),
            openai_api_key: Secret::new(raw.get_or_default("MEMD_OPENAI_API_KEY")),
            openai_base_url: text("MEMD_OPENAI_BASE_URL"),
            gemini_api_key: Secret::new(raw.get_or_default("MEMD_GEMINI_API_KEY")),
            gemini_base_url: text("MEMD_GEMINI_BASE_URL"),
            claude_path: text("MEMD_CLAUDE_PATH"),
            timeout_ms,
            max_attempts,
            max_defer_ms,
            field_max_chars,
        };
        let spool_scan_ms = num("MEMD_SPOOL_SCAN_MS", 50, 3_600_000);
        let context_observations = num("MEMD_CONTEXT_OBSERVATIONS", 1, 200) as usize;
        let context_summaries = num("MEMD_CONTEXT_SESSION_COUNT", 0, 50) as usize;
        let context_full_count = num("MEMD_CONTEXT_FULL_COUNT", 0, 20) as usize;
        let context_max_chars = num("MEMD_CONTEXT_MAX_CHARS", 1, 100_000) as usize;
        let semantic_limit = num("MEMD_SEMANTIC_INJECT_LIMIT", 1, 20) as usize;
        let reinforce_alpha = match raw.get("MEMD_REINFORCE_ALPHA").map(|v| v.trim().parse::<f64>()) {
            None => 0.0,
            Some(Ok(a)) if (0.0..=10.0).contains(&a) => a,
            Some(_) => {
                warnings.push("MEMD_REINFORCE_ALPHA is not in 0..=10; using 0".to_string());
                0.0
            }
        };
        let flag = |key: &str| {
            !matches!(
                raw.get_or_default(key).trim().to_ascii_lowercase().as_str(),
                "false" | "0" | "no" | "off"
            )
        };
        let vectors = crate::vectors::settings::VectorSettings::resolve(&data_dir, raw, &mut warnings);
        Self {
            data_dir,
            port,
            log_filter: raw.get_or_default("MEMD_LOG").to_string(),
            db_synchronous_full: !raw.get_or_default("MEMD_DB_SYNCHRONOUS").eq_ignore_ascii_case("normal"),
            db_readers,
            group_commit_ms,
            store_queue_max,
            batch_max_events,
            batch_max_chars,
            batch_debounce_ms,
            batch_max_wait_ms,
            session_idle_ms,
            reaper_interval_ms,
            excluded_projects: raw.get_or_default("MEMD_EXCLUDED_PROJECTS").to_string(),
            skip_tools: raw
                .get_or_default("MEMD_SKIP_TOOLS")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            redact: flag("MEMD_REDACT"),
            redact_disabled_builtins: raw.get_or_default("MEMD_REDACT_DISABLED_BUILTINS").to_string(),
            redact_custom_patterns: raw.get_or_default("MEMD_REDACT_CUSTOM_PATTERNS").to_string(),
            tool_use_max_chars,
            mode: raw.get_or_default("MEMD_MODE").to_string(),
            modes_dir: raw.get("MEMD_MODES_DIR").map(String::from),
            observer,
            daily_token_budget,
            retention,
            spool_scan_ms,
            vectors,
            context: ContextSettings {
                observations: context_observations,
                summaries: context_summaries,
                full_count: context_full_count,
                full_field_facts: raw.get_or_default("MEMD_CONTEXT_FULL_FIELD").trim().eq_ignore_ascii_case("facts"),
                show_stats: flag("MEMD_CONTEXT_SHOW_STATS"),
                show_last_summary: flag("MEMD_CONTEXT_SHOW_LAST_SUMMARY"),
                max_chars: context_max_chars,
                reinforce_alpha,
                semantic_limit,
            },
            home,
            path_env: None,
            warnings,
        }
    }
}

/// `37800 + uid % 100`: a range apart from claude-mem's 37700 so both can run side by side.
pub fn default_port() -> u16 {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    37800 + (uid % 100) as u16
}

/// `MEMD_DATA_DIR`, else `~/.memd`.
pub fn data_dir_from_env(env: &HashMap<String, String>) -> PathBuf {
    match env.get("MEMD_DATA_DIR").filter(|v| !v.trim().is_empty()) {
        Some(v) => expand_home(v, env.get("HOME").map(PathBuf::from).as_deref()),
        None => env
            .get("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"))
            .join(".memd"),
    }
}

fn expand_home(v: &str, home: Option<&Path>) -> PathBuf {
    match (v.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ if v == "~" => home.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(v)),
        _ => PathBuf::from(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_overrides_file_and_bad_values_warn() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"MEMD_DB_READERS":"2","MEMD_GROUP_COMMIT_MS":"9"}"#,
        )
        .unwrap();
        let env = HashMap::from([
            ("MEMD_GROUP_COMMIT_MS".to_string(), "5".to_string()),
            ("MEMD_DB_READERS".into(), "x".into()),
        ]);
        let (raw, w) = RawSettings::load(dir.path(), &env);
        assert!(w.is_empty());
        let s = Settings::resolve(dir.path().into(), &raw, None);
        assert_eq!(s.group_commit_ms, 5);
        assert_eq!(s.db_readers, 4, "bad value falls back to the default");
        assert_eq!(s.warnings.len(), 1);
        assert!(s.redact);
        assert_eq!(s.skip_tools.len(), 5);
    }

    #[test]
    fn loading_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let _ = RawSettings::load(dir.path(), &HashMap::new());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn provider_keys_fall_back_to_vendor_variables_and_stay_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let env = HashMap::from([("ANTHROPIC_API_KEY".to_string(), "sk-ant-secret".to_string())]);
        let (raw, _) = RawSettings::load(dir.path(), &env);
        let s = Settings::resolve(dir.path().into(), &raw, None);
        assert_eq!(s.observer.anthropic_api_key.as_ref().map(Secret::expose), Some("sk-ant-secret"));
        assert_eq!(s.observer.provider, "auto");
        assert!(!format!("{s:?}").contains("sk-ant-secret"));
    }

    #[test]
    fn debug_hides_values() {
        let raw = RawSettings::from_pairs([("MEMD_ANTHROPIC_API_KEY".to_string(), "sk-secret".to_string())]);
        assert!(!format!("{raw:?}").contains("sk-secret"));
    }
}

#[cfg(test)]
mod readme_tests {
    #[test]
    fn readme_lists_every_setting() {
        let readme = include_str!("../../README.md");
        for (key, _, _) in super::DEFAULTS {
            assert!(readme.contains(&format!("`{key}`")), "README.md misses {key}");
        }
    }
}
