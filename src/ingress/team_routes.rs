//! Team routes (issue 40): `GET /api/team` (the sync's status and local counts) and `POST
//! /api/team/sync` (a pass now). The use-cases are [`crate::worker::team`].

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;

use super::error::ApiError;
use crate::worker::WorkerState;
use crate::worker::team::{self, TeamUseError};

impl From<TeamUseError> for ApiError {
    fn from(e: TeamUseError) -> Self {
        let (status, code) = match e {
            TeamUseError::Off => (StatusCode::NOT_FOUND, "team_off"),
            TeamUseError::NotRunning => (StatusCode::SERVICE_UNAVAILABLE, "team_down"),
            TeamUseError::Failed(_) => (StatusCode::BAD_GATEWAY, "team_failed"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

pub async fn status(State(app): State<Arc<WorkerState>>) -> Result<Json<Value>, ApiError> {
    Ok(Json(team::status(app.services()?).await?))
}

pub async fn sync(State(app): State<Arc<WorkerState>>) -> Result<Json<Value>, ApiError> {
    let report = team::sync_now(app.services()?).await?;
    Ok(Json(serde_json::to_value(report).unwrap_or_default()))
}
