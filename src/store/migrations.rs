//! Append-only schema migrations, versioned by `PRAGMA user_version` (docs/spec/storage.md §2).
//!
//! Migration *n* moves version *n−1* to *n* inside its own transaction. A database whose version is
//! higher than [`MIGRATIONS`] knows was written by a newer memd and is opened read-only by the caller.
//! Before the first pending migration on a database that holds rows, a copy is written with
//! `VACUUM INTO` to `<data>/backups/` (the newest 3 are kept).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// The list, oldest first. Never edit an entry: append a new one.
pub const MIGRATIONS: &[&str] = &[
    include_str!("schema_v1.sql"),
    include_str!("schema_v2_vectors.sql"),
    include_str!("schema_v3_search_filters.sql"),
    include_str!("schema_v4_vector_log.sql"),
    include_str!("schema_v5_raw_index.sql"),
    include_str!("schema_v6_provenance.sql"),
    include_str!("schema_v7_freshness.sql"),
    include_str!("schema_v8_work_state.sql"),
    include_str!("schema_v9_alerts.sql"),
    include_str!("schema_v10_graph.sql"),
    include_str!("schema_v11_graph_decisions.sql"),
    include_str!("schema_v12_team.sql"),
    include_str!("schema_v13_action.sql"),
    include_str!("schema_v14_written.sql"),
];

const BACKUPS_KEPT: usize = 3;

pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

pub fn current_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Applies every pending migration. Returns (old version, new version).
pub fn migrate(conn: &mut Connection, now_ms: i64) -> Result<(i64, i64), StoreError> {
    migrate_with(conn, MIGRATIONS, None, now_ms)
}

/// Like [`migrate`] over an explicit list; with `backups`, a database holding rows is copied first.
pub fn migrate_with(conn: &mut Connection, migrations: &[&str], backups: Option<&Path>, now_ms: i64) -> Result<(i64, i64), StoreError> {
    let old = current_version(conn)?;
    let latest = migrations.len() as i64;
    if old > latest {
        return Err(StoreError::NewerSchema { found: old, known: latest });
    }
    if let Some(dir) = backups
        && old > 0
        && old < latest
    {
        backup(conn, dir, old, now_ms)?;
    }
    for (i, sql) in migrations.iter().enumerate().skip(old as usize) {
        let version = i as i64 + 1;
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        if version == 1 {
            let db_id = super::random_id();
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('db_id', ?1), ('created_at', ?2)",
                rusqlite::params![db_id, crate::clock::iso(now_ms)],
            )?;
        }
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
    Ok((old, latest))
}

fn backup(conn: &Connection, dir: &Path, old: i64, now_ms: i64) -> Result<(), StoreError> {
    let rows: i64 = conn.query_row("SELECT count(*) FROM sdk_sessions", [], |r| r.get(0)).unwrap_or(0);
    if rows == 0 {
        return Ok(());
    }
    let io = |p: &Path, e: std::io::Error| StoreError::Internal(format!("{}: {e}", p.display()));
    // The copy goes to `<data>/backups`, never through a link planted there.
    crate::data_dir::refuse_redirect(dir).map_err(|e| StoreError::Internal(e.to_string()))?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    crate::data_dir::refuse_redirect(dir).map_err(|e| StoreError::Internal(e.to_string()))?;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    let stamp: String = crate::clock::iso(now_ms)
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect();
    let path = dir.join(format!("memd-v{old}-{stamp}.db"));
    // Through a private temp file (VACUUM INTO takes an empty one): a kill leaves no partial copy
    // under the backup's name, and nothing readable by other users. What an earlier, killed
    // attempt left (another stamp in its name) goes first.
    super::integrity::remove_stale_temps(dir);
    super::private_file::write_via_temp(&path, &super::integrity::temp_of(&path), |tmp| {
        conn.execute("VACUUM INTO ?1", [tmp.to_string_lossy()])?;
        Ok(())
    })?;
    let mut existing: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "db"))
                // Only the copies taken before migrations; scheduled backups keep their own count.
                .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("memd-v")))
                .collect()
        })
        .unwrap_or_default();
    existing.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    let excess = existing.len().saturating_sub(BACKUPS_KEPT);
    for stale in existing.iter().take(excess) {
        let _ = std::fs::remove_file(stale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_an_empty_database_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        let latest = latest_version();
        assert_eq!(migrate(&mut conn, 0).unwrap(), (0, latest));
        assert_eq!(migrate(&mut conn, 0).unwrap(), (latest, latest));
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='observations'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1);
    }

    #[test]
    fn backs_up_a_database_with_rows_before_a_new_migration() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("memd.db")).unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..1], None, 0).unwrap();
        conn.execute(
            "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
             VALUES ('s', 'm', 'p', 'x', 0, 0)",
            [],
        )
        .unwrap();
        let next = [MIGRATIONS[0], "CREATE TABLE later (x INTEGER);"];
        let backups = dir.path().join("backups");
        assert_eq!(migrate_with(&mut conn, &next, Some(&backups), 1_790_870_711_000).unwrap(), (1, 2));
        let files: Vec<_> = std::fs::read_dir(&backups)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        assert_eq!(files, vec!["memd-v1-20261001T160511.db".to_string()]);
        let copy = Connection::open(backups.join(&files[0])).unwrap();
        assert_eq!(
            copy.query_row("SELECT count(*) FROM sdk_sessions", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            1
        );
    }

    #[test]
    fn refuses_a_newer_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        assert!(matches!(migrate(&mut conn, 0), Err(StoreError::NewerSchema { found: 99, .. })));
    }
}
