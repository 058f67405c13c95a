//! HTTP ingress: axum on hyper, bound to 127.0.0.1 only (docs/spec/api.md, docs/spec/viewer.md). A leaf: the routes
//! parse a request, call the worker's use-cases ([`crate::worker`], [`crate::ingest`],
//! [`crate::retrieval`]) and map their typed outcomes and errors to HTTP.

pub mod access;
pub mod action_routes;
pub mod admin_routes;
pub mod browse_routes;
pub mod checks;
pub mod connections;
pub mod corpus_routes;
pub mod error;
pub mod export_routes;
pub mod freshness_routes;
pub mod ingest_routes;
pub mod memory_routes;
pub mod ops_routes;
pub mod platform;
pub mod retrieval_routes;
pub mod search_routes;
pub mod stream_routes;
pub mod team_routes;
pub mod viewer_routes;
pub mod work_routes;

use crate::protocol::paths;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};

use crate::protocol::IngestRoute;
use crate::worker::WorkerState;
use error::ApiError;

pub fn router(app: Arc<WorkerState>) -> Router {
    Router::new()
        .route(IngestRoute::Init.path(), post(ingest_routes::init))
        .route(IngestRoute::Observations.path(), post(ingest_routes::observations))
        .route(IngestRoute::Summarize.path(), post(ingest_routes::summarize))
        .route(IngestRoute::Complete.path(), post(ingest_routes::complete))
        .route(paths::MEMORY_SAVE, post(memory_routes::save))
        .route(
            paths::OBSERVATION,
            delete(memory_routes::delete_observation).patch(browse_routes::edit),
        )
        .route(paths::SUMMARY, delete(memory_routes::delete_summary))
        .route(paths::PROMPT, delete(memory_routes::delete_prompt))
        .route(paths::FORGET, post(memory_routes::forget))
        .route(paths::OBSERVATION_RELEASE, post(memory_routes::release))
        .route(paths::QUARANTINE, get(memory_routes::quarantine))
        .route(paths::PENDING_RETRY, post(admin_routes::pending_retry))
        .route(paths::IMPORT_CLAUDE_MEM, post(admin_routes::import_claude_mem))
        .route(paths::GC, post(admin_routes::gc))
        .route(paths::CONSOLIDATE, post(freshness_routes::consolidate))
        .route(paths::CONSOLIDATION_LOG, get(freshness_routes::consolidation_log))
        .route(paths::CONTRADICTIONS, get(freshness_routes::contradictions))
        .route(paths::CONTRADICTION_RESOLVE, post(freshness_routes::resolve))
        .route(paths::REDACT_RESCAN, post(admin_routes::redact_rescan))
        .route(paths::FOLDERS, post(export_routes::folders))
        .route(paths::EXPORT, get(export_routes::export))
        .route(paths::IMPORT_OBSERVATIONS, post(export_routes::import))
        .route(paths::IMPORT_LINKS, post(export_routes::links))
        .route(paths::WORK_STATE, get(work_routes::read).post(work_routes::write))
        .route(paths::CONTEXT_INJECT, get(retrieval_routes::context_inject))
        .route(paths::CONTEXT_SEMANTIC, post(retrieval_routes::context_semantic))
        .route(paths::OBSERVATIONS_BY_FILE, get(retrieval_routes::by_file))
        .route(paths::READ_GATE, get(retrieval_routes::read_gate))
        .route(paths::ACTION_WARNING, get(action_routes::action_warning))
        .route(paths::OBSERVATIONS_BATCH, post(retrieval_routes::batch))
        .route(paths::OBSERVATION, get(retrieval_routes::observation))
        .route(paths::OBSERVATIONS, get(browse_routes::observations))
        .route(paths::SESSIONS, get(browse_routes::sessions))
        .route(paths::SESSION, get(browse_routes::session))
        .route(paths::TOOL_USES, get(browse_routes::tool_uses))
        .route(paths::USAGE, get(browse_routes::usage))
        .route(paths::CHARTS, get(browse_routes::charts))
        .route(paths::RELATED, get(retrieval_routes::related))
        .route(paths::TEAM, get(team_routes::status))
        .route(paths::TEAM_SYNC, post(team_routes::sync))
        .route(paths::CORPORA, get(corpus_routes::list).post(corpus_routes::build))
        .route(paths::CORPUS, get(corpus_routes::show).delete(corpus_routes::delete))
        .route(paths::CORPUS_REBUILD, post(corpus_routes::rebuild))
        .route(paths::CORPUS_PRIME, post(corpus_routes::prime))
        .route(paths::CORPUS_REPRIME, post(corpus_routes::prime))
        .route(paths::CORPUS_QUERY, post(corpus_routes::query))
        .route(paths::STREAM, get(stream_routes::stream))
        .route(paths::VIEWER_INDEX, get(viewer_routes::index))
        .route(paths::VIEWER_APP_JS, get(viewer_routes::app_js))
        .route(paths::VIEWER_APP_CSS, get(viewer_routes::app_css))
        .route(paths::VIEWER_LOGIN, get(viewer_routes::login))
        .route(paths::VIEWER_LOGOUT, post(viewer_routes::logout))
        .route(paths::VIEWER_CODE, post(viewer_routes::code))
        .route(paths::PROJECTS, get(retrieval_routes::projects))
        .route(paths::STATS, get(retrieval_routes::stats))
        .route(paths::SEARCH, get(search_routes::search))
        .route(paths::TIMELINE, get(search_routes::timeline))
        .route(paths::HEALTH, get(ops_routes::health))
        .route(paths::READINESS, get(ops_routes::readiness))
        .route(paths::STATUS, get(ops_routes::status))
        .route(paths::SHUTDOWN, post(ops_routes::shutdown))
        .route(paths::VECTORS_REINDEX, post(admin_routes::reindex))
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this route",
            )
        })
        .layer(axum::middleware::from_fn_with_state(app.clone(), checks::guard))
        .with_state(app)
}
#[cfg(test)]
mod tests;
