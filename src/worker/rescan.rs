//! The redaction rescan as a use-case: the current rules over every stored row, chunk by chunk
//! through the store's writer (ingest keeps flowing between chunks). Called by
//! `POST /api/admin/redact-rescan` (`memd redact --rescan` while a worker runs), by the CLI
//! in-process when none runs, and once by the worker after an upgrade that added rules.

use serde::Serialize;

use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::RedactionCounts;
use crate::store::rescan::{self, Shape, TABLES};
use crate::store::{Store, StoreError};

/// The rules version of this build: bump it when a release adds or widens a detector, and the
/// worker rescans stored rows once at its next start. 2 = issue 13's context detectors.
pub const RULES_VERSION: i64 = 2;

const CHUNK: i64 = 500;

#[derive(Debug, Default, Clone, Serialize)]
pub struct RescanReport {
    pub dry_run: bool,
    pub scanned: u64,
    /// Rows with at least one value changed (or that would change, in a dry run).
    pub changed: u64,
    pub per_detector: RedactionCounts,
}

/// Cleans one stored value with the current rules; None when they change nothing.
pub fn clean_value(privacy: &Privacy, v: &str, shape: Shape) -> Option<(String, RedactionCounts)> {
    if shape == Shape::Json
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(v)
    {
        let (clean, stats) = privacy.clean_json(json);
        return (stats.redactions.total() > 0).then(|| (clean.to_string(), stats.redactions));
    }
    let (clean, counts) = privacy.redactor().redact(v);
    (counts.total() > 0).then_some((clean, counts))
}

/// Rescans every table; `progress(table, scanned so far)` after each chunk.
pub async fn run(
    store: &Store,
    privacy: &Privacy,
    dry_run: bool,
    progress: &(dyn Fn(&str, u64) + Sync),
) -> Result<RescanReport, StoreError> {
    let mut report = RescanReport {
        dry_run,
        ..Default::default()
    };
    for (t, spec) in TABLES.iter().enumerate() {
        let mut after = 0;
        loop {
            let p = privacy.clone();
            let (chunk, counts) = store
                .write(move |c| {
                    let mut counts = RedactionCounts::default();
                    let clean = |v: &str, s: Shape| clean_value(&p, v, s);
                    let chunk = rescan::rescan_chunk(c, &TABLES[t], after, CHUNK, dry_run, &clean, &mut counts)?;
                    Ok((chunk, counts))
                })
                .await?;
            report.scanned += chunk.scanned;
            report.changed += chunk.changed;
            report.per_detector.merge(&counts);
            progress(spec.table, report.scanned);
            if chunk.scanned < CHUNK as u64 {
                break;
            }
            after = chunk.last_id;
        }
    }
    if !dry_run {
        store.write(|c| Ok(rescan::set_rules_version(c, RULES_VERSION)?)).await?;
    }
    Ok(report)
}

/// At start: rows stored under older rules are rescanned once, in the background.
pub async fn after_upgrade(store: Store, privacy: Privacy) {
    let Ok(version) = store.read(|c| Ok(rescan::rules_version(c)?)).await else {
        return;
    };
    if version >= RULES_VERSION {
        return;
    }
    let empty = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT NOT EXISTS (SELECT 1 FROM tool_uses) AND NOT EXISTS (SELECT 1 FROM observations)",
                [],
                |r| r.get::<_, bool>(0),
            )?)
        })
        .await
        .unwrap_or(false);
    if empty {
        let _ = store.write(|c| Ok(rescan::set_rules_version(c, RULES_VERSION)?)).await;
        return;
    }
    tracing::info!(
        from = version,
        to = RULES_VERSION,
        "redaction rules changed: rescanning stored rows"
    );
    match run(&store, &privacy, false, &|_, _| {}).await {
        Ok(r) => tracing::info!(scanned = r.scanned, changed = r.changed, "redaction rescan finished"),
        Err(e) => tracing::warn!(error = %e, "redaction rescan failed; it runs again at the next start"),
    }
}
