//! Retention as the worker runs it: rule chunks of ≤ 1,000 rows, each its own store command (so
//! ingest latency stays bounded), then the incremental vacuum. Used by `POST /api/admin/gc` and by
//! the schedule of docs/spec/storage.md §6 (5 minutes after start, then every 24 h).

use std::time::Duration;

use super::retention::{self, RetentionReport};
use super::{Store, StoreError};
use crate::config::RetentionSettings;

pub const FIRST_RUN_AFTER: Duration = Duration::from_secs(5 * 60);
pub const EVERY: Duration = Duration::from_secs(24 * 3600);

/// Applies every rule until no chunk deletes anything.
pub async fn apply(store: &Store, rules: RetentionSettings, now: i64) -> Result<RetentionReport, StoreError> {
    let mut total = RetentionReport::default();
    loop {
        let chunk = store.write(move |c| retention::run_chunk(c, &rules, now)).await?;
        let n = chunk.total();
        total.merge(&chunk);
        if n == 0 {
            break;
        }
    }
    store.write(move |c| retention::finish(c, now)).await?;
    Ok(total)
}

/// The periodic schedule, forever (the worker runs it under supervision and ends it at shutdown).
/// `rules` gives the rules now (a SIGHUP may change them between runs).
pub async fn schedule(store: Store, rules: impl Fn() -> RetentionSettings) {
    tokio::time::sleep(FIRST_RUN_AFTER).await;
    loop {
        match apply(&store, rules(), crate::clock::now_ms()).await {
            Ok(report) => tracing::info!(deleted = report.total(), "retention run finished"),
            Err(e) => tracing::warn!(error = %e, "retention run failed; retrying at the next period"),
        }
        tokio::time::sleep(EVERY).await;
    }
}
