//! The status room: the `GET /api/status` document (docs/spec/api.md §6.3), typed, built from the
//! worker's state and read back by `memd status` and `memd import-claude-mem`.
//!
//! Sessions come from the shared registry (no mailbox round trip per session); provider, store and
//! reaper answer an RPC with a timeout, so a stuck actor shows as `null` instead of hanging status.

pub mod vectors;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::actors::chroma_sync::ChromaSyncStatus;
use crate::actors::orphan_reaper::{ReaperMsg, ReaperStatus};
use crate::actors::provider::{ProviderMsg, ProviderStatus};
use crate::actors::registry::{SessionState, SessionStatus};
use crate::actors::store::{StoreMsg, StoreStatus};
use crate::actors::transcript_watcher::{WatcherMsg, WatcherStatus};
use crate::actors::vector_sync::VectorSyncStatus;
use crate::clock::{iso, now_ms};
use crate::import::ImportSnapshot;
use crate::ingest::spool::SpoolStatus;
use crate::store::stats::PendingCounts;
use crate::worker::{Services, VERSION, WorkerState};

const MAX_ITEMS: usize = 500;
const RPC_MS: u64 = 2_000;

/// The whole status document.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusDoc {
    pub version: String,
    pub pid: u32,
    pub port: u16,
    pub now: String,
    pub supervisor: SupervisorStatus,
    pub sessions: SessionsStatus,
    /// None when the provider did not answer in time.
    pub provider: Option<ProviderStatus>,
    pub store: Option<StoreStatus>,
    pub reaper: Option<ReaperStatus>,
    /// The transcript watcher; None when it is off (`MEMD_WATCH`) or did not answer in time.
    pub watcher: Option<WatcherStatus>,
    pub pending: Option<PendingCounts>,
    /// What the check of the database at start found.
    pub integrity: Option<crate::store::Integrity>,
    /// The newest `<data>/backups/memd-*.db`, with its size, and how many are kept.
    pub backups: BackupsStatus,
    pub privacy: PrivacyStatus,
    pub vectors: VectorSyncStatus,
    pub chroma: ChromaSyncStatus,
    /// None when no import runs.
    pub import: Option<ImportSnapshot>,
    pub spool: SpoolStatus,
    pub memory: MemoryStatus,
    /// Alert deliveries (issue 39); None while no webhook is set.
    pub alerts: Option<AlertsStatus>,
    /// Team memory (issue 40); None without a team server.
    pub team: Option<crate::actors::team_sync::TeamStatus>,
    /// Injected and used per source and project (issue 53).
    #[serde(default)]
    pub memory_use: crate::action::injected::MemoryUse,
    /// Each periodic job, by name: on or off, its period, what its last pass did or why it failed.
    pub jobs: BTreeMap<String, crate::worker::jobs::JobStatus>,
    pub warnings: Vec<String>,
}

/// The alert outbox: what was delivered, what waits, the last error.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AlertsStatus {
    pub format: String,
    pub types: Vec<String>,
    pub pending: i64,
    pub sent: i64,
    pub failed: i64,
    pub skipped: i64,
    pub last_error: Option<String>,
    pub last_sent_at: Option<String>,
}

/// What the process holds: the resident set (Linux `/proc/self/status`; 0 elsewhere) and the
/// part of the heap SQLite's allocator reports (page caches, statements).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryStatus {
    pub rss_bytes: u64,
    pub sqlite_bytes: u64,
    /// The C heap (every Rust allocation too): bytes in use, and bytes free inside its arenas.
    pub heap_in_use_bytes: u64,
    pub heap_free_bytes: u64,
}

impl MemoryStatus {
    pub fn now() -> Self {
        let (heap_in_use_bytes, heap_free_bytes) = crate::allocator::heap_figures();
        Self {
            heap_in_use_bytes,
            heap_free_bytes,
            rss_bytes: crate::allocator::resident_bytes(),
            sqlite_bytes: crate::store::sqlite_memory_used(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SupervisorStatus {
    pub started_at: String,
    pub uptime_s: u64,
    pub child_restarts: u64,
    /// Children of the root waiting for their restart, with what stopped them.
    pub down: BTreeMap<String, String>,
    /// Why the tree cannot recover by itself (readiness answers 503), if it cannot.
    pub dead: Option<String>,
    /// Restarts of the supervised background loops (spool scanner, retention, backups).
    pub task_restarts: u64,
    /// Who started the worker: `systemd`, `launchd` or `on_demand`.
    pub service_manager: crate::service::Manager,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionsStatus {
    pub live: usize,
    pub failed: usize,
    /// More than 500 sessions: `items` holds the first 500.
    pub truncated: bool,
    pub items: Vec<SessionStatus>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BackupsStatus {
    pub count: usize,
    pub newest: Option<String>,
    pub newest_bytes: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PrivacyStatus {
    pub redact: bool,
    /// Redactions per detector since start.
    pub redactions: BTreeMap<String, u64>,
}

/// Live session actors from the registry, plus parked sessions from the store.
async fn sessions(svc: &Services) -> SessionsStatus {
    let mut items: Vec<SessionStatus> = svc.registry.snapshot();
    let parked = svc.storage.parked_sessions(MAX_ITEMS as i64).await.unwrap_or_default();
    for p in parked {
        if !items.iter().any(|s| s.session_db_id == p.session_db_id) {
            items.push(SessionStatus {
                content_session_id: p.content_session_id,
                session_db_id: p.session_db_id,
                project: p.project,
                platform_source: p.platform_source,
                state: SessionState::Failed,
                queue_depth: p.queue_depth,
                in_flight: 0,
                restarts: 0,
                consecutive_failures: 0,
                next_retry_at: None,
                last_event_at: Some(iso(p.last_event_epoch)),
                last_event_epoch: p.last_event_epoch,
                last_error: p.failure_reason,
            });
        }
    }
    let failed = items.iter().filter(|s| s.state == SessionState::Failed).count();
    let truncated = items.len() > MAX_ITEMS;
    let live = items.len() - failed;
    items.truncate(MAX_ITEMS);
    SessionsStatus {
        live,
        failed,
        truncated,
        items,
    }
}

pub async fn document(worker: &WorkerState, svc: &Services) -> StatusDoc {
    let provider = match svc.handles.provider() {
        Some(p) => ractor::call_t!(p, ProviderMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let store = match svc.handles.store() {
        Some(s) => ractor::call_t!(s, StoreMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let reaper = match svc.handles.reaper() {
        Some(r) => ractor::call_t!(r, ReaperMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let watcher = match svc.handles.watcher() {
        Some(w) => ractor::call_t!(w, WatcherMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let redactions = svc
        .ingest
        .pipeline
        .redactions
        .lock()
        .map(|r| r.iter().map(|(k, v)| (k.to_string(), v)).collect())
        .unwrap_or_default();
    let mut warnings: Vec<String> = svc.settings.get().warnings.clone();
    if !svc.settings.get().redact {
        warnings.push("secret redaction is off (MEMD_REDACT=false)".into());
    }
    let (vectors, chroma, vector_warnings) = vectors::sections(svc).await;
    warnings.extend(vector_warnings);
    let tree = svc.handles.tree();
    if let Some(dead) = &tree.dead {
        warnings.push(format!("the actor tree is down: {dead}"));
    }
    match svc.embedded.integrity() {
        crate::store::Integrity::Damaged(d) => {
            warnings.push(format!("the database is damaged ({d}): writes are refused; run `memd repair`"))
        }
        crate::store::Integrity::Unverified(d) => {
            warnings.push(format!("the database was not fully checked at start ({d}): `memd doctor --full`"))
        }
        crate::store::Integrity::Ok => {}
    }
    if svc.embedded.read_only() && !svc.embedded.integrity().is_damaged() {
        warnings.push("database was written by a newer memd; ingest is disabled".into());
    }
    let backup_dir = svc.settings.get().data_dir.join("backups");
    let list = crate::store::integrity::backups(&backup_dir);
    let backups = BackupsStatus {
        count: list.len(),
        newest_bytes: list.first().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len()),
        newest: list.first().map(|p| p.display().to_string()),
    };
    StatusDoc {
        version: VERSION.into(),
        pid: std::process::id(),
        port: worker.port(),
        now: iso(now_ms()),
        supervisor: SupervisorStatus {
            started_at: iso(worker.started_epoch),
            uptime_s: worker.started.elapsed().as_secs(),
            child_restarts: svc.handles.child_restarts.load(std::sync::atomic::Ordering::Relaxed),
            down: tree.down,
            dead: tree.dead.clone(),
            task_restarts: worker.counters.task_restarts.get(),
            service_manager: worker.service_manager,
        },
        sessions: sessions(svc).await,
        pending: store.as_ref().map(|s| s.figures.pending.clone()),
        integrity: Some(svc.embedded.integrity().clone()),
        backups,
        provider,
        store,
        reaper,
        watcher,
        privacy: PrivacyStatus {
            redact: svc.settings.get().redact,
            redactions,
        },
        vectors,
        chroma,
        import: worker.counters.import.snapshot(),
        spool: worker.counters.spool.status(),
        memory: MemoryStatus::now(),
        alerts: alerts(svc).await,
        team: team(svc).await,
        memory_use: crate::action::injected::MemoryUse::of(&svc.storage.use_totals().await.unwrap_or_default()),
        jobs: worker.counters.jobs.snapshot(),
        warnings,
    }
}

/// The team sync's status; a disabled one when the server is set but the actor did not answer.
pub async fn team(svc: &crate::worker::Services) -> Option<crate::actors::team_sync::TeamStatus> {
    crate::worker::team::with_figures(svc).await.map(|(status, _)| status)
}

async fn alerts(svc: &crate::worker::Services) -> Option<AlertsStatus> {
    let cfg = svc.settings.get().alerts.clone();
    cfg.webhook.as_ref()?;
    let f = svc.storage.alert_figures().await.unwrap_or_default();
    Some(AlertsStatus {
        format: cfg.format.to_string(),
        types: cfg.types.clone(),
        pending: f.pending,
        sent: f.sent,
        failed: f.failed,
        skipped: f.skipped,
        last_error: f.last_error,
        last_sent_at: f.last_sent_at_epoch.map(iso),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_what_it_wrote() {
        let mut doc = StatusDoc {
            version: "1".into(),
            port: 7,
            warnings: vec!["w".into()],
            ..Default::default()
        };
        doc.privacy.redactions.insert("aws_key".into(), 2);
        doc.vectors.state = "disabled".into();
        let text = serde_json::to_string(&doc).unwrap();
        let back: StatusDoc = serde_json::from_str(&text).unwrap();
        assert_eq!(back.port, 7);
        assert_eq!(back.privacy.redactions["aws_key"], 2);
        assert_eq!(back.vectors.state, "disabled");
        assert!(back.provider.is_none() && back.import.is_none());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["import"].is_null() && v["provider"].is_null(), "missing parts are null: {v}");
    }
}
