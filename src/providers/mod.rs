//! Observer backends (docs/design.md "The observer"): one file per provider, all behind [`Backend`].
//!
//! Each backend turns an [`LlmRequest`] (Part A as the system text, then user/assistant turns)
//! into an [`LlmReply`] or a classified [`CallError`]. HTTP statuses map to error kinds before any
//! text is read (docs/spec/pipeline.md §11): 401/403 auth, 429 quota (with Retry-After), 413 or a
//! "context too long" body overflow, 5xx/408/transport/timeout transient. Keys live in
//! [`crate::config::Secret`] and never reach logs or `Debug` output.

pub mod anthropic;
pub mod children;
pub mod claude_cli;
pub mod gemini;
pub mod openai;
pub mod prose;

use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use crate::config::ProviderSettings;
use prose::{ProseKind, classify_prose};

/// Default model of the Anthropic Messages API and of the `claude` CLI.
pub const DEFAULT_CLAUDE_MODEL: &str = "claude-haiku-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";
/// Output budget of one observer call.
pub const MAX_OUTPUT_TOKENS: u32 = 4_096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: Role,
    pub text: String,
}

/// One self-contained observer call: Part A as system text, then the turns (user first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmRequest {
    pub system: String,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmReply {
    pub text: String,
    /// Every input token, cached or not.
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Of `input_tokens`, those read from the provider's prompt cache (billed at its cache rate).
    pub cached_input_tokens: i64,
    /// The conversation the `claude` CLI kept (its `session_id`); None for the HTTP providers.
    pub session_id: Option<String>,
}

/// Why a call failed, already classified for the breakers (docs/spec/pipeline.md §13).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Transport error, timeout, 5xx, undecodable answer: retried with backoff.
    #[error("transient: {0}")]
    Transient(String),
    /// 429 or quota prose; `retry_after_ms` from the Retry-After header when given.
    #[error("quota: {reason}")]
    Quota { retry_after_ms: Option<u64>, reason: String },
    /// 401/403 or auth prose.
    #[error("auth: {0}")]
    Auth(String),
    /// The request is too long for the model's context.
    #[error("overflow: {0}")]
    Overflow(String),
}

impl CallError {
    /// What the provider or the transport said, without the kind.
    pub fn reason(&self) -> &str {
        match self {
            CallError::Transient(r) | CallError::Auth(r) | CallError::Overflow(r) => r,
            CallError::Quota { reason, .. } => reason,
        }
    }

    /// The `claude` CLI could not resume a kept conversation (it was deleted or expired).
    pub fn is_lost_session(&self) -> bool {
        let CallError::Transient(reason) = self else {
            return false;
        };
        let r = reason.to_ascii_lowercase();
        r.contains("no conversation found") || r.contains("session not found") || r.contains("invalid session")
    }
}

/// The configured backend kind (`MEMD_PROVIDER` after `auto` resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    Gemini,
    ClaudeCli,
    Extractive,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::Gemini => "gemini",
            Self::ClaudeCli => "claude-cli",
            Self::Extractive => "extractive",
        }
    }
}

/// A ready-to-call backend. Cheap to clone (the HTTP client is shared).
#[derive(Debug, Clone)]
pub enum Backend {
    Anthropic(anthropic::Anthropic),
    OpenAi(openai::OpenAi),
    Gemini(gemini::Gemini),
    ClaudeCli(claude_cli::ClaudeCli),
    Extractive,
}

impl Backend {
    pub fn kind(&self) -> ProviderKind {
        match self {
            Self::Anthropic(_) => ProviderKind::Anthropic,
            Self::OpenAi(_) => ProviderKind::OpenAi,
            Self::Gemini(_) => ProviderKind::Gemini,
            Self::ClaudeCli(_) => ProviderKind::ClaudeCli,
            Self::Extractive => ProviderKind::Extractive,
        }
    }

    pub fn model(&self) -> &str {
        match self {
            Self::Anthropic(p) => &p.model,
            Self::OpenAi(p) => &p.model,
            Self::Gemini(p) => &p.model,
            Self::ClaudeCli(p) => &p.model,
            Self::Extractive => "extractive",
        }
    }

    /// One turn of a conversation the `claude` CLI keeps: `resume` continues its session
    /// (`--resume`), the reply names the session. The HTTP providers keep none: the request
    /// carries the whole conversation and `resume` is ignored.
    pub async fn converse(&self, req: &LlmRequest, resume: Option<&str>) -> Result<LlmReply, CallError> {
        match self {
            Self::ClaudeCli(p) => p.converse(req, resume).await,
            other => other.call(req).await,
        }
    }

    /// Whether the provider keeps the conversation itself (the `claude` CLI's sessions).
    pub fn keeps_sessions(&self) -> bool {
        matches!(self, Self::ClaudeCli(_))
    }

    /// One call, bounded by the configured timeout.
    pub async fn call(&self, req: &LlmRequest) -> Result<LlmReply, CallError> {
        match self {
            Self::Anthropic(p) => p.call(req).await,
            Self::OpenAi(p) => p.call(req).await,
            Self::Gemini(p) => p.call(req).await,
            Self::ClaudeCli(p) => p.call(req).await,
            Self::Extractive => Err(CallError::Transient("the extractive observer makes no calls".into())),
        }
    }
}

/// Resolves `MEMD_PROVIDER` (`auto`: anthropic with a key, else claude-cli when `claude` is found,
/// else extractive) and builds the backend. Unknown names and missing keys fall back to
/// extractive with a warning.
pub fn select(s: &ProviderSettings, path_env: Option<&str>, data_dir: &Path) -> (Backend, Vec<String>) {
    let mut warnings = Vec::new();
    let timeout = Duration::from_millis(s.timeout_ms);
    let model = |default: &str| if s.model.is_empty() { default.to_string() } else { s.model.clone() };
    let claude = claude_binary(s, path_env);
    let kind = match s.provider.as_str() {
        "auto" => match (&s.anthropic_api_key, &claude) {
            (Some(_), _) => ProviderKind::Anthropic,
            (None, Some(_)) => ProviderKind::ClaudeCli,
            (None, None) => ProviderKind::Extractive,
        },
        "anthropic" => ProviderKind::Anthropic,
        "openai" => ProviderKind::OpenAi,
        "gemini" => ProviderKind::Gemini,
        "claude-cli" | "claude_cli" => ProviderKind::ClaudeCli,
        "extractive" | "none" | "" => ProviderKind::Extractive,
        other => {
            warnings.push(format!("unknown MEMD_PROVIDER {other:?}; using the extractive observer"));
            ProviderKind::Extractive
        }
    };
    let backend = match kind {
        ProviderKind::Anthropic => match &s.anthropic_api_key {
            Some(key) => Backend::Anthropic(anthropic::Anthropic::new(
                &s.anthropic_base_url,
                key.clone(),
                model(DEFAULT_CLAUDE_MODEL),
                timeout,
            )),
            None => {
                warnings.push("MEMD_PROVIDER=anthropic but no Anthropic key is set; using the extractive observer".into());
                Backend::Extractive
            }
        },
        ProviderKind::OpenAi => Backend::OpenAi(openai::OpenAi::new(
            &s.openai_base_url,
            s.openai_api_key.clone(),
            model(DEFAULT_OPENAI_MODEL),
            timeout,
        )),
        ProviderKind::Gemini => match &s.gemini_api_key {
            Some(key) => Backend::Gemini(gemini::Gemini::new(
                &s.gemini_base_url,
                key.clone(),
                model(DEFAULT_GEMINI_MODEL),
                timeout,
            )),
            None => {
                warnings.push("MEMD_PROVIDER=gemini but no Gemini key is set; using the extractive observer".into());
                Backend::Extractive
            }
        },
        ProviderKind::ClaudeCli => match claude {
            Some(path) => Backend::ClaudeCli(claude_cli::ClaudeCli::new(path, model(DEFAULT_CLAUDE_MODEL), timeout, data_dir)),
            None => {
                warnings.push("MEMD_PROVIDER=claude-cli but no claude binary was found; using the extractive observer".into());
                Backend::Extractive
            }
        },
        ProviderKind::Extractive => Backend::Extractive,
    };
    (backend, warnings)
}

/// `MEMD_CLAUDE_PATH`, else `claude` in one of the `PATH` directories.
fn claude_binary(s: &ProviderSettings, path_env: Option<&str>) -> Option<PathBuf> {
    if !s.claude_path.is_empty() {
        return Some(PathBuf::from(&s.claude_path));
    }
    std::env::split_paths(path_env?).map(|d| d.join("claude")).find(|p| p.is_file())
}

/// Redirects are followed only within the origin of the first request (scheme, host and port),
/// at most 5: an alert body, a prompt or a key is never re-sent to another host (issue 50).
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else if same {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// The shared HTTP client (rustls with the ring provider, installed once); redirects stay within
/// the first request's origin ([`same_origin_redirects`]).
pub fn http_client(timeout: Duration) -> reqwest::Client {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .redirect(same_origin_redirects())
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Maps an HTTP failure to a [`CallError`] (statuses first, then the body text).
pub fn classify_status(status: u16, retry_after: Option<&str>, body: &str) -> CallError {
    let snippet: String = body.chars().take(300).collect();
    match status {
        401 | 403 => CallError::Auth(format!("http {status}")),
        429 => CallError::Quota {
            retry_after_ms: retry_after.and_then(parse_retry_after),
            reason: match retry_after {
                Some(v) => format!("429 Retry-After {}", v.trim()),
                None => "429".into(),
            },
        },
        413 => CallError::Overflow(format!("http 413: {snippet}")),
        _ => match classify_prose(body) {
            ProseKind::Overflow => CallError::Overflow(format!("http {status}: {snippet}")),
            ProseKind::Quota => CallError::Quota {
                retry_after_ms: None,
                reason: format!("http {status}: {snippet}"),
            },
            ProseKind::Auth if (400..500).contains(&status) => CallError::Auth(format!("http {status}")),
            _ => CallError::Transient(format!("http {status}: {snippet}")),
        },
    }
}

/// `Retry-After` in seconds (HTTP dates are not honoured: the default wait applies).
pub fn parse_retry_after(v: &str) -> Option<u64> {
    let secs: f64 = v.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then_some((secs * 1000.0) as u64)
}

/// Sends a JSON POST and returns the decoded JSON answer or a classified error.
pub async fn post_json(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> Result<serde_json::Value, CallError> {
    let mut req = client.post(url).json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.map_err(|e| {
        let kind = if e.is_timeout() { "timeout" } else { "transport error" };
        CallError::Transient(format!("{kind}: {}", e.without_url()))
    })?;
    let status = resp.status().as_u16();
    let retry_after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(String::from);
    let text = resp
        .text()
        .await
        .map_err(|e| CallError::Transient(format!("reading the answer: {}", e.without_url())))?;
    if !(200..300).contains(&status) {
        return Err(classify_status(status, retry_after.as_deref(), &text));
    }
    serde_json::from_str(&text).map_err(|e| CallError::Transient(format!("undecodable answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_breaker_kinds() {
        assert!(matches!(classify_status(401, None, ""), CallError::Auth(_)));
        assert_eq!(
            classify_status(429, Some("2"), ""),
            CallError::Quota {
                retry_after_ms: Some(2_000),
                reason: "429 Retry-After 2".into()
            }
        );
        assert!(matches!(
            classify_status(400, None, r#"{"error":{"message":"prompt is too long: 250000 tokens"}}"#),
            CallError::Overflow(_)
        ));
        assert!(matches!(classify_status(500, None, "oops"), CallError::Transient(_)));
        assert!(matches!(classify_status(529, None, "overloaded"), CallError::Transient(_)));
    }

    #[test]
    fn auto_picks_anthropic_with_a_key_then_claude_then_extractive() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ProviderSettings {
            provider: "auto".into(),
            timeout_ms: 1_000,
            ..Default::default()
        };
        assert_eq!(select(&s, Some(""), dir.path()).0.kind(), ProviderKind::Extractive);
        let bin = dir.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        let path = dir.path().to_str().unwrap().to_string();
        assert_eq!(select(&s, Some(&path), dir.path()).0.kind(), ProviderKind::ClaudeCli);
        s.anthropic_api_key = crate::config::Secret::new("sk-ant-x");
        let (backend, _) = select(&s, Some(&path), dir.path());
        assert_eq!((backend.kind(), backend.model()), (ProviderKind::Anthropic, DEFAULT_CLAUDE_MODEL));
        assert!(!format!("{backend:?}").contains("sk-ant-x"));
    }
}
