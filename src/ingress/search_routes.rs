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
use crate::protocol::params::from_pairs;
use crate::protocol::search::{Answer, SearchParams, TimelineParams};
use crate::retrieval::Zone;
use crate::retrieval::requests::{search_request, timeline_request, timeline_text};
use crate::retrieval::search_render::{render_index, render_json};
use crate::retrieval::timeline::timeline_json;
use crate::worker::WorkerState;
use crate::worker::search::{Halves, Searched, search as search_use_case};

type Q = Query<Vec<(String, String)>>;

/// The request and how to answer it, from the query string (a bad value: 400 naming it).
fn read<P: serde::de::DeserializeOwned>(q: &[(String, String)]) -> Result<(P, Answer), ApiError> {
    let bad = |e: crate::protocol::params::Invalid| ApiError::bad_request(e.0);
    Ok((from_pairs(q).map_err(bad)?, from_pairs(q).map_err(bad)?))
}

/// `GET /api/search`.
pub async fn search(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let (p, answer) = read::<SearchParams>(&q)?;
    let req = search_request(&p, header_platform(&headers)).map_err(api_error)?;
    let svc = app.services()?;
    let json = answer.format.as_deref() == Some("json");
    let mode = svc.mode.clone();
    // `mode=keyword|vector|hybrid` (default hybrid) picks the halves that run (the benchmark
    // compares them).
    let mode_param = answer.mode.as_deref().map(str::trim).unwrap_or("hybrid");
    let halves = Halves::parse(mode_param)
        .ok_or_else(|| ApiError::bad_request(format!("mode must be keyword, vector or hybrid, not {mode_param:?}")))?;
    let Searched {
        result: res,
        vectors_failure,
    } = search_use_case(svc, &req, halves).await?;
    if json {
        let mut v = render_json(&req, &res);
        if vectors_failure.is_some() {
            v["degraded"] = serde_json::json!(["vectors"]);
        }
        return Ok(Json(v).into_response());
    }
    let mut out = render_index(&req, &res, &mode, &Zone::Local);
    if let Some(reason) = vectors_failure {
        out.push_str(&format!("\n(semantic ranking unavailable: {reason})"));
    }
    Ok(text(out))
}

/// `GET /api/timeline`.
pub async fn timeline(State(app): State<Arc<WorkerState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let (p, answer) = read::<TimelineParams>(&q)?;
    let req = timeline_request(&p, header_platform(&headers)).map_err(api_error)?;
    let svc = app.services()?;
    let json = answer.format.as_deref() == Some("json");
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
