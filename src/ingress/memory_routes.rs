//! Memory management routes (docs/spec/api.md §5): `POST /api/memory/save`, `DELETE
//! /api/{observation,summary,prompt}/:id` and `POST /api/forget`: the bodies, then the use-cases of
//! [`crate::worker::memory`].

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::checks::json_body;
use super::error::ApiError;
use super::platform::platform_source;
use crate::store::forget::{ForgetSelector, RecordKind, RecordRef};
use crate::store::quarantine::Provenance;
use crate::worker::WorkerState;
use crate::worker::memory::{self, MemoryError, SaveRequest};

type Q = Query<HashMap<String, String>>;

const MAX_IDS: usize = 500;

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Invalid(m) => ApiError::bad_request(m),
            MemoryError::NotFound(m) => ApiError::not_found(m),
            MemoryError::Store(e) => e.into(),
        }
    }
}

/// `POST /api/memory/save` body: strict (an unknown key is a 400).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaveBody {
    pub text: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    #[serde(rename = "type")]
    pub obs_type: Option<String>,
    pub concepts: Option<Vec<String>>,
    #[serde(rename = "platformSource", alias = "platform_source")]
    pub platform_source: Option<String>,
    /// `user` (the user's own words) or `agent` (the default: an agent's note).
    pub provenance: Option<String>,
    /// The id of the observation this memory replaces (issue 38).
    pub supersedes: Option<i64>,
}

pub async fn save(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: SaveBody = json_body(body).await?;
    let svc = app.services()?;
    let provenance = match b.provenance.as_deref().map(str::trim) {
        None | Some("agent") => Provenance::Agent,
        Some("user") => Provenance::User,
        Some(other) => return Err(ApiError::bad_request(format!("provenance must be user or agent, not {other:?}"))),
    };
    let req = SaveRequest {
        provenance,
        platform: platform_source(&q, b.platform_source.as_deref(), &headers),
        text: b.text,
        title: b.title,
        project: b.project,
        metadata: b.metadata,
        obs_type: b.obs_type,
        concepts: b.concepts,
        supersedes: b.supersedes,
    };
    let saved = memory::save(svc, req).await?;
    Ok(Json(json!({
        "success": true, "id": saved.id, "title": saved.title, "project": saved.project,
        "message": format!("Memory saved as observation #{}", saved.id),
        "reinforced": saved.reinforced, "occurrenceCount": saved.occurrence_count,
        "supersedes": saved.supersedes,
    })))
}

/// A record id of the path: a positive integer.
fn record_id(id: &str) -> Result<i64, ApiError> {
    id.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ApiError::bad_request("id must be a positive integer"))
}

async fn delete(app: Arc<WorkerState>, kind: RecordKind, id: String, q: HashMap<String, String>) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let id = record_id(&id)?;
    let vectors = memory::forget_record(svc, RecordRef { kind, id }, q.get("reason").cloned()).await?;
    Ok(Json(json!({"success": true, "id": id, "kind": kind.name(), "vectors": vectors})))
}

pub async fn delete_observation(State(app): State<Arc<WorkerState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Observation, id, q).await
}
pub async fn delete_summary(State(app): State<Arc<WorkerState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Summary, id, q).await
}
pub async fn delete_prompt(State(app): State<Arc<WorkerState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Prompt, id, q).await
}

/// `POST /api/observation/:id/release`: a person trusts a quarantined observation (issue 36).
pub async fn release(State(app): State<Arc<WorkerState>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let id = record_id(&id)?;
    if !svc.storage.release(id).await? {
        return Err(ApiError::not_found(format!("observation #{id} is not quarantined")));
    }
    tracing::info!(observation_id = id, "quarantined observation released");
    Ok(Json(json!({"success": true, "id": id, "quarantined": false})))
}

/// `GET /api/quarantine?limit=`: the newest quarantined records (default 50, at most 500).
pub async fn quarantine(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let limit = match q.get("limit") {
        None => 50,
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=500).contains(n))
            .ok_or_else(|| ApiError::bad_request("limit must be 1..=500"))?,
    };
    let (items, total) = svc.storage.quarantined(limit).await?;
    Ok(Json(json!({"items": items, "total": total})))
}

/// `POST /api/forget` body.
#[derive(Debug, Deserialize)]
pub struct ForgetBody {
    #[serde(rename = "contentSessionId")]
    pub content_session_id: Option<String>,
    pub project: Option<String>,
    pub before: Option<Value>,
    pub ids: Option<Value>,
    #[serde(rename = "dryRun", default)]
    pub dry_run: bool,
    pub reason: Option<String>,
    #[serde(rename = "platformSource", alias = "platform_source")]
    pub platform_source: Option<String>,
    /// With `project`: only records of this provenance (user, agent, observer, tool_output, import).
    pub provenance: Option<String>,
}

/// Ids as in docs/spec/api.md §4.5, parsed by the retrieval layer's parser (one implementation), at most 500.
pub fn parse_ids(v: &Value) -> Result<Vec<RecordRef>, ApiError> {
    let ids = crate::retrieval::ids::parse_ids(v).map_err(|e| ApiError::bad_request(e.to_string()))?;
    if ids.len() > MAX_IDS {
        return Err(ApiError::bad_request("ids holds more than 500 ids"));
    }
    Ok(ids.into_iter().map(RecordRef::from).collect())
}

/// ISO date / date-time (UTC) or epoch ms.
pub fn parse_time(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok().or_else(|| crate::import::clean::parse_iso(s)),
        _ => None,
    }
}

pub async fn forget(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: ForgetBody = json_body(body).await?;
    let svc = app.services()?;
    let given = [b.content_session_id.is_some(), b.project.is_some(), b.ids.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(ApiError::bad_request(
            "give exactly one of contentSessionId, project (with optional before) or ids",
        ));
    }
    if b.before.is_some() && b.project.is_none() {
        return Err(ApiError::bad_request("before needs project"));
    }
    let explicit_platform = b.platform_source.is_some() || q.contains_key("platformSource") || q.contains_key("platform_source");
    let sel = if let Some(c) = b.content_session_id.clone() {
        ForgetSelector::Session {
            content_session_id: c,
            platform: explicit_platform.then(|| platform_source(&q, b.platform_source.as_deref(), &headers)),
        }
    } else if let Some(p) = b.project.clone() {
        let before = match &b.before {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_time(v).ok_or_else(|| ApiError::bad_request("before must be an ISO date or epoch ms"))?),
        };
        let provenance = match b.provenance.as_deref() {
            None => None,
            Some(v) => Some(
                Provenance::parse(v)
                    .ok_or_else(|| ApiError::bad_request("provenance must be one of user, agent, observer, tool_output, import"))?,
            ),
        };
        ForgetSelector::Project {
            project: p,
            before,
            provenance,
        }
    } else {
        ForgetSelector::Ids(parse_ids(b.ids.as_ref().unwrap_or(&Value::Null))?)
    };
    let dry = b.dry_run;
    let counts = memory::forget_matching(svc, sel, dry, b.reason.clone()).await?;
    Ok(Json(json!({
        "success": true, "dryRun": dry, "observations": counts.observations,
        "summaries": counts.summaries, "prompts": counts.prompts,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_every_form() {
        let ids = parse_ids(&json!([12, "#13", "S2", "P3"])).unwrap();
        assert_eq!(ids.len(), 4);
        assert_eq!(parse_ids(&json!("1,2")).unwrap().len(), 2);
        assert_eq!(parse_ids(&json!("[1,\"#S4\"]")).unwrap()[1].kind, RecordKind::Summary);
        assert!(parse_ids(&json!(["x"])).is_err());
        assert!(parse_ids(&json!(true)).is_err());
    }
}
