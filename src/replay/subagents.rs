//! Subagent transcripts (hooks.md §6 rule 6): a subagent file's tool events, with the parent's
//! `session_id` and the agent fields, framed by SubagentStart / SubagentStop (produced, never
//! delivered), ready to be inserted before the PostToolUse of the call that ran it.

use serde_json::{Value, json};

use super::event::{Dropped, EventKind, HookEvent, Origin};
use super::record;
use super::tools::{Thread, ToolTracker};
use super::transcript::SubagentFile;

/// A subagent file read but not yet placed in its session's stream.
#[derive(Debug, Clone)]
pub struct PendingSubagent {
    pub file: SubagentFile,
    pub records: Vec<Value>,
}

impl PendingSubagent {
    /// The records' `agentId`, else the id from the file name.
    pub fn agent_id(&self) -> String {
        self.records
            .iter()
            .find_map(|r| r["agentId"].as_str())
            .map_or_else(|| self.file.agent_id.clone(), str::to_string)
    }

    pub fn first_ms(&self) -> Option<i64> {
        self.records.iter().find_map(record::timestamp_ms)
    }

    /// The subagent's events. `agent_type`: the meta file's, else `spawn_type` (the spawning call's
    /// `subagent_type`), else `general-purpose`. Times never go below `floor_ms`.
    pub fn events(&self, parent: &Thread, spawn_type: Option<&str>, floor_ms: i64, dropped: &mut Dropped) -> Vec<HookEvent> {
        let agent_id = self.agent_id();
        let agent_type = self
            .file
            .agent_type
            .clone()
            .or_else(|| spawn_type.map(str::to_string))
            .unwrap_or_else(|| "general-purpose".to_string());
        let thread = Thread {
            origin: Some(Origin::Subagent),
            agent_id: Some(agent_id),
            agent_type: Some(agent_type),
            ..parent.clone()
        };
        let mut at = floor_ms;
        let mut tools = ToolTracker::default();
        let first = self.records.first().cloned().unwrap_or(Value::Null);
        let mut out = vec![thread.event(EventKind::SubagentStart, &first, at, json!({}))];
        let mut last = &first;
        for r in &self.records {
            at = at.max(record::timestamp_ms(r).unwrap_or(at));
            match record::kind(r) {
                "assistant" => out.extend(tools.on_assistant(&thread, r, at)),
                "user" => out.extend(tools.on_user(&thread, r, at, dropped).into_iter().map(|p| p.event)),
                _ => {}
            }
            last = r;
        }
        out.push(thread.event(EventKind::SubagentStop, last, at, json!({"stop_hook_active": false})));
        out
    }
}

/// Inserts a block of events into `events` before the first event later than `at_ms` (but always
/// before a final SessionEnd): the placement of a subagent no call can be matched to.
pub fn merge_by_time(events: &mut Vec<HookEvent>, block: Vec<HookEvent>, at_ms: i64) {
    let end = match events.last() {
        Some(e) if e.kind == EventKind::SessionEnd => events.len() - 1,
        _ => events.len(),
    };
    let at = events[..end].iter().position(|e| e.at_ms > at_ms).unwrap_or(end);
    events.splice(at..at, block);
}
