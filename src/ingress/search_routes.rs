//! `GET /api/search` and `GET /api/timeline` (docs/spec/api.md §4.3–§4.4): MCP text by default,
//! `format=json` on request. A malformed query is never an error: it finds what its terms find.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::platform::header_platform;
use super::retrieval_routes::{api_error, text};
use crate::retrieval::Zone;
use crate::retrieval::params::Params;
use crate::retrieval::requests::{search_request, timeline_request, timeline_text};
use crate::retrieval::search::KeywordPhase;
use crate::retrieval::search_render::{render_index, render_json};
use crate::retrieval::timeline::timeline_json;
use crate::retrieval::vector_rows::{VectorRows, vector_scope};
use crate::worker::WorkerState;

type Q = Query<Vec<(String, String)>>;

/// `GET /api/search`.
pub async fn search(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let req = search_request(&p, header_platform(&headers)).map_err(api_error)?;
    let svc = app.services()?;
    let json = p.get(&["format"]) == Some("json");
    let mode = svc.mode.clone();
    let scope = vector_scope(
        &req.effective_kinds(),
        &req.filters.scope,
        req.filters.date_start,
        req.filters.date_end,
    );
    // `mode=keyword|vector|hybrid` (default hybrid) picks the halves that run (the benchmark
    // compares them); the keyword half runs while the query is embedded and the vector store asked.
    let mode_param = p.get(&["mode"]).map(str::trim).unwrap_or("hybrid");
    let (use_keyword, use_vectors) = match mode_param {
        "hybrid" | "" => (true, true),
        "keyword" => (true, false),
        "vector" => (false, true),
        other => {
            return Err(ApiError::bad_request(format!(
                "mode must be keyword, vector or hybrid, not {other:?}"
            )));
        }
    };
    let r = req.clone();
    let (vectors, phase) = tokio::join!(
        async {
            match use_vectors {
                true => svc.storage.vector_candidates(req.query.clone(), scope).await,
                false => VectorRows::Off,
            }
        },
        async {
            match use_keyword {
                true => svc.storage.keyword_search(r).await,
                false => Ok(KeywordPhase::default()),
            }
        }
    );
    let rows = vectors.rows().map(<[_]>::to_vec);
    let fusion = svc.settings.get().vectors.fusion;
    let res = svc.storage.fuse(req.clone(), phase?, rows, fusion).await?;
    if json {
        let mut v = render_json(&req, &res);
        if vectors.failure().is_some() {
            v["degraded"] = serde_json::json!(["vectors"]);
        }
        return Ok(Json(v).into_response());
    }
    let mut out = render_index(&req, &res, &mode, &Zone::Local);
    if let Some(reason) = vectors.failure() {
        out.push_str(&format!("\n(semantic ranking unavailable: {reason})"));
    }
    Ok(text(out))
}

/// `GET /api/timeline`.
pub async fn timeline(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let req = timeline_request(&p, header_platform(&headers)).map_err(api_error)?;
    let svc = app.services()?;
    let json = p.get(&["format"]) == Some("json");
    let mode = svc.mode.clone();
    let res = svc.storage.timeline(req.clone()).await?;
    if json {
        let v = match &res {
            Some(res) => timeline_json(res),
            None => serde_json::json!({"anchor": null, "items": []}),
        };
        return Ok(Json(v).into_response());
    }
    Ok(text(timeline_text(&req, res.as_ref(), &mode)))
}
