//! Alerts (issue 39; `MEMD_ALERT_*`), one feature in one folder: the bodies the webhook receives
//! for one observation — generic JSON, a Slack incoming-webhook message, or a Telegram
//! `sendMessage` — from text already cleaned by the privacy pipeline, and the retry schedule
//! (here, pure); the outbox's table (`outbox.rs`); its storage trait and the SQLite implementation
//! (`storage.rs`); the pass that queues and sends (`service.rs`), which the worker's job table
//! runs.

pub mod outbox;
pub mod service;
pub mod storage;

use serde_json::{Value, json};

use crate::text::lines::one_line;

/// Attempts after which a delivery is given up (about a day at the capped backoff).
pub const MAX_ATTEMPTS: i64 = 100;
const BACKOFF_CAP_MS: i64 = 15 * 60_000;
const NARRATIVE_MAX: usize = 1_500;

/// One alert's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub observation_id: i64,
    pub obs_type: String,
    pub title: String,
    pub narrative: String,
    pub project: String,
    pub created_at: String,
}

impl Alert {
    /// The same for every attempt of one alert, so a receiver can drop a repeat.
    pub fn idempotency_key(&self) -> String {
        format!("memd-{}-{}", self.observation_id, self.created_at)
    }

    fn line(&self) -> String {
        format!(
            "memd {} in {}: #{} {}",
            one_line(&self.obs_type, 40),
            one_line(&self.project, 80),
            self.observation_id,
            one_line(&self.title, 200)
        )
    }
}

/// The body for `format` (`json`, `slack`, `telegram`).
pub fn body(a: &Alert, format: &str, telegram_chat_id: &str) -> Value {
    let narrative = one_line(&a.narrative, NARRATIVE_MAX);
    match format {
        "slack" => json!({"text": format!("*{}*\n{narrative}", a.line())}),
        "telegram" => json!({
            "chat_id": telegram_chat_id,
            "text": format!("{}\n{narrative}", a.line()),
            "disable_web_page_preview": true,
        }),
        _ => json!({
            "source": "memd",
            "idempotency_key": a.idempotency_key(),
            "observation_id": a.observation_id,
            "type": a.obs_type,
            "title": a.title,
            "narrative": a.narrative,
            "project": a.project,
            "created_at": a.created_at,
        }),
    }
}

/// When attempt `attempts + 1` may run after a failure at `now`: 1 s, 2 s, 4 s … capped at 15 min.
pub fn next_attempt(now: i64, attempts: i64) -> i64 {
    now + (1_000_i64 << attempts.clamp(0, 20)).min(BACKOFF_CAP_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert() -> Alert {
        Alert {
            observation_id: 7,
            obs_type: "security_alert".into(),
            title: "Token in <config>".into(),
            narrative: "The key was\ncommitted.".into(),
            project: "shop".into(),
            created_at: "2026-12-04T10:00:00Z".into(),
        }
    }

    #[test]
    fn each_shape_carries_the_alert() {
        let a = alert();
        let j = body(&a, "json", "");
        assert_eq!(
            (j["observation_id"].as_i64(), j["type"].as_str()),
            (Some(7), Some("security_alert"))
        );
        assert_eq!(j["idempotency_key"], "memd-7-2026-12-04T10:00:00Z");
        let s = body(&a, "slack", "");
        assert_eq!(
            s["text"],
            "*memd security_alert in shop: #7 Token in ‹config›*\nThe key was committed."
        );
        let t = body(&a, "telegram", "-100123");
        assert_eq!(t["chat_id"], "-100123");
        assert!(t["text"].as_str().unwrap().starts_with("memd security_alert in shop: #7"));
    }

    #[test]
    fn retries_back_off_to_a_cap() {
        assert_eq!(next_attempt(0, 0), 1_000);
        assert_eq!(next_attempt(0, 3), 8_000);
        assert_eq!(next_attempt(0, 40), 15 * 60_000);
    }
}
