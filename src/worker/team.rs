//! Team memory's use-cases (issue 40): what `GET /api/team` shows (the sync's status, the local
//! counts and teammates' work states) and `memd team sync --now` (a pass, answered when it is done).

use std::time::Duration;

use ractor::rpc::CallResult;
use serde_json::{Value, json};

use super::Services;
use crate::actors::team_sync::{PassReport, TeamSyncMsg};

#[derive(Debug, thiserror::Error)]
pub enum TeamUseError {
    #[error("no team server is set (MEMD_TEAM_DATABASE_URL)")]
    Off,
    #[error("the team sync is not running; see memd status")]
    NotRunning,
    #[error("{0}")]
    Failed(String),
}

/// How long the status asks the actor before it answers `down`.
const STATUS_RPC_MS: u64 = 2_000;

/// The team sync's status (a `down` one when the server is set but the actor did not answer)
/// and the local counts its queue comes from (one count for `GET /api/team` too).
pub async fn with_figures(
    svc: &crate::worker::Services,
) -> Option<(
    crate::actors::team_sync::TeamStatus,
    Result<crate::team::local::TeamFigures, crate::store::StoreError>,
)> {
    let cfg = svc.settings.get().team.clone()?;
    let asked = match svc.handles.team_sync() {
        Some(a) => ractor::call_t!(a, crate::actors::team_sync::TeamSyncMsg::Status, STATUS_RPC_MS).ok(),
        None => None,
    };
    let mut status = asked.unwrap_or_else(|| crate::actors::team_sync::TeamStatus {
        state: "down".into(),
        origin: cfg.origin,
        projects: cfg.projects,
        ..Default::default()
    });
    let figures = svc.storage.team_figures(status.projects.clone()).await;
    status.queue = figures.as_ref().map(|f| f.queue).unwrap_or(0);
    Some((status, figures))
}

pub async fn status(svc: &Services) -> Result<Value, TeamUseError> {
    let (status, figures) = with_figures(svc).await.ok_or(TeamUseError::Off)?;
    let figures = figures.map_err(|e| TeamUseError::Failed(e.to_string()))?;
    let work = svc.storage.team_work(50).await.map_err(|e| TeamUseError::Failed(e.to_string()))?;
    Ok(json!({"status": status, "local": figures, "work": work}))
}

pub async fn sync_now(svc: &Services) -> Result<PassReport, TeamUseError> {
    if svc.settings.get().team.is_none() {
        return Err(TeamUseError::Off);
    }
    let actor = svc.handles.team_sync().ok_or(TeamUseError::NotRunning)?;
    match actor.call(TeamSyncMsg::SyncNow, Some(Duration::from_secs(120))).await {
        Ok(CallResult::Success(r)) => r.map_err(|e| TeamUseError::Failed(e.to_string())),
        _ => Err(TeamUseError::NotRunning),
    }
}
