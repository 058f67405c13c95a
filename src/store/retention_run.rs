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
