//! Read-only figures for `GET /api/status`: row counts, queue states, file sizes.

use std::path::Path;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::StoreError;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RowCounts {
    pub sdk_sessions: i64,
    pub user_prompts: i64,
    pub observations: i64,
    pub session_summaries: i64,
    pub tool_uses: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PendingCounts {
    pub pending: i64,
    pub processing: i64,
    pub failed: i64,
    pub oldest_pending_age_s: Option<i64>,
    /// Calls waiting for the raw search index (issue 35; drained while ingest is idle).
    pub raw_index_queued: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreFigures {
    pub rows: RowCounts,
    pub pending: PendingCounts,
    pub free_pages: i64,
    pub tool_uses_payload_bytes: i64,
}

/// The store's figures; sizes in bytes (not characters). Leaves the connection's page cache empty.
pub fn figures(conn: &Connection, now: i64) -> Result<StoreFigures, StoreError> {
    let count =
        |table: &str| -> Result<i64, StoreError> { Ok(conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?) };
    let rows = RowCounts {
        sdk_sessions: count("sdk_sessions")?,
        user_prompts: count("user_prompts")?,
        observations: count("observations")?,
        session_summaries: count("session_summaries")?,
        tool_uses: count("tool_uses")?,
    };
    let pending = conn.query_row(
        "SELECT coalesce(sum(status='pending'),0) AS pending, coalesce(sum(status='processing'),0) AS processing,
                coalesce(sum(status='failed'),0) AS failed, min(CASE WHEN status='pending' THEN created_at_epoch END) AS oldest
         FROM pending_messages",
        [],
        |r| {
            Ok(PendingCounts {
                pending: r.get("pending")?,
                processing: r.get("processing")?,
                failed: r.get("failed")?,
                oldest_pending_age_s: r.get::<_, Option<i64>>("oldest")?.map(|t| ((now - t) / 1000).max(0)),
                raw_index_queued: 0,
            })
        },
    )?;
    let mut pending = pending;
    pending.raw_index_queued = super::raw_index::queued(conn)?;
    let free_pages = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let tool_uses_payload_bytes = conn.query_row(
        "SELECT coalesce(sum(octet_length(tool_input) + octet_length(tool_response)), 0) FROM tool_uses",
        [],
        |r| r.get(0),
    )?;
    // These counts walk whole tables (octet_length at least skips the payloads' overflow pages);
    // their pages are of no use to the searches this reader serves next, and would stay in its
    // cache (5 MB after a flood of 20,000 sessions, docs/measurements.md): hand them back.
    conn.execute_batch("PRAGMA shrink_memory")?;
    Ok(StoreFigures {
        rows,
        pending,
        free_pages,
        tool_uses_payload_bytes,
    })
}

/// A session parked as `failed` by supervision.
#[derive(Debug, Clone, Serialize)]
pub struct ParkedSession {
    pub session_db_id: i64,
    pub content_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub failure_reason: Option<String>,
    pub queue_depth: i64,
    pub last_event_epoch: i64,
}

pub fn parked_sessions(conn: &Connection, limit: i64) -> Result<Vec<ParkedSession>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT s.id, s.content_session_id, s.platform_source, s.project, s.failure_reason,
                (SELECT count(*) FROM pending_messages p WHERE p.session_db_id = s.id AND p.status = 'pending') AS queue_depth,
                s.last_event_epoch
         FROM sdk_sessions s WHERE s.status = 'failed' ORDER BY s.last_event_epoch DESC LIMIT ?1",
    )?;
    let it = stmt.query_map([limit], |r| {
        Ok(ParkedSession {
            session_db_id: r.get("id")?,
            content_session_id: r.get("content_session_id")?,
            platform_source: r.get("platform_source")?,
            project: r.get("project")?,
            failure_reason: r.get("failure_reason")?,
            queue_depth: r.get("queue_depth")?,
            last_event_epoch: r.get("last_event_epoch")?,
        })
    })?;
    Ok(it.collect::<Result<_, _>>()?)
}

/// Size in bytes of a file, 0 when absent.
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::page_cache_bytes as cache_bytes;
    use crate::store::tool_events::{ingest_tool_event, sample_event};

    #[test]
    fn figures_count_payload_bytes_and_leave_the_page_cache_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::store::open::open_writer(&dir.path().join("memd.db"), false).unwrap();
        crate::store::migrations::migrate(&mut conn, 0).unwrap();
        for i in 0..50 {
            let mut e = sample_event("s1", Some(&format!("t{i}")));
            (e.tool_input, e.tool_response) = ("é".repeat(3000), "ü".repeat(2000));
            ingest_tool_event(&conn, &e).unwrap();
        }
        let _: i64 = conn
            .query_row("SELECT count(*) FROM tool_uses WHERE tool_response LIKE '%x%'", [], |r| r.get(0))
            .unwrap();
        assert!(cache_bytes(&conn) > 100_000, "the scan filled the cache");
        let f = figures(&conn, 0).unwrap();
        assert_eq!(f.rows.tool_uses, 50);
        assert_eq!(f.tool_uses_payload_bytes, 50 * (6000 + 4000), "bytes, not characters");
        assert!(cache_bytes(&conn) < 20_000, "{} bytes left in the cache", cache_bytes(&conn));
    }
}
