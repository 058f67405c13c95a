//! Store integrity: a time-bounded `quick_check` at start (a damaged file opens read-only and
//! writes are refused with the reason), the full `integrity_check` for `memd doctor --full`,
//! online backups into `<data>/backups/` (SQLite's backup API, safe while the worker writes), and
//! the two ways `memd repair` mends a damaged file: the newest backup that passes
//! `integrity_check`, or the rows that can still be read, copied into a fresh file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use super::{StoreError, private_file};

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum Integrity {
    Ok,
    /// SQLite reported these problems (the first few).
    Damaged(String),
    /// The check did not finish within its budget (a large file): nothing was found meanwhile.
    Unverified(String),
}

impl Integrity {
    pub fn is_damaged(&self) -> bool {
        matches!(self, Integrity::Damaged(_))
    }
}

fn check(conn: &mut Connection, pragma: &str, budget: Option<Duration>) -> Integrity {
    if let Some(b) = budget {
        let deadline = Instant::now() + b;
        let _ = conn.progress_handler(1_000, Some(move || Instant::now() > deadline));
    }
    let rows: Result<Vec<String>, rusqlite::Error> = conn
        .prepare(pragma)
        .and_then(|mut st| st.query_map([], |r| r.get::<_, String>(0))?.collect());
    if budget.is_some() {
        let _ = conn.progress_handler(0, None::<fn() -> bool>);
    }
    match rows {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Integrity::Ok,
        Ok(rows) => Integrity::Damaged(rows.join("; ").chars().take(500).collect()),
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::OperationInterrupted => Integrity::Unverified(format!(
            "quick_check did not finish in {} ms",
            budget.unwrap_or_default().as_millis()
        )),
        Err(e) => Integrity::Damaged(format!("the check itself failed: {e}")),
    }
}

/// `PRAGMA quick_check` (up to 10 problems), abandoned after `budget`.
pub fn quick_check(conn: &mut Connection, budget: Duration) -> Integrity {
    check(conn, "PRAGMA quick_check(10)", Some(budget))
}

/// The full `PRAGMA integrity_check` (up to 10 problems), however long it takes.
pub fn integrity_check(conn: &mut Connection) -> Integrity {
    check(conn, "PRAGMA integrity_check(10)", None)
}

/// Checks the file at `path` on a read-only connection.
pub fn check_file(path: &Path, full: bool, budget: Duration) -> Integrity {
    match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(mut c) if full => integrity_check(&mut c),
        Ok(mut c) => quick_check(&mut c, budget),
        Err(e) => Integrity::Damaged(format!("cannot open: {e}")),
    }
}

/// `<backups>/memd-<stamp>.db`: the name of a scheduled or `memd backup` copy.
pub fn backup_name(dir: &Path, now_ms: i64) -> PathBuf {
    let iso = crate::clock::iso(now_ms);
    dir.join(format!("memd-{}Z.db", iso[..19].replace(['-', ':'], "")))
}

/// Copies the live database at `src` into `dest` with SQLite's online backup (consistent while
/// the worker writes), then keeps only the `keep` newest `memd-*.db` copies in `dest`'s
/// directory. The copy is written to `<dest>.db.tmp`, created 0600 before SQLite writes a byte (its
/// journal takes the same mode), flushed, and renamed: a kill leaves no partial `dest`, only a
/// private temp file that the next backup or worker start removes ([`remove_stale_temps`]).
pub fn backup(src: &Path, dest: &Path, keep: usize) -> Result<u64, StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let conn = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Internal(format!("{}: {e}", dir.display())))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    private_file::write_via_temp(dest, &temp_of(dest), |tmp| {
        Ok(conn.backup(rusqlite::MAIN_DB, tmp, None::<fn(rusqlite::backup::Progress)>)?)
    })?;
    if let Some(dir) = dest.parent() {
        prune(dir, keep);
    }
    Ok(std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0))
}

const TEMP_SUFFIX: &str = ".db.tmp";

/// `<dest>.db.tmp`: where a copy is written before it takes its name.
pub fn temp_of(dest: &Path) -> PathBuf {
    dest.with_extension(&TEMP_SUFFIX[1..])
}

/// Removes what killed backups left in `dir` (`*.db.tmp` and their journals); answers how many.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let stale: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(TEMP_SUFFIX))
        .collect();
    for p in &stale {
        private_file::remove(p);
    }
    stale.len()
}

/// The `memd-*.db` copies in `dir`, newest first.
pub fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // `memd-<stamp>.db`; the copies taken before migrations are `memd-v<N>-…` and not counted.
        n.strip_prefix("memd-")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            && n.ends_with(".db")
    });
    v.sort();
    v.reverse();
    v
}

fn prune(dir: &Path, keep: usize) {
    for old in backups(dir).into_iter().skip(keep.max(1)) {
        let _ = std::fs::remove_file(old);
    }
}

/// The newest backup in `dir` that passes `integrity_check`.
pub fn newest_good_backup(dir: &Path) -> Option<PathBuf> {
    backups(dir)
        .into_iter()
        .find(|p| check_file(p, true, Duration::ZERO) == Integrity::Ok)
}

/// When the next scheduled backup is due: an interval after the newest one, or five minutes after
/// start when there is none (a worker restarted every day still gets its backups).
pub fn next_backup_in(dir: &Path, interval: Duration) -> Duration {
    let age = backups(dir)
        .first()
        .and_then(|p| std::fs::metadata(p).ok())
        .and_then(|m| m.modified().ok())
        .and_then(|t| std::time::SystemTime::now().duration_since(t).ok());
    match age {
        Some(age) => interval.saturating_sub(age).max(Duration::from_secs(60)),
        None => Duration::from_secs(300).min(interval),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_database_checks_ok_and_backs_up() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("memd.db");
        let mut c = super::super::open::open_writer(&db, false).unwrap();
        super::super::migrations::migrate(&mut c, 0).unwrap();
        assert_eq!(quick_check(&mut c, Duration::from_secs(5)), Integrity::Ok);
        let backups_dir = dir.path().join("backups");
        for i in 0..4 {
            backup(&db, &backup_name(&backups_dir, 1_790_000_000_000 + i * 1000), 2).unwrap();
        }
        let kept = backups(&backups_dir);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(newest_good_backup(&backups_dir), Some(kept[0].clone()));
        assert_eq!(check_file(&kept[0], true, Duration::ZERO), Integrity::Ok);
    }
}
