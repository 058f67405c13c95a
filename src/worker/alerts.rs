//! Alerts (issue 39; `MEMD_ALERT_*`): a job of the worker ([`super::job_table`]) queues observations of the
//! alert types into the outbox and posts each to the webhook — text cleaned by the privacy
//! pipeline again, nothing of an excluded project, retried with backoff, marked sent only after
//! a 2xx. It runs beside ingest and shares nothing with it but the store's writer, so a slow or
//! dead endpoint never holds up a hook.

use std::time::Duration;

use super::Services;
use crate::alerts::{Alert, MAX_ATTEMPTS, body, next_attempt};
use crate::clock::now_ms;
use crate::config::{AlertSettings, Secret};
use crate::store::alerts::{Delivery, DueAlert};

/// One pass a second while a webhook is set.
pub(super) const PASS: Duration = Duration::from_secs(1);
pub(super) const SEND_TIMEOUT: Duration = Duration::from_secs(10);
const DUE_MAX: usize = 20;

/// Queues what is new, then tries every due delivery once; how many it tried.
pub async fn pass(
    svc: &Services,
    cfg: &AlertSettings,
    url: &Secret,
    client: &reqwest::Client,
) -> Result<usize, crate::retrieval::RetrievalError> {
    svc.storage.alerts_enqueue(cfg.types.clone(), now_ms()).await?;
    let due = svc.storage.alerts_due(now_ms(), DUE_MAX).await?;
    let tried = due.len();
    for due in due {
        let id = due.observation_id;
        let outcome = deliver(svc, cfg, url, client, due).await;
        if let Delivery::Failed { error, .. } = &outcome {
            tracing::warn!(observation_id = id, error = %error, "alert not delivered");
        }
        svc.storage.alert_delivered(id, outcome, now_ms()).await?;
    }
    Ok(tried)
}

async fn deliver(svc: &Services, cfg: &AlertSettings, url: &Secret, client: &reqwest::Client, due: DueAlert) -> Delivery {
    let Some(o) = due.observation else {
        return Delivery::Skipped("forgotten".into());
    };
    let pipeline = &svc.ingest.pipeline;
    if o.project_root
        .as_deref()
        .is_some_and(|root| pipeline.check_cwd(Some(root)).is_some())
    {
        return Delivery::Skipped("excluded project".into());
    }
    let clean = |s: &str| {
        let c = pipeline.privacy.clean_text(s);
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
