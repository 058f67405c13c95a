//! The consolidation pass as the worker runs it (issue 38): the plan is read, then applied in one
//! write with its audit log; a dry run only reads. Scheduled like retention (first run 10 minutes
//! after start, then every `MEMD_CONSOLIDATE_INTERVAL_HOURS`), and run by `memd consolidate`
//! through `POST /api/admin/consolidate`. No LLM is needed.

use std::time::Duration;

use crate::freshness::consolidation_plan::{self as consolidation, Change};
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
