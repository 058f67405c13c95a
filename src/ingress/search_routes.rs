//! `GET /api/search` and `GET /api/timeline` (docs/spec/api.md §4.3–§4.4): MCP text by default,
//! `format=json` on request. A malformed query is never an error: it finds what its terms find.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;
use super::read_params::Params;
use super::retrieval_routes::{read, text};
use crate::retrieval::ids::parse_id;
use crate::retrieval::scope::parse_chain;
use crate::retrieval::search::{finish, keyword_phase};
use crate::retrieval::search_render::{render_index, render_json};
use crate::retrieval::search_sql::Filters;
use crate::retrieval::timeline::{DEPTH_MAX, render_timeline, timeline_json};
use crate::retrieval::zone::parse_time;
use crate::retrieval::{Anchor, Kind, Order, Scope, SearchRequest, TimelineRequest, Zone, timeline as run_timeline};
use crate::vectors::hybrid::{nearest_rows, vector_scope};

type Q = Query<Vec<(String, String)>>;

pub(crate) fn search_request(p: &Params, headers: &HeaderMap) -> Result<SearchRequest, ApiError> {
    let zone = Zone::Local;
    let query = p.get(&["query", "q"]).unwrap_or_default().to_string();
    let mut obs_types = p.list(&["obs_type"]);
    let kinds = match p.get(&["type"]).map(str::trim) {
        None => vec![Kind::Observation, Kind::Summary, Kind::Prompt],
        Some("observations") => vec![Kind::Observation],
        Some("sessions") => vec![Kind::Summary],
        Some("prompts") => vec![Kind::Prompt],
        Some(other) => {
            obs_types.extend(other.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from));
            vec![Kind::Observation]
        }
    };
    let filters = Filters {
        scope: Scope::new(parse_chain(p.get(&["project", "projects"])), p.platform(headers)),
        obs_types,
        concepts: p.list(&["concepts", "concept"]),
        files: p.list(&["files", "filePath"]),
        date_start: p.time(&["dateStart", "date_start", "date_from"], &zone, false)?,
        date_end: p.time(&["dateEnd", "date_end", "date_to"], &zone, true)?,
    };
    let has_filter = p.get(&["type"]).is_some()
        || filters != Filters::default()
        || p.get(&["project", "projects"]).is_some()
        || p.get(&["platformSource", "platform_source"]).is_some();
    if query.trim().is_empty() && !has_filter {
        return Err(ApiError::bad_request("missing search input"));
    }
    let order = match p.get(&["orderBy"]) {
        None => None,
        Some(o) => Some(Order::parse(o).ok_or_else(|| ApiError::bad_request("orderBy must be relevance, date_desc or date_asc"))?),
    };
    Ok(SearchRequest {
        query,
        kinds,
        filters,
        limit: p.int(&["limit"], 1, 100)?.unwrap_or(20) as usize,
        offset: p.int(&["offset"], 0, i64::from(u32::MAX))?.unwrap_or(0) as usize,
        order,
    })
}

/// `GET /api/search`.
pub async fn search(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let req = search_request(&p, &headers)?;
    let svc = app.services()?;
    let json = p.get(&["format"]) == Some("json");
    let mode = svc.mode.clone();
    let scope = vector_scope(
        &req.effective_kinds(),
        &req.filters.scope,
        req.filters.date_start,
        req.filters.date_end,
    );
    // The keyword half runs while the query is embedded and the vector store asked.
    let r = req.clone();
    let (vectors, phase) = tokio::join!(
        nearest_rows(svc.vectors.as_ref(), &svc.store, &req.query, scope),
        read(svc, move |c| keyword_phase(c, &r))
    );
    let (phase, r) = (phase?, req.clone());
    let rows = vectors.rows().map(<[_]>::to_vec);
    let res = read(svc, move |c| finish(c, &r, phase, rows.as_deref())).await?;
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

/// The timeline request of a query string (docs/spec/api.md §4.4).
pub(crate) fn timeline_request(p: &Params, headers: &HeaderMap) -> Result<TimelineRequest, ApiError> {
    let anchor = match (p.get(&["anchor"]), p.get(&["query", "q"])) {
        (Some(a), None) => match parse_id(a) {
            Some(rid) => Anchor::Record(rid),
            None => Anchor::Time(
                parse_time(a, &Zone::Local, false).ok_or_else(|| ApiError::bad_request("anchor must be an id or an ISO-8601 time"))?,
            ),
        },
        (None, Some(query)) => Anchor::Query(query.to_string()),
        _ => return Err(ApiError::bad_request("exactly one of anchor and query is required")),
    };
    let depth = DEPTH_MAX as i64;
    Ok(TimelineRequest {
        anchor,
        depth_before: p.int(&["depth_before", "depthBefore"], 0, depth)?.unwrap_or(5) as usize,
        depth_after: p.int(&["depth_after", "depthAfter"], 0, depth)?.unwrap_or(5) as usize,
        projects: parse_chain(p.get(&["project", "projects"])),
        platform: p.platform(headers),
    })
}

/// The text answer of a timeline (`None`: nothing matched the query anchor).
pub(crate) fn timeline_text(req: &TimelineRequest, res: Option<&crate::retrieval::TimelineResult>, mode: &crate::modes::Mode) -> String {
    match res {
        Some(res) => render_timeline(res, mode, &Zone::Local),
        None => {
            let query = match &req.anchor {
                Anchor::Query(q) => q.as_str(),
                _ => "",
            };
            format!("No results found matching \"{query}\"")
        }
    }
}

/// `GET /api/timeline`.
pub async fn timeline(State(app): State<Arc<AppState>>, Query(q): Q, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params(q);
    let req = timeline_request(&p, &headers)?;
    let svc = app.services()?;
    let json = p.get(&["format"]) == Some("json");
    let mode = svc.mode.clone();
    let r = req.clone();
    let res = read(svc, move |c| run_timeline(c, &r)).await?;
    if json {
        let v = match &res {
            Some(res) => timeline_json(res),
            None => serde_json::json!({"anchor": null, "items": []}),
        };
        return Ok(Json(v).into_response());
    }
    Ok(text(timeline_text(&req, res.as_ref(), &mode)))
}
