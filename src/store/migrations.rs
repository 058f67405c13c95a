//! Append-only schema migrations, versioned by `PRAGMA user_version` (spec/storage.md §2).
//!
//! Migration *n* moves version *n−1* to *n* inside its own transaction. A database whose version is
//! higher than [`MIGRATIONS`] knows was written by a newer memd and is opened read-only by the caller.

use rusqlite::Connection;

use super::StoreError;

/// The list, oldest first. Never edit an entry: append a new one.
pub const MIGRATIONS: &[&str] = &[include_str!("schema_v1.sql")];

pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

pub fn current_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Applies every pending migration. Returns (old version, new version).
pub fn migrate(conn: &mut Connection, now_ms: i64) -> Result<(i64, i64), StoreError> {
    let old = current_version(conn)?;
    if old > latest_version() {
        return Err(StoreError::NewerSchema {
            found: old,
            known: latest_version(),
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(old as usize) {
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
    Ok((old, latest_version()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_an_empty_database_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn, 0).unwrap(), (0, 1));
        assert_eq!(migrate(&mut conn, 0).unwrap(), (1, 1));
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
    fn refuses_a_newer_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        assert!(matches!(migrate(&mut conn, 0), Err(StoreError::NewerSchema { found: 99, .. })));
    }
}
