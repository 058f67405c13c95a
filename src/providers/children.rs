//! The registry of observer subprocesses (`<data>/children.json`).
//!
//! Every child runs in its own process group; its pid, process group, kernel start time and the
//! owning worker's pid are written here while it runs, so a worker that died without cleaning up
//! leaves a record the next start reaps ([`reap_leftovers`]): a recorded group is killed only when
//! the pid still names the same process (same start time), never a recycled pid.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRecord {
    pub pid: i32,
    pub pgid: i32,
    /// Kernel start time of the process (clock ticks since boot, `/proc/<pid>/stat` field 22).
    pub start_time: u64,
    pub owner_pid: u32,
    pub started_at_epoch: i64,
}

/// Live children of this worker, mirrored to `<data>/children.json`.
#[derive(Debug)]
pub struct Children {
    path: PathBuf,
    live: Mutex<Vec<ChildRecord>>,
}

impl Children {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("children.json"),
            live: Mutex::new(Vec::new()),
        }
    }

    pub fn add(&self, rec: ChildRecord) {
        if let Ok(mut live) = self.live.lock() {
            live.push(rec);
            self.persist(&live);
        }
    }

    pub fn remove(&self, pid: i32) {
        if let Ok(mut live) = self.live.lock() {
            live.retain(|r| r.pid != pid);
            self.persist(&live);
        }
    }

    /// Kills every live child's process group (shutdown); returns how many.
    pub fn kill_all(&self) -> usize {
        let Ok(mut live) = self.live.lock() else { return 0 };
        let n = live.len();
        for r in live.iter() {
            kill_group(r.pgid);
        }
        live.clear();
        self.persist(&live);
        n
    }

    fn persist(&self, live: &[ChildRecord]) {
        let result = if live.is_empty() {
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
                _ => Ok(()),
            }
        } else {
            let bytes = serde_json::to_vec(live).unwrap_or_default();
            crate::data_dir::write_private(&self.path, &bytes).map_err(|e| e.to_string())
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot update children.json");
        }
    }
}

/// SIGKILL to a whole process group (never to group 0 or 1).
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions; the group is one we created.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    }
}

/// Whether any process of the group still exists.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}

/// Start time of a live process, from `/proc/<pid>/stat` (None when gone or unreadable).
pub fn process_start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// At start: kills the process groups a previous worker left behind, removes the file; returns
/// how many groups were killed.
pub fn reap_leftovers(data_dir: &Path) -> u64 {
    let path = data_dir.join("children.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return 0 };
    let records: Vec<ChildRecord> = serde_json::from_str(&text).unwrap_or_default();
    let mut killed = 0;
    for r in records.iter().filter(|r| r.owner_pid != std::process::id()) {
        if process_start_time(r.pid) == Some(r.start_time) {
            tracing::warn!(pid = r.pid, pgid = r.pgid, "killing an observer process left by a previous run");
            kill_group(r.pgid);
            killed += 1;
        }
    }
    let _ = std::fs::remove_file(&path);
    killed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn leftovers_of_a_previous_run_are_killed_and_recycled_pids_spared() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        let start = process_start_time(pid).unwrap();
        let recs = vec![
            ChildRecord {
                pid,
                pgid: pid,
                start_time: start,
                owner_pid: 1,
                started_at_epoch: 0,
            },
            ChildRecord {
                pid,
                pgid: pid,
                start_time: start + 1,
                owner_pid: 1,
                started_at_epoch: 0,
            },
        ];
        std::fs::write(dir.path().join("children.json"), serde_json::to_vec(&recs).unwrap()).unwrap();
        assert_eq!(reap_leftovers(dir.path()), 1);
        let _ = child.wait();
        assert!(!group_alive(pid));
        assert!(!dir.path().join("children.json").exists());
    }
}
