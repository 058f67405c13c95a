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
    /// Applies `f` to the entry of `key`, creating it first.
    pub fn update(&self, key: &SessionKey, session_db_id: i64, f: impl FnOnce(&mut SessionStatus)) {
        let mut entry = self
            .sessions
            .entry(key.clone())
            .or_insert_with(|| SessionStatus::new(key, session_db_id));
        f(entry.value_mut());
    }

    pub fn remove(&self, key: &SessionKey) {
        self.sessions.remove(key);
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
