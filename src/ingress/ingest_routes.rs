//! The four ingest routes (spec/api.md §3). Each answers 200 only after its rows committed.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use super::platform::platform_source;
use super::{AppState, Services};
use crate::actors::session_manager::ManagerMsg;
use crate::clock::now_ms;
use crate::ingest::event_time;
use crate::protocol::api::{CompleteBody, InitBody, ObservationBody, SummarizeBody};
use crate::store::prompts::{PromptOutcome, ingest_prompt};
use crate::store::sessions::{self, CompleteOutcome, SessionKey};
use crate::store::tool_events::{SummaryRequestOutcome, ToolEventOutcome, ingest_summary_request, ingest_tool_event};

type Q = Query<HashMap<String, String>>;

fn skipped(reason: &str) -> Json<Value> {
    Json(json!({"status": "skipped", "reason": reason}))
}

fn notify(svc: &Services, key: SessionKey, session_db_id: i64) {
    match svc.handles.manager() {
        Some(m) => {
            let _ = m.cast(ManagerMsg::Notify { key, session_db_id });
        }
        None => tracing::warn!(session_id = %key, "session manager not running; the event waits in pending"),
    }
}

pub async fn init(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: InitBody = json_body(body).await?;
    b.validate()?;
    let svc = app.services()?;
    let platform = platform_source(&q, b.platform_source.as_deref(), &headers);
    let now = now_ms();
    let prompt = match svc.ingest.prompt(&b, platform, event_time(b.occurred_at_epoch, now)) {
        Ok(p) => p,
        Err(skip) => return Ok(Json(json!({"skipped": true, "reason": skip.reason()}))),
    };
    let key = prompt.seed.key.clone();
    let live = svc.registry.sessions.contains_key(&key);
    let out = svc.store.write(move |c| ingest_prompt(c, &prompt)).await?;
    Ok(Json(match out {
        PromptOutcome::Stored {
            session_db_id,
            prompt_number,
            ..
        } => {
            json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": false, "contextInjected": live, "status": "initialized"})
        }
        PromptOutcome::Private {
            session_db_id,
            prompt_number,
        } => {
            json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": true, "reason": "private"})
        }
        PromptOutcome::Duplicate {
            session_db_id,
            prompt_number,
        } => {
            json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": true, "reason": "duplicate", "contextInjected": true})
        }
    }))
}

pub async fn observations(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ObservationBody = json_body(body).await?;
    b.validate()?;
    let svc = app.services()?;
    let platform = platform_source(&q, b.platform_source.as_deref(), &headers);
    let now = now_ms();
    let at = event_time(b.occurred_at_epoch, now);
    let ingest = svc.ingest.clone();
    // Privacy processing of a large payload is CPU work: keep it off the async workers.
    let prepared = tokio::task::spawn_blocking(move || ingest.tool_event(b, platform, at, now))
        .await
        .map_err(|_| {
            ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "privacy processing failed",
            )
        })?;
    let event = match prepared {
        Ok(e) => e,
        Err(skip) => return Ok(skipped(skip.reason())),
    };
    let key = event.seed.key.clone();
    let out = svc.store.write(move |c| ingest_tool_event(c, &event)).await?;
    Ok(Json(match out {
        ToolEventOutcome::Queued { pending_id, session_db_id } => {
            notify(svc, key, session_db_id);
            json!({"status": "queued", "pendingId": pending_id})
        }
        ToolEventOutcome::Duplicate => json!({"status": "duplicate"}),
        ToolEventOutcome::Private => json!({"status": "skipped", "reason": "private"}),
    }))
}

pub async fn summarize(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: SummarizeBody = json_body(body).await?;
    b.validate()?;
    let svc = app.services()?;
    let platform = platform_source(&q, b.platform_source.as_deref(), &headers);
    let now = now_ms();
    let req = match svc.ingest.summary_request(&b, platform, event_time(b.occurred_at_epoch, now)) {
        Ok(r) => r,
        Err(skip) => return Ok(skipped(skip.reason())),
    };
    let key = req.seed.key.clone();
    let out = svc.store.write(move |c| ingest_summary_request(c, &req)).await?;
    Ok(Json(match out {
        SummaryRequestOutcome::Queued {
            pending_id,
            session_db_id,
            replaced,
        } => {
            notify(svc, key, session_db_id);
            let mut v = json!({"status": "queued", "pendingId": pending_id});
            if replaced {
                v["replaced"] = json!(true);
            }
            v
        }
        SummaryRequestOutcome::Duplicate => json!({"status": "duplicate"}),
        SummaryRequestOutcome::Private => json!({"status": "skipped", "reason": "private"}),
    }))
}

pub async fn complete(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: CompleteBody = json_body(body).await?;
    b.validate()?;
    let svc = app.services()?;
    let platform = platform_source(&q, b.platform_source.as_deref(), &headers);
    let key = SessionKey::new(platform, b.content_session_id.clone());
    let reason = b.reason.clone().unwrap_or_else(|| "other".into());
    let (k, event_id) = (key.clone(), b.event_id.clone());
    let now = now_ms();
    let out = svc
        .store
        .write(move |c| {
            if crate::store::prompts::seen_event(c, event_id.as_deref())?.is_some() {
                return Ok(None);
            }
            let out = sessions::complete(c, &k, &reason, now)?;
            if let CompleteOutcome::Completing { session_db_id, .. } | CompleteOutcome::Completed { session_db_id } = out {
                crate::store::prompts::record_event(c, event_id.as_deref(), "complete", session_db_id, None, now)?;
            }
            Ok(Some(out))
        })
        .await?;
    Ok(Json(match out {
        None => json!({"status": "duplicate"}),
        Some(CompleteOutcome::Unknown) => json!({"status": "unknown_session"}),
        Some(CompleteOutcome::Completing { session_db_id, pending }) => {
            notify(svc, key, session_db_id);
            json!({"status": "completing", "pending": pending})
        }
        Some(CompleteOutcome::Completed { .. }) => json!({"status": "completed", "pending": 0}),
    }))
}
