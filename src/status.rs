//! The `GET /api/status` document (docs/spec/api.md §6.3): the actor tree at a glance.
//! Sessions come from the shared registry (no mailbox round trip per session); provider, store and
//! reaper answer an RPC with a timeout, so a stuck actor shows as `null` instead of hanging status.

use serde_json::{Value, json};

use crate::actors::orphan_reaper::ReaperMsg;
use crate::actors::provider::ProviderMsg;
use crate::actors::registry::{SessionState, SessionStatus};
use crate::actors::store::StoreMsg;
use crate::clock::{iso, now_ms};
use crate::ingress::ops_routes::VERSION;
use crate::ingress::{AppState, Services};
use crate::store::stats::parked_sessions;

const MAX_ITEMS: usize = 500;
const RPC_MS: u64 = 2_000;

pub async fn document(app: &AppState, svc: &Services, port: u16) -> Value {
    let now = now_ms();
    let mut items: Vec<SessionStatus> = svc.registry.snapshot();
    let parked = svc.store.read(|c| parked_sessions(c, MAX_ITEMS as i64)).await.unwrap_or_default();
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
    let live = items.len() - failed;
    let truncated = items.len() > MAX_ITEMS;
    items.truncate(MAX_ITEMS);

    let provider = match svc.handles.provider() {
        Some(p) => ractor::call_t!(p, ProviderMsg::Status, RPC_MS).ok().map(|s| json!(s)),
        None => None,
    };
    let store = match svc.handles.store() {
        Some(s) => ractor::call_t!(s, StoreMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let reaper = match svc.handles.reaper() {
        Some(r) => ractor::call_t!(r, ReaperMsg::Status, RPC_MS).ok().map(|s| json!(s)),
        None => None,
    };
    let pending = store.as_ref().map(|s| json!(s.figures.pending));
    let redactions: Value = svc
        .ingest
        .redactions
        .lock()
        .map(|r| json!(r.iter().collect::<std::collections::BTreeMap<_, _>>()))
        .unwrap_or(json!({}));
    let mut warnings: Vec<String> = svc.settings.warnings.clone();
    if !svc.settings.redact {
        warnings.push("secret redaction is off (MEMD_REDACT=false)".into());
    }
    let (vectors, chroma, vector_warnings) = crate::vectors::status::sections(svc).await;
    warnings.extend(vector_warnings);
    if svc.store.read_only {
        warnings.push("database was written by a newer memd; ingest is disabled".into());
    }
    json!({
        "version": VERSION,
        "pid": std::process::id(),
        "port": port,
        "now": iso(now),
        "supervisor": {
            "started_at": iso(app.started_epoch),
            "uptime_s": app.started.elapsed().as_secs(),
            "child_restarts": svc.handles.child_restarts.load(std::sync::atomic::Ordering::Relaxed),
        },
        "sessions": {"live": live, "failed": failed, "truncated": truncated, "items": items},
        "provider": provider,
        "store": store.map(|s| json!(s)),
        "reaper": reaper,
        "pending": pending,
        "privacy": {"redact": svc.settings.redact, "redactions": redactions},
        "vectors": vectors,
        "chroma": chroma,
        "import": app.import.snapshot(),
        "spool": app.spool.document(),
        "warnings": warnings,
    })
}
