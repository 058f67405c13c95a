//! Work-state routes (issue 39): `POST /api/work-state` records the task, items and notes of a
//! project and branch; `GET /api/work-state` reads one (`?project=`, `?branch=` or `?cwd=`) with
//! the section SessionStart would inject, or every state when no project is given (the viewer).
//! Bodies are checked here; the use-cases are in [`crate::work_state::service`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use crate::freshness::git::branch_of;
use crate::work_state::service::{self, WorkRequest, WorkStateError};
use crate::work_state::tables::WorkItemIn;
use crate::worker::WorkerState;

type Q = Query<HashMap<String, String>>;

const LIST_MAX: usize = 100;

impl From<WorkStateError> for ApiError {
    fn from(e: WorkStateError) -> Self {
        match e {
            WorkStateError::Invalid(m) => ApiError::bad_request(m),
            WorkStateError::Store(e) => e.into(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemBody {
    pub key: String,
    pub text: String,
    pub status: String,
}

/// `POST /api/work-state`: the arguments of `work_state_write`, plus `branch` (or a `cwd` it is
/// read from) and `remove` (keys of items to drop).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteBody {
    pub task: Option<String>,
    pub items: Option<Vec<ItemBody>>,
    pub notes: Option<String>,
    pub project: Option<String>,
    pub branch: Option<String>,
    pub cwd: Option<String>,
    pub remove: Option<Vec<String>>,
}

/// The branch a request names, else the one its `cwd` is on, else none.
pub fn branch_from(branch: Option<&str>, cwd: Option<&str>) -> String {
    match (branch, cwd) {
        (Some(b), _) => b.trim().to_string(),
        (None, Some(dir)) if Path::new(dir).is_absolute() => branch_of(Path::new(dir)),
        _ => String::new(),
    }
}

pub async fn write(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: WriteBody = json_body(body).await?;
    let req = WorkRequest {
        branch: Some(branch_from(b.branch.as_deref(), b.cwd.as_deref())),
        project: b.project,
        task: b.task,
        notes: b.notes,
        items: b
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|i| WorkItemIn {
                key: i.key,
                text: i.text,
                status: i.status.trim().to_ascii_lowercase(),
            })
            .collect(),
        remove: b.remove.unwrap_or_default(),
    };
    let svc = app.services()?;
    let state = service::write(&*svc.storage, &svc.ingest.pipeline.privacy, req).await?;
    Ok(Json(json!({"success": true, "state": state})))
}

pub async fn read(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let Some(project) = q.get("project").map(|p| p.trim()).filter(|p| !p.is_empty()) else {
        let states = svc.storage.work_states(None, LIST_MAX).await?;
        return Ok(Json(json!({"states": states})));
    };
    let branch = branch_from(q.get("branch").map(String::as_str), q.get("cwd").map(String::as_str));
    let state = svc.storage.work_state(project.to_string(), branch.clone()).await?;
    let section = state
        .as_ref()
        .and_then(|s| service::render(&svc.settings.get().context, s, usize::MAX));
    Ok(Json(
        json!({"project": project, "branch": branch, "state": state, "section": section}),
    ))
}
