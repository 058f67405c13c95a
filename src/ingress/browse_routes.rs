//! The viewer's read and correction routes (docs/spec/viewer.md §3–§4): observation and session
//! pages, one session in order, an observation's tool uses, token usage per day, and editing an
//! observation. Thin: parse, call [`crate::retrieval::browse`] or [`crate::worker::edit`], answer.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use serde_json::Value;

use super::checks::json_body;
use super::error::ApiError;
use super::retrieval_routes::api_error;
use crate::clock::{day, now_ms};
use crate::retrieval::browse::{Page, ToolUses, Usage};
use crate::retrieval::params::Params;
use crate::worker::WorkerState;
use crate::worker::edit::{Edit, edit_observation};

type Q = Query<Vec<(String, String)>>;

fn page(p: &Params) -> Result<Page, ApiError> {
    Ok(Page {
        before: p.int(&["before"], 1, i64::MAX).map_err(api_error)?,
        limit: p.int(&["limit"], 1, 200).map_err(api_error)?.unwrap_or(50),
    })
}

fn text(p: &Params, keys: &[&str]) -> Option<String> {
    p.get(keys).map(str::trim).filter(|s| !s.is_empty()).map(String::from)
}

fn positive_id(raw: &str, what: &str) -> Result<i64, ApiError> {
    raw.trim()
        .trim_start_matches('#')
        .parse()
        .ok()
        .filter(|n: &i64| *n > 0)
        .ok_or_else(|| ApiError::bad_request(format!("bad {what} id")))
}

/// `GET /api/observations?project=&session=&before=&limit=`.
pub async fn observations(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let (page, project, session) = (page(&p)?, text(&p, &["project"]), text(&p, &["session", "memorySessionId"]));
    let svc = app.services()?;
    Ok(Json(svc.storage.observations_page(project, session, page).await?.to_json()))
}

/// `GET /api/sessions?project=&before=&limit=`.
pub async fn sessions(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let (page, project) = (page(&p)?, text(&p, &["project"]));
    let svc = app.services()?;
    Ok(Json(svc.storage.sessions_page(project, page).await?.to_json()))
}

/// `GET /api/session/:id`.
pub async fn session(State(app): State<Arc<WorkerState>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = positive_id(&id, "session")?;
    let svc = app.services()?;
    Ok(Json(svc.storage.session_detail(id).await?.to_json()))
}

/// `GET /api/tool-uses?observation=<id>`.
pub async fn tool_uses(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<ToolUses>, ApiError> {
    let p = Params(q);
    let raw = p
        .get(&["observation", "id"])
        .ok_or_else(|| ApiError::bad_request("observation is required"))?;
    let id = positive_id(raw, "observation")?;
    let svc = app.services()?;
    Ok(Json(svc.storage.tool_uses(id).await?))
}

/// `GET /api/usage?days=30`.
pub async fn usage(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Usage>, ApiError> {
    let days = Params(q).int(&["days"], 1, 366).map_err(api_error)?.unwrap_or(30);
    let today = day(now_ms());
    let svc = app.services()?;
    Ok(Json(svc.storage.usage_by_day(days, today).await?))
}

/// `GET /api/charts?days=30`: the figures `memd stats` and the status page draw.
pub async fn charts(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<crate::worker::stats::StatsDoc>, ApiError> {
    let days = Params(q).int(&["days"], 1, 366).map_err(api_error)?.unwrap_or(30);
    Ok(Json(crate::worker::stats::stats(app.services()?, days).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditBody {
    title: Option<String>,
    facts: Option<Vec<String>>,
    narrative: Option<String>,
}

/// `PATCH /api/observation/:id` with `{"title"?, "facts"?, "narrative"?}`: the observation as stored now.
pub async fn edit(State(app): State<Arc<WorkerState>>, Path(id): Path<String>, body: Body) -> Result<Json<Value>, ApiError> {
    let id = positive_id(&id, "observation")?;
    let b: EditBody = json_body(body).await?;
    let svc = app.services()?;
    let e = Edit {
        title: b.title,
        facts: b.facts,
        narrative: b.narrative,
    };
    edit_observation(svc, id, e).await?;
    let page = Page {
        before: Some(id + 1),
        limit: 1,
    };
    let listed = svc.storage.observations_page(None, None, page).await?;
    let o = listed.items.first().filter(|o| o.id == id).map(|o| o.to_json_with_arrays());
    o.map(Json)
        .ok_or_else(|| ApiError::not_found(format!("Observation #{id} not found")))
}
