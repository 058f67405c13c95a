//! Maintenance routes: `POST /api/pending/retry` (docs/spec/api.md §6.4), `POST
//! /api/admin/import-claude-mem` (§6.7), `POST /api/admin/gc` (memd: `memd gc` while a worker
//! runs) and `POST /api/vectors/reindex`: the bodies, then the use-cases of
//! [`crate::worker::maintenance`].

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use crate::import::ImportOptions;
use crate::worker::WorkerState;
use crate::worker::maintenance::{self, MaintenanceError};

impl From<MaintenanceError> for ApiError {
    fn from(e: MaintenanceError) -> Self {
        match e {
            MaintenanceError::Invalid(m) => ApiError::bad_request(m),
            MaintenanceError::Busy(m) => ApiError::new(StatusCode::CONFLICT, "conflict", m),
            MaintenanceError::VectorsOff => ApiError::new(StatusCode::CONFLICT, "vectors_disabled", e.to_string()),
            MaintenanceError::ReindexFailed(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "reindex_failed", e.to_string()),
            MaintenanceError::SyncUnreachable(m) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "reindex_failed", m),
            MaintenanceError::Task(m) => ApiError::internal(m),
            MaintenanceError::Store(e) => e.into(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct RetryBody {
    #[serde(rename = "contentSessionId")]
    pub content_session_id: Option<String>,
    pub ids: Option<Vec<i64>>,
}

pub async fn pending_retry(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: RetryBody = json_body(body).await?;
    let svc = app.services()?;
    let out = maintenance::retry_failed(svc, b.content_session_id, b.ids).await?;
    Ok(Json(json!({"requeued": out.rows, "sessions": out.sessions})))
}

#[derive(Debug, Deserialize)]
pub struct ImportBody {
    pub path: String,
    #[serde(rename = "dryRun", default)]
    pub dry_run: bool,
    #[serde(default)]
    pub projects: Vec<String>,
    #[serde(rename = "noPrompts", default)]
    pub no_prompts: bool,
    pub settings: Option<String>,
}

pub async fn import_claude_mem(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ImportBody = json_body(body).await?;
    let svc = app.services()?;
    let opts = ImportOptions {
        path: PathBuf::from(&b.path),
        dry_run: b.dry_run,
        projects: b.projects,
        no_prompts: b.no_prompts,
    };
    let progress = app.counters.import.clone();
    let (report, copied) = maintenance::import_claude_mem(svc, progress, opts, b.settings.map(PathBuf::from)).await?;
    let mut doc = report.to_json();
    if let Some(written) = copied {
        doc["settingsCopied"] = written;
    }
    tracing::info!(report = %doc, "claude-mem import finished");
    Ok(Json(doc))
}

#[derive(Debug, Deserialize)]
pub struct GcBody {
    #[serde(rename = "dryRun", default)]
    pub dry_run: bool,
    #[serde(default)]
    pub vacuum: bool,
}

pub async fn gc(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: GcBody = json_body(body).await?;
    let svc = app.services()?;
    let r = maintenance::gc(svc, b.dry_run, b.vacuum).await?;
    Ok(Json(json!({
        "success": true, "dryRun": b.dry_run, "rules": r.retention.as_map(), "total": r.retention.total(),
        "vacuumed": r.vacuumed, "dbBytesBefore": r.db_bytes_before, "dbBytesAfter": r.db_bytes_after,
    })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct RescanBody {
    #[serde(default)]
    pub dry_run: bool,
}

pub async fn redact_rescan(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: RescanBody = json_body(body).await?;
    let svc = app.services()?;
    let privacy = svc.ingest.pipeline.privacy.clone();
    let r = svc.embedded.rescan(&privacy, b.dry_run, &|_, _| {}).await?;
    Ok(Json(
        json!({"success": true, "dryRun": r.dry_run, "scanned": r.scanned, "changed": r.changed, "perDetector": r.per_detector}),
    ))
}

pub async fn reindex(State(app): State<Arc<WorkerState>>) -> Result<Json<Value>, ApiError> {
    maintenance::reindex(app.services()?).await?;
    Ok(Json(json!({"success": true})))
}
