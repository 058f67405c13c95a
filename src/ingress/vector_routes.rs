//! Vector routes: `POST /api/vectors/reindex` (drop the embedded vectors and re-embed everything;
//! progress in `GET /api/status` → `vectors.backfill`).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::AppState;
use super::error::ApiError;
use crate::actors::vector_sync::VectorSyncMsg;

pub async fn reindex(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let svc = app.services()?;
    let Some(actor) = svc.handles.vector_sync() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "vectors_disabled",
            "vectors are off (MEMD_EMBEDDINGS=none)",
        ));
    };
    match ractor::call_t!(actor, VectorSyncMsg::Reindex, 60_000) {
        Ok(Ok(())) => Ok(Json(json!({"success": true}))),
        Ok(Err(e)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "reindex_failed", e)),
        Err(e) => Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "reindex_failed", e.to_string())),
    }
}
