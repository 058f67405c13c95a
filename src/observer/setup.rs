//! What the observer runs with: its backend, mode, budget and bounds, and the call cap shared by
//! every provider instance. Built at start from the settings; a SIGHUP builds a new one (the call
//! cap stays: changing it needs a restart).

use std::path::Path;
use std::sync::Arc;

use crate::config::Settings;
use crate::modes::{load_mode, mode_search_dirs};
use crate::providers::select;

use crate::modes::Mode;
use crate::observer::prompt::DEFAULT_FIELD_MAX_CHARS;
use crate::providers::Backend;

/// The observer configuration.
#[derive(Debug, Clone)]
pub struct ObserverSetup {
    pub backend: Backend,
    pub mode_id: String,
    pub mode: Arc<Mode>,
    /// `MEMD_DAILY_TOKEN_BUDGET`; 0 = unlimited.
    pub budget: u64,
    pub field_max_chars: usize,
    pub max_defer_ms: u64,
    /// Open provider calls allowed at once, across every session (FIFO, so fair).
    pub calls: Arc<tokio::sync::Semaphore>,
    pub max_calls: usize,
}

impl Default for ObserverSetup {
    fn default() -> Self {
        let (mode, _) = crate::modes::load_mode("code", &[]);
        Self {
            backend: Backend::Extractive,
            mode_id: "code".into(),
            mode: Arc::new(mode),
            budget: 2_000_000,
            field_max_chars: DEFAULT_FIELD_MAX_CHARS,
            max_defer_ms: 900_000,
            calls: Arc::new(tokio::sync::Semaphore::new(4)),
            max_calls: 4,
        }
    }
}

impl ObserverSetup {
    /// The mode (`MEMD_MODE`, user modes first) and the provider (`MEMD_PROVIDER`); problems become
    /// status warnings, never a failed start.
    pub fn from_settings(settings: &mut Settings, data_dir: &Path) -> Self {
        let dirs = mode_search_dirs(settings.modes_dir.as_deref(), data_dir);
        let (mode, mode_warnings) = load_mode(&settings.mode, &dirs);
        let (backend, provider_warnings) = select(&settings.observer, settings.path_env.as_deref(), data_dir);
        for w in mode_warnings.iter().chain(&provider_warnings) {
            tracing::warn!(warning = %w, "observer setting");
        }
        settings.warnings.extend(mode_warnings);
        settings.warnings.extend(provider_warnings);
        let max_calls = settings.observer.concurrency;
        ObserverSetup {
            calls: Arc::new(tokio::sync::Semaphore::new(max_calls)),
            max_calls,
            backend,
            mode_id: mode.id.clone(),
            mode: Arc::new(mode),
            budget: settings.daily_token_budget,
            field_max_chars: settings.observer.field_max_chars,
            max_defer_ms: settings.observer.max_defer_ms,
        }
    }

    /// `self` with the call cap of `running` (the semaphore sessions already queue on).
    pub fn keeping_calls_of(mut self, running: &ObserverSetup) -> Self {
        self.calls = running.calls.clone();
        self.max_calls = running.max_calls;
        self
    }
}
