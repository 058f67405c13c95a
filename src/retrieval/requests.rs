//! Search and timeline requests from query-string pairs (docs/spec/api.md §4.3–§4.4), and the text
//! of a timeline answer: shared by `GET /api/search`, `GET /api/timeline` and `memd mcp`'s answers
//! from the database when no worker runs.

use super::ids::parse_id;
use super::params::Params;
use super::scope::parse_chain;
use super::search_sql::{Filters, OriginFilter};
use super::timeline::{DEPTH_MAX, render_timeline};
use super::zone::parse_time;
use super::{Anchor, Kind, Order, RetrievalError, Scope, SearchRequest, TimelineRequest, TimelineResult, Zone};
use crate::modes::Mode;

fn invalid(detail: &str) -> RetrievalError {
    RetrievalError::Invalid(detail.to_string())
}

/// `provenance=tool_output,agent`: each must be a provenance (issue 36).
fn provenance_filter(p: &Params) -> Result<Vec<String>, RetrievalError> {
    let list = p.list(&["provenance"]);
    match list.iter().find(|v| crate::store::quarantine::Provenance::parse(v).is_none()) {
        Some(bad) => Err(RetrievalError::Invalid(format!(
            "provenance {bad:?} must be one of user, agent, observer, tool_output, import"
        ))),
        None => Ok(list),
    }
}

/// The search request of a query string; `header_platform` is the caller's platform header.
pub fn search_request(p: &Params, header_platform: Option<&str>) -> Result<SearchRequest, RetrievalError> {
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
        scope: Scope::new(parse_chain(p.get(&["project", "projects"])), p.platform(header_platform)),
        obs_types,
        concepts: p.list(&["concepts", "concept"]),
        files: p.list(&["files", "filePath"]),
        date_start: p.time(&["dateStart", "date_start", "date_from"], &zone, false)?,
        date_end: p.time(&["dateEnd", "date_end", "date_to"], &zone, true)?,
        provenance: provenance_filter(p)?,
        origin: OriginFilter::parse(p.get(&["origin"]).unwrap_or_default())?,
    };
    let has_filter = p.get(&["type"]).is_some()
        || filters != Filters::default()
        || p.get(&["project", "projects"]).is_some()
        || p.get(&["platformSource", "platform_source"]).is_some();
    if query.trim().is_empty() && !has_filter {
        return Err(invalid("missing search input"));
    }
    let order = match p.get(&["orderBy"]) {
        None => None,
        Some(o) => Some(Order::parse(o).ok_or_else(|| invalid("orderBy must be relevance, date_desc or date_asc"))?),
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

/// The timeline request of a query string (docs/spec/api.md §4.4).
pub fn timeline_request(p: &Params, header_platform: Option<&str>) -> Result<TimelineRequest, RetrievalError> {
    let anchor = match (p.get(&["anchor"]), p.get(&["query", "q"])) {
        (Some(a), None) => match parse_id(a) {
            Some(rid) => Anchor::Record(rid),
            None => Anchor::Time(parse_time(a, &Zone::Local, false).ok_or_else(|| invalid("anchor must be an id or an ISO-8601 time"))?),
        },
        (None, Some(query)) => Anchor::Query(query.to_string()),
        _ => return Err(invalid("exactly one of anchor and query is required")),
    };
    let depth = DEPTH_MAX as i64;
    Ok(TimelineRequest {
        anchor,
        depth_before: p.int(&["depth_before", "depthBefore"], 0, depth)?.unwrap_or(5) as usize,
        depth_after: p.int(&["depth_after", "depthAfter"], 0, depth)?.unwrap_or(5) as usize,
        projects: parse_chain(p.get(&["project", "projects"])),
        platform: p.platform(header_platform),
    })
}

/// The text answer of a timeline (`None`: nothing matched the query anchor).
pub fn timeline_text(req: &TimelineRequest, res: Option<&TimelineResult>, mode: &Mode) -> String {
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
