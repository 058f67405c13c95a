//! Read routes: context injection, semantic context, file context, records by id, projects and
//! stats (docs/spec/api.md §4.1, §4.2, §4.5–§4.7, §6.1–§6.2). Every read runs on the read-only pool.

use crate::retrieval::record_request::{RecordOrder, RecordsParams};
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::checks::json_body;
use super::error::ApiError;
use super::platform::header_platform;
use crate::action::injected::Source;
use crate::action::service::record_shown;
use crate::clock::now_ms;
use crate::retrieval::file_context::FileContextRequest;
use crate::retrieval::ids::RecordId;
use crate::retrieval::params::Params;
use crate::retrieval::scope::parse_chain;
use crate::retrieval::semantic::SemanticRequest;
use crate::retrieval::vector_rows::vector_scope;
use crate::retrieval::{ContextRequest, Kind, RetrievalError, Scope};
use crate::worker::{VERSION, WorkerState};

type Q = Query<Vec<(String, String)>>;

const PATH_MAX: usize = 4_096;

pub fn api_error(e: RetrievalError) -> ApiError {
    e.into()
}

pub fn text(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// The context APIs answer inside memd's fence (issue 51): a host that reads them directly gets
/// the same "reference data, not instructions" frame the hooks add. memd's own hook and MCP server
/// fence what they print themselves (after their own caps) and ask with `fence=false`.
fn fenced_unless_asked(p: &Params, body: String) -> Result<String, ApiError> {
    Ok(match p.flag(&["fence"], true)? {
        true if !body.trim().is_empty() => crate::protocol::fence::fence(&body),
        _ => body,
    })
}

/// `GET /api/context/inject` (§4.1).
pub async fn context_inject(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let svc = app.services()?;
    let chain = parse_chain(p.get(&["projects", "project"])).ok_or_else(|| ApiError::bad_request("missing field projects"))?;
    let _colors = p.flag(&["colors"], false)?;
    let req = ContextRequest {
        chain,
        platform: p.platform(header_platform(&headers)).unwrap_or_else(|| "claude".into()),
        full: p.flag(&["full"], false)?,
        max_chars: p.int(&["maxChars"], 1, 100_000)?.map(|n| n as usize),
        memory_lines: {
            let s = svc.settings.get();
            crate::bridge::service::loaded_lines(&s.native, s.home.as_deref(), p.get(&["cwd"])).await
        },
    };
    if let Some(session) = p.get(&["sessionId"]) {
        tracing::debug!(session_id = %session, source = p.get(&["source"]).unwrap_or(""), "context requested");
    }
    let (cfg, mode) = (svc.settings.get().context.clone(), svc.mode.clone());
    // Work trees whose HEAD moved since their last check are checked first, within a budget.
    if let Some(f) = &svc.freshness {
        f.before_session_start(req.chain.clone()).await;
    }
    // The work state has its own section, taken from the context's cap (issue 39).
    let cap = req.max_chars.unwrap_or(cfg.max_chars);
    let primary = req.chain.last().cloned().unwrap_or_default();
    let branch = super::work_routes::branch_from(p.get(&["branch"]), p.get(&["cwd"]));
    let section = crate::work_state::service::section(&*svc.storage, &svc.settings.get().context, primary.clone(), branch, cap / 2).await;
    let room = section.as_ref().map_or(0, |s| crate::text::lines::utf16_len(s) + 2);
    let req = ContextRequest {
        max_chars: Some(cap.saturating_sub(room).max(1)),
        ..req
    };
    let out = svc.storage.context(req, cfg, mode, now_ms()).await?;
    record_shown(
        svc.storage.clone(),
        p.get(&["sessionId"]),
        &primary,
        Source::Index,
        out.observation_ids.clone(),
        now_ms(),
    );
    let body = match &section {
        Some(s) => format!("{}\n\n{s}", out.text),
        None => out.text,
    };
    let mut resp = text(fenced_unless_asked(&p, body)?);
    let h = resp.headers_mut();
    h.insert("x-memd-observations", out.observations.into());
    h.insert("x-memd-summaries", out.summaries.into());
    h.insert("x-memd-work-state", u32::from(section.is_some()).into());
    Ok(resp)
}

/// `POST /api/context/semantic` (§4.2): never 5xx; failures answer an empty context.
pub async fn context_semantic(
    State(app): State<Arc<WorkerState>>,
    Query(q): Q,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let b: Map<String, Value> = json_body(body).await?;
    let field = |names: &[&str]| -> Option<Value> {
        names
            .iter()
            .find_map(|n| b.get(*n).cloned())
            .or_else(|| p.get(names).map(|v| Value::from(v.to_string())))
    };
    let raw_q = match field(&["q", "query"]) {
        Some(Value::String(s)) => s,
        Some(_) => return Err(ApiError::bad_request("q must be a string")),
        None => return Err(ApiError::bad_request("missing field q")),
    };
    let svc = app.services()?;
    let empty = || Json(json!({"context": "", "count": 0}));
    let chain = field(&["projects", "project"]).and_then(|v| v.as_str().and_then(|s| parse_chain(Some(s))));
    let platform = field(&["platformSource", "platform_source"])
        .and_then(|v| v.as_str().map(|s| crate::pipeline::platform::normalize_platform_source(Some(s))))
        .or_else(|| p.platform(header_platform(&headers)));
    let limit = match field(&["limit"]) {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(5).clamp(1, 20) as usize,
        Some(Value::String(s)) => s.trim().parse::<i64>().unwrap_or(5).clamp(1, 20) as usize,
        _ => svc.settings.get().context.semantic_limit,
    };
    let cleaned = svc.ingest.pipeline.privacy.clean_text(&raw_q);
    if cleaned.private {
        return Ok(empty());
    }
    let req = SemanticRequest {
        q: cleaned.text,
        scope: Scope::new(chain, platform),
        limit,
        content_session_id: field(&["contentSessionId"]).and_then(|v| v.as_str().map(str::to_string)),
    };
    let scope = vector_scope(&[crate::retrieval::Kind::Observation], &req.scope, None, None);
    let long_enough = req.q.trim().chars().count() >= crate::retrieval::semantic::MIN_PROMPT_CHARS;
    let rows = match long_enough {
        true => svc.storage.vector_candidates(req.q.clone(), scope).await.rows().map(<[_]>::to_vec),
        false => None,
    };
    let floor = svc.settings.get().vectors.fusion.vector_floor;
    let own_fence = matches!(field(&["fence"]), Some(Value::Bool(false))) || p.get(&["fence"]) == Some("false");
    let (session, project) = (req.content_session_id.clone(), req.scope.primary().unwrap_or_default().to_string());
    match svc.storage.semantic_context(req, rows, floor).await {
        Ok((context, ids)) => {
            let count = ids.len();
            record_shown(svc.storage.clone(), session.as_deref(), &project, Source::Prompt, ids, now_ms());
            let context = if own_fence || context.trim().is_empty() {
                context
            } else {
                crate::protocol::fence::fence(&context)
            };
            Ok(Json(json!({"context": context, "count": count})))
        }
        Err(e) => {
            tracing::warn!(error = %e, "semantic context failed; answering empty");
            Ok(empty())
        }
    }
}

/// `GET /api/observations/by-file` (§4.6).
pub async fn by_file(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let paths: Vec<String> = p.all("path").into_iter().filter(|s| !s.trim().is_empty()).collect();
    if paths.is_empty() {
        return Err(ApiError::bad_request("missing field path"));
    }
    if paths.iter().any(|s| s.chars().count() > PATH_MAX) {
        return Err(ApiError::bad_request("path longer than 4096 characters"));
    }
    let svc = app.services()?;
    let req = FileContextRequest {
        paths,
        scope: Scope::new(parse_chain(p.get(&["projects", "project"])), p.platform(header_platform(&headers))),
        limit: p.int(&["limit"], 1, 100)?.unwrap_or(15) as usize,
        file_mtime_ms: p.int(&["fileMtimeMs"], i64::MIN, i64::MAX)?,
        content_session_id: p.get(&["contentSessionId"]).map(str::to_string),
        vectors: svc.vectors.as_ref().is_some_and(|v| v.usable()),
    };
    if p.get(&["format"]) == Some("context") {
        // Reading one of Claude Code's memory files: memd's newer evidence about its lines.
        let note = {
            let enabled = svc.settings.get().native.enabled;
            crate::bridge::service::read_note(&*svc.storage, enabled, std::path::Path::new(&req.paths[0]), req.scope.clone()).await
        };
        let mode = svc.mode.clone();
        let (session, project) = (req.content_session_id.clone(), req.scope.primary().unwrap_or_default().to_string());
        let (block, ids) = svc.storage.file_context(req, mode, now_ms()).await?;
        record_shown(svc.storage.clone(), session.as_deref(), &project, Source::File, ids, now_ms());
        return Ok(text(match note {
            Some(n) if block.trim().is_empty() => n,
            Some(n) => format!("{}\n\n{n}", block.trim_end()),
            None => block,
        }));
    }
    let rows = svc.storage.observations_by_file(req).await?;
    let rows: Vec<Value> = rows.iter().map(|o| o.to_json()).collect();
    Ok(Json(json!({"count": rows.len(), "observations": rows})).into_response())
}

/// `GET /api/read-gate?path=…&projects=…&bytes=…` (issue 39): `{"reason": <text>|null}` — the
/// outline of the newest full text memd stored of the file, null when it has none or no symbols.
pub async fn read_gate(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let paths: Vec<String> = p.all("path").into_iter().filter(|s| !s.trim().is_empty()).collect();
    if paths.is_empty() || paths.iter().any(|s| s.chars().count() > PATH_MAX) {
        return Err(ApiError::bad_request("path: one or more paths of at most 4096 characters"));
    }
    let bytes = p.int(&["bytes"], 0, i64::MAX)?.unwrap_or(0) as u64;
    let svc = app.services()?;
    let scope = Scope::new(parse_chain(p.get(&["projects", "project"])), p.platform(header_platform(&headers)));
    let shown = paths[0].clone();
    let reason = svc.storage.stored_text(paths, scope).await?.and_then(|(text, at)| {
        let symbols = crate::readgate::outline::outline(&text);
        let seen = crate::clock::iso(at);
        (!symbols.is_empty()).then(|| crate::readgate::reason(&shown, bytes, text.lines().count(), &seen, &symbols))
    });
    Ok(Json(json!({"reason": reason})))
}

/// `POST /api/observations/batch` (§4.5): rows with `kind`, out-of-scope and missing ids left out.
pub async fn batch(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap, body: Body) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let b: RecordsParams = json_body(body).await?;
    let chain = parse_chain(b.project.as_deref());
    let platform = b
        .platform_source
        .as_deref()
        .map(|s| crate::pipeline::platform::normalize_platform_source(Some(s)))
        .or_else(|| p.platform(header_platform(&headers)));
    let svc = app.services()?;
    let scope = Scope::new(chain, platform);
    let found = svc.storage.records(b.ids.0, scope).await?;
    let mut records: Vec<_> = found.into_values().collect();
    records.sort_by_key(|r| (r.at_ms(), r.kind(), r.id()));
    if b.order_by == RecordOrder::DateDesc {
        records.reverse();
    }
    records.truncate(b.limit.map_or(usize::MAX, |l| l.0));
    Ok(Json(Value::Array(records.iter().map(|r| r.to_json_with_kind()).collect())))
}

/// `GET /api/observation/:id` (§4.7).
pub async fn observation(
    State(app): State<Arc<WorkerState>>,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let p = Params(q);
    let id: i64 = id
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ApiError::bad_request("bad observation id"))?;
    let svc = app.services()?;
    let rid = RecordId {
        kind: Kind::Observation,
        id,
    };
    let scope = Scope::new(parse_chain(p.get(&["project", "projects"])), p.platform(header_platform(&headers)));
    let mut found = svc.storage.records(vec![rid], scope).await?;
    match found.remove(&rid) {
        Some(crate::retrieval::Record::Observation(o)) => Ok(Json(o.to_json())),
        _ => Err(ApiError::not_found(format!("Observation #{id} not found"))),
    }
}

/// `GET /api/projects` (§6.1).
pub async fn projects(
    State(app): State<Arc<WorkerState>>,
    Query(q): Q,
    headers: HeaderMap,
) -> Result<Json<crate::retrieval::browse_rows::ProjectList>, ApiError> {
    let platform = Params(q).platform(header_platform(&headers));
    let svc = app.services()?;
    Ok(Json(svc.storage.projects(platform).await?))
}

/// `GET /api/stats` (§6.2).
pub async fn stats(State(app): State<Arc<WorkerState>>) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let figures = svc.storage.database_figures().await?;
    let (path, size) = (svc.embedded.path().to_path_buf(), svc.embedded.file_size());
    Ok(Json(json!({
        "worker": {
            "version": VERSION, "uptime": app.started.elapsed().as_secs(),
            "activeSessions": svc.registry.sessions.len(),
            "sseClients": app.stream_clients.load(std::sync::atomic::Ordering::Relaxed),
            "port": app.port(),
        },
        "database": {
            "path": path.display().to_string(), "size": size, "observations": figures.observations,
            "sessions": figures.sessions, "summaries": figures.summaries, "prompts": figures.prompts,
            "firstObservationAt": figures.first_observation_at,
        },
    })))
}

/// `GET /api/related?entity=E&project=P&kinds=fixes,file&limit=20` (issue 41): the entity's
/// neighbours in the graph with their evidence.
pub async fn related(State(app): State<Arc<WorkerState>>, Query(q): Q) -> Result<Json<crate::retrieval::related::Related>, ApiError> {
    use crate::retrieval::related::{DEFAULT_LIMIT, MAX_LIMIT, RelatedRequest};
    let p = Params(q);
    let entity = p
        .get(&["entity"])
        .ok_or_else(|| ApiError::bad_request("missing field entity"))?
        .to_string();
    let req = RelatedRequest {
        entity,
        project: p.get(&["project"]).filter(|s| !s.is_empty() && *s != "*").map(String::from),
        kinds: p.list(&["kinds", "kind"]),
        limit: p.int(&["limit"], 1, MAX_LIMIT as i64)?.map_or(DEFAULT_LIMIT, |n| n as usize),
    };
    Ok(Json(app.services()?.storage.related(req).await?))
}
