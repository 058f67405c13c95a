//! Freshness routes (issue 38): `POST /api/admin/consolidate` (`memd consolidate`), `GET
//! /api/consolidation` (the audit log the viewer shows), `GET /api/contradictions` and `POST
//! /api/contradictions/{id}/resolve`; bodies checked here, the use-cases in
//! [`crate::worker::freshness`].

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use crate::store::supersession::Resolution;
use crate::worker::WorkerState;
use crate::worker::freshness;

type Q = Query<HashMap<String, String>>;

fn limit(q: &HashMap<String, String>) -> Result<i64, ApiError> {
    match q.get("limit") {
        None => Ok(100),
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| ApiError::bad_request("limit must be 1..=1000")),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsolidateBody {
    #[serde(default, alias = "dry_run")]
    pub dry_run: bool,
}

pub async fn consolidate(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ConsolidateBody = json_body(body).await?;
    let changes = freshness::consolidate(app.services()?, b.dry_run).await?;
    Ok(Json(
        json!({"success": true, "dryRun": b.dry_run, "total": changes.len(), "changes": changes}),
    ))
}

pub async fn consolidation_log(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let entries = freshness::consolidation_log(app.services()?, limit(&q)?).await?;
    Ok(Json(json!({"entries": entries})))
}

pub async fn contradictions(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let all = matches!(q.get("all").map(String::as_str), Some("true" | "1"));
    let items = freshness::contradictions(app.services()?, all, limit(&q)?).await?;
    Ok(Json(json!({"items": items})))
}

/// `{"keep": <id>}`, `{"both": true}` or `{"forget": <id>}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    pub keep: Option<i64>,
    #[serde(default)]
    pub both: bool,
    pub forget: Option<i64>,
}

pub async fn resolve(State(app): State<Arc<WorkerState>>, Path(id): Path<String>, body: Body) -> Result<Json<Value>, ApiError> {
    let id: i64 = id
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ApiError::bad_request("id must be a positive integer"))?;
    let b: ResolveBody = json_body(body).await?;
    let how = match (b.keep, b.both, b.forget) {
        (Some(k), false, None) => Resolution::Keep(k),
        (None, true, None) => Resolution::Both,
        (None, false, Some(f)) => Resolution::Forget(f),
        _ => return Err(ApiError::bad_request("give exactly one of keep, both, forget")),
    };
    freshness::resolve(app.services()?, id, how).await?;
    Ok(Json(json!({"success": true, "id": id})))
}
