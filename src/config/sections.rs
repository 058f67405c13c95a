//! Typed groups of settings used by one part of the worker each: retention, the observer
//! provider (with its secret keys), and context injection.

use std::path::PathBuf;

use super::{RawSettings, Settings};

/// Retention rules of docs/spec/storage.md §6 (0 disables a rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionSettings {
    pub tool_uses_days: u64,
    pub db_max_mb: u64,
    pub failed_days: u64,
    pub observations_days: u64,
    pub summaries_days: u64,
    pub prompts_days: u64,
    pub token_usage_days: u64,
}

/// A secret value (provider key): never printed by `Debug` or `Display`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: &str) -> Option<Self> {
        let v = value.trim();
        (!v.is_empty()).then(|| Self(v.to_string()))
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Observer provider settings (docs/design.md "The observer").
#[derive(Debug, Clone, Default)]
pub struct ProviderSettings {
    pub provider: String,
    pub model: String,
    pub anthropic_api_key: Option<Secret>,
    pub anthropic_base_url: String,
    pub openai_api_key: Option<Secret>,
    pub openai_base_url: String,
    pub gemini_api_key: Option<Secret>,
    pub gemini_base_url: String,
    pub claude_path: String,
    pub timeout_ms: u64,
    pub max_attempts: u32,
    pub max_defer_ms: u64,
    pub field_max_chars: usize,
}

/// Retrieval settings of docs/spec/retrieval.md §9 used by the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    pub observations: usize,
    pub summaries: usize,
    pub full_count: usize,
    pub full_field_facts: bool,
    pub show_stats: bool,
    pub show_last_summary: bool,
    pub max_chars: usize,
    pub reinforce_alpha: f64,
    pub semantic_limit: usize,
}

impl Default for ContextSettings {
    /// The values of [`DEFAULTS`].
    fn default() -> Self {
        Settings::resolve(PathBuf::new(), &RawSettings::default(), None).context
    }
}
