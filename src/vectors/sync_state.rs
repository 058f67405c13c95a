//! Sync bookkeeping of docs/spec/storage.md §3.10: per-target watermarks, per-row exceptions
//! (`vector_sync`), the embedding model in use, and backfill progress. Plain functions over a
//! connection; the VectorSync and ChromaSync actors run them through the store.

use rusqlite::{Connection, OptionalExtension, params};

use super::documents::DocKind;
use crate::store::StoreError;

/// The embedded store's target name.
pub const SQLITE_TARGET: &str = "sqlite";
/// Attempts after which a failed row waits for `memd reindex`.
pub const MAX_ATTEMPTS: i64 = 5;

pub fn watermark(conn: &Connection, target: &str, kind: DocKind) -> Result<i64, StoreError> {
    Ok(conn
        .prepare_cached("SELECT last_row_id FROM vector_watermarks WHERE target = ?1 AND doc_kind = ?2")?
        .query_row(params![target, kind.as_str()], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

pub fn set_watermark(conn: &Connection, target: &str, kind: DocKind, id: i64, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO vector_watermarks(target, doc_kind, last_row_id, updated_at_epoch) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(target, doc_kind) DO UPDATE SET last_row_id = max(last_row_id, excluded.last_row_id), updated_at_epoch = excluded.updated_at_epoch",
    )?
    .execute(params![target, kind.as_str(), id, now])?;
    Ok(())
}

/// A row listed in `vector_sync`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exception {
    pub kind: DocKind,
    pub row_id: i64,
    pub state: String,
    pub attempts: i64,
}

/// Rows of `target` in the given states, oldest change first; failed rows only while attempts
/// remain and their backoff (`2^attempts` s) has passed.
pub fn exceptions(conn: &Connection, target: &str, states: &[&str], now: i64, limit: usize) -> Result<Vec<Exception>, StoreError> {
    let mut st = conn.prepare_cached(
        "SELECT doc_kind, row_id, state, attempts, updated_at_epoch FROM vector_sync WHERE target = ?1 ORDER BY updated_at_epoch LIMIT 10000",
    )?;
    let mut rows = st.query([target])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let state: String = r.get("state")?;
        let attempts: i64 = r.get("attempts")?;
        let updated: i64 = r.get("updated_at_epoch")?;
        if !states.contains(&state.as_str()) {
            continue;
        }
        if state == "failed" && (attempts >= MAX_ATTEMPTS || now < updated + 1000 * (1i64 << attempts.clamp(0, 20))) {
            continue;
        }
        if let Some(kind) = DocKind::parse(&r.get::<_, String>(0)?) {
            out.push(Exception {
                kind,
                row_id: r.get(1)?,
                state,
                attempts,
            });
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}

pub fn clear_exception(conn: &Connection, target: &str, kind: DocKind, row_id: i64) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM vector_sync WHERE target = ?1 AND doc_kind = ?2 AND row_id = ?3")?
        .execute(params![target, kind.as_str(), row_id])?;
    Ok(())
}

/// Records a failed write of `row_id` (attempts + 1).
pub fn mark_failed(conn: &Connection, target: &str, kind: DocKind, row_id: i64, error: &str, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO vector_sync(target, doc_kind, row_id, state, attempts, last_error, updated_at_epoch) VALUES (?1, ?2, ?3, 'failed', 1, ?4, ?5)
         ON CONFLICT(target, doc_kind, row_id) DO UPDATE SET state = 'failed', attempts = attempts + 1, last_error = excluded.last_error,
           updated_at_epoch = excluded.updated_at_epoch",
    )?
    .execute(params![target, kind.as_str(), row_id, error, now])?;
    Ok(())
}

/// Forgets everything synced to `target` (reindex, model change).
pub fn reset_target(conn: &Connection, target: &str) -> Result<(), StoreError> {
    conn.execute("DELETE FROM vector_watermarks WHERE target = ?1", [target])?;
    conn.execute("DELETE FROM vector_sync WHERE target = ?1", [target])?;
    Ok(())
}

pub fn meta(conn: &Connection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", [key, value])?;
    Ok(())
}

/// Rows embedded / rows to embed, over the three kinds, for `target`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub done: i64,
    pub total: i64,
}

impl Progress {
    pub fn lag(&self) -> i64 {
        self.total - self.done
    }
}

pub fn progress(conn: &Connection, target: &str) -> Result<Progress, StoreError> {
    let mut p = Progress::default();
    for kind in DocKind::ALL {
        let wm = watermark(conn, target, kind)?;
        let (total, done): (i64, i64) = conn.query_row(
            &format!("SELECT count(*), count(*) FILTER (WHERE id <= ?1) FROM {}", kind.table()),
            [wm],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let open: i64 = conn.query_row(
            "SELECT count(*) FROM vector_sync WHERE target = ?1 AND doc_kind = ?2 AND state IN ('pending','failed') AND row_id <= ?3",
            params![target, kind.as_str(), wm],
            |r| r.get(0),
        )?;
        p.total += total;
        p.done += (done - open).max(0);
    }
    Ok(p)
}

/// Queues `row_id` to be (re)written to `target` later.
pub fn mark_pending(conn: &Connection, target: &str, kind: DocKind, row_id: i64, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch) VALUES (?1, ?2, ?3, 'pending', 0, ?4)",
    )?
    .execute(params![target, kind.as_str(), row_id, now])?;
    Ok(())
}
