//! Export and import routes (issue 39): `GET /api/export` pages whole observations by id,
//! `POST /api/import/observations` takes exported ones back, `POST /api/import/links` sets
//! their supersession links; `POST /api/admin/folders` runs a pass of the folder context files.
//! The use-cases are in [`crate::worker::export`] and [`crate::folders::service`].

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use crate::store::export_rows::ExportedObservation;
use crate::worker::WorkerState;
use crate::worker::export::{self, PAGE_MAX};

type Q = Query<HashMap<String, String>>;

fn int(q: &HashMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    match q.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("{key} must be an integer"))),
    }
}

/// `GET /api/export?project=&since=<epoch ms>&after=<id>&limit=` → `{items, next}`.
pub async fn export(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let limit = int(&q, "limit")?.unwrap_or(200);
    if !(1..=PAGE_MAX as i64).contains(&limit) {
        return Err(ApiError::bad_request(format!("limit must be 1..={PAGE_MAX}")));
    }
    let project = q.get("project").map(|p| p.trim().to_string()).filter(|p| !p.is_empty());
    let after = int(&q, "after")?.unwrap_or(0);
    let items = app
        .services()?
        .storage
        .export_page(project, int(&q, "since")?, after, limit as usize)
        .await?;
    let next = (items.len() == limit as usize).then(|| items.last().map(|e| e.id)).flatten();
    Ok(Json(json!({"items": items, "next": next})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    pub items: Vec<ExportedObservation>,
}

pub async fn import(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ImportBody = json_body(body).await?;
    if b.items.len() > PAGE_MAX {
        return Err(ApiError::bad_request(format!("at most {PAGE_MAX} items a request")));
    }
    let outcomes = export::import(app.services()?, b.items).await?;
    Ok(Json(json!({"outcomes": outcomes})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub id: i64,
    #[serde(rename = "supersededBy")]
    pub superseded_by: i64,
    pub reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinksBody {
    pub links: Vec<Link>,
}

pub async fn links(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: LinksBody = json_body(body).await?;
    let links = b.links.into_iter().map(|l| (l.id, l.superseded_by, l.reason)).collect();
    let linked = app.services()?.storage.link_observations(links).await?;
    Ok(Json(json!({"linked": linked})))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FoldersBody {
    #[serde(default, alias = "dry_run")]
    pub dry_run: bool,
}

/// `POST /api/admin/folders` `{"dryRun": bool}` → `{enabled, dryRun, changes}`; a pass that writes
/// is refused (409) while `MEMD_FOLDER_CONTEXT` is off.
pub async fn folders(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: FoldersBody = json_body(body).await?;
    let svc = app.services()?;
    let enabled = svc.settings.get().folders.enabled;
    if !enabled && !b.dry_run {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "folder_context_off",
            "folder context files are off: set MEMD_FOLDER_CONTEXT=true (or run with --dry-run)",
        ));
    }
    let s = svc.settings.get();
    let changes = crate::folders::service::run(&*svc.storage, s.folders.clone(), &s.data_dir, b.dry_run).await?;
    Ok(Json(json!({"enabled": enabled, "dryRun": b.dry_run, "changes": changes})))
}
