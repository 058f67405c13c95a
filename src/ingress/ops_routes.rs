//! Operations routes: health, readiness, status, shutdown (docs/spec/api.md §6).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::error::ApiError;
use crate::worker::{Phase, VERSION, WorkerState};

pub async fn health(State(app): State<Arc<WorkerState>>) -> Json<Value> {
    Json(json!({
        "status": "ok", "name": "memd", "version": VERSION, "pid": std::process::id(),
        "uptime": app.started.elapsed().as_secs(), "initialized": app.phase() == Phase::Ready,
        "service_manager": app.service_manager,
        "instance": crate::client::worker::instance_id(&app.token),
    }))
}

pub async fn readiness(State(app): State<Arc<WorkerState>>) -> Response {
    let dead = app.unready_reason();
    match app.phase() {
        Phase::Ready if dead.is_some() => (
            StatusCode::SERVICE_UNAVAILABLE,
            [("retry-after", "5")],
            Json(json!({"status": "degraded", "detail": dead})),
        )
            .into_response(),
        Phase::Ready => Json(json!({"status": "ready"})).into_response(),
        Phase::Initializing => (
            StatusCode::SERVICE_UNAVAILABLE,
            [("retry-after", "1")],
            Json(json!({"status": "initializing", "detail": "opening the store"})),
        )
            .into_response(),
        Phase::ShuttingDown => (
            StatusCode::SERVICE_UNAVAILABLE,
            [("retry-after", "1")],
            Json(json!({"status": "shutting_down"})),
        )
            .into_response(),
    }
}

pub async fn status(State(app): State<Arc<WorkerState>>) -> Result<Json<crate::status::StatusDoc>, ApiError> {
    let svc = app.services()?;
    Ok(Json(crate::status::document(&app, svc).await))
}

/// Answers first, then starts the same shutdown as SIGTERM.
pub async fn shutdown(State(app): State<Arc<WorkerState>>) -> Json<Value> {
    tracing::info!("shutdown requested over http");
    let token = app.shutdown.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        token.cancel();
    });
    Json(json!({"status": "shutting_down"}))
}
