//! Replacing `memd.db` with a repaired copy so that no kill, at any point, leaves a partial store
//! where the worker looks for one (docs/spec/storage.md, repair).
//!
//! A repair builds its copy at `memd.db.repair-building` (0600 from the first byte), checks it,
//! and renames it to `memd.db.repair-ready`: that name means complete. [`swap_in`] then keeps the
//! damaged file under `memd.db.damaged-<stamp>` by hard links (its WAL too), drops the damaged
//! file's WAL from `memd.db`'s name and renames the ready copy over `memd.db`, syncing the
//! directory after each step. Until that last rename `memd.db` is the untouched damaged file; a
//! rerun finds the ready copy and finishes the swap, or finds a building copy and starts over.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::StoreError;
use super::private_file::{self, SIDECARS, with_suffix};

const BUILDING: &str = "repair-building";
const READY: &str = "repair-ready";
const DAMAGED: &str = "damaged-";

fn err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Internal(format!("{what} {}: {e}", path.display()))
}

/// `memd.db.repair-building`: where a repair builds its copy.
pub fn building(db: &Path) -> PathBuf {
    with_suffix(db, &format!(".{BUILDING}"))
}

/// `memd.db.repair-ready`: a complete, checked copy waiting to replace `memd.db`.
pub fn ready(db: &Path) -> PathBuf {
    with_suffix(db, &format!(".{READY}"))
}

/// Discards what an interrupted build left and creates the empty building file, mode 0600.
pub fn start_building(db: &Path) -> Result<PathBuf, StoreError> {
    let path = building(db);
    private_file::create(&path)?;
    Ok(path)
}

/// Flushes the finished building file to disk and renames it ready.
pub fn mark_ready(db: &Path) -> Result<PathBuf, StoreError> {
    let to = ready(db);
    private_file::publish(&building(db), &to)?;
    Ok(to)
}

/// The `memd.db.damaged-*` files beside `db`, oldest first.
pub fn damaged_copies(db: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (db.parent(), db.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.{DAMAGED}", name.to_string_lossy());
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| {
        let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        n.starts_with(&prefix) && !SIDECARS.iter().any(|s| n.ends_with(s))
    });
    found.sort();
    found
}

/// Keeps the damaged `db` under `memd.db.damaged-<stamp>` (unless an earlier, interrupted swap
/// already did) and puts the ready copy in its place. Answers the damaged copy's path.
pub fn swap_in(db: &Path, stamp: &str) -> Result<PathBuf, StoreError> {
    let ready = ready(db);
    let ino = std::fs::metadata(db).map(|m| m.ino()).ok();
    let kept = damaged_copies(db)
        .into_iter()
        .find(|p| ino.is_some() && std::fs::metadata(p).map(|m| m.ino()).ok() == ino);
    let aside = match kept {
        Some(p) => p,
        None if ino.is_some() => {
            let aside = with_suffix(db, &format!(".{DAMAGED}{stamp}"));
            std::fs::hard_link(db, &aside).map_err(|e| err("keeping", db, e))?;
            for s in ["-wal", "-shm"] {
                let side = with_suffix(db, s);
                if side.exists() {
                    std::fs::hard_link(&side, with_suffix(&aside, s)).map_err(|e| err("keeping", &side, e))?;
                }
            }
            aside
        }
        // memd.db is gone (removed by hand): nothing to keep.
        None => with_suffix(db, &format!(".{DAMAGED}{stamp}")),
    };
    private_file::sync_dir(db)?;
    // The damaged file's WAL must not be replayed onto the new file.
    for s in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(db, s));
    }
    private_file::sync_dir(db)?;
    std::fs::rename(&ready, db).map_err(|e| err("replacing", db, e))?;
    private_file::sync_dir(db)?;
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, s: &str) {
        std::fs::write(p, s).unwrap();
    }

    #[test]
    fn the_swap_keeps_the_damaged_file_and_its_wal_and_is_finished_by_a_rerun() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("memd.db");
        write(&db, "damaged");
        write(&with_suffix(&db, "-wal"), "damaged wal");
        let b = start_building(&db).unwrap();
        assert_eq!(std::fs::metadata(&b).unwrap().mode() & 0o777, 0o600);
        write(&b, "repaired");
        mark_ready(&db).unwrap();
        // A first swap is "killed" after keeping the damaged file: the rerun reuses that copy.
        std::fs::hard_link(&db, with_suffix(&db, ".damaged-A")).unwrap();
        let aside = swap_in(&db, "B").unwrap();
        assert_eq!(aside, with_suffix(&db, ".damaged-A"));
        assert_eq!(std::fs::read_to_string(&db).unwrap(), "repaired");
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "damaged");
        assert!(!with_suffix(&db, "-wal").exists(), "the damaged WAL never sits beside the new file");
        assert!(!ready(&db).exists() && !building(&db).exists());
        assert_eq!(damaged_copies(&db), vec![aside]);
    }

    #[test]
    fn a_fresh_swap_links_the_wal_under_the_damaged_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("memd.db");
        write(&db, "damaged");
        write(&with_suffix(&db, "-wal"), "wal");
        start_building(&db).unwrap();
        mark_ready(&db).unwrap();
        let aside = swap_in(&db, "20261204T000000Z").unwrap();
        assert_eq!(std::fs::read_to_string(with_suffix(&aside, "-wal")).unwrap(), "wal");
        assert_eq!(damaged_copies(&db).len(), 1);
    }
}
