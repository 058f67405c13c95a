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

pub async fn status(svc: &Services) -> Result<Value, TeamUseError> {
    let (status, figures) = crate::status::team_with_figures(svc).await.ok_or(TeamUseError::Off)?;
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
        Ok(CallResult::Success(r)) => r.map_err(TeamUseError::Failed),
        _ => Err(TeamUseError::NotRunning),
    }
}
