//! HTTP ingress: axum on hyper, bound to 127.0.0.1 only (docs/spec/api.md, docs/spec/viewer.md). A leaf: the routes
//! parse a request, call the worker's use-cases ([`crate::worker`], [`crate::ingest`],
//! [`crate::retrieval`]) and map their typed outcomes and errors to HTTP.

pub mod access;
pub mod admin_routes;
pub mod browse_routes;
pub mod checks;
pub mod connections;
pub mod error;
pub mod ingest_routes;
pub mod memory_routes;
pub mod ops_routes;
pub mod platform;
pub mod retrieval_routes;
pub mod search_routes;
pub mod stream_routes;
pub mod viewer_routes;

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
        .route("/api/memory/save", post(memory_routes::save))
        .route(
            "/api/observation/{id}",
            delete(memory_routes::delete_observation).patch(browse_routes::edit),
        )
        .route("/api/summary/{id}", delete(memory_routes::delete_summary))
        .route("/api/prompt/{id}", delete(memory_routes::delete_prompt))
        .route("/api/forget", post(memory_routes::forget))
        .route("/api/pending/retry", post(admin_routes::pending_retry))
        .route("/api/admin/import-claude-mem", post(admin_routes::import_claude_mem))
        .route("/api/admin/gc", post(admin_routes::gc))
        .route("/api/admin/redact-rescan", post(admin_routes::redact_rescan))
        .route("/api/context/inject", get(retrieval_routes::context_inject))
        .route("/api/context/semantic", post(retrieval_routes::context_semantic))
        .route("/api/observations/by-file", get(retrieval_routes::by_file))
        .route("/api/observations/batch", post(retrieval_routes::batch))
        .route("/api/observation/{id}", get(retrieval_routes::observation))
        .route("/api/observations", get(browse_routes::observations))
        .route("/api/sessions", get(browse_routes::sessions))
        .route("/api/session/{id}", get(browse_routes::session))
        .route("/api/tool-uses", get(browse_routes::tool_uses))
        .route("/api/usage", get(browse_routes::usage))
        .route("/stream", get(stream_routes::stream))
        .route("/", get(viewer_routes::index))
        .route("/viewer/app.js", get(viewer_routes::app_js))
        .route("/viewer/app.css", get(viewer_routes::app_css))
        .route("/viewer/login", get(viewer_routes::login))
        .route("/viewer/logout", post(viewer_routes::logout))
        .route("/api/viewer/code", post(viewer_routes::code))
        .route("/api/projects", get(retrieval_routes::projects))
        .route("/api/stats", get(retrieval_routes::stats))
        .route("/api/search", get(search_routes::search))
        .route("/api/timeline", get(search_routes::timeline))
        .route("/api/health", get(ops_routes::health))
        .route("/api/readiness", get(ops_routes::readiness))
        .route("/api/status", get(ops_routes::status))
        .route("/api/admin/shutdown", post(ops_routes::shutdown))
        .route("/api/vectors/reindex", post(admin_routes::reindex))
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
