//! OrphanReaper — periodic housekeeping.
//!
//! Stops session actors idle for `MEMD_SESSION_IDLE_MS` (default 10 min) with an empty queue, and
//! removes stale temporary files left in `<data>` by an earlier crash (`*.tmp` older than an hour).
//! A stale PID file is replaced at start (the lock proves it stale) and counted here, as are the
//! observer process groups a previous run left in `<data>/children.json` (killed at start, before
//! the provider can start new ones; see `providers::children`).
//! After a pass that stopped actors, or once the resident set has grown by `TRIM_GROWTH` since the
//! last trim (a status poll's table walk, a burst of searches), it returns SQLite's caches and the
//! freed heap pages to the kernel ([`crate::allocator`]). Supervised by RootSupervisor. Failure policy: stateless apart from counters; a restart only
//! resets them.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use super::Handles;
use super::session_manager::ManagerMsg;
use crate::clock::{Clock, iso};

pub struct OrphanReaper;

pub struct ReaperArgs {
    pub handles: Arc<Handles>,
    /// Its page caches are released with the heap after a pass that stopped actors.
    pub store: crate::store::Store,
    pub data_dir: PathBuf,
    pub interval: Duration,
    pub idle_ms: i64,
    pub stale_pid_replaced: bool,
    pub children_reaped: u64,
    pub clock: Clock,
}

pub enum ReaperMsg {
    /// Run one pass now.
    Tick,
    /// The reaper part of `GET /api/status`.
    Status(RpcReplyPort<ReaperStatus>),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReaperStatus {
    pub last_run_at: Option<String>,
    pub idle_actors_stopped: u64,
    pub processes_killed: u64,
    pub stale_files_removed: u64,
}

/// Growth of the resident set since the last trim that makes a pass trim although no actor stopped.
const TRIM_GROWTH: u64 = 2 << 20;
/// What `trimmed_at` holds while a trim runs: no growth can be due then.
const TRIMMING: u64 = u64::MAX;

pub struct ReaperState {
    args: ReaperArgs,
    status: ReaperStatus,
    /// The last pass stopped actors: trim after this one too (stopping is asynchronous).
    stopped_last_pass: bool,
    /// The resident set right after the last trim (0 before the first), `TRIMMING` during one.
    trimmed_at: Arc<AtomicU64>,
}

impl ReaperState {
    /// Whether this pass, which stopped `n` actors with the process `resident` bytes large, should
    /// trim: when it or the pass before stopped any (an actor's memory is freed once it has stopped,
    /// after the pass), or when the resident set grew by `TRIM_GROWTH` since the last trim.
    fn trim_due(&mut self, n: usize, resident: u64) -> bool {
        let grown = resident > self.trimmed_at.load(Ordering::Relaxed).saturating_add(TRIM_GROWTH);
        let due = n > 0 || self.stopped_last_pass || grown;
        self.stopped_last_pass = n > 0;
        due
    }

    /// Hands SQLite's caches and the free heap back, then notes the resident set it left.
    fn trim(&self) {
        let (store, trimmed_at) = (self.args.store.clone(), self.trimmed_at.clone());
        trimmed_at.store(TRIMMING, Ordering::Relaxed);
        tokio::spawn(async move {
            store.release_memory().await;
            let _ = tokio::task::spawn_blocking(crate::allocator::release_free_memory).await;
            trimmed_at.store(crate::allocator::resident_bytes(), Ordering::Relaxed);
        });
    }
}

/// Removes `*.tmp` files older than `max_age` directly inside `dir`; returns how many.
pub fn remove_stale_tmp(dir: &std::path::Path, max_age: Duration) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let now = SystemTime::now();
    let mut n = 0;
    for e in entries.flatten() {
        let p = e.path();
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > max_age);
        if p.extension().is_some_and(|x| x == "tmp") && old && std::fs::remove_file(&p).is_ok() {
            n += 1;
        }
    }
    n
}

impl Actor for OrphanReaper {
    type Msg = ReaperMsg;
    type State = ReaperState;
    type Arguments = ReaperArgs;

    async fn pre_start(&self, myself: ActorRef<ReaperMsg>, args: ReaperArgs) -> Result<ReaperState, ActorProcessingErr> {
        myself.send_interval(args.interval, || ReaperMsg::Tick);
        let status = ReaperStatus {
            stale_files_removed: u64::from(args.stale_pid_replaced),
            processes_killed: args.children_reaped,
            ..Default::default()
        };
        Ok(ReaperState {
            args,
            status,
            stopped_last_pass: false,
            trimmed_at: Arc::default(),
        })
    }

    async fn handle(&self, _myself: ActorRef<ReaperMsg>, msg: ReaperMsg, state: &mut ReaperState) -> Result<(), ActorProcessingErr> {
        match msg {
            ReaperMsg::Tick => {
                if let Some(manager) = state.args.handles.manager() {
                    let idle_ms = state.args.idle_ms;
                    if let Ok(n) = ractor::call_t!(manager, |reply| ManagerMsg::StopIdle { idle_ms, reply }, 5_000) {
                        state.status.idle_actors_stopped += n as u64;
                        if state.trim_due(n, crate::allocator::resident_bytes()) {
                            state.trim();
                        }
                    }
                }
                state.status.stale_files_removed += remove_stale_tmp(&state.args.data_dir, Duration::from_secs(3600));
                state.status.last_run_at = Some(iso(state.args.clock.now()));
            }
            ReaperMsg::Status(reply) => {
                let _ = reply.send(state.status.clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_is_trimmed_after_a_pass_that_stopped_actors_and_after_the_next_or_once_it_grew() {
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::store::StoreOptions {
            readers: 1,
            queue_max: 10,
            ..Default::default()
        };
        let mut s = ReaperState {
            args: ReaperArgs {
                handles: Arc::default(),
                store: crate::store::Store::open(&dir.path().join("memd.db"), &opts, 0).unwrap(),
                data_dir: PathBuf::new(),
                interval: Duration::from_secs(1),
                idle_ms: 0,
                stale_pid_replaced: false,
                children_reaped: 0,
                clock: Clock::manual(0),
            },
            status: ReaperStatus::default(),
            stopped_last_pass: false,
            trimmed_at: Arc::new(AtomicU64::new(30 << 20)),
        };
        let small = 30 << 20;
        assert!(!s.trim_due(0, small), "nothing stopped, nothing to give back");
        assert!(s.trim_due(3, small));
        assert!(s.trim_due(0, small), "the actors stopped last pass are gone now");
        assert!(!s.trim_due(0, small));
        assert!(!s.trim_due(0, small + TRIM_GROWTH), "grown, but not by more than TRIM_GROWTH");
        assert!(s.trim_due(0, small + TRIM_GROWTH + 1), "grown since the last trim");
        s.trimmed_at.store(TRIMMING, Ordering::Relaxed);
        assert!(!s.trim_due(0, u64::MAX / 2), "a trim is running");
        assert!(s.trim_due(1, small), "stopped actors are trimmed after whatever runs");
    }
}
