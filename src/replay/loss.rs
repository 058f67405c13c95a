//! The loss check (memd only): wait until the worker's queue (and spool) drained, then compare per
//! session the acknowledged PostToolUse(+Failure) events with `tool_uses` rows, read from
//! `<data>/memd.db` opened read-only. Skipped and duplicate answers are counted, not lost.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use super::stats::Tally;

#[derive(Debug, thiserror::Error)]
pub enum LossError {
    #[error("open {path}: {source}")]
    Open { path: String, source: rusqlite::Error },
    #[error("query: {0}")]
    Query(#[from] rusqlite::Error),
}

/// What the worker's `GET /api/status` said last while draining.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Drain {
    pub drained: bool,
    pub waited_s: f64,
    pub pending: i64,
    pub processing: i64,
    pub spool_files: i64,
}

/// The part of `GET /api/status` the drain reads: the observer's queue, the raw index's queue and
/// the spool (read from the status JSON; every other field is ignored).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Backlog {
    #[serde(default)]
    pub pending: Option<Queue>,
    #[serde(default)]
    pub spool: Spool,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct Queue {
    pub pending: i64,
    pub processing: i64,
    pub raw_index_queued: i64,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct Spool {
    pub pending_files: u64,
}

/// Polls `status()` (the worker's backlog, `None` while unreachable) until nothing is pending,
/// processing or spooled, or `timeout` passes.
pub fn wait_drained(timeout: Duration, mut status: impl FnMut() -> Option<Backlog>) -> Drain {
    let start = Instant::now();
    let mut last = Drain::default();
    loop {
        if let Some(doc) = status() {
            let pending = doc.pending.unwrap_or_default();
            (last.pending, last.processing) = (pending.pending, pending.processing);
            last.spool_files = doc.spool.pending_files as i64;
            // The raw search index catches up once ingest is idle (issue 35): searched next.
            if last.pending == 0 && last.processing == 0 && last.spool_files == 0 && pending.raw_index_queued == 0 {
                last.drained = true;
            }
        }
        last.waited_s = start.elapsed().as_secs_f64();
        if last.drained || start.elapsed() >= timeout {
            return last;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Missing rows of one session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionLoss {
    pub session_id: String,
    pub missing: usize,
    /// Up to 10 of the missing tool_use ids.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LossReport {
    pub drain: Drain,
    pub sessions: usize,
    /// Acknowledged tool events that must have a row.
    pub expected_rows: usize,
    pub found_rows: usize,
    pub missing_rows: usize,
    pub skipped: usize,
    /// Acknowledged in hook mode but excluded by the worker's skip rules: not expected in the DB.
    pub skipped_by_rule: usize,
    pub duplicates: usize,
    /// Rows present although the event was not acknowledged (e.g. committed, then the answer timed out).
    pub unacknowledged_rows: usize,
    pub failed_pending: i64,
    pub losses: Vec<SessionLoss>,
}

impl LossReport {
    pub fn passed(&self) -> bool {
        self.drain.drained && self.missing_rows == 0
    }
}

/// Compares `tally` with `db`. `skip_rule(tool_name)` names tools the worker never stores (used for
/// hook runs, where the worker's answer is not seen).
pub fn check(db: &Path, tally: &Tally, drain: Drain, skip_rule: impl Fn(&str) -> bool) -> Result<LossReport, LossError> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|source| LossError::Open {
        path: db.display().to_string(),
        source,
    })?;
    let mut rows_of = conn.prepare("SELECT tool_use_id FROM tool_uses WHERE content_session_id = ?1 AND tool_use_id IS NOT NULL")?;
    let mut failed_of = conn.prepare("SELECT count(*) FROM pending_messages WHERE content_session_id = ?1 AND status = 'failed'")?;
    let mut r = LossReport {
        drain,
        sessions: tally.sessions.len(),
        ..Default::default()
    };
    for (session, t) in &tally.sessions {
        let stored: BTreeSet<String> = rows_of
            .query_map([session], |row| row.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        r.failed_pending += failed_of.query_row([session], |row| row.get::<_, i64>(0))?;
        let mut expected = BTreeMap::new();
        for (id, tool) in &t.acked {
            if skip_rule(tool) && !stored.contains(id) {
                r.skipped_by_rule += 1;
            } else {
                expected.insert(id, tool);
            }
        }
        let missing: Vec<String> = expected
            .keys()
            .filter(|id| !stored.contains(id.as_str()))
            .map(|id| String::clone(id))
            .collect();
        r.expected_rows += expected.len();
        r.found_rows += expected.len() - missing.len();
        r.missing_rows += missing.len();
        r.skipped += t.skipped.len();
        r.duplicates += t.duplicates.len();
        r.unacknowledged_rows += stored
            .iter()
            .filter(|id| !t.acked.contains_key(*id) && !t.duplicates.contains(*id))
            .count();
        if !missing.is_empty() {
            r.losses.push(SessionLoss {
                session_id: session.clone(),
                missing: missing.len(),
                examples: missing.into_iter().take(10).collect(),
            });
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::deliver::Answer;
    use crate::replay::event::EventKind;
    use serde_json::json;

    #[test]
    fn drain_waits_for_pending_and_spool() {
        let mut docs = vec![
            json!({"pending":{"pending":0,"processing":0},"spool":{"pending_files":2}}),
            json!({"pending":{"pending":3,"processing":1}}),
        ];
        let d = wait_drained(Duration::from_secs(5), || {
            let doc = docs.pop().unwrap_or(json!({"pending":{"pending":0,"processing":0}}));
            serde_json::from_value(doc).ok()
        });
        assert!(d.drained);
        assert!(!wait_drained(Duration::ZERO, || None).drained);
    }

    #[test]
    fn reports_missing_rows_but_not_skips() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE tool_uses (content_session_id TEXT, tool_use_id TEXT);
             CREATE TABLE pending_messages (content_session_id TEXT, status TEXT);
             INSERT INTO tool_uses VALUES ('s','t1');",
        )
        .unwrap();
        let mut tally = Tally::default();
        let d = Duration::ZERO;
        tally.record(EventKind::PostToolUse, "s", Some(("t1", "Bash")), &Answer::Acked, d);
        tally.record(EventKind::PostToolUse, "s", Some(("t2", "Bash")), &Answer::Acked, d);
        tally.record(EventKind::PostToolUse, "s", Some(("t3", "TodoWrite")), &Answer::Acked, d);
        tally.record(
            EventKind::PostToolUse,
            "s",
            Some(("t4", "Skill")),
            &Answer::Skipped("tool_excluded".into()),
            d,
        );
        let drained = Drain {
            drained: true,
            ..Default::default()
        };
        let r = check(&db, &tally, drained, |t| t == "TodoWrite").unwrap();
        assert_eq!((r.expected_rows, r.found_rows, r.missing_rows), (2, 1, 1));
        assert_eq!((r.skipped, r.skipped_by_rule), (1, 1));
        assert_eq!(r.losses[0].examples, ["t2"]);
        assert!(!r.passed());
    }
}
