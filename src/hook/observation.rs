//! PostToolUse and PostToolUseFailure → `observation` (docs/spec/hooks.md §3.4): one
//! `POST /api/sessions/observations`; raw `tool_input` / `tool_response` values; a failure keeps
//! `error` and `is_interrupt`. Prints `{}` always.

use serde_json::{Value, json};

use super::env::Budget;
use super::event::IngestEvent;
use super::output::EMPTY;
use super::run::Run;
use super::transport::{Start, deliver};
use crate::protocol::IngestRoute;

/// Builds the body the worker receives (without `eventId` / `occurredAtEpoch`).
pub fn body(r: &Run<'_>) -> Value {
    let input = &r.input;
    let event = input.str("hook_event_name");
    let failure = event == Some("PostToolUseFailure")
        || (event.is_none() && input.value("error").is_some() && input.value("tool_response").is_none());
    let mut body = json!({
        "contentSessionId": r.session_id(),
        "platformSource": r.platform,
        "project": r.identity().primary,
        "cwd": r.cwd,
        "tool_name": input.str("tool_name").unwrap_or(""),
    });
    if let Some(v) = input.value("tool_input") {
        body["tool_input"] = v.clone();
    }
    if failure {
        let error = input.value("error").cloned().unwrap_or(Value::String(String::new()));
        body["tool_response"] = json!({"error": error, "is_interrupt": input.bool("is_interrupt").unwrap_or(false)});
    } else if let Some(v) = input.value("tool_response") {
        body["tool_response"] = v.clone();
    }
    if let Some(v) = input.str("tool_use_id").filter(|s| !s.is_empty()) {
        body["tool_use_id"] = json!(v);
    }
    if let Some(v) = input.agent("agent_id") {
        body["agentId"] = json!(v);
    }
    if let Some(v) = input.agent("agent_type") {
        body["agentType"] = json!(v);
    }
    if let Some(v) = input.str("prompt_id") {
        body["promptId"] = json!(v);
    }
    if let Some(v) = input.non_negative("duration_ms") {
        body["duration_ms"] = json!(v);
    }
    body["is_error"] = json!(failure);
    body
}

pub fn run(r: &Run<'_>) -> String {
    let budget = Budget::new(r.hook.started, r.hook.async_budget());
    let mut event = IngestEvent::new("observation", IngestRoute::Observations, body(r), r.occurred_at);
    deliver(&r.hook, &mut event, &budget, Start::AndHandOff);
    EMPTY.into()
}
