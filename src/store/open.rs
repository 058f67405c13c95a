//! Opening connections with the pragmas of docs/spec/storage.md §1: one writer, many read-only readers.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

/// Opens (creating when absent, mode 0600) the single read-write connection.
pub fn open_writer(path: &Path, synchronous_full: bool) -> Result<Connection, StoreError> {
    // An empty file (one created 0600 ahead of SQLite) is as fresh as a missing one.
    let fresh = std::fs::metadata(path).map(|m| m.len() == 0).unwrap_or(true);
    let conn = Connection::open(path)?;
    if fresh {
        conn.execute_batch("PRAGMA page_size=4096; PRAGMA auto_vacuum=INCREMENTAL;")?;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", if synchronous_full { "FULL" } else { "NORMAL" })?;
    conn.execute_batch(
        "PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-8000;
         PRAGMA journal_size_limit=67108864; PRAGMA wal_autocheckpoint=1000;",
    )?;
    Ok(conn)
}

/// Opens a read-only connection; statements running longer than 2 s are interrupted.
pub fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?;
    // Search reads term document counts through temp fts5vocab views (retrieval::search_prune);
    // they must exist before query_only forbids creating them. Without them search still works.
    if let Err(e) = create_vocabularies(&conn) {
        tracing::debug!(error = %e, "no vocabulary views on this reader");
    }
    conn.execute_batch(
        "PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000; PRAGMA cache_size=-8000; PRAGMA query_only=ON; PRAGMA mmap_size=0;",
    )?;
    Ok(conn)
}

/// The connection's view of word index `fts`'s vocabulary with document counts (a temp table:
/// the schema holds nothing for it).
pub fn vocabulary(fts: &str) -> String {
    format!("temp.{fts}_vocab_rows")
}

/// Creates the vocabulary views of the word indexes on `conn` (a reader does before `query_only`
/// forbids it; a connection without them ranks without pruning).
pub fn create_vocabularies(conn: &Connection) -> rusqlite::Result<()> {
    for fts in ["observations_fts", "session_summaries_fts", "user_prompts_fts"] {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS {} USING fts5vocab(main, '{fts}', 'row')",
            vocabulary(fts)
        ))?;
    }
    Ok(())
}

/// Arms the 2,000 ms statement guard for the next read (called before each pooled use).
pub fn arm_read_deadline(conn: &mut Connection) {
    let deadline = Instant::now() + Duration::from_millis(2000);
    let _ = conn.progress_handler(10_000, Some(move || Instant::now() > deadline));
}

/// Bytes SQLite's allocator holds now, across every connection of the process.
pub fn sqlite_memory_used() -> u64 {
    // SAFETY: a read of SQLite's global memory counter; thread-safe in the serialized build.
    unsafe { rusqlite::ffi::sqlite3_memory_used().max(0) as u64 }
}
