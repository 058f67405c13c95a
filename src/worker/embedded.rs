//! The embedded SQLite file's own maintenance, as one named handle (`Services::embedded`): what is
//! done to the file rather than read or written through the storage seam — its path, size,
//! integrity and read-only state, retention and `VACUUM`, the redaction re-scan, the claude-mem
//! import, the consolidation pass and its audit log. A second backend would have none of this;
//! everything else the services do goes through `Services::storage`.

use std::path::Path;

use crate::config::RetentionSettings;
use crate::freshness::consolidation_plan::{Change, LogEntry};
use crate::import::{ImportError, ImportOptions, ImportProgress, ImportReport};
use crate::pipeline::privacy::Privacy;
use crate::store::retention::{self, RetentionReport};
use crate::store::{Integrity, Store, StoreError};

use super::rescan::RescanReport;

/// The file and its upkeep (cheap to clone: the store is handles).
#[derive(Clone)]
pub struct EmbeddedFile {
    store: Store,
}

impl EmbeddedFile {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    pub fn path(&self) -> &Path {
        &self.store.path
    }

    /// What the integrity check at start found.
    pub fn integrity(&self) -> &Integrity {
        &self.store.integrity
    }

    /// Writes are refused (a damaged file, a newer schema).
    pub fn read_only(&self) -> bool {
        self.store.read_only
    }

    /// The database file's size in bytes (0 when it cannot be read).
    pub fn file_size(&self) -> u64 {
        crate::store::stats::file_size(&self.store.path)
    }

    /// The retention rules now, chunk by chunk through the writer (only counted with `dry_run`).
    pub async fn retention(&self, rules: RetentionSettings, now: i64, dry_run: bool) -> Result<RetentionReport, StoreError> {
        if dry_run {
            return self.store.read(move |c| retention::dry_run(c, &rules, now)).await;
        }
        crate::store::retention_run::apply(&self.store, rules, now).await
    }

    /// `VACUUM`, alone on the writer, and its time recorded.
    pub async fn vacuum(&self, now: i64) -> Result<(), StoreError> {
        self.store
            .writer
            .exclusive(move |c| {
                c.execute_batch("VACUUM")?;
                retention::record_vacuum(c, now)
            })
            .await
    }

    /// Re-applies today's redaction rules to stored text (`POST /api/admin/rescan`).
    pub async fn rescan(
        &self,
        privacy: &Privacy,
        dry_run: bool,
        progress: &(dyn Fn(&str, u64) + Sync),
    ) -> Result<RescanReport, StoreError> {
        super::rescan::run(&self.store, privacy, dry_run, progress).await
    }

    /// Runs a claude-mem import on the calling (blocking) thread, each chunk one store call
    /// driven through the runtime `rt`.
    pub fn import(
        &self,
        rt: &tokio::runtime::Handle,
        opts: &ImportOptions,
        progress: &ImportProgress,
        privacy: &Privacy,
    ) -> Result<ImportReport, ImportError> {
        super::maintenance::import_with_store(rt, &self.store, opts, progress, privacy)
    }

    /// Runs (or, with `dry_run`, plans) a consolidation pass.
    pub async fn consolidate(&self, dry_run: bool, now: i64) -> Result<Vec<Change>, StoreError> {
        crate::freshness::consolidate::run(&self.store, dry_run, now).await
    }

    /// The newest rows of the consolidation audit log.
    pub async fn consolidation_log(&self, limit: i64) -> Result<Vec<LogEntry>, StoreError> {
        self.store.read(move |c| crate::freshness::consolidation_plan::log(c, limit)).await
    }
}
