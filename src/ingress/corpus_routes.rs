//! Corpus routes (issue 41, `docs/spec/corpus.md`), claude-mem's contract: `POST /api/corpus`
//! builds, `GET /api/corpus` lists, `GET|DELETE /api/corpus/:name`, and `POST
//! /api/corpus/:name/{rebuild,prime,reprime,query}`. Bodies are read here; the use-cases are
//! [`crate::worker::corpus`].

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::checks::json_body;
use super::error::ApiError;
use crate::actors::provider_conversation::Refused;
use crate::clock::now_ms;
use crate::knowledge::KnowledgeError;
use crate::knowledge::corpus::build_request;
use crate::worker::WorkerState;
use crate::worker::corpus::{self, CorpusError};

impl From<CorpusError> for ApiError {
    fn from(e: CorpusError) -> Self {
        let e = match e {
            CorpusError::Search(r) => return r.into(),
            other => other,
        };
        let detail = e.to_string();
        let (status, code) = match &e {
            CorpusError::Knowledge(KnowledgeError::BadRequest(_)) => (StatusCode::BAD_REQUEST, "bad_request"),
            CorpusError::Knowledge(KnowledgeError::NotFound { .. }) => (StatusCode::NOT_FOUND, "not_found"),
            CorpusError::Knowledge(KnowledgeError::Files(_)) => (StatusCode::INTERNAL_SERVER_ERROR, "corpus_files"),
            CorpusError::Search(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            CorpusError::Refused(Refused::NoModel) => (StatusCode::CONFLICT, "no_model"),
            CorpusError::Refused(Refused::OverBudget { .. }) => (StatusCode::TOO_MANY_REQUESTS, "over_budget"),
            CorpusError::Refused(Refused::Unavailable { .. }) | CorpusError::NoProvider => {
                (StatusCode::SERVICE_UNAVAILABLE, "provider_unavailable")
            }
            CorpusError::Refused(Refused::Failed(_)) | CorpusError::NoSession => (StatusCode::BAD_GATEWAY, "provider_failed"),
        };
        ApiError::new(status, code, detail)
    }
}

type Name = Path<String>;

/// `POST /api/corpus`: the metadata of the corpus built.
pub async fn build(State(app): State<Arc<WorkerState>>, body: Body) -> Result<Json<Value>, ApiError> {
    let body: Value = json_body(body).await?;
    let req = build_request(&body).map_err(CorpusError::from)?;
    let c = corpus::build(app.services()?, req, now_ms()).await?;
    Ok(Json(c.metadata()))
}

/// `GET /api/corpus`: every corpus (`corpora`), and claude-mem's MCP-shaped `content` of it.
pub async fn list(State(app): State<Arc<WorkerState>>) -> Result<Json<Value>, ApiError> {
    let listed = corpus::files(app.services()?).list();
    let text = serde_json::to_string_pretty(&listed).unwrap_or_default();
    Ok(Json(json!({"corpora": listed, "content": [{"type": "text", "text": text}]})))
}

/// `GET /api/corpus/:name`: the metadata; `?observations=true` adds them.
pub async fn show(
    State(app): State<Arc<WorkerState>>,
    Path(name): Name,
    axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let c = corpus::files(app.services()?).get(&name).map_err(CorpusError::from)?;
    match q.get("observations").map(String::as_str) {
        Some("true" | "1") => Ok(Json(serde_json::to_value(&c).unwrap_or_default())),
        _ => Ok(Json(c.metadata())),
    }
}

pub async fn delete(State(app): State<Arc<WorkerState>>, Path(name): Name) -> Result<Json<Value>, ApiError> {
    let files = corpus::files(app.services()?);
    match files.delete(&name).map_err(CorpusError::from)? {
        true => Ok(Json(json!({"success": true}))),
        false => {
            let available = files.list().into_iter().map(|l| l.name).collect();
            Err(CorpusError::from(KnowledgeError::NotFound { name, available }).into())
        }
    }
}

pub async fn rebuild(State(app): State<Arc<WorkerState>>, Path(name): Name) -> Result<Json<Value>, ApiError> {
    let c = corpus::rebuild(app.services()?, &name, now_ms()).await?;
    Ok(Json(c.metadata()))
}

/// `POST /api/corpus/:name/prime` (and `reprime`: the same, a fresh session either way).
pub async fn prime(State(app): State<Arc<WorkerState>>, Path(name): Name) -> Result<Json<Value>, ApiError> {
    let (c, reply) = corpus::prime(app.services()?, &name).await?;
    Ok(Json(json!({
        "session_id": c.session_id, "name": c.name, "provider": c.session_provider,
        "acknowledgement": reply.text, "usage": corpus::Usage::from(&reply),
    })))
}

/// `POST /api/corpus/:name/query` with `{question}`.
pub async fn query(State(app): State<Arc<WorkerState>>, Path(name): Name, body: Body) -> Result<Json<Value>, ApiError> {
    let body: Value = json_body(body).await?;
    let question = match &body["question"] {
        Value::String(q) if !q.trim().is_empty() => q.clone(),
        _ => return Err(ApiError::bad_request("question is required (a non-empty string)")),
    };
    let answer = corpus::query(app.services()?, &name, &question).await?;
    Ok(Json(serde_json::to_value(answer).unwrap_or_default()))
}
