//! HTTP bodies of the ingest routes (docs/spec/api.md §3): wire types only, no I/O.
//!
//! Unknown fields are ignored; ill-typed fields fail deserialisation (→ 400). Range checks live in
//! `validate` so the error names the field.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitBody {
    pub content_session_id: String,
    pub project: Option<String>,
    pub prompt: Option<String>,
    #[serde(alias = "platform_source")]
    pub platform_source: Option<String>,
    pub custom_title: Option<String>,
    pub cwd: Option<String>,
    pub prompt_id: Option<String>,
    pub transcript_path: Option<String>,
    pub event_id: Option<String>,
    pub occurred_at_epoch: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ObservationBody {
    #[serde(rename = "contentSessionId")]
    pub content_session_id: String,
    pub tool_name: String,
    pub tool_input: Option<Value>,
    pub tool_response: Option<Value>,
    pub cwd: Option<String>,
    pub project: Option<String>,
    #[serde(rename = "agentId")]
    pub agent_id: Option<Value>,
    #[serde(rename = "agentType")]
    pub agent_type: Option<Value>,
    #[serde(alias = "toolUseId")]
    pub tool_use_id: Option<String>,
    pub is_error: Option<bool>,
    pub duration_ms: Option<i64>,
    #[serde(rename = "platformSource", alias = "platform_source")]
    pub platform_source: Option<String>,
    #[serde(rename = "promptId")]
    pub prompt_id: Option<String>,
    #[serde(rename = "eventId")]
    pub event_id: Option<String>,
    #[serde(rename = "occurredAtEpoch")]
    pub occurred_at_epoch: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SummarizeBody {
    #[serde(rename = "contentSessionId")]
    pub content_session_id: String,
    pub last_assistant_message: Option<String>,
    #[serde(rename = "agentId")]
    pub agent_id: Option<Value>,
    #[serde(rename = "platformSource", alias = "platform_source")]
    pub platform_source: Option<String>,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub stop_hook_active: Option<bool>,
    #[serde(rename = "eventId")]
    pub event_id: Option<String>,
    #[serde(rename = "occurredAtEpoch")]
    pub occurred_at_epoch: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteBody {
    pub content_session_id: String,
    pub reason: Option<String>,
    #[serde(alias = "platform_source")]
    pub platform_source: Option<String>,
    pub event_id: Option<String>,
    pub occurred_at_epoch: Option<i64>,
}

/// A field failed a range check: the 400 detail names it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

pub fn check_len(field: &str, v: &str, min: usize, max: usize) -> Result<(), Invalid> {
    let n = v.chars().count();
    if n < min || n > max {
        return Err(Invalid(format!("field {field} must be {min}..{max} characters")));
    }
    Ok(())
}

pub fn check_opt(field: &str, v: &Option<String>, max: usize) -> Result<(), Invalid> {
    v.as_deref().map_or(Ok(()), |s| check_len(field, s, 0, max))
}

/// An optional id field: `eventId` 1..128.
pub fn check_event_id(v: &Option<String>) -> Result<(), Invalid> {
    v.as_deref().map_or(Ok(()), |s| check_len("eventId", s, 1, 128))
}

/// `agentId`/`agentType`: strings of 1..128 chars are kept; other values are ignored.
pub fn agent_field(v: &Option<Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if (1..=128).contains(&s.chars().count()) => Some(s.clone()),
        _ => None,
    }
}

impl InitBody {
    pub fn validate(&self) -> Result<(), Invalid> {
        check_len("contentSessionId", &self.content_session_id, 1, 256)?;
        check_opt("project", &self.project, 200)?;
        check_opt("customTitle", &self.custom_title, 200)?;
        check_opt("cwd", &self.cwd, 4096)?;
        check_opt("promptId", &self.prompt_id, 128)?;
        check_opt("transcriptPath", &self.transcript_path, 4096)?;
        check_event_id(&self.event_id)
    }
}

impl ObservationBody {
    pub fn validate(&self) -> Result<(), Invalid> {
        check_len("contentSessionId", &self.content_session_id, 1, 256)?;
        check_len("tool_name", &self.tool_name, 1, 256)?;
        check_opt("project", &self.project, 200)?;
        check_opt("cwd", &self.cwd, 4096)?;
        if let Some(t) = &self.tool_use_id {
            check_len("tool_use_id", t, 1, 256)?;
        }
        if self.duration_ms.is_some_and(|d| d < 0) {
            return Err(Invalid("field duration_ms must be ≥ 0".into()));
        }
        check_event_id(&self.event_id)
    }
}

impl SummarizeBody {
    pub fn validate(&self) -> Result<(), Invalid> {
        check_len("contentSessionId", &self.content_session_id, 1, 256)?;
        check_opt("project", &self.project, 200)?;
        check_event_id(&self.event_id)
    }
}

impl CompleteBody {
    pub fn validate(&self) -> Result<(), Invalid> {
        check_len("contentSessionId", &self.content_session_id, 1, 256)?;
        check_opt("reason", &self.reason, 64)?;
        check_event_id(&self.event_id)
    }
}

/// Turns a serde error into the one-sentence 400 detail (`missing field contentSessionId`).
pub fn describe_json_error(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let core = msg.split(" at line ").next().unwrap_or(&msg);
    core.replace('`', "")
}

/// The list columns the claude-mem-compatible routes send as strings holding JSON
/// (docs/spec/api.md §2.7).
pub const ARRAY_COLUMNS: &[&str] = &[
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "files_edited",
    "reinforcement_dates",
];

/// `row` with each of its [`ARRAY_COLUMNS`] that holds a JSON array as a string decoded into the
/// array (what memd's own clients show: the MCP records, `memd search --json`).
pub fn with_array_columns(row: &Value) -> Value {
    let mut obj = row.as_object().cloned().unwrap_or_default();
    for key in ARRAY_COLUMNS {
        if let Some(Value::String(s)) = obj.get(*key)
            && let Ok(v @ Value::Array(_)) = serde_json::from_str::<Value>(s)
        {
            obj.insert((*key).to_string(), v);
        }
    }
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_field_detail_names_it() {
        let e = serde_json::from_str::<ObservationBody>(r#"{"tool_name":"Bash"}"#).unwrap_err();
        assert_eq!(describe_json_error(&e), "missing field contentSessionId");
    }

    #[test]
    fn unknown_fields_are_ignored_and_aliases_work() {
        let b: ObservationBody =
            serde_json::from_str(r#"{"contentSessionId":"s","tool_name":"Read","toolUseId":"t","zzz":1,"agentId":5}"#).unwrap();
        assert_eq!(b.tool_use_id.as_deref(), Some("t"));
        assert_eq!(agent_field(&b.agent_id), None);
        assert!(b.validate().is_ok());
    }

    #[test]
    fn ranges_are_checked() {
        let b: CompleteBody = serde_json::from_str(r#"{"contentSessionId":""}"#).unwrap();
        assert!(b.validate().is_err());
    }
}
