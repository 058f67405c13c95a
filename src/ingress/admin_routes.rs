//! Maintenance routes: `POST /api/pending/retry` (docs/spec/api.md §6.4), `POST
//! /api/admin/import-claude-mem` (§6.7) and `POST /api/admin/gc` (memd: `memd gc` while a worker
//! runs, since only the worker writes the store).

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::checks::json_body;
use super::error::ApiError;
use crate::actors::session_manager::ManagerMsg;
use crate::clock::now_ms;
use crate::import::{ImportError, ImportOptions};
use crate::store::import_rows::{dry_chunk, write_chunk};
use crate::store::{Store, retention, retry};

#[derive(Debug, Deserialize)]
pub struct RetryBody {
    #[serde(rename = "contentSessionId")]
    pub content_session_id: Option<String>,
    pub ids: Option<Vec<i64>>,
}

pub async fn pending_retry(State(app): State<Arc<AppState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: RetryBody = json_body(body).await?;
    let svc = app.services()?;
    let out = svc
        .store
        .write(move |c| retry::requeue_failed(c, b.content_session_id.as_deref(), b.ids.as_deref()))
        .await?;
    if let Some(m) = svc.handles.manager() {
        if !out.sessions.is_empty() {
            // Parked actors must be un-parked before they accept work again.
            let _ = ractor::call_t!(m, ManagerMsg::Unpark, 2_000);
        }
        for (session_db_id, key) in out.sessions.iter().cloned() {
            let _ = m.cast(ManagerMsg::Notify { key, session_db_id });
        }
    }
    tracing::info!(requeued = out.rows, sessions = out.sessions.len(), "failed pending rows requeued");
    Ok(Json(json!({"requeued": out.rows, "sessions": out.sessions.len()})))
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

/// Runs the import on a blocking thread; each chunk is one store write (or read, for a dry run).
pub fn import_with_store(
    store: &Store,
    opts: &ImportOptions,
    app: &AppState,
    privacy: &crate::pipeline::privacy::Privacy,
) -> Result<Value, ImportError> {
    let rt = tokio::runtime::Handle::current();
    let source = crate::import::source_key(&opts.path);
    let mut write = |chunk| {
        let (source, store) = (source.clone(), store.clone());
        let out = if opts.dry_run {
            rt.block_on(store.read(move |c| dry_chunk(c, &source, &chunk)))
        } else {
            rt.block_on(store.write(move |c| write_chunk(c, &source, &chunk)))
        };
        out.map_err(ImportError::from)
    };
    let report = crate::import::run(opts, privacy, &app.import, &mut write)?;
    Ok(report.to_json())
}

pub async fn import_claude_mem(State(app): State<Arc<AppState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ImportBody = json_body(body).await?;
    let svc = app.services()?;
    if !app.import.try_begin() {
        return Err(ApiError::new(StatusCode::CONFLICT, "conflict", "an import is already running"));
    }
    let opts = ImportOptions {
        path: PathBuf::from(&b.path),
        dry_run: b.dry_run,
        projects: b.projects,
        no_prompts: b.no_prompts,
    };
    let (store, privacy, state) = (svc.store.clone(), svc.ingest.privacy.clone(), app.clone());
    let settings_target = svc.settings.data_dir.join("settings.json");
    let joined = tokio::task::spawn_blocking(move || {
        let out = import_with_store(&store, &opts, &state, &privacy);
        state.import.end();
        out
    })
    .await
    .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the import task failed"))?;
    let mut doc = match joined {
        Ok(v) => v,
        Err(ImportError::Source(m)) => return Err(ApiError::bad_request(m)),
        Err(ImportError::Busy) => return Err(ApiError::new(StatusCode::CONFLICT, "conflict", "an import is already running")),
        Err(ImportError::Store(e)) => return Err(e.into()),
    };
    if let Some(s) = b.settings.filter(|_| !b.dry_run) {
        let written = crate::import::settings_map::copy_settings(&PathBuf::from(s), &settings_target)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        doc["settingsCopied"] = json!(written);
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

/// Retention now, chunk by chunk through the writer; `vacuum` runs `VACUUM` exclusively after it.
pub async fn gc(State(app): State<Arc<AppState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: GcBody = json_body(body).await?;
    let svc = app.services()?;
    let rules = svc.settings.retention;
    let now = now_ms();
    let db_bytes_before = crate::store::stats::file_size(&svc.store.path);
    let report = if b.dry_run {
        svc.store.read(move |c| retention::dry_run(c, &rules, now)).await?
    } else {
        crate::store::retention_run::apply(&svc.store, rules, now).await?
    };
    let vacuumed = b.vacuum && !b.dry_run;
    if vacuumed {
        svc.store
            .writer
            .exclusive(move |c| {
                c.execute_batch("VACUUM")?;
                retention::record_vacuum(c, now)
            })
            .await?;
    }
    Ok(Json(json!({
        "success": true, "dryRun": b.dry_run, "rules": report.as_map(), "total": report.total(),
        "vacuumed": vacuumed, "dbBytesBefore": db_bytes_before,
        "dbBytesAfter": crate::store::stats::file_size(&svc.store.path),
    })))
}
