//! `GET /api/action-warning` (issue 53): the warning the PreToolUse hook shows before a command or
//! an edit that failed before and has not passed since, `{"warning": <text>|null}` — answered from the action
//! index by key, never a search. Off (`MEMD_ACTION_MEMORY=false`): always null.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use serde_json::{Value, json};

use super::error::ApiError;
use crate::action::service::{WarningRequest, warning};
use crate::clock::now_ms;
use crate::retrieval::params::Params;
use crate::worker::WorkerState;

const FIELD_MAX: usize = 8_192;
/// A session id or project name longer than this is no host's.
const NAME_MAX: usize = 512;

pub async fn action_warning(State(app): State<Arc<WorkerState>>, Query(q): Query<Vec<(String, String)>>) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let field = |names: &[&str]| p.get(names).map(str::to_string);
    let req = WarningRequest {
        session: field(&["contentSessionId", "session"]).unwrap_or_default(),
        project: field(&["project"]).unwrap_or_default(),
        root: field(&["root"]),
        command: field(&["command"]).filter(|c| !c.trim().is_empty()),
        file: field(&["file"]).filter(|f| !f.trim().is_empty()),
        now: now_ms(),
    };
    if req.session.is_empty() || req.project.is_empty() {
        return Err(ApiError::bad_request("contentSessionId and project are required"));
    }
    if req.command.is_none() && req.file.is_none() {
        return Err(ApiError::bad_request("one of command or file is required"));
    }
    if req.session.len() > NAME_MAX || req.project.len() > NAME_MAX {
        return Err(ApiError::bad_request("contentSessionId and project are at most 512 bytes"));
    }
    let long = [&req.command, &req.file, &req.root]
        .iter()
        .any(|f| f.as_ref().is_some_and(|s| s.len() > FIELD_MAX));
    if long {
        return Err(ApiError::bad_request("command, file and root are at most 8192 bytes"));
    }
    let svc = app.services()?;
    if !svc.settings.get().hook.action_memory {
        return Ok(Json(json!({ "warning": null })));
    }
    let text = warning(&*svc.storage, &svc.ingest.pipeline.privacy, req).await?;
    Ok(Json(json!({ "warning": text })))
}
