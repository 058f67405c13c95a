//! What the viewer's lists answer, as types (`retrieval/browse.rs` reads them; the routes turn them
//! into the JSON of docs/spec/viewer.md §3 with `to_json`, the same keys as before the seam was
//! typed). No storage method hands out loose JSON.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::records::{Observation, Prompt, Summary};

/// A newest-first page of rows and the `before` of the next page (None: the last page).
#[derive(Debug, Clone, PartialEq)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub next_before: Option<i64>,
}

impl Listed<Observation> {
    /// `{"items": [...], "nextBefore": n}` with the list columns as arrays.
    pub fn to_json(&self) -> Value {
        json!({"items": self.items.iter().map(Observation::to_json_with_arrays).collect::<Vec<_>>(), "nextBefore": self.next_before})
    }
}

impl Listed<SessionRow> {
    pub fn to_json(&self) -> Value {
        json!({"items": self.items, "nextBefore": self.next_before})
    }
}

/// A session in the sessions list, with its counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub id: i64,
    pub content_session_id: String,
    pub memory_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub user_prompt: Option<String>,
    pub custom_title: Option<String>,
    pub status: String,
    pub started_at_epoch: i64,
    pub last_event_epoch: i64,
    pub observations: i64,
    pub prompts: i64,
    /// Its custom title, else its first prompt, else its newest summary's request.
    pub title: Option<String>,
}

/// The head of one session's page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionHead {
    pub id: i64,
    pub content_session_id: String,
    pub memory_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub status: String,
    pub title: Option<String>,
    pub started_at_epoch: i64,
}

/// One record of a session, in the order things were stored.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionItem {
    Prompt(Prompt),
    Observation(Box<Observation>),
    Summary(Box<Summary>),
}

impl SessionItem {
    /// The record's JSON with its `kind` (a private prompt shows its title, not its text).
    pub fn to_json(&self) -> Value {
        let (mut v, kind) = match self {
            SessionItem::Prompt(p) => {
                let mut v = p.to_json();
                if p.is_private {
                    v["prompt_text"] = json!(p.title());
                }
                (v, "prompt")
            }
            SessionItem::Observation(o) => (o.to_json_with_arrays(), "observation"),
            SessionItem::Summary(s) => (s.to_json(), "summary"),
        };
        v["kind"] = json!(kind);
        v
    }
}

/// One session: its head, its records in order, and whether the lists were cut.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionDetail {
    pub session: SessionHead,
    pub items: Vec<SessionItem>,
    pub truncated: bool,
}

impl SessionDetail {
    pub fn to_json(&self) -> Value {
        json!({
            "session": self.session,
            "items": self.items.iter().map(SessionItem::to_json).collect::<Vec<_>>(),
            "truncated": self.truncated,
        })
    }
}

/// A raw tool call an observation was made from (texts cut at `TOOL_TEXT_MAX`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUse {
    pub id: i64,
    pub tool_use_id: Option<String>,
    pub tool_name: String,
    pub tool_input: String,
    pub tool_response: String,
    pub is_error: bool,
    pub cwd: Option<String>,
    pub prompt_number: i64,
    pub agent_type: Option<String>,
    pub duration_ms: Option<i64>,
    pub truncated: bool,
    pub redactions: i64,
    pub occurred_at_epoch: i64,
    pub content_session_id: String,
}

/// An observation's tool calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUses {
    pub observation: i64,
    pub items: Vec<ToolUse>,
}

/// One provider's tokens on one day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DayUsage {
    pub day: String,
    pub provider: String,
    pub calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub failures: i64,
}

/// Tokens per day and provider over `days` days (newest last).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub days: i64,
    pub items: Vec<DayUsage>,
}

/// `GET /api/projects`: projects by latest activity, the platforms, and each platform's projects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProjectList {
    pub projects: Vec<String>,
    pub sources: Vec<String>,
    #[serde(rename = "projectsBySource")]
    pub projects_by_source: BTreeMap<String, Vec<String>>,
}
