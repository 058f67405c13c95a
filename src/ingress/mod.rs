//! HTTP ingress: axum on hyper, bound to 127.0.0.1 only (docs/spec/api.md).
//!
//! [`AppState`] is shared by every request: the lifecycle phase (503 until the store is open and
//! while shutting down), the token, and — once ready — the [`Services`] the routes use.

pub mod admin_routes;
pub mod checks;
pub mod error;
pub mod ingest_routes;
pub mod memory_routes;
pub mod ops_routes;
pub mod platform;
pub mod read_params;
pub mod retrieval_routes;
pub mod search_routes;
pub mod vector_routes;

use std::sync::atomic::{AtomicU8, AtomicU16, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use tokio_util::sync::CancellationToken;

use crate::actors::Handles;
use crate::actors::registry::Registry;
use crate::config::Settings;
use crate::ingest::Ingest;
use crate::modes::Mode;
use crate::store::Store;
use error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Initializing,
    Ready,
    ShuttingDown,
}

/// What the routes need once the worker is ready.
pub struct Services {
    pub store: Store,
    pub handles: Arc<Handles>,
    pub registry: Arc<Registry>,
    pub ingest: Arc<Ingest>,
    pub settings: Arc<Settings>,
    /// Semantic search; None when vectors are off (`MEMD_EMBEDDINGS=none`).
    pub vectors: Option<Arc<crate::vectors::runtime::VectorRuntime>>,
    /// The active mode (types, glyphs), loaded once at start.
    pub mode: Arc<Mode>,
}

pub struct AppState {
    phase: AtomicU8,
    pub token: String,
    pub port: AtomicU16,
    pub started: Instant,
    pub started_epoch: i64,
    pub services: OnceLock<Services>,
    pub shutdown: CancellationToken,
    /// Progress of a running claude-mem import (`GET /api/status` → `import`).
    pub import: Arc<crate::import::ImportProgress>,
    /// POST requests between arrival and answer; lets the store's group commit wait only when useful.
    pub arrivals: Arc<std::sync::atomic::AtomicUsize>,
    /// Spool ingestion counters (`GET /api/status` → `spool`).
    pub spool: Arc<crate::ingest::spool::SpoolStats>,
}

impl AppState {
    pub fn new(token: String, started_epoch: i64) -> Self {
        Self {
            phase: AtomicU8::new(0),
            token,
            port: AtomicU16::new(0),
            started: Instant::now(),
            started_epoch,
            services: OnceLock::new(),
            shutdown: CancellationToken::new(),
            import: Default::default(),
            arrivals: Arc::default(),
            spool: Arc::default(),
        }
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Initializing,
            1 => Phase::Ready,
            _ => Phase::ShuttingDown,
        }
    }

    pub fn set_phase(&self, p: Phase) {
        self.phase.store(
            match p {
                Phase::Initializing => 0,
                Phase::Ready => 1,
                Phase::ShuttingDown => 2,
            },
            Ordering::Release,
        );
    }

    pub fn services(&self) -> Result<&Services, ApiError> {
        match (self.phase(), self.services.get()) {
            (Phase::ShuttingDown, _) => Err(ApiError::shutting_down()),
            (_, Some(s)) => Ok(s),
            (_, None) => Err(ApiError::initializing()),
        }
    }
}

pub fn router(app: Arc<AppState>) -> Router {
    Router::new()
        .route("/api/sessions/init", post(ingest_routes::init))
        .route("/api/sessions/observations", post(ingest_routes::observations))
        .route("/api/sessions/summarize", post(ingest_routes::summarize))
        .route("/api/sessions/complete", post(ingest_routes::complete))
        .route("/api/memory/save", post(memory_routes::save))
        .route("/api/observation/{id}", delete(memory_routes::delete_observation))
        .route("/api/summary/{id}", delete(memory_routes::delete_summary))
        .route("/api/prompt/{id}", delete(memory_routes::delete_prompt))
        .route("/api/forget", post(memory_routes::forget))
        .route("/api/pending/retry", post(admin_routes::pending_retry))
        .route("/api/admin/import-claude-mem", post(admin_routes::import_claude_mem))
        .route("/api/admin/gc", post(admin_routes::gc))
        .route("/api/context/inject", get(retrieval_routes::context_inject))
        .route("/api/context/semantic", post(retrieval_routes::context_semantic))
        .route("/api/observations/by-file", get(retrieval_routes::by_file))
        .route("/api/observations/batch", post(retrieval_routes::batch))
        .route("/api/observation/{id}", get(retrieval_routes::observation))
        .route("/api/projects", get(retrieval_routes::projects))
        .route("/api/stats", get(retrieval_routes::stats))
        .route("/api/search", get(search_routes::search))
        .route("/api/timeline", get(search_routes::timeline))
        .route("/api/health", get(ops_routes::health))
        .route("/api/readiness", get(ops_routes::readiness))
        .route("/api/status", get(ops_routes::status))
        .route("/api/admin/shutdown", post(ops_routes::shutdown))
        .route("/api/vectors/reindex", post(vector_routes::reindex))
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
