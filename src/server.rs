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
use crate::actors::registry::Registry;
use crate::actors::root::{RootArgs, RootSupervisor};
use crate::actors::session::SessionContext;
use crate::actors::session_manager::ManagerMsg;
use crate::actors::transcript_watcher::WatcherArgs;
use crate::clock::now_ms;
use crate::config::EmbeddingsMode;
use crate::config::Settings;
use crate::config::live::Live;
use crate::data_dir::{DataDir, DataDirError, WorkerLock};
use crate::ingest::{IngestService, Pipeline};
use crate::ingress::connections::{self, ConnectionLimits};
use crate::ingress::router;
use crate::observer::setup::ObserverSetup;
use crate::pipeline::glob::ExcludedProjects;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::{RedactConfig, Redactor};
use crate::service::ServiceEnv;
use crate::service::notify::Notifier;
use crate::store::pending::BatchLimits;
use crate::store::{Store, StoreError, StoreOptions};
use crate::vectors::chroma::ChromaClient;
use crate::vectors::runtime::VectorRuntime;
use crate::vectors::service::EmbedService;
use crate::worker::reload::Reloader;
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

/// Runs the worker until a signal or `POST /api/admin/shutdown`: on the listener a service
/// manager passed (socket activation), else on the configured port. SIGHUP reloads the settings
/// that can change live. The caller holds the data-dir lock for the whole call.
pub async fn run(settings: Settings, dir: DataDir, _lock: &WorkerLock, life: Lifecycle) -> Result<(), ServeError> {
    let port = settings.port;
    let bind_err = |source| ServeError::Bind { port, source };
    let listener = match &life.service.listen {
        Some(passed) => {
            let std_listener = passed.take().map_err(|e| bind_err(std::io::Error::other(e.to_string())))?;
            tracing::info!(fd = passed.fd, "serving on the listener the service manager passed");
            TcpListener::from_std(std_listener).map_err(bind_err)?
        }
        None => TcpListener::bind(("127.0.0.1", port)).await.map_err(bind_err)?,
    };
    let shutdown = CancellationToken::new();
    let signals = tokio::spawn(wait_for_signal(shutdown.clone(), life.reload.clone(), dir.pid_file()));
    let out = serve(listener, settings, dir, shutdown, life).await;
    signals.abort();
    out
}

/// What `memd serve` got from its environment beyond the settings: the service manager's
/// variables, the environment a reload re-reads settings with, and the SIGHUP doorbell.
#[derive(Default)]
pub struct Lifecycle {
    pub service: ServiceEnv,
    pub env: std::collections::HashMap<String, String>,
    /// The raw values `settings` was resolved from (a SIGHUP compares against them).
    pub raw: Option<crate::config::RawSettings>,
    pub reload: Arc<tokio::sync::Notify>,
}

/// Serves on `listener` until `shutdown` is cancelled (or `POST /api/admin/shutdown`), then shuts
/// down gracefully. The caller holds the data-dir lock (or owns the data dir, in tests).
pub async fn serve(
    listener: TcpListener,
    settings: Settings,
    dir: DataDir,
    shutdown: CancellationToken,
    life: Lifecycle,
) -> Result<(), ServeError> {
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
    app.service_manager = life.service.manager;
    let notifier = life.service.notify_socket.as_deref().and_then(|t| match Notifier::new(t) {
        Ok(n) => Some(Arc::new(n)),
        Err(e) => {
            tracing::warn!(error = %e, "no sd_notify");
            None
        }
    });
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
    let privacy_for_reload = privacy.clone();
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
    let observer = ObserverSetup::from_settings(&mut settings, &dir.root);
    let vectors = vector_runtime(&settings, &store, extension).await;
    // One loaded mode serves the observer and the renderers.
    let mode = observer.mode.clone();
    let ingest = Arc::new(IngestService::new(pipeline, store.clone(), registry.clone(), handles.clone()));
    let watch = settings.watch.enabled.then(|| WatcherArgs {
        ingest: ingest.clone(),
        roots: settings.watch.roots.clone(),
        state_path: dir.root.join("watch-state-worker.json"),
        interval: Duration::from_millis(settings.watch.interval_ms),
        idle: Duration::from_millis(settings.watch.idle_ms),
        busy: Default::default(),
    });
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
        watch,
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
    // What the settings were read from (`memd serve` passes it; read here only for in-process callers).
    let raw_at_start = life.raw.unwrap_or_else(|| crate::config::RawSettings::load(&dir.root, &life.env).0);
    let settings = Arc::new(Live::new(settings));
    app.ready(Services {
        mode,
        store: store.clone(),
        handles: handles.clone(),
        registry,
        ingest: ingest.clone(),
        settings: settings.clone(),
        vectors,
    });
    if !store.integrity.is_damaged() {
        tokio::spawn(crate::worker::rescan::after_upgrade(store.clone(), (*privacy_for_reload).clone()));
    }
    dir.ensure_subdir(&dir.spool())?;
    let restarts = app.counters.task_restarts.clone();
    let retention_task = {
        let (store, settings) = (store.clone(), settings.clone());
        supervise("retention", shutdown.clone(), restarts.clone(), move || {
            let settings = settings.clone();
            crate::store::retention_run::schedule(store.clone(), move || settings.get().retention)
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
    let reload_task = {
        let reloader = Arc::new(Reloader {
            env: life.env.clone(),
            data_dir: dir.root.clone(),
            settings: settings.clone(),
            privacy: privacy_for_reload,
            root: root.clone(),
            token: token.clone(),
            last: std::sync::Mutex::new(raw_at_start),
        });
        let doorbell = life.reload.clone();
        supervise("reload", shutdown.clone(), app.counters.task_restarts.clone(), move || {
            crate::worker::reload::on_sighup(reloader.clone(), doorbell.clone())
        })
    };
    let notify_task = notifier.clone().map(|n| {
        let watchdog = life.service.watchdog_usec.map(|u| Duration::from_micros(u / 2));
        tokio::spawn(crate::worker::service_link::run(app.clone(), n, watchdog))
    });
    tracing::info!(port, ready_ms = begun.elapsed().as_millis() as u64, data = %dir.root.display(), manager = life.service.manager.label(), "memd ready");

    shutdown.cancelled().await;
    let stopping = Instant::now();
    tracing::info!("shutting down");
    if let Some(n) = &notifier {
        // The drain is bounded by SHUTDOWN_BUDGET; ask for that much more than the stop timeout.
        let extend = (SHUTDOWN_BUDGET + Duration::from_secs(5)).as_micros();
        n.send(&format!("STOPPING=1\nSTATUS=draining\nEXTEND_TIMEOUT_USEC={extend}"));
    }
    if let Some(t) = notify_task {
        t.abort();
    }
    app.set_phase(Phase::ShuttingDown);
    shutdown.cancel();
    // In-flight requests finish (their writes are still accepted by the store).
    if tokio::time::timeout(SHUTDOWN_BUDGET / 2, server).await.is_err() {
        tracing::warn!("in-flight requests did not finish in time");
    }
    // Both end with the shutdown token; they hold no acknowledged data.
    let _ = tokio::join!(spool_task, retention_task, backup_task, reload_task);
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

/// The embedder and query path, or None with `MEMD_EMBEDDINGS=none`. A missing model is not an
/// error: status says `no_model` and search stays keyword-only until the files appear.
async fn vector_runtime(settings: &Settings, store: &Store, extension: bool) -> Option<Arc<VectorRuntime>> {
    let v = &settings.vectors;
    if v.mode != EmbeddingsMode::Local {
        return None;
    }
    let embed = EmbedService::new(v.model_dir.clone(), v.encoder, v.kernel);
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
            Some(Arc::new(ChromaClient::new(c, &db_id, embed.model_name())))
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
        codes: Default::default(),
    }))
}

/// Cancels `shutdown` at SIGTERM or SIGINT; rings `reload` at SIGHUP. A second SIGTERM or SIGINT
/// during the drain exits at once: every acknowledged event is already committed (the WAL keeps
/// it), only the checkpoint is skipped.
async fn wait_for_signal(shutdown: CancellationToken, reload: Arc<tokio::sync::Notify>, pid_file: std::path::PathBuf) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("cannot install the signal handlers; stop with POST /api/admin/shutdown");
        return;
    };
    loop {
        tokio::select! {
            _ = term.recv() => { tracing::info!("sigterm received"); break; }
            _ = int.recv() => { tracing::info!("sigint received"); break; }
            _ = hup.recv() => { tracing::info!("sighup received: reloading settings"); reload.notify_one(); }
        }
    }
    shutdown.cancel();
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    tracing::warn!("second stop signal during the drain: exiting now; the queue is durable");
    let _ = std::fs::remove_file(pid_file);
    std::process::exit(1);
}
