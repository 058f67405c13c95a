//! Hook payload → the HTTP exchange its `memd hook claude-code <handler>` would make (hooks.md §3),
//! for a memd worker or a claude-mem worker (same ingest endpoints; claude-mem registers neither
//! PostToolUseFailure nor SessionEnd). Only the ingest events are delivered over HTTP: the read
//! paths (SessionStart context, PreToolUse file context) need the recorded files and are exercised
//! in `--via-hook` mode.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::event::{EventKind, HookEvent};
use crate::pipeline::project::identify;
use crate::protocol::IngestRoute;

/// Which worker the bodies are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Memd,
    ClaudeMem,
}

/// One POST to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub route: IngestRoute,
    pub body: Value,
}

/// Whether `kind` is delivered to `target` at all (HTTP mode).
pub fn delivered_over_http(kind: EventKind, target: Target) -> bool {
    match kind {
        EventKind::UserPromptSubmit | EventKind::PostToolUse | EventKind::Stop => true,
        EventKind::PostToolUseFailure | EventKind::SessionEnd => target == Target::Memd,
        _ => false,
    }
}

/// Whether `kind` starts a `memd hook` process (hook mode): every registered event.
pub fn delivered_via_hook(e: &HookEvent) -> bool {
    match e.kind {
        EventKind::PreToolUse => e.tool_name() == Some("Read"),
        k => k.handler().is_some(),
    }
}

/// The project name the hook computes from `cwd`.
pub fn project_of(cwd: &str, home: Option<&Path>) -> String {
    identify(cwd, None, home, Path::new("/")).primary
}

/// The HTTP call for an event, or `None` when the event is not delivered over HTTP.
pub fn http_call(e: &HookEvent, target: Target, event_id: &str, now_ms: i64, home: Option<&Path>) -> Option<Call> {
    if !delivered_over_http(e.kind, target) {
        return None;
    }
    let p = &e.payload;
    let cwd = p["cwd"].as_str().unwrap_or("");
    let mut b = Map::new();
    let mut put = |k: &str, v: Value| {
        if !v.is_null() {
            b.insert(k.to_string(), v);
        }
    };
    put("contentSessionId", p["session_id"].clone());
    put("platformSource", json!(p["platform_source"].as_str().unwrap_or("claude")));
    put("eventId", json!(event_id));
    put("occurredAtEpoch", json!(now_ms));
    let path = match e.kind {
        EventKind::UserPromptSubmit => {
            put("project", json!(project_of(cwd, home)));
            put("cwd", json!(cwd));
            let prompt = p["prompt"].as_str().unwrap_or("");
            put("prompt", json!(if prompt.trim().is_empty() { "[media prompt]" } else { prompt }));
            put("promptId", p["prompt_id"].clone());
            put("transcriptPath", p["transcript_path"].clone());
            IngestRoute::Init
        }
        EventKind::PostToolUse | EventKind::PostToolUseFailure => {
            let failure = e.kind == EventKind::PostToolUseFailure;
            put("project", json!(project_of(cwd, home)));
            put("cwd", json!(cwd));
            for k in ["tool_name", "tool_input", "tool_use_id", "duration_ms"] {
                put(k, p[k].clone());
            }
            let response = if failure {
                json!({"error": p["error"], "is_interrupt": p["is_interrupt"].as_bool().unwrap_or(false)})
            } else {
                p["tool_response"].clone()
            };
            put("tool_response", response);
            put("agentId", p["agent_id"].clone());
            put("agentType", p["agent_type"].clone());
            put("promptId", p["prompt_id"].clone());
            put("is_error", json!(failure));
            IngestRoute::Observations
        }
        EventKind::Stop => {
            put("project", json!(project_of(cwd, home)));
            put("cwd", json!(cwd));
            put("last_assistant_message", p["last_assistant_message"].clone());
            put("stop_hook_active", json!(false));
            IngestRoute::Summarize
        }
        EventKind::SessionEnd => {
            put("reason", p["reason"].clone());
            IngestRoute::Complete
        }
        _ => return None,
    };
    Some(Call {
        route: path,
        body: Value::Object(b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::Origin;

    fn event(kind: EventKind, payload: Value) -> HookEvent {
        HookEvent {
            kind,
            origin: Origin::Main,
            at_ms: 0,
            payload,
        }
    }

    #[test]
    fn failure_body_matches_the_hook_spec() {
        let e = event(
            EventKind::PostToolUseFailure,
            json!({"session_id":"s","cwd":"/home/dev/shop","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"t","error":"Exit code 1","is_interrupt":false,"duration_ms":5}),
        );
        let call = http_call(&e, Target::Memd, "ev", 7, None).unwrap();
        assert_eq!(call.route, IngestRoute::Observations);
        assert_eq!(
            call.body,
            json!({"contentSessionId":"s","platformSource":"claude","eventId":"ev","occurredAtEpoch":7,"project":"shop","cwd":"/home/dev/shop",
                   "tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"t","duration_ms":5,
                   "tool_response":{"error":"Exit code 1","is_interrupt":false},"is_error":true})
        );
        assert!(http_call(&e, Target::ClaudeMem, "ev", 7, None).is_none());
    }

    #[test]
    fn prompt_and_end_bodies() {
        let e = event(EventKind::UserPromptSubmit, json!({"session_id":"s","cwd":"/w/p","prompt":"  "}));
        let call = http_call(&e, Target::Memd, "ev", 1, None).unwrap();
        assert_eq!((call.route, &call.body["prompt"]), (IngestRoute::Init, &json!("[media prompt]")));
        let e = event(EventKind::SessionEnd, json!({"session_id":"s","cwd":"/w/p","reason":"other"}));
        assert_eq!(http_call(&e, Target::Memd, "ev", 1, None).unwrap().body["reason"], "other");
        let e = event(EventKind::SessionStart, json!({"session_id":"s"}));
        assert!(http_call(&e, Target::Memd, "ev", 1, None).is_none());
    }
}
