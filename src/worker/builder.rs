//! The worker's composition root. [`WorkerBuilder`] turns settings and a data dir into a
//! [`Built`] worker — the store open, every service and the actor tree's arguments wired, nothing
//! started; [`Built::start`] ([`super::running`]) starts the tree and the supervised loops and
//! returns the [`Running`](super::running::Running) worker, whose `shutdown` drains it.
//! `memd serve` and the tests build the worker the same way; a test hands in its clock, its
//! faults and its observer here, and nowhere else.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::actors::Handles;
use crate::actors::faults::Faults;
use crate::actors::registry::Registry;
use crate::actors::root::RootArgs;
use crate::actors::session::SessionContext;
use crate::actors::transcript_watcher::WatcherArgs;
use crate::backend::Storage;
use crate::backend::sqlite::SqliteBackend;
use crate::clock::Clock;
use crate::config::live::Live;
use crate::config::{EmbeddingsMode, RawSettings, Settings};
use crate::data_dir::{DataDir, DataDirError};
use crate::ingest::{IngestService, Pipeline};
use crate::observer::setup::ObserverSetup;
use crate::pipeline::glob::ExcludedProjects;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::{RedactConfig, Redactor};
use crate::service::ServiceEnv;
use crate::store::pending::BatchLimits;
use crate::store::{Store, StoreError, StoreOptions};
use crate::vectors::runtime::VectorRuntime;

use super::{Services, WorkerState};

/// Why the worker could not be built or started.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    #[error("cannot start the actor tree: {0}")]
    Actors(String),
}

/// What `memd serve` got from its environment beyond the settings: the service manager's
/// variables, the environment a reload re-reads settings with, and the SIGHUP doorbell.
#[derive(Default)]
pub struct Lifecycle {
    pub service: ServiceEnv,
    pub env: std::collections::HashMap<String, String>,
    /// The raw values `settings` was resolved from (a SIGHUP compares against them).
    pub raw: Option<RawSettings>,
    pub reload: Arc<tokio::sync::Notify>,
}

/// Settings, data dir and what a caller injects; [`WorkerBuilder::build`] wires them.
pub struct WorkerBuilder {
    settings: Settings,
    dir: DataDir,
    life: Lifecycle,
    clock: Clock,
    faults: Arc<Faults>,
    observer: Option<ObserverSetup>,
    observe_deadline: Option<Duration>,
    stale_pid_replaced: bool,
}

/// A worker wired and not started: its services, the actor tree's arguments, and what the
/// supervised loops and the reload need.
pub struct Built {
    pub ctx: Arc<SessionContext>,
    pub services: Services,
    pub(super) root_args: RootArgs,
    pub(super) privacy: Arc<Privacy>,
    pub(super) dir: DataDir,
    pub(super) life: Lifecycle,
    pub(super) raw_at_start: RawSettings,
    /// The store itself, for the composition root's own work at start and shutdown (the
    /// upgrade re-scan, the graph backfill, the final flush).
    pub(crate) store: Store,
}

impl WorkerBuilder {
    pub fn new(settings: Settings, dir: DataDir) -> Self {
        Self {
            settings,
            dir,
            life: Lifecycle::default(),
            clock: Clock::System,
            faults: Arc::default(),
            observer: None,
            observe_deadline: None,
            stale_pid_replaced: false,
        }
    }

    pub fn lifecycle(mut self, life: Lifecycle) -> Self {
        self.life = life;
        self
    }

    /// Where the actors read "now" (the wall clock unless a test gives its own).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Faults the actor tree suffers on purpose (tests).
    pub fn faults(mut self, faults: Arc<Faults>) -> Self {
        self.faults = faults;
        self
    }

    /// This observer instead of the one the settings select.
    pub fn observer(mut self, setup: ObserverSetup) -> Self {
        self.observer = Some(setup);
        self
    }

    /// How long a batch may stay with the observer (default: three observer timeouts + 30 s).
    pub fn observe_deadline(mut self, deadline: Duration) -> Self {
        self.observe_deadline = Some(deadline);
        self
    }

    /// The PID file replaced one a dead worker left (the reaper reports it).
    pub fn stale_pid_replaced(mut self, replaced: bool) -> Self {
        self.stale_pid_replaced = replaced;
        self
    }

    /// Opens the store and wires every service; starts nothing. `app` lends its counters and,
    /// through its token, the redactor's knowledge of memd's own secret.
    pub async fn build(self, app: &WorkerState) -> Result<Built, BuildError> {
        let WorkerBuilder {
            mut settings,
            dir,
            life,
            clock,
            faults,
            observer,
            observe_deadline,
            stale_pid_replaced,
        } = self;
        crate::store::graph::set_enabled(settings.graph);
        // sqlite-vec must be registered before the store opens its connections.
        let extension = settings.vectors.mode == EmbeddingsMode::Local && crate::vectors::index::register_extension();
        let store = open_store(&settings, &dir, app, clock.now()).await?;
        let privacy = Arc::new(Privacy::new(redactor(&mut settings, &app.token)));
        let (handles, registry) = (Arc::new(Handles::default()), Arc::new(Registry::default()));
        let vectors = VectorRuntime::from_settings(&settings.vectors, &store, extension).await;
        // The one place that picks the storage backend; everything after it sees only the seam.
        let storage: Arc<dyn Storage> = Arc::new(SqliteBackend::new(store.clone(), vectors.clone()));
        let ctx = Arc::new(SessionContext {
            storage: storage.clone(),
            handles: handles.clone(),
            registry: registry.clone(),
            limits: BatchLimits {
                max_events: settings.batch_max_events,
                max_chars: settings.batch_max_chars,
            },
            debounce_ms: settings.batch_debounce_ms,
            max_wait_ms: settings.batch_max_wait_ms,
            max_attempts: settings.observer.max_attempts,
            observe_deadline: observe_deadline.unwrap_or(Duration::from_millis(settings.observer.timeout_ms * 3 + 30_000)),
            clock: clock.clone(),
            faults,
        });
        let children_reaped = crate::providers::children::reap_leftovers(&dir.root);
        let from_settings = ObserverSetup::from_settings(&mut settings, &dir.root);
        let observer = observer.unwrap_or(from_settings);
        let ingest = Arc::new(IngestService::new(
            pipeline(&settings, &privacy, &dir),
            storage.clone(),
            Arc::new(crate::actors::Doorbell {
                registry: registry.clone(),
                handles: handles.clone(),
            }),
        ));
        let root_args = RootArgs {
            ctx: ctx.clone(),
            store: store.clone(),
            privacy: privacy.clone(),
            // One loaded mode serves the observer and the renderers.
            observer: observer.clone(),
            data_dir: dir.root.clone(),
            reaper_interval: Duration::from_millis(settings.reaper_interval_ms),
            idle_ms: settings.session_idle_ms as i64,
            stale_pid_replaced,
            children_reaped,
            embed: vectors.as_ref().map(|v| v.embed.clone()),
            chroma: vectors
                .as_ref()
                .and_then(|v| v.chroma.clone())
                .map(|c| (c, Duration::from_millis(settings.vectors.chroma_retry_ms))),
            watch: watcher_args(&settings, &ingest, dir.root.join("watch-state-worker.json"), &clock),
            team: settings.team.clone(),
        };
        // What the settings were read from (`memd serve` passes it; read here only for in-process callers).
        let raw_at_start = match &life.raw {
            Some(raw) => raw.clone(),
            None => RawSettings::load(&dir.root, &life.env).0,
        };
        let freshness = settings
            .retention
            .freshness
            .then(|| crate::freshness::Freshness::new(storage.clone(), store.arrivals.clone()));
        let services = Services {
            freshness,
            mode: observer.mode,
            embedded: super::embedded::EmbeddedFile::new(store.clone()),
            storage,
            handles,
            registry,
            ingest,
            settings: Arc::new(Live::new(settings)),
            vectors,
        };
        Ok(Built {
            ctx,
            services,
            root_args,
            privacy,
            dir,
            life,
            raw_at_start,
            store,
        })
    }
}

async fn open_store(settings: &Settings, dir: &DataDir, app: &WorkerState, now: i64) -> Result<Store, BuildError> {
    let opts = StoreOptions {
        synchronous_full: settings.db_synchronous_full,
        readers: settings.db_readers,
        queue_max: settings.store_queue_max,
        group_commit: Duration::from_millis(settings.group_commit_ms),
        arrivals: app.counters.arrivals.clone(),
    };
    let db = dir.db();
    let store = tokio::task::spawn_blocking(move || Store::open(&db, &opts, now))
        .await
        .map_err(|e| StoreError::Internal(e.to_string()))??;
    Ok(store)
}

/// The redactor of the settings; what it skipped joins the settings' warnings.
fn redactor(settings: &mut Settings, token: &str) -> Redactor {
    let (redactor, warnings) = Redactor::new(&RedactConfig {
        redact: settings.redact,
        disabled_builtins: &settings.redact_disabled_builtins,
        custom_patterns_json: &settings.redact_custom_patterns,
        memd_token: Some(token),
    });
    for w in &warnings {
        tracing::warn!(warning = %w, "redaction setting skipped");
    }
    settings.warnings.extend(warnings);
    redactor
}

fn pipeline(settings: &Settings, privacy: &Arc<Privacy>, dir: &DataDir) -> Arc<Pipeline> {
    let home = settings.home.clone();
    Arc::new(Pipeline {
        privacy: privacy.clone(),
        excluded: ExcludedProjects::new(&settings.excluded_projects, home.as_deref().and_then(|h| h.to_str())),
        skip_tools: settings.skip_tools.clone(),
        data_dir: dir.root.clone(),
        home,
        tool_use_max_chars: settings.tool_use_max_chars,
        redactions: Default::default(),
    })
}

/// The transcript watcher's arguments; None unless `MEMD_WATCH` is on.
fn watcher_args(settings: &Settings, ingest: &Arc<IngestService>, state_path: PathBuf, clock: &Clock) -> Option<WatcherArgs> {
    settings.watch.enabled.then(|| WatcherArgs {
        ingest: ingest.clone(),
        roots: settings.watch.roots.clone(),
        state_path,
        interval: Duration::from_millis(settings.watch.interval_ms),
        idle: Duration::from_millis(settings.watch.idle_ms),
        busy: Default::default(),
        clock: clock.clone(),
    })
}
