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

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::clock::now_ms;
use crate::config::Settings;
use crate::data_dir::{DataDir, DataDirError, WorkerLock};
use crate::ingress::connections::{self, ConnectionLimits};
use crate::ingress::router;
use crate::worker::WorkerState;
pub use crate::worker::builder::Lifecycle;
use crate::worker::builder::{BuildError, WorkerBuilder};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot listen on 127.0.0.1:{port} (MEMD_PORT): {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error(transparent)]
    Worker(#[from] BuildError),
}

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
        None => match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            // The default port taken (another user's or another data dir's memd, or another
            // program): any free port; memd.pid tells hooks and the CLI which (issue 37).
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && !settings.port_explicit => {
                let l = TcpListener::bind(("127.0.0.1", 0)).await.map_err(bind_err)?;
                let got = l.local_addr().map(|a| a.port()).unwrap_or(0);
                tracing::warn!(
                    port,
                    listening = got,
                    "default port taken; listening on a free port (memd.pid records it)"
                );
                l
            }
            Err(e) => return Err(bind_err(e)),
        },
    };
    let shutdown = CancellationToken::new();
    let signals = tokio::spawn(wait_for_signal(shutdown.clone(), life.reload.clone(), dir.pid_file()));
    let out = serve(listener, settings, dir, shutdown, life).await;
    signals.abort();
    out
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
    let bind_err = |source| ServeError::Bind {
        port: settings.port,
        source,
    };
    let port = listener.local_addr().map_err(bind_err)?.port();
    let stale_pid = dir.write_pid(port, started_epoch)?;
    // A hook that started us may have died before seeing readiness: its spawn lock ends here.
    let _ = std::fs::remove_file(dir.root.join(crate::client::spawn::SPAWN_LOCK));
    let mut app = WorkerState::new(token, started_epoch);
    app.shutdown = shutdown.clone();
    app.service_manager = life.service.manager;
    app.body_timeout = Duration::from_millis(settings.http.body_timeout_ms);
    let app = Arc::new(app);
    app.port.store(port, std::sync::atomic::Ordering::Relaxed);
    // Health answers from here on; the other routes answer 503 `initializing` until ready.
    let limits = ConnectionLimits {
        max_connections: connections::effective_cap(settings.http.max_connections, connections::raise_fd_limit()),
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
    let manager = life.service.manager.label();
    let data = dir.root.display().to_string();
    let built = WorkerBuilder::new(settings, dir)
        .lifecycle(life)
        .stale_pid_replaced(stale_pid)
        .build(&app)
        .await?;
    let running = built.start(app).await?;
    tracing::info!(port, ready_ms = begun.elapsed().as_millis() as u64, data = %data, manager, "memd ready");
    shutdown.cancelled().await;
    running.shutdown(server).await;
    Ok(())
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
    #[allow(clippy::exit, reason = "a second stop signal ends the drain at once; the queue is durable")]
    std::process::exit(1);
}
