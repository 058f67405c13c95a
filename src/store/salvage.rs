//! Copying what can still be read out of a damaged database into a fresh one (`memd repair`
//! without a good backup). The fresh file gets the current schema; every ordinary table the two
//! share is copied row by row in rowid order, and a stretch of rows that cannot be read is stepped
//! over. Full-text indexes fill themselves through their triggers; the binary vector index is
//! rebuilt by the worker from the copied vectors.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, params_from_iter};

use super::StoreError;

/// Rows copied and rows lost, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SalvageReport {
    pub copied: BTreeMap<String, u64>,
    /// Rowids that could not be read (a lower bound: a damaged page hides how many it held).
    pub unreadable: BTreeMap<String, u64>,
    /// Copied rows deleted again because the row they belong to was lost.
    pub orphans_dropped: u64,
}

const CHUNK: i64 = 500;

/// The ordinary tables of the fresh schema (not virtual tables, not their shadow tables, not the
/// vector log), with whether each is `WITHOUT ROWID`.
fn tables(fresh: &Connection) -> Result<Vec<(String, bool)>, StoreError> {
    let mut st = fresh.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")?;
    let all = st
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default()))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let virtuals: Vec<String> = all
        .iter()
        .filter(|(_, sql)| sql.starts_with("CREATE VIRTUAL TABLE"))
        .map(|(n, _)| format!("{n}_"))
        .collect();
    Ok(all
        .into_iter()
        // `vectors_log` is not copied: the copied vectors log themselves through its triggers.
        .filter(|(name, sql)| {
            !sql.starts_with("CREATE VIRTUAL TABLE") && !virtuals.iter().any(|v| name.starts_with(v.as_str())) && name != "vectors_log"
        })
        .map(|(name, sql)| (name, sql.to_ascii_uppercase().contains("WITHOUT ROWID")))
        .collect())
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<String>, rusqlite::Error> {
    let mut st = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    st.query_map([], |r| r.get::<_, String>(0))?.collect()
}

fn quoted(names: &[String]) -> String {
    names.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
}

/// Copies the readable rows of `damaged` into `fresh` (schema already migrated).
pub fn salvage(damaged: &Path, fresh: &mut Connection) -> Result<SalvageReport, StoreError> {
    let src = Connection::open_with_flags(damaged, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut report = SalvageReport::default();
    fresh.execute_batch("PRAGMA foreign_keys=OFF")?;
    for (table, without_rowid) in tables(fresh)? {
        let Ok(src_cols) = columns(&src, &table) else { continue };
        let dst_cols = columns(fresh, &table)?;
        let shared: Vec<String> = dst_cols.into_iter().filter(|c| src_cols.contains(c)).collect();
        if shared.is_empty() {
            continue;
        }
        let (copied, unreadable) = if without_rowid {
            (copy_by_key(&src, fresh, &table, &shared)?, 0)
        } else {
            copy_table(&src, fresh, &table, &shared)?
        };
        report.copied.insert(table.clone(), copied);
        if unreadable > 0 {
            report.unreadable.insert(table, unreadable);
        }
    }
    report.orphans_dropped = drop_orphans(fresh)?;
    fresh.execute_batch("PRAGMA foreign_keys=ON")?;
    Ok(report)
}

/// A foreign key: child table, parent table, (child column, parent column) pairs.
type Link = (String, String, Vec<(String, String)>);

/// Rows whose parent row was lost are deleted, as the schema's `ON DELETE CASCADE` would have
/// (repeated until nothing changes: a lost session orphans its observations, which orphan theirs).
fn drop_orphans(fresh: &Connection) -> Result<u64, StoreError> {
    let mut links: Vec<Link> = Vec::new();
    for (table, _) in tables(fresh)? {
        let mut st = fresh.prepare(&format!(
            "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list('{table}') ORDER BY id, seq"
        ))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>("id")?,
                    r.get::<_, String>("table")?,
                    r.get::<_, String>("from")?,
                    r.get::<_, Option<String>>("to")?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut by_id: BTreeMap<i64, (String, Vec<(String, String)>)> = BTreeMap::new();
        for (id, parent, from, to) in rows {
            let entry = by_id.entry(id).or_insert_with(|| (parent, Vec::new()));
            entry.1.push((from, to.unwrap_or_else(|| "rowid".into())));
        }
        links.extend(by_id.into_values().map(|(parent, cols)| (table.clone(), parent, cols)));
    }
    let mut dropped = 0u64;
    loop {
        let mut round = 0u64;
        for (child, parent, cols) in &links {
            let present = cols
                .iter()
                .map(|(f, _)| format!("c.\"{f}\" IS NOT NULL"))
                .collect::<Vec<_>>()
                .join(" AND ");
            let joined = cols
                .iter()
                .map(|(f, t)| format!("p.\"{t}\" = c.\"{f}\""))
                .collect::<Vec<_>>()
                .join(" AND ");
            round += fresh.execute(
                &format!("DELETE FROM \"{child}\" AS c WHERE {present} AND NOT EXISTS (SELECT 1 FROM \"{parent}\" AS p WHERE {joined})"),
                [],
            )? as u64;
        }
        dropped += round;
        if round == 0 {
            return Ok(dropped);
        }
    }
}

/// A `WITHOUT ROWID` table has no rowids to step over a damaged page with: it is read forwards in
/// key order until a read fails, then backwards from the end until one fails again.
fn copy_by_key(src: &Connection, dst: &mut Connection, table: &str, cols: &[String]) -> Result<u64, StoreError> {
    let list = quoted(cols);
    let key: Vec<String> = {
        let mut st = dst.prepare(&format!("SELECT name FROM pragma_table_info('{table}') WHERE pk > 0 ORDER BY pk"))?;
        st.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<_, _>>()?
    };
    let order = |dir: &str| key.iter().map(|k| format!("\"{k}\" {dir}")).collect::<Vec<_>>().join(", ");
    let marks = vec!["?"; cols.len()].join(", ");
    let insert = format!("INSERT OR IGNORE INTO \"{table}\" ({list}) VALUES ({marks})");
    let tx = dst.transaction()?;
    let mut copied = 0u64;
    for dir in ["ASC", "DESC"] {
        let Ok(mut st) = src.prepare(&format!("SELECT {list} FROM \"{table}\" ORDER BY {}", order(dir))) else {
            break;
        };
        let Ok(mut rows) = st.query([]) else { continue };
        while let Ok(Some(row)) = rows.next() {
            let Ok(values) = (0..cols.len()).map(|i| row.get::<_, Value>(i)).collect::<Result<Vec<_>, _>>() else {
                break;
            };
            copied += tx.execute(&insert, params_from_iter(values.iter()))? as u64;
        }
    }
    tx.commit()?;
    Ok(copied)
}

/// How far past the last readable rowid to look when the table's end cannot be read.
const PROBE_PAST_END: i64 = 100_000;

fn copy_table(src: &Connection, dst: &mut Connection, table: &str, cols: &[String]) -> Result<(u64, u64), StoreError> {
    let list = quoted(cols);
    let select = format!("SELECT rowid, {list} FROM \"{table}\" WHERE rowid > ?1 ORDER BY rowid LIMIT {CHUNK}");
    let one = format!("SELECT rowid, {list} FROM \"{table}\" WHERE rowid = ?1");
    let marks = vec!["?"; cols.len() + 1].join(", ");
    let insert = format!("INSERT OR IGNORE INTO \"{table}\" (rowid, {list}) VALUES ({marks})");
    let max: i64 = src
        .query_row(&format!("SELECT max(rowid) FROM \"{table}\""), [], |r| r.get::<_, Option<i64>>(0))
        .ok()
        .flatten()
        .unwrap_or(i64::MAX);
    let (mut after, mut copied, mut unreadable) = (0i64, 0u64, 0u64);
    let tx = dst.transaction()?;
    loop {
        let rows: Result<Vec<Vec<Value>>, rusqlite::Error> = src.prepare(&select).and_then(|mut st| {
            st.query_map([after], |r| (0..=cols.len()).map(|i| r.get::<_, Value>(i)).collect())?
                .collect()
        });
        match rows {
            Ok(rows) if rows.is_empty() => break,
            Ok(rows) => {
                for row in &rows {
                    tx.execute(&insert, params_from_iter(row.iter()))?;
                }
                copied += rows.len() as u64;
                after = match rows.last().and_then(|r| r.first()) {
                    Some(Value::Integer(id)) => *id,
                    _ => break,
                };
            }
            Err(_) => {
                // A damaged page: read the next rowids one at a time until one answers again.
                let mut probe = after + 1;
                let limit = max.min(after.saturating_add(PROBE_PAST_END));
                // Failed reads count once a later row proves they were rows (or the end is known).
                let mut failed = 0u64;
                loop {
                    if probe > limit {
                        tx.commit()?;
                        let known_end = max != i64::MAX;
                        return Ok((copied, unreadable + if known_end { failed } else { failed.min(1) }));
                    }
                    let row: Result<Vec<Value>, rusqlite::Error> =
                        src.query_row(&one, [probe], |r| (0..=cols.len()).map(|i| r.get::<_, Value>(i)).collect());
                    match row {
                        Ok(row) => {
                            tx.execute(&insert, params_from_iter(row.iter()))?;
                            copied += 1;
                            unreadable += failed;
                            after = probe;
                            break;
                        }
                        Err(rusqlite::Error::QueryReturnedNoRows) => probe += 1,
                        Err(_) => {
                            failed += 1;
                            probe += 1;
                        }
                    }
                }
            }
        }
    }
    tx.commit()?;
    Ok((copied, unreadable))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    const SCHEMA: &str = "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
        CREATE TABLE k (name TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;";

    fn damaged_file(dir: &Path, rows: usize) -> std::path::PathBuf {
        let path = dir.join("damaged.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(SCHEMA).unwrap();
        for i in 0..rows {
            let body = format!("{i:06} {}", "x".repeat(300));
            c.execute("INSERT INTO t (id, body) VALUES (?1, ?2)", rusqlite::params![i as i64 + 1, body])
                .unwrap();
            c.execute(
                "INSERT INTO k (name, body) VALUES (?1, ?2)",
                rusqlite::params![format!("n{i:06}"), body],
            )
            .unwrap();
        }
        drop(c);
        let len = std::fs::metadata(&path).unwrap().len();
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start((len / 3) & !4095)).unwrap();
        f.write_all(&[0xA5; 8192]).unwrap();
        path
    }

    #[test]
    fn readable_rows_of_both_table_kinds_are_copied_around_a_damaged_stretch() {
        let dir = tempfile::tempdir().unwrap();
        let damaged = damaged_file(dir.path(), 2_000);
        let mut fresh = Connection::open(dir.path().join("fresh.db")).unwrap();
        fresh.execute_batch(SCHEMA).unwrap();
        let report = salvage(&damaged, &mut fresh).unwrap();
        let (t, k) = (report.copied["t"], report.copied["k"]);
        assert!(t > 1_500 && t < 2_000, "rowid table: {report:?}");
        assert!(k > 1_000, "the keyed table is read from both ends: {report:?}");
        assert!(report.unreadable["t"] > 0 && report.unreadable["t"] + t <= 2_000, "{report:?}");
        let last: String = fresh
            .query_row("SELECT body FROM t ORDER BY id DESC LIMIT 1", [], |r| r.get(0))
            .unwrap();
        assert!(last.starts_with("001999"), "rows after the damage are kept");
        let ok: String = fresh.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok");
    }
}
