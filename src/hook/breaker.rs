//! The hook-side breaker: a worker that accepts connections but does not answer (stopped, hung)
//! costs every hook its whole budget. After one hook timed out against it, the hooks of the next
//! [`OPEN_FOR`] skip the exchange — ingest events are spooled at once, reads answer nothing — so a
//! session against a hung worker pays one budget, not one per hook. The state is the mtime of
//! `<data>/hook-breaker`, shared by every hook process; the first hook after the window tries again.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::data_dir::DataDir;

/// How long hooks skip the worker after a timeout.
pub const OPEN_FOR: Duration = Duration::from_secs(15);

fn path(dir: &DataDir) -> PathBuf {
    dir.root.join("hook-breaker")
}

/// A hook timed out against the worker within the last [`OPEN_FOR`].
pub fn is_open(dir: &DataDir) -> bool {
    std::fs::metadata(path(dir))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < OPEN_FOR)
}

/// Opens (or re-opens) the breaker after a timeout.
pub fn trip(dir: &DataDir) {
    if dir.root.is_dir() {
        let _ = std::fs::write(path(dir), b"");
    }
}

/// The worker answered: hooks wait for it again.
pub fn close(dir: &DataDir) {
    let p = path(dir);
    if p.exists() {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_on_a_timeout_and_closes_on_an_answer() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().to_path_buf());
        assert!(!is_open(&dir));
        trip(&dir);
        assert!(is_open(&dir));
        close(&dir);
        assert!(!is_open(&dir));
    }
}
