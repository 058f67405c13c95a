//! Memory management routes (docs/spec/api.md §5): `POST /api/memory/save`, `DELETE
//! /api/{observation,summary,prompt}/:id` and `POST /api/forget`. Every write goes through the
//! store writer; save_memory text passes the privacy pipeline (docs/spec/pipeline.md §17).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use rusqlite::OptionalExtension;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::AppState;
use super::checks::json_body;
use super::error::ApiError;
use super::platform::platform_source;
use crate::clock::now_ms;
use crate::pipeline::limits::bound;
use crate::pipeline::project::UNKNOWN_PROJECT;
use crate::protocol::observer_xml::normalize_concepts;
use crate::retrieval::records::Kind;
use crate::store::forget::{ForgetSelector, RecordKind, RecordRef, forget_bulk, forget_one};
use crate::store::memory::{ManualMemory, save_memory};

type Q = Query<HashMap<String, String>>;

pub const SAVE_TEXT_MAX_CHARS: usize = 100_000;
const TITLE_MAX_CHARS: usize = 200;
const REASON_MAX_CHARS: usize = 200;
const MAX_IDS: usize = 500;

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
}

/// Default title: the first 60 chars of the whitespace-collapsed text, `...` when longer.
pub fn default_title(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut title: String = collapsed.chars().take(60).collect();
    if collapsed.chars().count() > 60 {
        title.push_str("...");
    }
    title
}

pub async fn save(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let b: SaveBody = json_body(body).await?;
    let svc = app.services()?;
    if b.text.trim().is_empty() {
        return Err(ApiError::bad_request("text must not be empty"));
    }
    if b.text.chars().count() > SAVE_TEXT_MAX_CHARS {
        return Err(ApiError::bad_request("text exceeds 100000 characters"));
    }
    if b.title.as_ref().is_some_and(|t| t.chars().count() > TITLE_MAX_CHARS) {
        return Err(ApiError::bad_request("title exceeds 200 characters"));
    }
    let dirs = crate::modes::mode_search_dirs(None, &svc.settings.data_dir);
    let (mode, _) = crate::modes::load_mode(&svc.settings.mode, &dirs);
    let obs_type = b.obs_type.as_deref().map(str::trim).unwrap_or("discovery").to_string();
    if !mode.has_type(&obs_type) {
        return Err(ApiError::bad_request(format!("type must be one of {}", mode.type_ids().join(", "))));
    }
    let platform = platform_source(&q, b.platform_source.as_deref(), &headers);
    let privacy = &svc.ingest.privacy;
    let text = privacy.clean_text(&b.text);
    if text.private {
        return Err(ApiError::bad_request(
            "text is empty after privacy processing (empty_after_privacy)",
        ));
    }
    let mut counts = text.redactions.clone();
    let title = b.title.as_deref().map(|t| privacy.clean_text(t)).filter(|t| !t.private);
    if let Some(t) = &title {
        counts.merge(&t.redactions);
    }
    let title = title.map_or_else(|| default_title(&text.text), |t| t.text);
    let concepts: Vec<String> = b.concepts.unwrap_or_default().iter().map(|c| privacy.clean_text(c).text).collect();
    let metadata = b.metadata.map(|m| privacy.clean_json(Value::Object(m)).0);
    let project = b
        .project
        .as_deref()
        .or_else(|| metadata.as_ref().and_then(|m| m.get("project")).and_then(Value::as_str))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or(UNKNOWN_PROJECT)
        .to_string();
    if !counts.is_empty()
        && let Ok(mut total) = svc.ingest.redactions.lock()
    {
        total.merge(&counts);
    }
    let memory = ManualMemory {
        platform_source: platform,
        project: project.clone(),
        concepts: normalize_concepts(&concepts, &obs_type).into_iter().take(10).collect(),
        obs_type,
        title: bound(&title, TITLE_MAX_CHARS).into_owned(),
        narrative: bound(&text.text, 8_000).into_owned(),
        metadata: metadata.map(|m| m.to_string()),
    };
    let title = memory.title.clone();
    let now = now_ms();
    let saved = svc.store.write(move |c| save_memory(c, &memory, now)).await?;
    tracing::info!(observation_id = saved.id, reinforced = saved.reinforced, "manual memory saved");
    Ok(Json(json!({
        "success": true, "id": saved.id, "title": title, "project": project,
        "message": format!("Memory saved as observation #{}", saved.id),
        "reinforced": saved.reinforced, "occurrenceCount": saved.occurrence_count,
    })))
}

fn reason(q: &HashMap<String, String>) -> Result<Option<String>, ApiError> {
    match q.get("reason") {
        Some(r) if r.chars().count() > REASON_MAX_CHARS => Err(ApiError::bad_request("reason exceeds 200 characters")),
        other => Ok(other.cloned()),
    }
}

async fn delete(app: Arc<AppState>, kind: RecordKind, id: String, q: HashMap<String, String>) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let id: i64 = id
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ApiError::bad_request("id must be a positive integer"))?;
    let why = reason(&q)?;
    let now = now_ms();
    let r = RecordRef { kind, id };
    let (found, target) = svc
        .store
        .write(move |c| {
            let target: Option<String> = c
                .query_row("SELECT value FROM meta WHERE key = 'vector_target'", [], |r| r.get(0))
                .optional()?;
            Ok((forget_one(c, r, why.as_deref(), now)?, target))
        })
        .await?;
    if !found {
        let noun = match kind {
            RecordKind::Observation => "Observation",
            RecordKind::Summary => "Summary",
            RecordKind::Prompt => "Prompt",
        };
        return Err(ApiError::not_found(format!("{noun} {} not found", kind.label(id))));
    }
    tracing::info!(kind = kind.name(), id, "record forgotten");
    let vectors = match target.as_deref() {
        Some(t) if t.starts_with("chroma:") => "queued",
        Some(_) => "deleted",
        None => "none",
    };
    Ok(Json(json!({"success": true, "id": id, "kind": kind.name(), "vectors": vectors})))
}

pub async fn delete_observation(State(app): State<Arc<AppState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Observation, id, q).await
}
pub async fn delete_summary(State(app): State<Arc<AppState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Summary, id, q).await
}
pub async fn delete_prompt(State(app): State<Arc<AppState>>, Path(id): Path<String>, Query(q): Q) -> Result<Json<Value>, ApiError> {
    delete(app, RecordKind::Prompt, id, q).await
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
}

/// Ids as in docs/spec/api.md §4.5, parsed by the retrieval layer's parser (one implementation), at most 500.
pub fn parse_ids(v: &Value) -> Result<Vec<RecordRef>, ApiError> {
    let ids = crate::retrieval::ids::parse_ids(v).map_err(|e| ApiError::bad_request(e.to_string()))?;
    if ids.len() > MAX_IDS {
        return Err(ApiError::bad_request("ids holds more than 500 ids"));
    }
    Ok(ids
        .into_iter()
        .map(|r| RecordRef {
            kind: match r.kind {
                Kind::Observation => RecordKind::Observation,
                Kind::Summary => RecordKind::Summary,
                Kind::Prompt => RecordKind::Prompt,
            },
            id: r.id,
        })
        .collect())
}

/// ISO date / date-time (UTC) or epoch ms.
pub fn parse_time(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok().or_else(|| crate::import::clean::parse_iso(s)),
        _ => None,
    }
}

pub async fn forget(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
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
    if b.reason.as_ref().is_some_and(|r| r.chars().count() > REASON_MAX_CHARS) {
        return Err(ApiError::bad_request("reason exceeds 200 characters"));
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
        ForgetSelector::Project { project: p, before }
    } else {
        ForgetSelector::Ids(parse_ids(b.ids.as_ref().unwrap_or(&Value::Null))?)
    };
    let (dry, why, now) = (b.dry_run, b.reason.clone(), now_ms());
    let counts = svc.store.write(move |c| forget_bulk(c, &sel, dry, why.as_deref(), now)).await?;
    tracing::info!(
        dry_run = dry,
        observations = counts.observations,
        summaries = counts.summaries,
        prompts = counts.prompts,
        "bulk forget"
    );
    Ok(Json(json!({
        "success": true, "dryRun": dry, "observations": counts.observations,
        "summaries": counts.summaries, "prompts": counts.prompts,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_title_cuts_at_60() {
        assert_eq!(default_title("  short\n text "), "short text");
        let long = "a".repeat(61);
        assert_eq!(default_title(&long), format!("{}...", "a".repeat(60)));
    }

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
