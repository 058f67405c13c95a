//! The search and timeline requests of their one wire type (`protocol::search`, docs/spec/api.md
//! §4.3–§4.4), and the text of a timeline answer: shared by `GET /api/search`, `GET /api/timeline`
//! and `memd mcp`'s answers from the database when no worker runs.

use super::ids::parse_id;
use super::scope::parse_chain;
use super::search_sql::{Filters, OriginFilter};
use super::timeline::render_timeline;
use super::zone::parse_time;
use super::{Anchor, Kind, Order, RetrievalError, Scope, SearchRequest, TimelineRequest, TimelineResult, Zone};
use crate::modes::Mode;
use crate::pipeline::platform::normalize_platform_source;
use crate::protocol::params::{Moment, Words, given, items};
use crate::protocol::search::{OrderBy, SearchParams, TimelineParams};

fn invalid(detail: &str) -> RetrievalError {
    RetrievalError::Invalid(detail.to_string())
}

/// `provenance=tool_output,agent`: each must be a provenance (issue 36).
fn provenance_filter(w: &Option<Words>) -> Result<Vec<String>, RetrievalError> {
    let list = items(w);
    match list.iter().find(|v| crate::store::quarantine::Provenance::parse(v).is_none()) {
        Some(bad) => Err(RetrievalError::Invalid(format!(
            "provenance {bad:?} must be one of user, agent, observer, tool_output, import"
        ))),
        None => Ok(list),
    }
}

/// A time bound (ISO date or date-time, or epoch ms), else 400 naming `name`.
fn time(m: &Option<Moment>, name: &str, zone: &Zone, end_of_day: bool) -> Result<Option<i64>, RetrievalError> {
    match m.as_ref().map(Moment::text).filter(|t| !t.trim().is_empty()) {
        None => Ok(None),
        Some(t) => parse_time(&t, zone, end_of_day)
            .map(Some)
            .ok_or_else(|| RetrievalError::Invalid(format!("{name} is not an ISO date, date-time or epoch ms"))),
    }
}

/// `platformSource` when one is given (the request's, else the caller's header value),
/// normalised; None = no filter.
fn platform(w: &Option<Words>, header: Option<&str>) -> Option<String> {
    given(w)
        .or(header.filter(|v| !v.trim().is_empty()))
        .map(|raw| normalize_platform_source(Some(raw)))
}

/// The search request of `p`; `header_platform` is the caller's platform header.
pub fn search_request(p: &SearchParams, header_platform: Option<&str>) -> Result<SearchRequest, RetrievalError> {
    let zone = Zone::Local;
    let query = p.query.clone().unwrap_or_default();
    let mut obs_types = items(&p.obs_type);
    let kind = given(&p.kind).map(str::trim);
    let kinds = match kind {
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
        scope: Scope::new(parse_chain(given(&p.project)), platform(&p.platform_source, header_platform)),
        obs_types,
        concepts: items(&p.concepts),
        files: items(&p.files),
        date_start: time(&p.date_start, "dateStart", &zone, false)?,
        date_end: time(&p.date_end, "dateEnd", &zone, true)?,
        provenance: provenance_filter(&p.provenance)?,
        origin: OriginFilter::parse(p.origin.as_deref().unwrap_or_default())?,
    };
    let has_filter = kind.is_some() || filters != Filters::default() || given(&p.project).is_some() || given(&p.platform_source).is_some();
    if query.trim().is_empty() && !has_filter {
        return Err(invalid("missing search input"));
    }
    Ok(SearchRequest {
        query,
        kinds,
        filters,
        limit: p.limit.map_or(20, |l| l.0) as usize,
        offset: p.offset.map_or(0, |o| o.0) as usize,
        order: p.order_by.map(|o| match o {
            OrderBy::Relevance => Order::Relevance,
            OrderBy::DateDesc => Order::DateDesc,
            OrderBy::DateAsc => Order::DateAsc,
        }),
    })
}

/// The timeline request of `p` (docs/spec/api.md §4.4).
pub fn timeline_request(p: &TimelineParams, header_platform: Option<&str>) -> Result<TimelineRequest, RetrievalError> {
    let anchor = p.anchor.as_ref().map(Moment::text).filter(|a| !a.trim().is_empty());
    let query = p.query.as_deref().filter(|q| !q.trim().is_empty());
    let anchor = match (anchor, query) {
        (Some(a), None) => match parse_id(&a) {
            Some(rid) => Anchor::Record(rid),
            None => Anchor::Time(parse_time(&a, &Zone::Local, false).ok_or_else(|| invalid("anchor must be an id or an ISO-8601 time"))?),
        },
        (None, Some(query)) => Anchor::Query(query.to_string()),
        _ => return Err(invalid("exactly one of anchor and query is required")),
    };
    Ok(TimelineRequest {
        anchor,
        depth_before: p.depth_before.map_or(5, |d| d.0) as usize,
        depth_after: p.depth_after.map_or(5, |d| d.0) as usize,
        projects: parse_chain(given(&p.project)),
        platform: platform(&p.platform_source, header_platform),
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
