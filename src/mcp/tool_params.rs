//! The parameter type of each MCP tool: its fields, their docs (the schema's descriptions) and
//! their value types give the tool's input schema and parse its arguments ([`super::params`]).
//! Fields the client leaves out or sends as `null` are absent; fields memd does not know are
//! ignored.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::params::{Bounded, Ids, Moment, ObservationId, Words};

pub use crate::protocol::search::{OrderBy, SearchParams, TimelineParams};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetObservationsParams {
    /// ids from search or timeline: 123, "#123", "S12", "P7"
    pub ids: Ids<50>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetToolUsesParams {
    pub id: ObservationId,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SaveMemoryParams {
    /// what to remember
    pub text: String,
    pub title: Option<String>,
    /// default: this project
    pub project: Option<String>,
    /// an observation type of the mode (default: discovery)
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub concepts: Option<Vec<String>>,
    pub metadata: Option<Map<String, Value>>,
    /// the id of an observation this memory replaces: the older is marked superseded and no
    /// longer injected
    pub supersedes: Option<ObservationId>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ForgetParams {
    /// observation ids; give exactly one of ids, contentSessionId, project
    pub ids: Option<Ids<100>>,
    /// forget a whole session
    #[serde(rename = "contentSessionId")]
    pub content_session_id: Option<String>,
    /// forget a project's memories (all, or those before `before`)
    pub project: Option<String>,
    pub before: Option<Moment>,
    pub reason: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ContextParams {
    pub project: Option<String>,
    /// chain, primary last
    pub projects: Option<Words>,
    #[serde(rename = "platformSource")]
    pub platform_source: Option<String>,
    /// every observation of the window, not the compact index
    pub full: Option<bool>,
}

/// Where a work item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkStatus {
    Todo,
    Doing,
    Done,
    Blocked,
}

impl WorkStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkStatus::Todo => "todo",
            WorkStatus::Doing => "doing",
            WorkStatus::Done => "done",
            WorkStatus::Blocked => "blocked",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WorkItemParams {
    /// a short stable name; writing the same key again replaces the item
    pub key: String,
    pub text: String,
    pub status: WorkStatus,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WorkStateWriteParams {
    /// the task you are on ("" clears it)
    pub task: Option<String>,
    /// items to add or update, by key (latest key wins)
    pub items: Option<Vec<WorkItemParams>>,
    /// free notes for the next session ("" clears them)
    pub notes: Option<String>,
    /// default: this project
    pub project: Option<String>,
    /// keys of items to remove
    pub remove: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RelatedParams {
    /// a file (relative to the project root, absolute, or the end of its path), a symbol, a command, an error line or a concept
    pub entity: String,
    /// relations (modified_with, fixes, fails_with, defines, tests, depends_on, decided, mentions) or entity kinds (file, symbol, command, error, concept, dependency, decision) to keep
    pub kinds: Option<Words>,
    pub limit: Option<Bounded<1, 100>>,
    /// default: this project; * = all
    pub project: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WorkStateReadParams {
    /// default: this project
    pub project: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::caller::ToolError;
    use crate::mcp::params::{parse, schema_of, words};
    use crate::store::forget::{RecordKind, RecordRef};
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn invalid<P: serde::de::DeserializeOwned + std::fmt::Debug>(v: Value) -> String {
        match parse::<P>(&args(v)) {
            Err(ToolError::InvalidParams(m)) => m,
            other => panic!("not rejected: {other:?}"),
        }
    }

    #[test]
    fn arguments_are_read_leniently_and_null_is_absent() {
        let p: SearchParams = parse(&args(json!({
            "query": "login", "files": ["src/a.rs", "b"], "obs_type": "bugfix", "project": 7,
            "limit": 5, "dateStart": 1_700_000_000_000_i64, "orderBy": "date_asc", "offset": null, "unknown": true
        })))
        .unwrap();
        assert_eq!(
            (words(&p.files), words(&p.obs_type), words(&p.project)),
            ("src/a.rs,b".into(), "bugfix".into(), "7".into())
        );
        assert_eq!(
            (p.limit.map(|l| l.0), p.offset, p.order_by),
            (Some(5), None, Some(OrderBy::DateAsc))
        );
        let ids: GetObservationsParams = parse(&args(json!({"ids": [12, "#12", "S3", "p7"]}))).unwrap();
        let obs = RecordRef {
            kind: RecordKind::Observation,
            id: 12,
        };
        assert_eq!(ids.ids.0.len(), 3, "an id given twice is asked once");
        assert_eq!(ids.ids.0[0], obs);
        let one: GetToolUsesParams = parse(&args(json!({"id": "#41"}))).unwrap();
        assert_eq!(one.id.0, 41);
    }

    #[test]
    fn a_bad_argument_is_refused_naming_its_field() {
        assert_eq!(
            invalid::<SearchParams>(json!({"limit": 500})),
            "limit: must be an integer in 1..100"
        );
        assert_eq!(invalid::<SearchParams>(json!({"files": [{}]})), "files: must hold strings");
        assert!(invalid::<SearchParams>(json!({"orderBy": "sideways"})).starts_with("orderBy: unknown variant"));
        assert_eq!(invalid::<GetObservationsParams>(json!({"ids": []})), "ids: must hold 1..50 ids");
        assert_eq!(
            invalid::<GetObservationsParams>(json!({"ids": ["X9"]})),
            "ids[0]: malformed id \"X9\""
        );
        assert_eq!(invalid::<GetObservationsParams>(json!({})), "missing field `ids`");
        assert_eq!(invalid::<GetToolUsesParams>(json!({"id": "S3"})), "id: malformed observation id S3");
        assert_eq!(
            invalid::<TimelineParams>(json!({"depth_before": 21})),
            "depth_before: must be an integer in 0..20"
        );
        assert_eq!(invalid::<ContextParams>(json!({"full": "yes"})).split(':').next(), Some("full"));
    }

    #[test]
    fn the_schema_comes_from_the_type() {
        let s = Value::Object(schema_of::<SearchParams>().as_ref().clone());
        assert_eq!(s["type"], "object");
        assert!(s.get("title").is_none());
        let props = &s["properties"];
        assert_eq!(props["limit"]["maximum"], 100, "{props}");
        assert_eq!(props["query"]["description"], "words, \"phrases\", prefix*; empty = newest first");
        assert!(props.get("orderBy").is_some() && props.get("order_by").is_none());
        let ids = Value::Object(schema_of::<GetObservationsParams>().as_ref().clone());
        assert_eq!(ids["required"], json!(["ids"]));
        assert_eq!(ids["properties"]["ids"]["maxItems"], 50);
    }
}
