//! Faults a test asks the actor tree to suffer: a session whose next stores fail, a session
//! actor slow to stop, respawns of the root's children that fail. Built empty by the worker's
//! builder (`WorkerBuilder::faults` in `worker/builder.rs` hands a test's in), so production
//! pays one empty-map lookup per stored batch and nothing else.

use std::sync::atomic::{AtomicU32, Ordering};

use dashmap::{DashMap, DashSet};

use crate::store::sessions::SessionKey;

#[derive(Debug, Default)]
pub struct Faults {
    /// Stores of a batch of this session that fail, counted down.
    pub session_failures: DashMap<SessionKey, u32>,
    /// Session actors that take a second to stop.
    pub slow_stops: DashSet<SessionKey>,
    /// Respawns of the root's children that fail, counted down (starts are never failed).
    pub respawn_failures: AtomicU32,
}

impl Faults {
    /// Whether this store of a batch of `key` fails; counts the fault down.
    pub fn fail_session_store(&self, key: &SessionKey) -> bool {
        match self.session_failures.get_mut(key) {
            Some(mut n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// Whether this respawn fails; counts the fault down.
    pub fn fail_respawn(&self) -> bool {
        self.respawn_failures
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_count_down_and_then_stop() {
        let f = Faults::default();
        let key = SessionKey::new("claude", "s");
        assert!(!f.fail_session_store(&key));
        f.session_failures.insert(key.clone(), 2);
        assert!(f.fail_session_store(&key) && f.fail_session_store(&key));
        assert!(!f.fail_session_store(&key));
        f.respawn_failures.store(1, Ordering::Relaxed);
        assert!(f.fail_respawn());
        assert!(!f.fail_respawn());
    }
}
