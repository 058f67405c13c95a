//! Freshness use-cases (issue 38), called by the routes: run the consolidation pass (or its dry
//! run), read its audit log, list contradictions and resolve one — keeping one of the two
//! (the other is superseded by it), both, or forgetting one (through the forget use-case, so its
//! vectors and raw-index entries go too).

use super::Services;
use super::memory::{MemoryError, forget_record};
use crate::clock::now_ms;
use crate::freshness::consolidation_plan::{Change, LogEntry};
use crate::store::forget::{RecordKind, RecordRef};
use crate::store::supersession::{Contradiction, Resolution};

/// Runs (or, with `dry_run`, plans) a consolidation pass now.
pub async fn consolidate(svc: &Services, dry_run: bool) -> Result<Vec<Change>, MemoryError> {
    Ok(svc.embedded.consolidate(dry_run, now_ms()).await?)
}

/// The newest rows of the consolidation audit log.
pub async fn consolidation_log(svc: &Services, limit: i64) -> Result<Vec<LogEntry>, MemoryError> {
    Ok(svc.embedded.consolidation_log(limit).await?)
}

/// Open contradictions (every one with `all`), newest first.
pub async fn contradictions(svc: &Services, all: bool, limit: i64) -> Result<Vec<Contradiction>, MemoryError> {
    Ok(svc.storage.contradictions(all, limit).await?)
}

/// Resolves contradiction `id`.
pub async fn resolve(svc: &Services, id: i64, how: Resolution) -> Result<(), MemoryError> {
    let done = svc.storage.resolve_contradiction(id, how, now_ms()).await?;
    if done.is_none() {
        return Err(MemoryError::NotFound(format!("no open contradiction #{id} with that observation")));
    }
    if let Resolution::Forget(obs) = how {
        let r = RecordRef {
            kind: RecordKind::Observation,
            id: obs,
        };
        forget_record(svc, r, Some("contradiction resolved".into())).await?;
    }
    Ok(())
}
