//! Tool calls → PreToolUse / PostToolUse / PostToolUseFailure (hooks.md §6 rules 3–4): pairs each
//! `tool_result` with its earlier `tool_use` (parallel calls included), classifies error results
//! (permission denials and input-validation errors produce no Post event) and builds payloads.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::event::{Dropped, EventKind, HookEvent, Origin};
use super::record;

const DENIAL_PREFIXES: [&str; 4] = [
    "The user doesn't want to",
    "Claude requested permissions to",
    "This command requires approval",
    "This Bash command contains multiple operations. The following part requires approval",
];

/// The fields every payload of one thread shares.
#[derive(Debug, Clone, Default)]
pub struct Thread {
    pub session_id: String,
    pub transcript_path: String,
    pub permission_mode: String,
    pub origin: Option<Origin>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
}

impl Thread {
    /// A payload for `kind` produced by record `r` (its `cwd` and `promptId`), plus `extra`.
    pub fn payload(&self, kind: EventKind, r: &Value, extra: Value) -> Value {
        let mut m = Map::new();
        m.insert("session_id".into(), json!(self.session_id));
        m.insert("transcript_path".into(), json!(self.transcript_path));
        m.insert("cwd".into(), json!(record::str_field(r, "cwd").unwrap_or("")));
        m.insert("hook_event_name".into(), json!(kind.name()));
        if !matches!(kind, EventKind::SessionStart | EventKind::SessionEnd) {
            m.insert("permission_mode".into(), json!(self.permission_mode));
        }
        if let Some(p) = record::str_field(r, "promptId") {
            m.insert("prompt_id".into(), json!(p));
        }
        if let Some(a) = &self.agent_id {
            m.insert("agent_id".into(), json!(a));
            m.insert("agent_type".into(), json!(self.agent_type.as_deref().unwrap_or("general-purpose")));
        }
        if let Value::Object(e) = extra {
            m.extend(e);
        }
        Value::Object(m)
    }

    pub fn event(&self, kind: EventKind, r: &Value, at_ms: i64, extra: Value) -> HookEvent {
        HookEvent {
            kind,
            origin: self.origin.unwrap_or(Origin::Main),
            at_ms,
            payload: self.payload(kind, r, extra),
        }
    }
}

/// A `tool_use` waiting for its result.
#[derive(Debug, Clone)]
pub struct PendingUse {
    pub name: String,
    pub input: Value,
    pub at_ms: Option<i64>,
    /// `subagent_type` of a `Task`/`Agent` call's input.
    pub subagent_type: Option<String>,
}

/// A Post event and, for a `Task`/`Agent` call, the subagent it ran.
#[derive(Debug)]
pub struct PostOutcome {
    pub event: HookEvent,
    pub spawned_agent: Option<(String, Option<String>)>,
}

/// Open tool calls of one transcript file.
#[derive(Debug, Default)]
pub struct ToolTracker {
    pending: HashMap<String, PendingUse>,
}

impl ToolTracker {
    /// PreToolUse for each `tool_use` block of an assistant record.
    pub fn on_assistant(&mut self, thread: &Thread, r: &Value, at_ms: i64) -> Vec<HookEvent> {
        let mut out = Vec::new();
        for b in record::blocks(r, "tool_use") {
            let (Some(id), Some(name)) = (b["id"].as_str(), b["name"].as_str()) else {
                continue;
            };
            let input = b.get("input").cloned().unwrap_or(json!({}));
            let subagent_type = matches!(name, "Task" | "Agent")
                .then(|| input["subagent_type"].as_str().map(str::to_string))
                .flatten();
            self.pending.insert(
                id.to_string(),
                PendingUse {
                    name: name.to_string(),
                    input: input.clone(),
                    at_ms: record::timestamp_ms(r),
                    subagent_type,
                },
            );
            let extra = json!({"tool_name": name, "tool_input": input, "tool_use_id": id});
            out.push(thread.event(EventKind::PreToolUse, r, at_ms, extra));
        }
        out
    }

    /// Post events for each matched `tool_result` block of a user record.
    pub fn on_user(&mut self, thread: &Thread, r: &Value, at_ms: i64, dropped: &mut Dropped) -> Vec<PostOutcome> {
        let results: Vec<&Value> = record::blocks(r, "tool_result").collect();
        let single = results.len() == 1;
        let mut out = Vec::new();
        for b in results {
            let Some(use_) = b["tool_use_id"].as_str().and_then(|id| self.pending.remove(id).map(|u| (id, u))) else {
                dropped.unmatched_results += 1;
                continue;
            };
            let (id, pending) = use_;
            let text = record::text_of(&b["content"], false);
            let duration = match (record::timestamp_ms(r), pending.at_ms) {
                (Some(end), Some(start)) if end >= start => Some(end - start),
                _ => None,
            };
            let mut extra = json!({
                "tool_name": pending.name.clone(),
                "tool_input": pending.input,
                "tool_use_id": id,
            });
            if let Some(d) = duration {
                extra["duration_ms"] = json!(d);
            }
            let kind = if b["is_error"].as_bool() == Some(true) {
                if is_denial(&text) {
                    dropped.denials += 1;
                    continue;
                }
                if text.starts_with("<tool_use_error>") {
                    dropped.validation_errors += 1;
                    continue;
                }
                extra["error"] = json!(text);
                extra["is_interrupt"] = json!(record::is_interrupt_text(&text));
                EventKind::PostToolUseFailure
            } else {
                let recorded = r.get("toolUseResult").filter(|v| single && (v.is_object() || v.is_string()));
                extra["tool_response"] = recorded.cloned().unwrap_or(json!(text));
                EventKind::PostToolUse
            };
            let spawned_agent = matches!(pending.name.as_str(), "Task" | "Agent")
                .then(|| {
                    r["toolUseResult"]["agentId"]
                        .as_str()
                        .map(|a| (a.to_string(), pending.subagent_type.clone()))
                })
                .flatten();
            out.push(PostOutcome {
                event: thread.event(kind, r, at_ms, extra),
                spawned_agent,
            });
        }
        out
    }
}

fn is_denial(text: &str) -> bool {
    DENIAL_PREFIXES.iter().any(|p| text.starts_with(p)) || text.contains(" was blocked. For security")
}
