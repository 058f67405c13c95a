//! The worker's periodic jobs, one row each ([`super::jobs`] says what a row is and how it runs).
//! A pass here only gathers what its area needs from the worker and calls that area.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::jobs::{Done, Job, JobError, PassFuture};
use super::{Services, WorkerState};
use crate::actors::backoff::Backoff;
use crate::freshness::service::{ANCHOR_EVERY, CHECK_EVERY};

type App = Arc<WorkerState>;

/// After a failed maintenance pass (a table walk, a copy of the file): 1 min, doubling to 1 h.
const MAINTENANCE: Backoff = Backoff::doubling(Duration::from_secs(60), Duration::from_secs(3600));
/// After a failed or busy step of the freshness work: 1 s, doubling to 64 s.
const FRESHNESS: Backoff = Backoff::doubling(ANCHOR_EVERY, Duration::from_secs(64));

/// Every periodic job of the worker, in start order.
pub static JOBS: &[Job<App>] = &[
    Job {
        name: "spool scanner",
        first: Some(Duration::ZERO),
        every: |app| on(app, |s| Some(Duration::from_millis(s.settings.get().spool_scan_ms))),
        backoff: Backoff::LOOP,
        pass: spool_scan,
    },
    Job {
        name: "anchoring",
        first: None,
        every: |app| on(app, |s| (s.freshness.is_some() && !s.embedded.read_only()).then_some(ANCHOR_EVERY)),
        backoff: FRESHNESS,
        pass: anchoring,
    },
    Job {
        name: "staleness check",
        first: Some(CHECK_EVERY),
        every: |app| on(app, |s| (s.freshness.is_some() && !s.embedded.read_only()).then_some(CHECK_EVERY)),
        backoff: FRESHNESS,
        pass: staleness,
    },
    Job {
        name: "alerts",
        first: None,
        every: |app| {
            on(app, |s| {
                s.settings.get().alerts.webhook.is_some().then_some(crate::alerts::service::PASS)
            })
        },
        backoff: Backoff::LOOP,
        pass: alerts,
    },
    Job {
        name: "notes import",
        first: Some(Duration::ZERO),
        every: |app| {
            on(app, |s| {
                let roots = !s.settings.get().native.notes_roots.is_empty();
                (roots && !s.storage.read_only()).then_some(crate::bridge::service::NOTES_INTERVAL)
            })
        },
        backoff: Backoff::LOOP,
        pass: notes,
    },
    Job {
        name: "folder files",
        first: None,
        every: |app| {
            on(app, |s| {
                s.settings.get().folders.enabled.then_some(crate::folders::service::INTERVAL)
            })
        },
        backoff: MAINTENANCE,
        pass: folder_files,
    },
    Job {
        name: "retention",
        first: Some(crate::store::retention_run::FIRST_RUN_AFTER),
        every: |app| on(app, |s| (!s.embedded.read_only()).then_some(crate::store::retention_run::EVERY)),
        backoff: MAINTENANCE,
        pass: retention,
    },
    Job {
        name: "consolidation",
        first: Some(crate::freshness::consolidate::FIRST_RUN_AFTER),
        every: |app| {
            on(app, |s| {
                let hours = s.settings.get().retention.consolidate_interval_hours;
                (hours > 0 && !s.embedded.read_only()).then(|| Duration::from_secs(hours * 3600))
            })
        },
        backoff: MAINTENANCE,
        pass: consolidation,
    },
    Job {
        name: "backups",
        first: None,
        every: |app| {
            on(app, |s| {
                let hours = s.settings.get().retention.backup_interval_hours;
                let due = |h| crate::store::integrity::next_backup_in(&backups_dir(s), Duration::from_secs(h * 3600));
                (hours > 0 && !s.embedded.integrity().is_damaged()).then(|| due(hours))
            })
        },
        backoff: MAINTENANCE,
        pass: backup,
    },
];

/// `f` of the services; None (off for now) while the worker has none.
fn on(app: &App, f: impl FnOnce(&Services) -> Option<Duration>) -> Option<Duration> {
    app.services().ok().and_then(f)
}

fn backups_dir(s: &Services) -> std::path::PathBuf {
    crate::data_dir::DataDir::new(s.settings.get().data_dir.clone()).backups()
}

fn spool_scan(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let dir = crate::data_dir::DataDir::new(svc.settings.get().data_dir.clone()).spool();
        crate::ingest::spool::scan(&svc.ingest, &dir, &app.counters.spool).await;
        Ok(Done::Did("scanned".into()))
    })
}

fn anchoring(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let Some(f) = svc.freshness.clone() else { return Ok(Done::Busy) };
        if f.ingest_busy() {
            return Ok(Done::Busy);
        }
        let n = f.anchor_queued().await.map_err(JobError::of)?;
        Ok(Done::Did(format!("{n} observations anchored")))
    })
}

fn staleness(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let Some(f) = svc.freshness.clone() else { return Ok(Done::Busy) };
        if f.ingest_busy() {
            return Ok(Done::Busy);
        }
        let n = f.check(Vec::new(), crate::clock::now_ms()).await.map_err(JobError::of)?;
        Ok(Done::Did(format!("{n} marked stale")))
    })
}

fn alerts(app: App) -> PassFuture {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let cfg = svc.settings.get().alerts.clone();
        let Some(url) = cfg.webhook.clone() else {
            return Ok(Done::Did("no webhook".into()));
        };
        let client = CLIENT.get_or_init(|| crate::providers::http_client(crate::alerts::service::SEND_TIMEOUT));
        let pipeline = &svc.ingest.pipeline;
        let excluded = |root: &str| pipeline.check_cwd(Some(root)).is_some();
        let screen = crate::alerts::service::Screen {
            privacy: &pipeline.privacy,
            excluded: &excluded,
        };
        let n = crate::alerts::service::pass(&*svc.storage, &screen, &cfg, &url, client)
            .await
            .map_err(JobError::of)?;
        Ok(Done::Did(format!("{n} deliveries tried")))
    })
}

fn notes(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let s = svc.settings.get();
        let n = crate::bridge::service::import_notes(&*svc.storage, &svc.ingest.pipeline.privacy, s.native.clone(), s.home.clone()).await;
        Ok(Done::Did(format!("{n} notes changed")))
    })
}

fn folder_files(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let s = svc.settings.get();
        let changes = crate::folders::service::run(&*svc.storage, s.folders.clone(), &s.data_dir, false)
            .await
            .map_err(JobError::of)?;
        Ok(Done::Did(format!("{} folders written", changes.len())))
    })
}

fn retention(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let rules = svc.settings.get().retention;
        let report = svc
            .embedded
            .retention(rules, crate::clock::now_ms(), false)
            .await
            .map_err(JobError::of)?;
        tracing::info!(deleted = report.total(), "retention run finished");
        Ok(Done::Did(format!("{} rows deleted", report.total())))
    })
}

fn consolidation(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let changes = svc
            .embedded
            .consolidate(false, crate::clock::now_ms())
            .await
            .map_err(JobError::of)?;
        tracing::info!(changes = changes.len(), "consolidation pass finished");
        Ok(Done::Did(format!("{} changes", changes.len())))
    })
}

fn backup(app: App) -> PassFuture {
    Box::pin(async move {
        let svc = app.services().map_err(JobError::of)?;
        let keep = svc.settings.get().retention.backup_keep as usize;
        let (db, dest) = (
            svc.embedded.path().to_path_buf(),
            crate::store::integrity::backup_name(&backups_dir(svc), crate::clock::now_ms()),
        );
        let bytes = tokio::task::spawn_blocking(move || crate::store::integrity::backup(&db, &dest, keep))
            .await
            .map_err(JobError::of)?
            .map_err(JobError::of)?;
        tracing::info!(bytes, "database backed up");
        Ok(Done::Did(format!("{bytes} bytes copied")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_has_its_own_name() {
        let mut names: Vec<&str> = JOBS.iter().map(|j| j.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), JOBS.len());
    }

    #[test]
    fn a_worker_without_services_has_every_job_off() {
        let app = Arc::new(WorkerState::new("t".into(), 0));
        for j in JOBS {
            assert_eq!((j.every)(&app), None, "{}", j.name);
        }
    }
}
