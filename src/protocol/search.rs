//! The one request type of each read call that takes filters — search and timeline
//! (docs/spec/api.md §4.3–§4.4, docs/spec/retrieval.md §7). The MCP tool parses its arguments into
//! it (and its input schema comes from it), `memd search`/`memd timeline` build it, it travels as
//! query-string pairs ([`super::params::to_pairs`]) and `GET /api/search` reads it back with the
//! same serde rules ([`super::params::from_pairs`]); the offline path hands it straight to the
//! database. A new filter is one field here and its use in the request builder
//! (`retrieval/requests.rs`). Aliases keep the names older clients send.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::params::{Bounded, Moment, Words};

/// The most rows a timeline shows on each side of its anchor.
pub const DEPTH_MAX: i64 = 20;

/// The order of search results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderBy {
    Relevance,
    DateDesc,
    DateAsc,
}

impl OrderBy {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderBy::Relevance => "relevance",
            OrderBy::DateDesc => "date_desc",
            OrderBy::DateAsc => "date_asc",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [OrderBy::Relevance, OrderBy::DateDesc, OrderBy::DateAsc]
            .into_iter()
            .find(|o| o.as_str() == s.trim())
    }
}

/// `GET /api/search` and the `search` tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SearchParams {
    /// words, "phrases", prefix*; empty = newest first
    #[serde(alias = "q", skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// observations | sessions | prompts, or an observation type
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<Words>,
    /// observation types (any of)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obs_type: Option<Words>,
    /// concepts (any of)
    #[serde(alias = "concept", skip_serializing_if = "Option::is_none")]
    pub concepts: Option<Words>,
    /// file path substrings (any of)
    #[serde(alias = "filePath", skip_serializing_if = "Option::is_none")]
    pub files: Option<Words>,
    /// where items came from (any of): user, agent, observer, tool_output, import
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Words>,
    /// mine (this machine's) | team (pulled from the team server) | all (default)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// project or chain; default: this project; * = all
    #[serde(alias = "projects", skip_serializing_if = "Option::is_none")]
    pub project: Option<Words>,
    #[serde(rename = "platformSource", alias = "platform_source", skip_serializing_if = "Option::is_none")]
    pub platform_source: Option<Words>,
    #[serde(
        rename = "dateStart",
        alias = "date_start",
        alias = "date_from",
        skip_serializing_if = "Option::is_none"
    )]
    pub date_start: Option<Moment>,
    #[serde(rename = "dateEnd", alias = "date_end", alias = "date_to", skip_serializing_if = "Option::is_none")]
    pub date_end: Option<Moment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Bounded<1, 100>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<Bounded<0, { u32::MAX as i64 }>>,
    #[serde(rename = "orderBy", skip_serializing_if = "Option::is_none")]
    pub order_by: Option<OrderBy>,
}

/// `GET /api/timeline` and the `timeline` tool: give exactly one of `anchor` and `query`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct TimelineParams {
    /// a record id (123, S12, P7) or a time; give this or query
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Moment>,
    /// centre on the best hit of this search; give this or anchor
    #[serde(alias = "q", skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// rows before the anchor (default 5)
    #[serde(alias = "depthBefore", skip_serializing_if = "Option::is_none")]
    pub depth_before: Option<Bounded<0, DEPTH_MAX>>,
    /// rows after the anchor (default 5)
    #[serde(alias = "depthAfter", skip_serializing_if = "Option::is_none")]
    pub depth_after: Option<Bounded<0, DEPTH_MAX>>,
    /// project or chain
    #[serde(alias = "projects", skip_serializing_if = "Option::is_none")]
    pub project: Option<Words>,
    #[serde(rename = "platformSource", alias = "platform_source", skip_serializing_if = "Option::is_none")]
    pub platform_source: Option<Words>,
}

/// How `GET /api/search` and `GET /api/timeline` answer (not part of the request itself).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Answer {
    /// `json` for the JSON answer; else the text index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `keyword`, `vector` or `hybrid` (default): which halves of search run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::super::params::{from_object, from_pairs, to_pairs};
    use super::*;
    use serde_json::json;

    fn pairs(q: &[(&str, &str)]) -> Vec<(String, String)> {
        q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_request_survives_the_query_string() {
        let sent = SearchParams {
            query: Some("login bug".into()),
            kind: Some(Words("bugfix".into())),
            files: Some(Words("src/a.rs,b".into())),
            project: Some(Words("app".into())),
            date_start: Some(Moment(json!(1_700_000_000_000_i64))),
            limit: Some(Bounded(5)),
            order_by: Some(OrderBy::DateAsc),
            ..SearchParams::default()
        };
        let back: SearchParams = from_pairs(&to_pairs(&sent)).unwrap();
        assert_eq!(back.query, sent.query);
        assert_eq!((back.kind, back.files, back.project), (sent.kind, sent.files, sent.project));
        assert_eq!((back.limit, back.order_by), (sent.limit, sent.order_by));
        assert_eq!(back.date_start.map(|m| m.text()), Some("1700000000000".to_string()));
    }

    #[test]
    fn older_names_empty_values_and_unknown_keys() {
        let p: SearchParams = from_pairs(&pairs(&[
            ("q", "x"),
            ("filePath", "a.rs"),
            ("date_from", "2026-01-01"),
            ("limit", " 7 "),
            ("obs_type", ""),
            ("format", "json"),
        ]))
        .unwrap();
        assert_eq!(p.query.as_deref(), Some("x"));
        assert_eq!(p.files, Some(Words("a.rs".into())));
        assert_eq!(p.limit, Some(Bounded(7)));
        assert_eq!(p.obs_type, None, "an empty value is absent");
        assert!(p.date_start.is_some());
        let a: Answer = from_pairs(&pairs(&[("q", "x"), ("format", "json")])).unwrap();
        assert_eq!(a.format.as_deref(), Some("json"));
    }

    #[test]
    fn a_bad_value_names_its_field_either_way() {
        let e = from_pairs::<SearchParams>(&pairs(&[("limit", "0")])).unwrap_err();
        assert_eq!(e.0, "limit: must be an integer in 1..100");
        let e = from_object::<SearchParams>(json!({"limit": 500}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.0, "limit: must be an integer in 1..100");
        let e = from_pairs::<TimelineParams>(&pairs(&[("depthBefore", "50")])).unwrap_err();
        assert_eq!(e.0, "depthBefore: must be an integer in 0..20", "the name the caller sent");
        assert!(
            from_pairs::<SearchParams>(&pairs(&[("orderBy", "best")]))
                .unwrap_err()
                .0
                .starts_with("orderBy:")
        );
        let both = from_pairs::<SearchParams>(&pairs(&[("project", "a"), ("projects", "b")])).unwrap_err();
        assert!(both.0.contains("duplicate field"), "two names of one field are ambiguous: {both}");
    }
}
