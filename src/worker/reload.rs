//! SIGHUP: re-read `<data>/settings.json` (the environment is the one the worker started with) and
//! apply what can change while the worker runs; say in the log what was applied and what needs a
//! restart. Live: the log filter, redaction rules, the provider (backend, model, keys, base URLs),
//! the token budget and observer bounds, retention, context injection, and the hooks' own keys
//! (each hook process reads those anyway). Everything else — port, data dir, database, batching,
//! HTTP limits, embeddings, the observer call cap — is reported as needing a restart.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ractor::ActorRef;

use crate::actors::root::RootMsg;
use crate::config::keys::{self, Key};
use crate::config::live::Live;
use crate::config::{KEYS, RawSettings, Settings};
use crate::observer::setup::ObserverSetup;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::{RedactConfig, Redactor};

/// Keys a reload applies without a restart.
const LIVE: &[&Key] = &[
    &keys::LOG,
    &keys::REDACT,
    &keys::REDACT_DISABLED_BUILTINS,
    &keys::REDACT_CUSTOM_PATTERNS,
    &keys::PROVIDER,
    &keys::MODEL,
    &keys::ANTHROPIC_API_KEY,
    &keys::ANTHROPIC_BASE_URL,
    &keys::OPENAI_API_KEY,
    &keys::OPENAI_BASE_URL,
    &keys::GEMINI_API_KEY,
    &keys::GEMINI_BASE_URL,
    &keys::CLAUDE_PATH,
    &keys::DAILY_TOKEN_BUDGET,
    &keys::SEARCH_KEYWORD_WEIGHT,
    &keys::SEARCH_VECTOR_WEIGHT,
    &keys::SEARCH_VECTOR_FLOOR,
    &keys::SEARCH_RRF_K,
    &keys::OBSERVER_MAX_DEFER_MS,
    &keys::OBSERVER_FIELD_MAX_CHARS,
    &keys::RETENTION_TOOL_USES_DAYS,
    &keys::RETENTION_DB_MAX_MB,
    &keys::RETENTION_FAILED_DAYS,
    &keys::RETENTION_OBSERVATIONS_DAYS,
    &keys::RETENTION_SUMMARIES_DAYS,
    &keys::RETENTION_PROMPTS_DAYS,
    &keys::RETENTION_TOKEN_USAGE_DAYS,
    &keys::CONTEXT_SHOW_TERMINAL_OUTPUT,
    &keys::SEMANTIC_INJECT,
    &keys::FILE_CONTEXT,
    &keys::CONTEXT_OBSERVATIONS,
    &keys::CONTEXT_SESSION_COUNT,
    &keys::CONTEXT_FULL_COUNT,
    &keys::CONTEXT_FULL_FIELD,
    &keys::CONTEXT_SHOW_STATS,
    &keys::CONTEXT_SHOW_LAST_SUMMARY,
    &keys::CONTEXT_MAX_CHARS,
    &keys::SEMANTIC_INJECT_LIMIT,
    &keys::HOOK_BUDGET_MS,
    &keys::HOOK_ASYNC_BUDGET_MS,
    &keys::AUTOSTART,
    &keys::SPOOL_MAX_FILES,
];

/// What one reload found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReloadReport {
    pub applied: Vec<&'static str>,
    pub needs_restart: Vec<&'static str>,
    /// Problems with the new values (a bad log filter, a skipped redaction pattern).
    pub warnings: Vec<String>,
}

/// The keys whose given value differs between `old` and `new`, split into live and restart.
pub fn classify(old: &RawSettings, new: &RawSettings) -> ReloadReport {
    let mut r = ReloadReport::default();
    for k in KEYS {
        if old.given(k) == new.given(k) {
            continue;
        }
        if LIVE.iter().any(|l| l.name == k.name) {
            r.applied.push(k.name);
        } else {
            r.needs_restart.push(k.name);
        }
    }
    r
}

/// What a reload reaches.
pub struct Reloader {
    pub env: HashMap<String, String>,
    pub data_dir: PathBuf,
    pub settings: Arc<Live<Settings>>,
    pub privacy: Arc<Privacy>,
    pub root: ActorRef<RootMsg>,
    /// The API token, which the redactor always removes.
    pub token: String,
    /// The raw settings the running values came from.
    pub last: Mutex<RawSettings>,
}

impl Reloader {
    /// Re-reads the settings and applies the live ones. Reads one small file: call it from a
    /// blocking thread.
    pub fn reload(&self) -> ReloadReport {
        let (raw, file_warnings) = RawSettings::load(&self.data_dir, &self.env);
        let mut report = classify(&self.last.lock().unwrap_or_else(|p| p.into_inner()), &raw);
        report.warnings.extend(file_warnings.iter().cloned());
        if report.applied.is_empty() {
            *self.last.lock().unwrap_or_else(|p| p.into_inner()) = raw;
            return report;
        }
        let running = self.settings.get();
        let fresh = Settings::from_raw(self.data_dir.clone(), &raw, file_warnings, &self.env);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = raw;
        // Keep what only a restart changes, so status keeps telling the truth about it.
        let mut next = (*running).clone();
        next.log_filter = fresh.log_filter.clone();
        next.redact = fresh.redact;
        next.redact_disabled_builtins = fresh.redact_disabled_builtins.clone();
        next.redact_custom_patterns = fresh.redact_custom_patterns.clone();
        next.observer = crate::config::ProviderSettings {
            timeout_ms: running.observer.timeout_ms,
            max_attempts: running.observer.max_attempts,
            concurrency: running.observer.concurrency,
            ..fresh.observer.clone()
        };
        next.daily_token_budget = fresh.daily_token_budget;
        next.retention = fresh.retention;
        next.context = fresh.context.clone();
        next.hook = fresh.hook.clone();
        next.vectors.fusion = fresh.vectors.fusion;
        if report.applied.contains(&keys::LOG.name)
            && let Err(e) = crate::logging::set_filter(&next.log_filter)
        {
            report.warnings.push(format!("MEMD_LOG not applied: {e}"));
        }
        let (redactor, warnings) = Redactor::new(&RedactConfig {
            redact: next.redact,
            disabled_builtins: &next.redact_disabled_builtins,
            custom_patterns_json: &next.redact_custom_patterns,
            memd_token: Some(&self.token),
        });
        report.warnings.extend(warnings);
        self.privacy.set_redactor(redactor);
        let setup = ObserverSetup::from_settings(&mut next, &self.data_dir);
        let _ = self.root.cast(RootMsg::Reconfigure(Box::new(setup)));
        self.settings.set(next);
        report
    }
}

/// Waits for SIGHUPs (`doorbell`) and reloads at each, logging what was applied and what needs a
/// restart. Runs under supervision for the worker's life.
pub async fn on_sighup(reloader: Arc<Reloader>, doorbell: Arc<tokio::sync::Notify>) {
    loop {
        doorbell.notified().await;
        let r = reloader.clone();
        let Ok(report) = tokio::task::spawn_blocking(move || r.reload()).await else {
            tracing::warn!("settings reload failed; the running settings stay");
            continue;
        };
        for w in &report.warnings {
            tracing::warn!(warning = %w, "reload");
        }
        tracing::info!(
            applied = %report.applied.join(","),
            needs_restart = %report.needs_restart.join(","),
            "settings reloaded"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawSettings {
        RawSettings::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn live_keys_apply_and_the_rest_wait_for_a_restart() {
        let old = raw(&[("MEMD_DAILY_TOKEN_BUDGET", "1000"), ("MEMD_PORT", "1")]);
        let new = raw(&[("MEMD_DAILY_TOKEN_BUDGET", "2000"), ("MEMD_PORT", "2"), ("MEMD_LOG", "debug")]);
        let r = classify(&old, &new);
        assert_eq!(r.applied, vec!["MEMD_LOG", "MEMD_DAILY_TOKEN_BUDGET"]);
        assert_eq!(r.needs_restart, vec!["MEMD_PORT"]);
        assert_eq!(classify(&new, &new), ReloadReport::default());
    }
}
