//! The four ingest routes (docs/spec/api.md §3): each reads its body and platform, calls its
//! command ([`crate::ingest::IngestService`]), and answers the outcome's wire shape. Each answers
//! 200 only after its rows committed.

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
use crate::ingest::{CompleteOutcome, InitOutcome, ObservationOutcome, SummarizeOutcome};
use crate::worker::{Services, WorkerState};

type Q = Query<HashMap<String, String>>;

/// The body, the platform it names (query, body, then headers), and the services.
async fn request<'a>(
    app: &'a WorkerState,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
    body: Body,
) -> Result<(&'a Services, Value, String), ApiError> {
    let body: Value = json_body(body).await?;
    let b = ["platformSource", "platform_source"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str));
    let platform = platform_source(q, b, headers);
    Ok((app.services()?, body, platform))
}

fn skipped(reason: &str) -> Value {
    json!({"status": "skipped", "reason": reason})
}

pub fn init_answer(out: &InitOutcome) -> Value {
    match *out {
        InitOutcome::Stored {
            session_db_id,
            prompt_number,
            context_injected,
        } => {
            json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": false, "contextInjected": context_injected, "status": "initialized"})
        }
        InitOutcome::Private {
            session_db_id,
            prompt_number,
        } => json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": true, "reason": "private"}),
        InitOutcome::Duplicate {
            session_db_id,
            prompt_number,
        } => {
            json!({"sessionDbId": session_db_id, "promptNumber": prompt_number, "skipped": true, "reason": "duplicate", "contextInjected": true})
        }
        InitOutcome::Skipped(skip) => json!({"skipped": true, "reason": skip.reason()}),
    }
}

pub fn observation_answer(out: &ObservationOutcome) -> Value {
    match out {
        ObservationOutcome::Queued { pending_id } => json!({"status": "queued", "pendingId": pending_id}),
        ObservationOutcome::Duplicate => json!({"status": "duplicate"}),
        ObservationOutcome::Private => skipped("private"),
        ObservationOutcome::Skipped(skip) => skipped(skip.reason()),
    }
}

pub fn summarize_answer(out: &SummarizeOutcome) -> Value {
    match out {
        SummarizeOutcome::Queued { pending_id, replaced } => {
            let mut v = json!({"status": "queued", "pendingId": pending_id});
            if *replaced {
                v["replaced"] = json!(true);
            }
            v
        }
        SummarizeOutcome::Duplicate => json!({"status": "duplicate"}),
        SummarizeOutcome::Private => skipped("private"),
        SummarizeOutcome::Skipped(skip) => skipped(skip.reason()),
    }
}

pub fn complete_answer(out: &CompleteOutcome) -> Value {
    match out {
        CompleteOutcome::Duplicate => json!({"status": "duplicate"}),
        CompleteOutcome::UnknownSession => json!({"status": "unknown_session"}),
        CompleteOutcome::Completing { pending } => json!({"status": "completing", "pending": pending}),
        CompleteOutcome::Completed => json!({"status": "completed", "pending": 0}),
    }
}

pub async fn init(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let (svc, body, platform) = request(&app, &q, &headers, body).await?;
    Ok(Json(init_answer(&svc.ingest.init(body, platform).await?)))
}

pub async fn observations(
    State(app): State<Arc<WorkerState>>,
    Query(q): Q,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let (svc, body, platform) = request(&app, &q, &headers, body).await?;
    Ok(Json(observation_answer(&svc.ingest.observations(body, platform).await?)))
}

pub async fn summarize(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let (svc, body, platform) = request(&app, &q, &headers, body).await?;
    Ok(Json(summarize_answer(&svc.ingest.summarize(body, platform).await?)))
}

pub async fn complete(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let (svc, body, platform) = request(&app, &q, &headers, body).await?;
    Ok(Json(complete_answer(&svc.ingest.complete(body, platform).await?)))
}
