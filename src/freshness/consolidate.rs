//! The consolidation pass as the worker runs it (issue 38): the plan is read, then applied in one
//! write with its audit log; a dry run only reads. Scheduled like retention (first run 10 minutes
//! after start, then every `MEMD_CONSOLIDATE_INTERVAL_HOURS`), and run by `memd consolidate`
//! through `POST /api/admin/consolidate`. No LLM is needed.

use std::time::Duration;

use crate::store::consolidation::{self, Change};
use crate::store::{Store, StoreError};

pub const FIRST_RUN_AFTER: Duration = Duration::from_secs(10 * 60);

/// Plans a pass and, unless `dry_run`, applies it. Answers the changes (applied or planned).
pub async fn run(store: &Store, dry_run: bool, now: i64) -> Result<Vec<Change>, StoreError> {
    if dry_run {
        return store.read(consolidation::plan).await;
    }
    store
        .write(move |c| {
            // Planned inside the write: nothing changes between the plan and its application.
            let changes = consolidation::plan(c)?;
            if !changes.is_empty() {
                let run_id = format!("run-{now}");
                consolidation::apply(c, &changes, &run_id, now)?;
            }
            Ok(changes)
        })
        .await
}

/// The schedule, forever (run under the worker's supervision); `hours` gives the period now
/// (0: no scheduled pass).
pub async fn schedule(store: Store, hours: impl Fn() -> u64) {
    tokio::time::sleep(FIRST_RUN_AFTER).await;
    loop {
        let h = hours();
        if h > 0 && !store.read_only {
            match run(&store, false, crate::clock::now_ms()).await {
                Ok(c) => tracing::info!(changes = c.len(), "consolidation pass finished"),
                Err(e) => tracing::warn!(error = %e, "consolidation pass failed; retrying at the next period"),
            }
        }
        tokio::time::sleep(Duration::from_secs(h.max(1) * 3600)).await;
    }
}
