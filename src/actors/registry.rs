//! Live status of every session actor, written by the actors and their manager, read by
//! `GET /api/status` without a mailbox round trip (so status stays cheap with 1,000 actors).

use dashmap::DashMap;
use serde::{Deserialize, Serialize};

use crate::store::sessions::SessionKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Idle,
    Processing,
    Backoff,
    Failed,
    Completing,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionStatus {
    pub content_session_id: String,
    pub session_db_id: i64,
    pub project: String,
    pub platform_source: String,
    pub state: SessionState,
    pub queue_depth: i64,
    pub in_flight: i64,
    pub restarts: u32,
    pub consecutive_failures: u32,
    pub next_retry_at: Option<String>,
    pub last_event_at: Option<String>,
    #[serde(skip)]
    pub last_event_epoch: i64,
    pub last_error: Option<String>,
}

impl SessionStatus {
    pub fn new(key: &SessionKey, session_db_id: i64) -> Self {
        Self {
            content_session_id: key.content_session_id.clone(),
            session_db_id,
            project: String::new(),
            platform_source: key.platform_source.clone(),
            state: SessionState::Idle,
            queue_depth: 0,
            in_flight: 0,
            restarts: 0,
            consecutive_failures: 0,
            next_retry_at: None,
            last_event_at: None,
            last_event_epoch: 0,
            last_error: None,
        }
    }
}

#[derive(Default)]
pub struct Registry {
    pub sessions: DashMap<SessionKey, SessionStatus>,
}

impl Registry {
    /// Creates the entry of a session whose actor is about to start (only the manager does).
    pub fn register(&self, key: &SessionKey, session_db_id: i64) {
        self.sessions
            .entry(key.clone())
            .or_insert_with(|| SessionStatus::new(key, session_db_id));
    }

    /// Applies `f` to the entry of `key` when there is one: a late update from an actor that is
    /// gone never brings its entry back.
    pub fn update(&self, key: &SessionKey, _session_db_id: i64, f: impl FnOnce(&mut SessionStatus)) {
        if let Some(mut entry) = self.sessions.get_mut(key) {
            f(entry.value_mut());
        }
    }

    pub fn remove(&self, key: &SessionKey) {
        self.sessions.remove(key);
    }

    /// Gives back the capacity a burst of sessions left once the map is a quarter full.
    pub fn shrink(&self) {
        if self.sessions.capacity() > 64 && self.sessions.len() < self.sessions.capacity() / 4 {
            self.sessions.shrink_to_fit();
        }
    }

    /// Every entry, newest activity first.
    pub fn snapshot(&self) -> Vec<SessionStatus> {
        let mut v: Vec<SessionStatus> = self.sessions.iter().map(|e| e.value().clone()).collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.last_event_epoch));
        v
    }
}

/// Bounds an error text for status: ≤ 500 characters.
pub fn short_error(s: &str) -> String {
    s.chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_never_recreate_a_removed_session() {
        let r = Registry::default();
        let k = SessionKey::new("claude", "s");
        r.update(&k, 1, |s| s.queue_depth = 3);
        assert!(r.sessions.is_empty(), "no entry before the manager registers it");
        r.register(&k, 1);
        r.update(&k, 1, |s| s.queue_depth = 3);
        assert_eq!(r.sessions.get(&k).unwrap().queue_depth, 3);
        r.remove(&k);
        r.update(&k, 1, |s| s.state = SessionState::Idle);
        assert!(r.sessions.is_empty(), "a late update after removal leaves no ghost");
    }
}
