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
//! └─ TranscriptWatcher  tails session transcripts into the ingest commands (when MEMD_WATCH is on)
//! ```
//!
//! Ingress reaches the actors through [`Handles`], refreshed by the root when it restarts a child.

pub mod backoff;
pub mod breaker;
pub mod chroma_sync;
#[cfg(test)]
mod fault_tests;
pub mod orphan_reaper;
pub mod provider;
pub mod registry;
pub mod root;
pub mod session;
pub mod session_manager;
pub mod session_state;
pub mod store;
#[cfg(test)]
mod supervision_tests;
pub mod transcript_watcher;
pub mod vector_sync;

use std::sync::RwLock;

use ractor::ActorRef;

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

/// Current references to the long-lived actors (replaced when the root restarts one).
#[derive(Default)]
pub struct Handles {
    pub tree: RwLock<TreeHealth>,
    /// Children of the root restarted since start.
    pub child_restarts: std::sync::atomic::AtomicU64,
    pub manager: RwLock<Option<ActorRef<session_manager::ManagerMsg>>>,
    pub provider: RwLock<Option<ActorRef<provider::ProviderMsg>>>,
    pub store: RwLock<Option<ActorRef<store::StoreMsg>>>,
    pub reaper: RwLock<Option<ActorRef<orphan_reaper::ReaperMsg>>>,
    pub vector_sync: RwLock<Option<ActorRef<vector_sync::VectorSyncMsg>>>,
    pub chroma_sync: RwLock<Option<ActorRef<chroma_sync::ChromaSyncMsg>>>,
    pub watcher: RwLock<Option<ActorRef<transcript_watcher::WatcherMsg>>>,
}

fn read<T: Clone>(slot: &RwLock<Option<T>>) -> Option<T> {
    slot.read().ok().and_then(|g| g.clone())
}

fn write<T>(slot: &RwLock<Option<T>>, v: Option<T>) {
    if let Ok(mut g) = slot.write() {
        *g = v;
    }
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
    pub fn manager(&self) -> Option<ActorRef<session_manager::ManagerMsg>> {
        read(&self.manager)
    }
    pub fn provider(&self) -> Option<ActorRef<provider::ProviderMsg>> {
        read(&self.provider)
    }
    pub fn store(&self) -> Option<ActorRef<store::StoreMsg>> {
        read(&self.store)
    }
    pub fn reaper(&self) -> Option<ActorRef<orphan_reaper::ReaperMsg>> {
        read(&self.reaper)
    }
    pub fn vector_sync(&self) -> Option<ActorRef<vector_sync::VectorSyncMsg>> {
        read(&self.vector_sync)
    }
    pub fn set_vector_sync(&self, r: Option<ActorRef<vector_sync::VectorSyncMsg>>) {
        write(&self.vector_sync, r)
    }
    pub fn chroma_sync(&self) -> Option<ActorRef<chroma_sync::ChromaSyncMsg>> {
        read(&self.chroma_sync)
    }
    pub fn set_chroma_sync(&self, r: Option<ActorRef<chroma_sync::ChromaSyncMsg>>) {
        write(&self.chroma_sync, r)
    }
    pub fn set_manager(&self, r: Option<ActorRef<session_manager::ManagerMsg>>) {
        write(&self.manager, r)
    }
    pub fn set_provider(&self, r: Option<ActorRef<provider::ProviderMsg>>) {
        write(&self.provider, r)
    }
    pub fn set_store(&self, r: Option<ActorRef<store::StoreMsg>>) {
        write(&self.store, r)
    }
    pub fn set_reaper(&self, r: Option<ActorRef<orphan_reaper::ReaperMsg>>) {
        write(&self.reaper, r)
    }
    pub fn watcher(&self) -> Option<ActorRef<transcript_watcher::WatcherMsg>> {
        read(&self.watcher)
    }
    pub fn set_watcher(&self, r: Option<ActorRef<transcript_watcher::WatcherMsg>>) {
        write(&self.watcher, r)
    }
}
