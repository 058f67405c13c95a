//! The four ingest routes (docs/spec/api.md §3). Each answers 200 only after its rows committed.
//!
//! Each route is a thin axum adapter around a plain core fn `(&Services, body, platform) →
//! Result<Value, ApiError>`; the spool ingester (`crate::ingest::spool`) calls the same cores, so
//! a spooled event goes through exactly the validation and pipeline of its HTTP route.

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

fn skipped(reason: &str) -> Value {
    json!({"status": "skipped", "reason": reason})
}

/// Parses a JSON object body into a route's wire type (400 naming the field otherwise).
fn typed<T: serde::de::DeserializeOwned>(body: Value) -> Result<T, ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    serde_json::from_value(body).map_err(|e| ApiError::bad_request(crate::protocol::api::describe_json_error(&e)))
}

/// The platform of a body as the HTTP route would see it without query or headers.
pub fn body_platform(body: &Value) -> String {
    let raw = ["platformSource", "platform_source"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .filter(|s| !s.trim().is_empty());
    crate::pipeline::platform::normalize_platform_source(raw)
}

fn route_platform(q: &HashMap<String, String>, headers: &HeaderMap, body: &Value) -> String {
    let b = ["platformSource", "platform_source"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str));
    platform_source(q, b, headers)
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
    let body: Value = json_body(body).await?;
    let platform = route_platform(&q, &headers, &body);
    Ok(Json(init_core(app.services()?, body, platform).await?))
}

pub async fn init_core(svc: &Services, body: Value, platform: String) -> Result<Value, ApiError> {
    let b: InitBody = typed(body)?;
    b.validate()?;
    let now = now_ms();
    let prompt = match svc.ingest.prompt(&b, platform, event_time(b.occurred_at_epoch, now)) {
        Ok(p) => p,
        Err(skip) => return Ok(json!({"skipped": true, "reason": skip.reason()})),
    };
    let key = prompt.seed.key.clone();
    let live = svc.registry.sessions.contains_key(&key);
    let out = svc.store.write(move |c| ingest_prompt(c, &prompt)).await?;
    Ok(match out {
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
    })
}

pub async fn observations(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let body: Value = json_body(body).await?;
    let platform = route_platform(&q, &headers, &body);
    Ok(Json(observations_core(app.services()?, body, platform).await?))
}

pub async fn observations_core(svc: &Services, body: Value, platform: String) -> Result<Value, ApiError> {
    let b: ObservationBody = typed(body)?;
    b.validate()?;
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
    Ok(match out {
        ToolEventOutcome::Queued { pending_id, session_db_id } => {
            notify(svc, key, session_db_id);
            json!({"status": "queued", "pendingId": pending_id})
        }
        ToolEventOutcome::Duplicate => json!({"status": "duplicate"}),
        ToolEventOutcome::Private => json!({"status": "skipped", "reason": "private"}),
    })
}

pub async fn summarize(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let body: Value = json_body(body).await?;
    let platform = route_platform(&q, &headers, &body);
    Ok(Json(summarize_core(app.services()?, body, platform).await?))
}

pub async fn summarize_core(svc: &Services, body: Value, platform: String) -> Result<Value, ApiError> {
    let b: SummarizeBody = typed(body)?;
    b.validate()?;
    let now = now_ms();
    let req = match svc.ingest.summary_request(&b, platform, event_time(b.occurred_at_epoch, now)) {
        Ok(r) => r,
        Err(skip) => return Ok(skipped(skip.reason())),
    };
    let key = req.seed.key.clone();
    let out = svc.store.write(move |c| ingest_summary_request(c, &req)).await?;
    Ok(match out {
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
    })
}

pub async fn complete(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let body: Value = json_body(body).await?;
    let platform = route_platform(&q, &headers, &body);
    Ok(Json(complete_core(app.services()?, body, platform).await?))
}

pub async fn complete_core(svc: &Services, body: Value, platform: String) -> Result<Value, ApiError> {
    let b: CompleteBody = typed(body)?;
    b.validate()?;
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
    Ok(match out {
        None => json!({"status": "duplicate"}),
        Some(CompleteOutcome::Unknown) => json!({"status": "unknown_session"}),
        Some(CompleteOutcome::Completing { session_db_id, pending }) => {
            notify(svc, key, session_db_id);
            json!({"status": "completing", "pending": pending})
        }
        Some(CompleteOutcome::Completed { .. }) => json!({"status": "completed", "pending": 0}),
    })
}
