//! Spool ingestion in the worker (docs/spec/hooks.md §4). Hooks that could not reach the worker left
//! one JSON line per event in `<data>/spool/<pid>-<ts>.jsonl`; the worker replays them through
//! the very same commands as HTTP ([`super::IngestService`]) at start and every
//! `MEMD_SPOOL_SCAN_MS`, then deletes each file once all its lines are done.
//!
//! Idempotent: the store acknowledges a repeated `eventId` (or `tool_use_id` in the same session)
//! without storing it twice. A line that fails validation ([`super::IngestError::is_permanent`])
//! goes to `spool/rejected/` and counts as done; any other error stops work on that file until the
//! next scan.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{IngestService, body_platform};
use crate::clock::{iso, now_ms};
use crate::protocol::IngestRoute;

/// A hook writes and renames its `.tmp` within milliseconds; one older than this was cut short.
const TMP_MAX_AGE: Duration = Duration::from_secs(60);
const REJECTED_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// Counters shown in `GET /api/status` under `spool`.
#[derive(Debug, Default)]
pub struct SpoolStats {
    pub pending_files: AtomicU64,
    pub rejected_files: AtomicU64,
    pub ingested_total: AtomicU64,
    /// Epoch ms of the last finished scan; 0 before the first.
    pub last_scan_at: AtomicI64,
}

/// The `spool` part of `GET /api/status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SpoolStatus {
    pub pending_files: u64,
    pub rejected_files: u64,
    pub ingested_total: u64,
    pub last_scan_at: Option<String>,
}

impl SpoolStats {
    pub fn status(&self) -> SpoolStatus {
        let last = self.last_scan_at.load(Ordering::Relaxed);
        SpoolStatus {
            pending_files: self.pending_files.load(Ordering::Relaxed),
            rejected_files: self.rejected_files.load(Ordering::Relaxed),
            ingested_total: self.ingested_total.load(Ordering::Relaxed),
            last_scan_at: (last > 0).then(|| iso(last)),
        }
    }
}

/// What became of one spool line.
enum LineOutcome {
    Done,
    Rejected(String),
    /// A store error: keep the file for the next scan.
    Retry(String),
}

/// `(ts, pid, n)` from `<pid>-<ts>[-<n>].jsonl[.tmp]`; unknown names sort last.
fn order_key(path: &Path) -> (i64, i64, i64, String) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.trim_end_matches(".tmp").trim_end_matches(".jsonl");
    let mut parts = stem.split('-').map(|p| p.parse::<i64>().ok());
    match (parts.next().flatten(), parts.next().flatten(), parts.next().flatten()) {
        (Some(pid), Some(ts), n) => (ts, pid, n.unwrap_or(0), name),
        _ => (i64::MAX, i64::MAX, 0, name),
    }
}

fn age(path: &Path) -> Duration {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .unwrap_or_default()
}

async fn ingest_line(svc: &IngestService, line: &[u8]) -> LineOutcome {
    let Ok(record) = serde_json::from_slice::<Value>(line) else {
        return LineOutcome::Rejected("line is not JSON".into());
    };
    let Some(body) = record.get("body").filter(|b| b.is_object()).cloned() else {
        return LineOutcome::Rejected("line has no body object".into());
    };
    let path = record.get("path").and_then(Value::as_str);
    let Some(route) = path.and_then(IngestRoute::from_path) else {
        return LineOutcome::Rejected(format!("path {path:?} is not an ingest route"));
    };
    let platform = body_platform(&body);
    match svc.apply(route, body, platform).await {
        Ok(()) => LineOutcome::Done,
        Err(e) if e.is_permanent() => LineOutcome::Rejected(e.to_string()),
        Err(e) => LineOutcome::Retry(e.to_string()),
    }
}

fn keep_rejected(dir: &Path, line: &[u8], why: &str) {
    let rejected = dir.join("rejected");
    let _ = std::fs::create_dir_all(&rejected);
    let id = serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|v| v.get("event_id").and_then(Value::as_str).map(str::to_string))
        .filter(|id| !id.is_empty() && id.len() <= 128 && !id.contains('/'))
        .unwrap_or_else(|| format!("line-{}-{}", now_ms(), line.len()));
    let _ = std::fs::write(rejected.join(format!("{id}.json")), line);
    tracing::warn!(event_id = %id, reason = %why, "spool line rejected");
}

/// Ingests one file; returns whether it was completely done (and deleted).
async fn ingest_file(svc: &IngestService, dir: &Path, path: &Path, stats: &SpoolStats) -> bool {
    let Ok(bytes) = tokio::fs::read(path).await else { return false };
    let is_tmp = path.extension().is_some_and(|e| e == "tmp");
    if is_tmp {
        let complete = bytes.ends_with(b"\n") && bytes.iter().filter(|b| **b == b'\n').count() == 1;
        if !complete {
            keep_rejected(dir, &bytes, "unfinished spool file");
            let _ = std::fs::remove_file(path);
            return true;
        }
    }
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
        match ingest_line(svc, line).await {
            LineOutcome::Done => {
                stats.ingested_total.fetch_add(1, Ordering::Relaxed);
            }
            LineOutcome::Rejected(why) => keep_rejected(dir, line, &why),
            LineOutcome::Retry(why) => {
                tracing::warn!(file = %path.display(), reason = %why, "spool file kept for the next scan");
                return false;
            }
        }
    }
    std::fs::remove_file(path).is_ok()
}

/// The spool files waiting to be ingested, oldest first (a hook writes one per event it spools).
pub fn candidates(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.ends_with(".jsonl") || (name.ends_with(".jsonl.tmp") && age(p) > TMP_MAX_AGE)
        })
        .collect();
    files.sort_by_key(|p| order_key(p));
    files
}

fn sweep_rejected(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir.join("rejected")) else {
        return 0;
    };
    let mut left = 0;
    for p in entries.flatten().map(|e| e.path()) {
        if age(&p) > REJECTED_MAX_AGE {
            let _ = std::fs::remove_file(&p);
        } else {
            left += 1;
        }
    }
    left
}

/// One pass over the spool directory.
pub async fn scan(svc: &IngestService, dir: &Path, stats: &SpoolStats) {
    let files = candidates(dir);
    let mut left = 0u64;
    for path in &files {
        if !ingest_file(svc, dir, path, stats).await {
            left += 1;
        }
    }
    stats.pending_files.store(left, Ordering::Relaxed);
    stats.rejected_files.store(sweep_rejected(dir), Ordering::Relaxed);
    stats.last_scan_at.store(now_ms(), Ordering::Relaxed);
    if !files.is_empty() {
        tracing::info!(files = files.len(), kept = left, "spool scanned");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_sort_by_ts_then_pid() {
        let mut v = [
            PathBuf::from("/s/9-200.jsonl"),
            PathBuf::from("/s/5-200-1.jsonl"),
            PathBuf::from("/s/x.jsonl"),
            PathBuf::from("/s/7-100.jsonl"),
            PathBuf::from("/s/5-200.jsonl"),
        ];
        v.sort_by_key(|p| order_key(p));
        let names: Vec<_> = v.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["7-100.jsonl", "5-200.jsonl", "5-200-1.jsonl", "9-200.jsonl", "x.jsonl"]);
    }
}
