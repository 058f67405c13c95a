//! Files the store writes beside its database — backups, the copy kept before a migration, a
//! repair's replacement: created 0600 with `O_EXCL` before the first byte (a stale file of the
//! same name, and its SQLite sidecars, removed first; SQLite gives a journal the file's mode),
//! filled, flushed and renamed into place with the directory synced. A kill leaves no partial
//! file under the final name and nothing other users can read.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::StoreError;

/// The files SQLite keeps beside a database.
pub const SIDECARS: [&str; 3] = ["-journal", "-wal", "-shm"];

fn err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Internal(format!("{what} {}: {e}", path.display()))
}

/// `path` with `suffix` appended to its name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", path.display()))
}

/// Removes `path` and its SQLite sidecars, whatever exists of them.
pub fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
    for s in SIDECARS {
        let _ = std::fs::remove_file(with_suffix(path, s));
    }
}

/// Creates `path` empty, mode 0600, after removing what a killed writer left there.
pub fn create(path: &Path) -> Result<(), StoreError> {
    remove(path);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(|e| err("creating", path, e))
}

/// Syncs the directory holding `path` (a rename is durable only then).
pub fn sync_dir(path: &Path) -> Result<(), StoreError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| err("syncing", dir, e))
}

/// Flushes `from` to disk and renames it `to`, the directory synced.
pub fn publish(from: &Path, to: &Path) -> Result<(), StoreError> {
    File::open(from).and_then(|f| f.sync_all()).map_err(|e| err("syncing", from, e))?;
    std::fs::rename(from, to).map_err(|e| err("renaming", from, e))?;
    sync_dir(to)
}

/// Writes `dest` through the private temp file `tmp`: [`create`], `fill` (which writes `tmp`),
/// [`publish`]. A failed fill leaves neither file.
pub fn write_via_temp(dest: &Path, tmp: &Path, fill: impl FnOnce(&Path) -> Result<(), StoreError>) -> Result<(), StoreError> {
    create(tmp)?;
    if let Err(e) = fill(tmp) {
        remove(tmp);
        return Err(e);
    }
    publish(tmp, dest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_file_is_private_from_its_first_byte_and_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (dest, tmp) = (dir.path().join("copy.db"), dir.path().join("copy.db.tmp"));
        std::fs::write(&tmp, "left by a killed writer").unwrap();
        std::fs::write(with_suffix(&tmp, "-journal"), "j").unwrap();
        write_via_temp(&dest, &tmp, |t| {
            assert_eq!(std::fs::metadata(t).unwrap().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(t).unwrap().len(), 0, "a stale temp is never reused");
            std::fs::write(t, "whole").map_err(|e| err("writing", t, e))
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "whole");
        assert!(!tmp.exists() && !with_suffix(&tmp, "-journal").exists());
        let failed = write_via_temp(&dir.path().join("other.db"), &tmp, |_| Err(StoreError::Closed));
        assert!(failed.is_err() && !tmp.exists() && !dir.path().join("other.db").exists());
    }
}
