//! The supervised actor tree of `memd serve`:
//!
//! ```text
//! RootSupervisor
//! ├─ StoreActor      owns the single SQLite writer thread (group commit) and the read pool
//! ├─ ProviderActor   runs observer calls (LLM providers behind breakers, or extractive) off its thread
//! ├─ SessionManager  one SessionActor per (platform_source, contentSessionId); backoff restarts
//! │  └─ SessionActor × N
//! ├─ OrphanReaper    stops idle session actors, removes stale files
//! ├─ VectorSync      embeds committed rows into the embedded vector store (when vectors are on)
//! ├─ ChromaSync      mirrors those documents into a Chroma server (when MEMD_CHROMA_URL is set)
//! ├─ TranscriptWatcher  tails session transcripts into the ingest commands (when MEMD_WATCH is on)
//! └─ TeamSync        pushes and pulls the shared projects' rows to the team server (when MEMD_TEAM_DATABASE_URL is set)
//! ```
//!
//! Ingress reaches the actors through [`Handles`], refreshed by the root when it restarts a child;
//! [`children`] is the one list of the root's children.

pub mod backoff;
pub mod breaker;
pub mod children;
pub mod chroma_sync;
#[cfg(test)]
mod fault_tests;
pub mod faults;
pub mod orphan_reaper;
pub mod provider;
pub mod provider_conversation;
pub mod provider_state;
pub mod registry;
pub mod root;
pub mod session;
pub mod session_manager;
pub mod session_state;
pub mod store;
#[cfg(test)]
mod supervision_tests;
pub mod team_sync;
pub mod transcript_watcher;
pub mod vector_sync;

pub use children::{Child, Handles};

/// Which of the root's children are down, and whether the root gave up (readiness then answers
/// 503 with the reason).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeHealth {
    /// Children waiting for their restart, with the error that stopped them.
    pub down: std::collections::BTreeMap<String, String>,
    /// The tree cannot recover by itself: a child failed past its restart budget, or the root
    /// stopped.
    pub dead: Option<String>,
}

impl Handles {
    pub fn tree(&self) -> TreeHealth {
        self.tree.read().map(|t| t.clone()).unwrap_or_default()
    }
    pub fn mark_down(&self, child: &str, reason: &str) {
        if let Ok(mut t) = self.tree.write() {
            t.down.insert(child.to_string(), reason.to_string());
        }
    }
    pub fn mark_up(&self, child: &str) {
        if let Ok(mut t) = self.tree.write() {
            t.down.remove(child);
        }
    }
    pub fn mark_dead(&self, reason: &str) {
        if let Ok(mut t) = self.tree.write() {
            t.dead.get_or_insert_with(|| reason.to_string());
        }
    }
}

/// The session actors as ingest's doorbell ([`crate::ingest::commands::SessionDoorbell`]): whether
/// a session's actor is live (the registry) and a `Notify` to the session manager.
pub struct Doorbell {
    pub registry: std::sync::Arc<registry::Registry>,
    pub handles: std::sync::Arc<Handles>,
}

impl crate::ingest::commands::SessionDoorbell for Doorbell {
    fn is_live(&self, key: &crate::store::sessions::SessionKey) -> bool {
        self.registry.sessions.contains_key(key)
    }

    fn notify(&self, key: crate::store::sessions::SessionKey, session_db_id: i64) {
        match self.handles.manager() {
            Some(m) => {
                let _ = m.cast(session_manager::ManagerMsg::Notify { key, session_db_id });
            }
            None => tracing::warn!(session_id = %key, "session manager not running; the event waits in pending"),
        }
    }
}
