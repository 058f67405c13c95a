//! The alert pass (`MEMD_ALERT_*`): a job of the worker (its job table) queues observations of the
//! alert types into the outbox and posts each to the webhook — text cleaned by the privacy
//! pipeline again, nothing of an excluded project, retried with backoff, marked sent only after
//! a 2xx. It runs beside ingest and shares nothing with it but the store's writer, so a slow or
//! dead endpoint never holds up a hook.

use std::time::Duration;

use super::outbox::{Delivery, DueAlert};
use super::storage::AlertOutbox;
use super::{Alert, MAX_ATTEMPTS, body, next_attempt};
use crate::clock::now_ms;
use crate::config::{AlertSettings, Secret};
use crate::pipeline::privacy::Privacy;
use crate::store::StoreError;

/// One pass a second while a webhook is set.
pub const PASS: Duration = Duration::from_secs(1);
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
const DUE_MAX: usize = 20;

/// What an alert passes before it leaves: the privacy pipeline's rules, and whether a project
/// root is one memd does not record (the ingest pipeline answers both).
pub struct Screen<'a> {
    pub privacy: &'a Privacy,
    pub excluded: &'a (dyn Fn(&str) -> bool + Sync),
}

/// Queues what is new, then tries every due delivery once; how many it tried.
pub async fn pass(
    outbox: &dyn AlertOutbox,
    screen: &Screen<'_>,
    cfg: &AlertSettings,
    url: &Secret,
    client: &reqwest::Client,
) -> Result<usize, StoreError> {
    outbox.alerts_enqueue(cfg.types.clone(), now_ms()).await?;
    let due = outbox.alerts_due(now_ms(), DUE_MAX).await?;
    let tried = due.len();
    for due in due {
        let id = due.observation_id;
        let outcome = deliver(screen, cfg, url, client, due).await;
        if let Delivery::Failed { error, .. } = &outcome {
            tracing::warn!(observation_id = id, error = %error, "alert not delivered");
        }
        outbox.alert_delivered(id, outcome, now_ms()).await?;
    }
    Ok(tried)
}

async fn deliver(screen: &Screen<'_>, cfg: &AlertSettings, url: &Secret, client: &reqwest::Client, due: DueAlert) -> Delivery {
    let Some(o) = due.observation else {
        return Delivery::Skipped("forgotten".into());
    };
    if o.project_root.as_deref().is_some_and(screen.excluded) {
        return Delivery::Skipped("excluded project".into());
    }
    let clean = |s: &str| {
        let c = screen.privacy.clean_text(s);
        if c.private { String::new() } else { c.text }
    };
    let alert = Alert {
        observation_id: due.observation_id,
        obs_type: o.obs_type,
        title: clean(&o.title),
        narrative: clean(&o.narrative),
        project: o.project,
        created_at: o.created_at,
    };
    let req = client
        .post(url.expose())
        .header("idempotency-key", alert.idempotency_key())
        .json(&body(&alert, cfg.format, &cfg.telegram_chat_id));
    let error = match req.send().await {
        Ok(r) if r.status().is_success() => return Delivery::Sent,
        Ok(r) => format!("http {}", r.status().as_u16()),
        // Without the URL: it carries the webhook's token.
        Err(e) if e.is_timeout() => "timed out".to_string(),
        Err(e) if e.is_connect() => "connection failed".to_string(),
        Err(_) => "request failed".to_string(),
    };
    Delivery::Failed {
        error,
        next_at: next_attempt(now_ms(), due.attempts),
        give_up: due.attempts + 1 >= MAX_ATTEMPTS,
    }
}
