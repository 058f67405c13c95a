//! The worker's state: what `memd serve` holds once it runs, and what every adapter calls — the
//! HTTP routes, the spool, the status room and the worker's own tasks. Nothing here knows HTTP.
//!
//! [`WorkerState`] lives from the first second (health answers while the store opens): the
//! lifecycle phase, the token, the counters. [`Services`] — store, actor directory, registry,
//! ingest, settings, vectors, mode — exist once the worker is ready, and are reached through
//! [`WorkerState::services`], which says why they are not there otherwise.

pub mod builder;
pub mod corpus;
pub mod edit;
pub mod embedded;
pub mod export;
pub mod freshness;
pub mod job_table;
pub mod jobs;
pub mod maintenance;
pub mod memory;
pub mod reload;
pub mod rescan;
pub mod running;
pub mod search;
pub mod service_link;
pub mod stats;
pub mod tasks;
pub mod team;
pub mod viewer_access;

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::actors::Handles;
use crate::actors::registry::Registry;
use crate::config::Settings;
use crate::import::ImportProgress;
use crate::ingest::IngestService;
use crate::ingest::spool::SpoolStats;
use crate::modes::Mode;
use crate::vectors::runtime::VectorRuntime;

/// The worker's version, as `/api/health` and `/api/status` report it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the worker is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Listening, the store not yet open: only health answers.
    Initializing,
    Ready,
    ShuttingDown,
}

/// Why the services cannot be used now (both answer 503 with `Retry-After` over HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("the worker is starting; retry shortly")]
    Initializing,
    #[error("the worker is shutting down")]
    ShuttingDown,
}

/// What the use-cases need once the worker is ready.
pub struct Services {
    /// The embedded SQLite file's own maintenance (integrity, retention, `VACUUM`, backups,
    /// re-scan, import, consolidation): a named handle, not the store.
    pub embedded: embedded::EmbeddedFile,
    /// Storage through the seam: what ingest, the routes, the MCP tools and the use-cases read
    /// and write.
    pub storage: Arc<dyn crate::backend::Storage>,
    /// The actor directory: current references to the long-lived actors.
    pub handles: Arc<Handles>,
    /// Live status of every session actor.
    pub registry: Arc<Registry>,
    /// The ingest pipeline and its four commands.
    pub ingest: Arc<IngestService>,
    /// The settings now: a SIGHUP swaps in what can change live ([`reload`]).
    pub settings: Arc<crate::config::live::Live<Settings>>,
    /// Semantic search; None when vectors are off (`MEMD_EMBEDDINGS=none`).
    pub vectors: Option<Arc<VectorRuntime>>,
    /// The active mode (types, glyphs), loaded once at start.
    pub mode: Arc<Mode>,
    /// Code anchors and staleness (issue 38); None when `MEMD_FRESHNESS` is off.
    pub freshness: Option<Arc<crate::freshness::Freshness>>,
}

/// Counters kept from the first second, shown by the status room.
#[derive(Default)]
pub struct Counters {
    /// Progress of a running claude-mem import.
    pub import: Arc<ImportProgress>,
    /// POST requests between arrival and answer; lets the store's group commit wait only when useful.
    pub arrivals: Arc<AtomicUsize>,
    /// Spool ingestion counters.
    pub spool: Arc<SpoolStats>,
    /// Restarts of the supervised background loops.
    pub task_restarts: Arc<tasks::TaskRestarts>,
    /// What each periodic job did last.
    pub jobs: Arc<jobs::JobBoard>,
}

pub struct WorkerState {
    phase: AtomicU8,
    /// The bearer token every route but health and readiness requires.
    pub token: String,
    /// The port actually bound (the setting may be 0).
    pub port: AtomicU16,
    pub started: Instant,
    pub started_epoch: i64,
    /// Cancelled when shutdown begins (signal, `POST /api/admin/shutdown`, or the caller of `serve`).
    pub shutdown: CancellationToken,
    pub counters: Counters,
    /// How long a request body may take to arrive (`MEMD_HTTP_BODY_TIMEOUT_MS`).
    pub body_timeout: std::time::Duration,
    /// Who started this worker (systemd, launchd, or on demand).
    pub service_manager: crate::service::Manager,
    /// The viewer's one-time codes and browser sessions.
    pub viewer: viewer_access::ViewerAccess,
    /// `GET /stream` clients connected now.
    pub stream_clients: Arc<AtomicUsize>,
    services: OnceLock<Services>,
}

impl WorkerState {
    pub fn new(token: String, started_epoch: i64) -> Self {
        Self {
            phase: AtomicU8::new(0),
            token,
            port: AtomicU16::new(0),
            started: Instant::now(),
            started_epoch,
            shutdown: CancellationToken::new(),
            counters: Counters::default(),
            service_manager: Default::default(),
            viewer: Default::default(),
            stream_clients: Default::default(),
            body_timeout: std::time::Duration::from_secs(10),
            services: OnceLock::new(),
        }
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Initializing,
            1 => Phase::Ready,
            _ => Phase::ShuttingDown,
        }
    }

    pub fn set_phase(&self, p: Phase) {
        let v = match p {
            Phase::Initializing => 0,
            Phase::Ready => 1,
            Phase::ShuttingDown => 2,
        };
        self.phase.store(v, Ordering::Release);
    }

    /// Installs the services and turns ready (once; a second call is ignored).
    pub fn ready(&self, services: Services) {
        let _ = self.services.set(services);
        self.set_phase(Phase::Ready);
    }

    /// Why a worker that is up would not be ready: a damaged database, or an actor tree that
    /// gave up. None when readiness answers 200 (or the services are not there yet).
    pub fn unready_reason(&self) -> Option<String> {
        let s = self.services.get()?;
        match s.embedded.integrity() {
            crate::store::Integrity::Damaged(d) => Some(format!("the database is damaged ({d}); run `memd repair`")),
            _ => s.handles.tree().dead,
        }
    }

    pub fn services(&self) -> Result<&Services, Unavailable> {
        match (self.phase(), self.services.get()) {
            (Phase::ShuttingDown, _) => Err(Unavailable::ShuttingDown),
            (_, Some(s)) => Ok(s),
            (_, None) => Err(Unavailable::Initializing),
        }
    }

    pub fn port(&self) -> u16 {
        self.port.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_say_why_they_are_missing() {
        let w = WorkerState::new("t".into(), 0);
        assert_eq!(w.services().err(), Some(Unavailable::Initializing));
        w.set_phase(Phase::ShuttingDown);
        assert_eq!(w.services().err(), Some(Unavailable::ShuttingDown));
    }
}
