//! Maintenance use-cases: requeue failed observer work (docs/spec/api.md §6.4), import a claude-mem
//! database (§6.7), apply the retention rules now (`memd gc`), re-embed every row. Only the worker
//! writes the store, so the CLI reaches these through its routes while a worker runs.

use std::path::PathBuf;
use std::sync::Arc;

use super::Services;
use crate::actors::session_manager::ManagerMsg;
use crate::actors::vector_sync::VectorSyncMsg;
use crate::clock::now_ms;
use crate::import::{ImportError, ImportOptions, ImportProgress, ImportReport};
use crate::pipeline::privacy::Privacy;
use crate::store::import_rows::{dry_chunk, write_chunk};
use crate::store::retention::RetentionReport;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    /// The request names something that cannot be used (HTTP 400).
    #[error("{0}")]
    Invalid(String),
    /// Another run of the same work is going on (HTTP 409).
    #[error("{0}")]
    Busy(String),
    /// Vectors are off (HTTP 409).
    #[error("vectors are off (MEMD_EMBEDDINGS=none)")]
    VectorsOff,
    /// The vector sync failed to start the reindex (HTTP 500).
    #[error("{0}")]
    ReindexFailed(crate::vectors::VectorError),
    /// The vector sync did not answer (HTTP 503).
    #[error("{0}")]
    SyncUnreachable(String),
    /// The blocking task running the work failed (HTTP 500).
    #[error("{0}")]
    Task(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Rows requeued and sessions woken by a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requeued {
    pub rows: usize,
    pub sessions: usize,
}

/// Requeues failed pending rows (of one host session, or of some ids, or all), un-parks and wakes
/// their sessions.
pub async fn retry_failed(svc: &Services, content_session_id: Option<String>, ids: Option<Vec<i64>>) -> Result<Requeued, MaintenanceError> {
    let out = svc.storage.requeue_failed(content_session_id, ids).await?;
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
    Ok(Requeued {
        rows: out.rows,
        sessions: out.sessions.len(),
    })
}

/// Runs the import on the calling (blocking) thread; each chunk is one store write (or read, for a
/// dry run), driven through the runtime `rt`.
pub fn import_with_store(
    rt: &tokio::runtime::Handle,
    store: &Store,
    opts: &ImportOptions,
    progress: &ImportProgress,
    privacy: &Privacy,
) -> Result<ImportReport, ImportError> {
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
    crate::import::run(opts, privacy, progress, &mut write)
}

/// Imports a claude-mem database (one import at a time); copies its mapped settings when asked.
pub async fn import_claude_mem(
    svc: &Services,
    progress: Arc<ImportProgress>,
    opts: ImportOptions,
    settings_from: Option<PathBuf>,
) -> Result<(ImportReport, Option<serde_json::Value>), MaintenanceError> {
    if !progress.try_begin() {
        return Err(MaintenanceError::Busy("an import is already running".into()));
    }
    let dry_run = opts.dry_run;
    let (file, privacy) = (svc.embedded.clone(), svc.ingest.pipeline.privacy.clone());
    let rt = tokio::runtime::Handle::current();
    let job_progress = progress.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let out = file.import(&rt, &opts, &job_progress, &privacy);
        job_progress.end();
        out
    })
    .await;
    let report = match joined {
        Err(_) => {
            progress.end();
            return Err(MaintenanceError::Task("the import task failed"));
        }
        Ok(Err(ImportError::Source(m))) => return Err(MaintenanceError::Invalid(m)),
        Ok(Err(ImportError::Busy)) => return Err(MaintenanceError::Busy("an import is already running".into())),
        Ok(Err(ImportError::Store(e))) => return Err(e.into()),
        Ok(Ok(r)) => r,
    };
    let copied = match settings_from.filter(|_| !dry_run) {
        Some(from) => {
            let target = svc.settings.get().data_dir.join("settings.json");
            let written =
                crate::import::settings_map::copy_settings(&from, &target).map_err(|e| MaintenanceError::Invalid(e.to_string()))?;
            Some(serde_json::json!(written))
        }
        None => None,
    };
    Ok((report, copied))
}

/// What `memd gc` did (or would do).
#[derive(Debug, Clone)]
pub struct GcReport {
    pub retention: RetentionReport,
    pub vacuumed: bool,
    pub db_bytes_before: u64,
    pub db_bytes_after: u64,
}

/// The retention rules now, chunk by chunk through the writer; `vacuum` runs `VACUUM` exclusively
/// after them.
pub async fn gc(svc: &Services, dry_run: bool, vacuum: bool) -> Result<GcReport, MaintenanceError> {
    let rules = svc.settings.get().retention;
    let now = now_ms();
    let db_bytes_before = svc.embedded.file_size();
    let report = svc.embedded.retention(rules, now, dry_run).await?;
    let vacuumed = vacuum && !dry_run;
    if vacuumed {
        svc.embedded.vacuum(now).await?;
    }
    Ok(GcReport {
        retention: report,
        vacuumed,
        db_bytes_before,
        db_bytes_after: svc.embedded.file_size(),
    })
}

/// Drops every embedded vector and starts re-embedding every row (progress in status).
pub async fn reindex(svc: &Services) -> Result<(), MaintenanceError> {
    let Some(actor) = svc.handles.vector_sync() else {
        return Err(MaintenanceError::VectorsOff);
    };
    match ractor::call_t!(actor, VectorSyncMsg::Reindex, 60_000) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(MaintenanceError::ReindexFailed(e)),
        Err(e) => Err(MaintenanceError::SyncUnreachable(e.to_string())),
    }
}
