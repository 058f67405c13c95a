//! Settings: every `MEMD_*` key once, in the typed table of [`keys`], read by one rule per kind
//! ([`RawSettings`]) in every process — the worker and the CLI through [`Settings`], the hook
//! through the same [`RawSettings`] accessors.
//!
//! Values come from `<data>/settings.json` (flat string keys) overridden by the environment. The
//! environment is read once in `main.rs` and passed in as a map; loading never writes files.
//! Values the rules cannot read fall back to the default with a warning (shown by `memd status`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod handoff;
pub mod keys;
pub mod live;
mod raw;
mod sections;
mod team;
mod watch;

pub use handoff::{AlertSettings, FolderSettings, NativeMemorySettings};
pub use keys::{KEYS, Key, Kind};
pub use raw::{RawSettings, parse_flag};
pub use sections::{
    ChromaSettings, ContextSettings, EMBED_MODEL_NAME, EmbeddingsMode, EncoderKind, Fusion, HookSettings, HttpSettings, ProviderSettings,
    RetentionSettings, Secret, VectorSettings, resolve_kernel,
};
pub use team::TeamSettings;
pub use watch::WatchSettings;

/// Typed settings of the worker and the CLI.
#[derive(Debug, Clone)]
pub struct Settings {
    pub data_dir: PathBuf,
    pub port: u16,
    /// `MEMD_PORT` was given (a taken port is then an error, not a reason to pick another).
    pub port_explicit: bool,
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
    /// `MEMD_GRAPH`: stored batches get their graph (issue 41).
    pub graph: bool,
    /// `MEMD_GRAPH_SEARCH`: search expands an identifier through the graph (issue 41).
    pub graph_search: bool,
    pub redact_disabled_builtins: String,
    pub redact_custom_patterns: String,
    pub tool_use_max_chars: usize,
    pub mode: String,
    pub modes_dir: Option<String>,
    pub observer: ProviderSettings,
    pub daily_token_budget: u64,
    pub retention: RetentionSettings,
    pub spool_scan_ms: u64,
    pub http: HttpSettings,
    pub vectors: VectorSettings,
    pub context: ContextSettings,
    /// The transcript watcher (the worker's actor, `memd watch`'s defaults).
    pub watch: WatchSettings,
    /// Folder context files (issue 39).
    pub folders: FolderSettings,
    /// Alerts to a webhook (issue 39).
    pub alerts: AlertSettings,
    /// Claude Code's own memory files and imported notes (issue 39).
    pub native: NativeMemorySettings,
    /// Team memory on PostgreSQL (issue 40); None without `MEMD_TEAM_DATABASE_URL`.
    pub team: Option<TeamSettings>,
    /// What the hooks read (also resolved here, so `memd status` and the CLI agree with them).
    pub hook: HookSettings,
    pub home: Option<PathBuf>,
    /// `PATH` of the worker's environment (where `auto` / `claude-cli` look for `claude`).
    pub path_env: Option<String>,
    pub warnings: Vec<String>,
}

impl Settings {
    /// `<data>/settings.json` and the environment, resolved: what `memd serve` and every CLI
    /// command start from.
    pub fn load(data_dir: PathBuf, env: &HashMap<String, String>) -> Self {
        let (raw, file_warnings) = RawSettings::load(&data_dir, env);
        Self::from_raw(data_dir, &raw, file_warnings, env)
    }

    /// [`Settings::load`] from raw values already read (`memd serve` keeps them: a SIGHUP
    /// compares the next read against them).
    pub fn from_raw(data_dir: PathBuf, raw: &RawSettings, file_warnings: Vec<String>, env: &HashMap<String, String>) -> Self {
        let mut settings = Self::resolve(data_dir, raw, env.get("HOME").map(PathBuf::from));
        settings.warnings.extend(file_warnings);
        settings.path_env = env.get("PATH").cloned();
        settings.watch = settings.watch.clone().with_default_roots(env);
        settings
    }

    pub fn resolve(data_dir: PathBuf, raw: &RawSettings, home: Option<PathBuf>) -> Self {
        use keys::*;
        let mut w = Vec::new();
        let port = match raw.given(&PORT) {
            Some(_) => raw.int(&PORT, &mut w) as u16,
            None => default_port(),
        };
        let port_explicit = raw.given(&PORT).is_some();
        let observer = ProviderSettings {
            provider: raw.text(&PROVIDER).to_ascii_lowercase(),
            model: raw.text(&MODEL),
            anthropic_api_key: Secret::new(&raw.text(&ANTHROPIC_API_KEY)),
            anthropic_base_url: raw.text(&ANTHROPIC_BASE_URL),
            openai_api_key: Secret::new(&raw.text(&OPENAI_API_KEY)),
            openai_base_url: raw.text(&OPENAI_BASE_URL),
            gemini_api_key: Secret::new(&raw.text(&GEMINI_API_KEY)),
            gemini_base_url: raw.text(&GEMINI_BASE_URL),
            claude_path: raw.text(&CLAUDE_PATH),
            timeout_ms: raw.int(&OBSERVER_TIMEOUT_MS, &mut w),
            max_attempts: raw.int(&OBSERVER_MAX_ATTEMPTS, &mut w) as u32,
            max_defer_ms: raw.int(&OBSERVER_MAX_DEFER_MS, &mut w),
            field_max_chars: raw.int(&OBSERVER_FIELD_MAX_CHARS, &mut w) as usize,
            concurrency: raw.int(&OBSERVER_CONCURRENCY, &mut w) as usize,
        };
        let retention = RetentionSettings {
            tool_uses_days: raw.int(&RETENTION_TOOL_USES_DAYS, &mut w),
            db_max_mb: raw.int(&RETENTION_DB_MAX_MB, &mut w),
            failed_days: raw.int(&RETENTION_FAILED_DAYS, &mut w),
            observations_days: raw.int(&RETENTION_OBSERVATIONS_DAYS, &mut w),
            summaries_days: raw.int(&RETENTION_SUMMARIES_DAYS, &mut w),
            prompts_days: raw.int(&RETENTION_PROMPTS_DAYS, &mut w),
            token_usage_days: raw.int(&RETENTION_TOKEN_USAGE_DAYS, &mut w),
            backup_interval_hours: raw.int(&BACKUP_INTERVAL_HOURS, &mut w),
            backup_keep: raw.int(&BACKUP_KEEP, &mut w),
            freshness: raw.flag(&FRESHNESS, &mut w),
            consolidate_interval_hours: raw.int(&CONSOLIDATE_INTERVAL_HOURS, &mut w),
        };
        let context = ContextSettings {
            observations: raw.int(&CONTEXT_OBSERVATIONS, &mut w) as usize,
            summaries: raw.int(&CONTEXT_SESSION_COUNT, &mut w) as usize,
            full_count: raw.int(&CONTEXT_FULL_COUNT, &mut w) as usize,
            full_field_facts: raw.choice(&CONTEXT_FULL_FIELD, &mut w) == "facts",
            show_stats: raw.flag(&CONTEXT_SHOW_STATS, &mut w),
            show_last_summary: raw.flag(&CONTEXT_SHOW_LAST_SUMMARY, &mut w),
            max_chars: raw.int(&CONTEXT_MAX_CHARS, &mut w) as usize,
            reinforce_alpha: raw.float(&REINFORCE_ALPHA, &mut w),
            semantic_limit: raw.int(&SEMANTIC_INJECT_LIMIT, &mut w) as usize,
            work_state: raw.flag(&WORK_STATE, &mut w),
            work_state_max_chars: raw.int(&WORK_STATE_MAX_CHARS, &mut w) as usize,
            work_stale_days: raw.int(&WORK_STALE_DAYS, &mut w),
            drop_unused_after: raw.int(&USE_INDEX_DROP_AFTER, &mut w),
        };
        let hook = HookSettings::resolve(raw, &mut w);
        let vectors = VectorSettings::resolve(&data_dir, raw, &mut w);
        let watch = WatchSettings::resolve(raw, home.as_deref(), &mut w);
        let folders = FolderSettings::resolve(raw, &mut w);
        let alerts = AlertSettings::resolve(raw, &mut w);
        let native = NativeMemorySettings::resolve(raw, home.as_deref(), &mut w);
        let team = TeamSettings::resolve(raw, &mut w);
        Self {
            port,
            port_explicit,
            log_filter: raw.text(&LOG),
            db_synchronous_full: raw.choice(&DB_SYNCHRONOUS, &mut w) == "FULL",
            db_readers: raw.int(&DB_READERS, &mut w) as usize,
            group_commit_ms: raw.int(&GROUP_COMMIT_MS, &mut w),
            store_queue_max: raw.int(&STORE_QUEUE_MAX, &mut w) as usize,
            batch_max_events: raw.int(&BATCH_MAX_EVENTS, &mut w) as usize,
            batch_max_chars: raw.int(&BATCH_MAX_CHARS, &mut w) as usize,
            batch_debounce_ms: raw.int(&BATCH_DEBOUNCE_MS, &mut w),
            batch_max_wait_ms: raw.int(&BATCH_MAX_WAIT_MS, &mut w),
            session_idle_ms: raw.int(&SESSION_IDLE_MS, &mut w),
            reaper_interval_ms: raw.int(&REAPER_INTERVAL_MS, &mut w),
            excluded_projects: raw.text(&EXCLUDED_PROJECTS),
            skip_tools: raw.list(&SKIP_TOOLS),
            redact: raw.flag(&REDACT, &mut w),
            graph: raw.flag(&GRAPH, &mut w),
            graph_search: raw.flag(&GRAPH_SEARCH, &mut w),
            redact_disabled_builtins: raw.text(&REDACT_DISABLED_BUILTINS),
            redact_custom_patterns: raw.text(&REDACT_CUSTOM_PATTERNS),
            tool_use_max_chars: raw.int(&TOOL_USE_MAX_CHARS, &mut w) as usize,
            mode: raw.text(&MODE),
            modes_dir: raw.given(&MODES_DIR).map(String::from),
            observer,
            daily_token_budget: raw.int(&DAILY_TOKEN_BUDGET, &mut w),
            retention,
            spool_scan_ms: raw.int(&SPOOL_SCAN_MS, &mut w),
            http: HttpSettings {
                max_connections: raw.int(&HTTP_MAX_CONNECTIONS, &mut w) as usize,
                header_timeout_ms: raw.int(&HTTP_HEADER_TIMEOUT_MS, &mut w),
                body_timeout_ms: raw.int(&HTTP_BODY_TIMEOUT_MS, &mut w),
                idle_timeout_ms: raw.int(&HTTP_IDLE_TIMEOUT_MS, &mut w),
            },
            vectors,
            context,
            watch,
            folders,
            alerts,
            native,
            team,
            hook,
            data_dir,
            home,
            path_env: None,
            warnings: w,
        }
    }

    /// The resolved value of a flag key (None: `key` is not a flag).
    pub fn flag(&self, key: &Key) -> Option<bool> {
        use keys::*;
        let c = &self.context;
        Some(match key.name {
            n if n == REDACT.name => self.redact,
            n if n == GRAPH.name => self.graph,
            n if n == GRAPH_SEARCH.name => self.graph_search,
            n if n == WATCH.name => self.watch.enabled,
            n if n == FOLDER_CONTEXT.name => self.folders.enabled,
            n if n == NATIVE_MEMORY.name => self.native.enabled,
            n if n == FRESHNESS.name => self.retention.freshness,
            n if n == CONTEXT_SHOW_STATS.name => c.show_stats,
            n if n == CONTEXT_SHOW_LAST_SUMMARY.name => c.show_last_summary,
            n if n == WORK_STATE.name => c.work_state,
            _ => return self.hook.flag(key),
        })
    }
}

/// `MEMD_PORT` as given, when it is not a port (issue 37: an error, never a silent clamp).
pub fn port_error(raw: &RawSettings) -> Option<String> {
    let v = raw.given(&keys::PORT)?;
    match v.trim().parse::<u16>() {
        Ok(_) => None,
        Err(_) => Some(format!("MEMD_PORT={v:?} is not a port number (0-65535; 0 picks a free port)")),
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
mod settings_doc_tests {
    /// docs/settings.md's table is the generated one, byte for byte (regenerate it from the
    /// failure message after editing `keys.rs`); README points there.
    #[test]
    fn the_settings_doc_shows_the_settings_table() {
        let doc = include_str!("../../docs/settings.md");
        let table = super::keys::markdown_table();
        assert!(
            doc.contains(&table),
            "docs/settings.md's settings table is out of date: paste `memd settings --markdown`:\n{table}"
        );
        assert!(include_str!("../../README.md").contains("(docs/settings.md)"));
    }
}

#[cfg(test)]
mod agreement_tests;
