//! `memd serve`: start-up, the lifetime of the worker, and graceful shutdown.
//!
//! Start: token → listener (health answers at once; other routes 503 `initializing`) → PID file →
//! store open + migrations → actor tree → ready. Shutdown (SIGTERM, SIGINT,
//! `POST /api/admin/shutdown`, or the caller's token): stop accepting, finish in-flight requests,
//! stop the actors (pending rows stay for the next start), commit the write queue, checkpoint the
//! WAL, remove the PID file.
//!
//! [`run`] binds the configured port and shuts down on a signal; [`serve`] is the seam under it:
//! a listener the caller bound, and a token the caller cancels (in-process tests use it).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::Actor;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::actors::Handles;
use crate::actors::provider::ObserverSetup;
use crate::actors::registry::Registry;
use crate::actors::root::{RootArgs, RootSupervisor};
use crate::actors::session::SessionContext;
use crate::actors::session_manager::ManagerMsg;
use crate::clock::now_ms;
use crate::config::EmbeddingsMode;
use crate::config::Settings;
use crate::data_dir::{DataDir, DataDirError, WorkerLock};
use crate::ingest::{IngestService, Pipeline};
use crate::ingress::connections::{self, ConnectionLimits};
use crate::ingress::router;
use crate::modes::{load_mode, mode_search_dirs};
use crate::pipeline::glob::ExcludedProjects;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::{RedactConfig, Redactor};
use crate::providers::select;
use crate::store::pending::BatchLimits;
use crate::store::{Store, StoreError, StoreOptions};
use crate::vectors::chroma::ChromaClient;
use crate::vectors::runtime::VectorRuntime;
use crate::vectors::service::EmbedService;
use crate::worker::tasks::supervise;
use crate::worker::{Phase, Services, WorkerState};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    #[error("cannot start the actor tree: {0}")]
    Actors(String),
}

const SHUTDOWN_BUDGET: Duration = Duration::from_secs(10);

/// Runs the worker on the configured port until a signal or `POST /api/admin/shutdown`. The
/// caller holds the data-dir lock for the whole call.
pub async fn run(settings: Settings, dir: DataDir, _lock: &WorkerLock) -> Result<(), ServeError> {
    let port = settings.port;
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| ServeError::Bind { port, source })?;
    let shutdown = CancellationToken::new();
    let signals = tokio::spawn(wait_for_signal(shutdown.clone()));
    let out = serve(listener, settings, dir, shutdown).await;
    signals.abort();
    out
}

/// Serves on `listener` until `shutdown` is cancelled (or `POST /api/admin/shutdown`), then shuts
/// down gracefully. The caller holds the data-dir lock (or owns the data dir, in tests).
pub async fn serve(listener: TcpListener, settings: Settings, dir: DataDir, shutdown: CancellationToken) -> Result<(), ServeError> {
    let begun = Instant::now();
    let started_epoch = now_ms();
    let token = dir.ensure_token()?;
    let port = listener
        .local_addr()
        .map_err(|source| ServeError::Bind {
            port: settings.port,
            source,
        })?
        .port();
    let stale_pid = dir.write_pid(port, started_epoch)?;
    // A hook that started us may have died before seeing readiness: its spawn lock ends here.
    let _ = std::fs::remove_file(dir.root.join(crate::client::spawn::SPAWN_LOCK));
    let mut app = WorkerState::new(token.clone(), started_epoch);
    app.shutdown = shutdown.clone();
    app.body_timeout = Duration::from_millis(settings.http.body_timeout_ms);
    let app = Arc::new(app);
    app.port.store(port, std::sync::atomic::Ordering::Relaxed);
    let fd_limit = connections::raise_fd_limit();
    let limits = ConnectionLimits {
        max_connections: connections::effective_cap(settings.http.max_connections, fd_limit),
        header_timeout: Duration::from_millis(settings.http.header_timeout_ms),
        idle_timeout: Duration::from_millis(settings.http.idle_timeout_ms),
    };
    let server = tokio::spawn(connections::serve(
        listener,
        router(app.clone()),
        limits,
        Arc::default(),
        shutdown.clone(),
    ));

    let opts = StoreOptions {
        synchronous_full: settings.db_synchronous_full,
        readers: settings.db_readers,
        queue_max: settings.store_queue_max,
        group_commit: Duration::from_millis(settings.group_commit_ms),
        arrivals: app.counters.arrivals.clone(),
    };
    // sqlite-vec must be registered before the store opens its connections.
    let extension = settings.vectors.mode == EmbeddingsMode::Local && crate::vectors::index::register_extension();
    let db = dir.db();
    let store = tokio::task::spawn_blocking(move || Store::open(&db, &opts, now_ms()))
        .await
        .map_err(|e| ServeError::Store(StoreError::Internal(e.to_string())))??;

    let mut settings = settings;
    let (redactor, warnings) = Redactor::new(&RedactConfig {
        redact: settings.redact,
        disabled_builtins: &settings.redact_disabled_builtins,
        custom_patterns_json: &settings.redact_custom_patterns,
        memd_token: Some(&token),
    });
    for w in &warnings {
        tracing::warn!(warning = %w, "redaction setting skipped");
    }
    settings.warnings.extend(warnings);
    let privacy = Arc::new(Privacy::new(redactor));
    let home = settings.home.clone();
    let pipeline = Arc::new(Pipeline {
        privacy: privacy.clone(),
        excluded: ExcludedProjects::new(&settings.excluded_projects, home.as_deref().and_then(|h| h.to_str())),
        skip_tools: settings.skip_tools.clone(),
        data_dir: dir.root.clone(),
        home,
        tool_use_max_chars: settings.tool_use_max_chars,
        redactions: Default::default(),
    });
    let handles = Arc::new(Handles::default());
    let registry = Arc::new(Registry::default());
    let ctx = Arc::new(SessionContext {
        store: store.clone(),
        handles: handles.clone(),
        registry: registry.clone(),
        limits: BatchLimits {
            max_events: settings.batch_max_events,
            max_chars: settings.batch_max_chars,
        },
        debounce_ms: settings.batch_debounce_ms,
        max_wait_ms: settings.batch_max_wait_ms,
        max_attempts: settings.observer.max_attempts,
        observe_deadline: Duration::from_millis(settings.observer.timeout_ms * 3 + 30_000),
        #[cfg(test)]
        faults: Default::default(),
        #[cfg(test)]
        slow_stops: Default::default(),
    });
    let children_reaped = crate::providers::children::reap_leftovers(&dir.root);
    let observer = observer_setup(&mut settings, &dir);
    let vectors = vector_runtime(&settings, &store, extension).await;
    // One loaded mode serves the observer and the renderers.
    let mode = observer.mode.clone();
    let root_args = RootArgs {
        ctx,
        privacy,
        observer,
        data_dir: dir.root.clone(),
        reaper_interval: Duration::from_millis(settings.reaper_interval_ms),
        idle_ms: settings.session_idle_ms as i64,
        stale_pid_replaced: stale_pid,
        children_reaped,
        embed: vectors.as_ref().map(|v| v.embed.clone()),
        chroma: vectors
            .as_ref()
            .and_then(|v| v.chroma.clone())
            .map(|c| (c, Duration::from_millis(settings.vectors.chroma_retry_ms))),
        #[cfg(test)]
        respawn_faults: Default::default(),
    };
    let (root, root_task) = Actor::spawn(None, RootSupervisor, root_args)
        .await
        .map_err(|e| ServeError::Actors(e.to_string()))?;
    // The root ending before shutdown leaves the worker without a tree: readiness says so.
    let root_task = {
        let (h, stop) = (handles.clone(), shutdown.clone());
        tokio::spawn(async move {
            let _ = root_task.await;
            if !stop.is_cancelled() {
                tracing::error!("the actor tree's root stopped; readiness answers 503");
                h.mark_dead("the actor tree's root stopped");
            }
        })
    };
    let spool_scan_ms = settings.spool_scan_ms;
    let retention_rules = settings.retention;
    let settings = Arc::new(settings);
    let ingest = Arc::new(IngestService::new(pipeline, store.clone(), registry.clone(), handles.clone()));
    app.ready(Services {
        mode,
        store: store.clone(),
        handles: handles.clone(),
        registry,
        ingest: ingest.clone(),
        settings,
        vectors,
    });
    dir.ensure_subdir(&dir.spool())?;
    let restarts = app.counters.task_restarts.clone();
    let retention_task = {
        let store = store.clone();
        supervise("retention", shutdown.clone(), restarts.clone(), move || {
            crate::store::retention_run::schedule(store.clone(), retention_rules)
        })
    };
    let backup_task = {
        let (db, dir_b) = (store.path.clone(), dir.root.join("backups"));
        let (hours, keep) = (retention_rules.backup_interval_hours, retention_rules.backup_keep as usize);
        let enabled = hours > 0 && !store.integrity.is_damaged();
        supervise("backups", shutdown.clone(), restarts.clone(), move || {
            let (db, dir_b) = (db.clone(), dir_b.clone());
            async move {
                if enabled {
                    crate::store::integrity::schedule(db, dir_b, Duration::from_secs(hours * 3600), keep).await;
                } else {
                    std::future::pending::<()>().await;
                }
            }
        })
    };
    let spool_task = {
        let (stats, spool, interval) = (app.counters.spool.clone(), dir.spool(), Duration::from_millis(spool_scan_ms));
        supervise("spool scanner", shutdown.clone(), restarts, move || {
            crate::ingest::spool::scanner(ingest.clone(), stats.clone(), spool.clone(), interval)
        })
    };
    tracing::info!(port, ready_ms = begun.elapsed().as_millis() as u64, data = %dir.root.display(), "memd ready");

    shutdown.cancelled().await;
    let stopping = Instant::now();
    tracing::info!("shutting down");
    app.set_phase(Phase::ShuttingDown);
    shutdown.cancel();
    // In-flight requests finish (their writes are still accepted by the store).
    if tokio::time::timeout(SHUTDOWN_BUDGET / 2, server).await.is_err() {
        tracing::warn!("in-flight requests did not finish in time");
    }
    // Both end with the shutdown token; they hold no acknowledged data.
    let _ = tokio::join!(spool_task, retention_task, backup_task);
    if let Some(m) = handles.manager() {
        let _ = ractor::call_t!(m, ManagerMsg::StopAll, 1_000);
    }
    root.stop(Some("shutdown".into()));
    let _ = tokio::time::timeout(Duration::from_secs(2), root_task).await;
    let left = SHUTDOWN_BUDGET.saturating_sub(stopping.elapsed()).max(Duration::from_millis(500));
    if tokio::time::timeout(left, store.writer.shutdown()).await.is_err() {
        tracing::warn!("store flush timed out; the WAL keeps every committed row");
    }
    dir.remove_pid();
    tracing::info!(elapsed_ms = stopping.elapsed().as_millis() as u64, "memd stopped");
    Ok(())
}

/// The mode (`MEMD_MODE`, user modes first) and the provider (`MEMD_PROVIDER`); problems become
/// status warnings, never a failed start.
fn observer_setup(settings: &mut Settings, dir: &DataDir) -> ObserverSetup {
    let dirs = mode_search_dirs(settings.modes_dir.as_deref(), &dir.root);
    let (mode, mode_warnings) = load_mode(&settings.mode, &dirs);
    let (backend, provider_warnings) = select(&settings.observer, settings.path_env.as_deref(), &dir.root);
    for w in mode_warnings.iter().chain(&provider_warnings) {
        tracing::warn!(warning = %w, "observer setting");
    }
    settings.warnings.extend(mode_warnings);
    settings.warnings.extend(provider_warnings);
    let max_calls = settings.observer.concurrency;
    ObserverSetup {
        calls: Arc::new(tokio::sync::Semaphore::new(max_calls)),
        max_calls,
        backend,
        mode_id: mode.id.clone(),
        mode: Arc::new(mode),
        budget: settings.daily_token_budget,
        field_max_chars: settings.observer.field_max_chars,
        max_defer_ms: settings.observer.max_defer_ms,
    }
}

/// The embedder and query path, or None with `MEMD_EMBEDDINGS=none`. A missing model is not an
/// error: status says `no_model` and search stays keyword-only until the files appear.
async fn vector_runtime(settings: &Settings, store: &Store, extension: bool) -> Option<Arc<VectorRuntime>> {
    let v = &settings.vectors;
    if v.mode != EmbeddingsMode::Local {
        return None;
    }
    let embed = EmbedService::new(v.model_dir.clone());
    if !embed.model_present() {
        tracing::warn!(dir = %v.model_dir.display(), "no embedding model: keyword search only (memd models install)");
    }
    let chroma = match &v.chroma {
        Some(c) => {
            let db_id = store
                .read(|conn| crate::vectors::sync_state::meta(conn, "db_id"))
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            Some(Arc::new(ChromaClient::new(c, &db_id)))
        }
        None => None,
    };
    if chroma.is_none() && embed.model_present() {
        // Deletes queue for Chroma only while it is the target (docs/spec/storage.md §3.10 triggers).
        let _ = store
            .write(|c| crate::vectors::sync_state::set_meta(c, "vector_target", crate::vectors::sync_state::SQLITE_TARGET))
            .await;
    }
    let query_budget = Duration::from_millis(v.query_budget_ms);
    Some(Arc::new(VectorRuntime {
        embed,
        extension,
        chroma,
        query_budget,
    }))
}

/// Cancels `shutdown` at SIGTERM or SIGINT.
async fn wait_for_signal(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        tracing::warn!("cannot install the signal handlers; stop with POST /api/admin/shutdown");
        return;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("sigterm received"),
        _ = int.recv() => tracing::info!("sigint received"),
    }
    shutdown.cancel();
}
