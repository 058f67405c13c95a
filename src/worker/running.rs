//! Starting a [`Built`] worker and draining it. [`Built::start`] spawns the actor tree, turns
//! the worker ready, and starts the supervised loops — a row of [`JOBS`] each, and the reload;
//! [`Running::shutdown`] waits for in-flight requests, ends the loops, stops the sessions and
//! the tree, flushes the store and removes the PID file, within [`SHUTDOWN_BUDGET`].

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorRef};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::actors::Handles;
use crate::actors::root::{RootMsg, RootSupervisor};
use crate::actors::session_manager::ManagerMsg;
use crate::service::notify::Notifier;
use crate::store::Store;

use super::builder::{BuildError, Built};
use super::job_table::JOBS;
use super::jobs::drive;
use super::reload::Reloader;
use super::tasks::supervise;
use super::{Phase, WorkerState};

/// The longest a drain may take.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(10);

/// A started worker: what its shutdown stops.
pub struct Running {
    app: Arc<WorkerState>,
    root: ActorRef<RootMsg>,
    root_task: JoinHandle<()>,
    loops: Vec<JoinHandle<()>>,
    notifier: Option<(Arc<Notifier>, JoinHandle<()>)>,
    handles: Arc<Handles>,
    store: Store,
    dir: crate::data_dir::DataDir,
}

impl Built {
    /// Spawns the actor tree, installs the services in `app` (ready), starts the supervised loops.
    pub async fn start(self, app: Arc<WorkerState>) -> Result<Running, BuildError> {
        let Built {
            ctx,
            services,
            root_args,
            privacy,
            dir,
            life,
            raw_at_start,
            store,
        } = self;
        let (root, root_task) = Actor::spawn(None, RootSupervisor, root_args)
            .await
            .map_err(|e| BuildError::Actors(e.to_string()))?;
        let root_task = watch_root(root_task, ctx.handles.clone(), app.shutdown.clone());
        let settings = services.settings.clone();
        // Refused before readiness when someone links them elsewhere (the error names the path).
        dir.ensure_subdir(&dir.spool())?;
        dir.ensure_subdir(&dir.backups())?;
        // The alert cursor is set before the first request can store an observation (issue 39).
        if !services.storage.read_only() {
            let alerts = services.settings.get().alerts.clone();
            let types = if alerts.webhook.is_some() { alerts.types } else { Vec::new() };
            if let Err(e) = services.storage.alerts_enqueue(types, crate::clock::now_ms()).await {
                tracing::warn!(error = %e, "alert cursor not set");
            }
        }
        app.ready(services);
        if !store.integrity.is_damaged() {
            tokio::spawn(super::rescan::after_upgrade(store.clone(), (*privacy).clone()));
            if !store.read_only {
                tokio::spawn(crate::store::graph::backfill(store.clone()));
            }
        }
        let reloader = Arc::new(Reloader {
            env: life.env.clone(),
            data_dir: dir.root.clone(),
            settings: settings.clone(),
            privacy,
            root: root.clone(),
            token: app.token.clone(),
            last: std::sync::Mutex::new(raw_at_start),
        });
        let stale = crate::store::integrity::remove_stale_temps(&dir.backups());
        if stale > 0 {
            tracing::info!(files = stale, "removed what interrupted backups left");
        }
        let (stop, restarts) = (app.shutdown.clone(), app.counters.task_restarts.clone());
        // Every periodic job is a row of JOBS; the reload waits on a signal, so it is a loop.
        let mut loops: Vec<JoinHandle<()>> = JOBS
            .iter()
            .map(|job| {
                let (app, board, stop_job) = (app.clone(), app.counters.jobs.clone(), stop.clone());
                supervise(job.name, stop.clone(), restarts.clone(), move || {
                    drive(job, app.clone(), board.clone(), stop_job.clone())
                })
            })
            .collect();
        let doorbell = life.reload.clone();
        loops.push(supervise("reload", stop, restarts, move || {
            super::reload::on_sighup(reloader.clone(), doorbell.clone())
        }));
        let notifier = notifier(&app, &life);
        Ok(Running {
            app,
            root,
            root_task,
            loops,
            notifier,
            handles: ctx.handles.clone(),
            store,
            dir,
        })
    }
}

/// The root ending before shutdown leaves the worker without a tree: readiness says so.
fn watch_root(root_task: JoinHandle<()>, handles: Arc<Handles>, stop: CancellationToken) -> JoinHandle<()> {
    tokio::spawn(async move {
        let _ = root_task.await;
        if !stop.is_cancelled() {
            tracing::error!("the actor tree's root stopped; readiness answers 503");
            handles.mark_dead("the actor tree's root stopped");
        }
    })
}

/// The sd_notify link (readiness, watchdog) when a service manager asked for one.
fn notifier(app: &Arc<WorkerState>, life: &super::builder::Lifecycle) -> Option<(Arc<Notifier>, JoinHandle<()>)> {
    let target = life.service.notify_socket.as_deref()?;
    let n = match Notifier::new(target) {
        Ok(n) => Arc::new(n),
        Err(e) => {
            tracing::warn!(error = %e, "no sd_notify");
            return None;
        }
    };
    let watchdog = life.service.watchdog_usec.map(|u| Duration::from_micros(u / 2));
    let task = tokio::spawn(super::service_link::run(app.clone(), n.clone(), watchdog));
    Some((n, task))
}

impl Running {
    /// Drains the worker: `server` is the HTTP server's task, which ends with the shutdown token.
    pub async fn shutdown(self, server: impl Future) {
        let stopping = Instant::now();
        tracing::info!("shutting down");
        if let Some((n, task)) = &self.notifier {
            // The drain is bounded by SHUTDOWN_BUDGET; ask for that much more than the stop timeout.
            let extend = (SHUTDOWN_BUDGET + Duration::from_secs(5)).as_micros();
            n.send(&format!("STOPPING=1\nSTATUS=draining\nEXTEND_TIMEOUT_USEC={extend}"));
            task.abort();
        }
        self.app.set_phase(Phase::ShuttingDown);
        self.app.shutdown.cancel();
        // In-flight requests finish (their writes are still accepted by the store).
        if tokio::time::timeout(SHUTDOWN_BUDGET / 2, server).await.is_err() {
            tracing::warn!("in-flight requests did not finish in time");
        }
        // The loops end with the shutdown token; they hold no acknowledged data.
        for task in self.loops {
            let _ = task.await;
        }
        if let Some(m) = self.handles.manager() {
            let _ = ractor::call_t!(m, ManagerMsg::StopAll, 1_000);
        }
        self.root.stop(Some("shutdown".into()));
        let _ = tokio::time::timeout(Duration::from_secs(2), self.root_task).await;
        let left = SHUTDOWN_BUDGET.saturating_sub(stopping.elapsed()).max(Duration::from_millis(500));
        if tokio::time::timeout(left, self.store.writer.shutdown()).await.is_err() {
            tracing::warn!("store flush timed out; the WAL keeps every committed row");
        }
        self.dir.remove_pid();
        tracing::info!(elapsed_ms = stopping.elapsed().as_millis() as u64, "memd stopped");
    }
}
