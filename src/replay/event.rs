//! The hook event stream produced from a transcript: one [`HookEvent`] per event Claude Code
//! would have sent, with the exact hook stdin JSON of docs/spec/hooks.md §3 as its payload.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every event kind the conversion produces (hooks.md §6); some are produced but never delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EventKind {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SessionEnd,
    PreCompact,
    SubagentStart,
    SubagentStop,
}

impl EventKind {
    pub const ALL: [EventKind; 10] = [
        EventKind::SessionStart,
        EventKind::UserPromptSubmit,
        EventKind::PreToolUse,
        EventKind::PostToolUse,
        EventKind::PostToolUseFailure,
        EventKind::Stop,
        EventKind::SessionEnd,
        EventKind::PreCompact,
        EventKind::SubagentStart,
        EventKind::SubagentStop,
    ];

    /// The `hook_event_name` Claude Code uses.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::SessionStart => "SessionStart",
            EventKind::UserPromptSubmit => "UserPromptSubmit",
            EventKind::PreToolUse => "PreToolUse",
            EventKind::PostToolUse => "PostToolUse",
            EventKind::PostToolUseFailure => "PostToolUseFailure",
            EventKind::Stop => "Stop",
            EventKind::SessionEnd => "SessionEnd",
            EventKind::PreCompact => "PreCompact",
            EventKind::SubagentStart => "SubagentStart",
            EventKind::SubagentStop => "SubagentStop",
        }
    }

    /// The `memd hook claude-code <handler>` registered for this event (hooks.md §1), if any.
    pub fn handler(self) -> Option<&'static str> {
        match self {
            EventKind::SessionStart => Some("context"),
            EventKind::UserPromptSubmit => Some("session-init"),
            EventKind::PreToolUse => Some("file-context"),
            EventKind::PostToolUse | EventKind::PostToolUseFailure => Some("observation"),
            EventKind::Stop => Some("summarize"),
            EventKind::SessionEnd => Some("complete"),
            EventKind::PreCompact | EventKind::SubagentStart | EventKind::SubagentStop => None,
        }
    }
}

/// Which part of a recording an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Origin {
    /// A record without `isSidechain:true` in the session file.
    Main,
    /// An inline sidechain (1.0.x: `isSidechain:true` records inside the session file).
    Sidechain,
    /// A `subagents/agent-<id>.jsonl` file (or a 2.0.x `agent-<hex>.jsonl` sibling).
    Subagent,
}

/// One hook event: the kind, the hook stdin JSON, and when it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    pub kind: EventKind,
    pub origin: Origin,
    /// Epoch ms, never decreasing along a session's main stream (`max(previous, timestamp)`).
    pub at_ms: i64,
    /// The JSON Claude Code writes on the hook's stdin.
    pub payload: Value,
}

impl HookEvent {
    pub fn session_id(&self) -> &str {
        self.payload["session_id"].as_str().unwrap_or("")
    }
    pub fn tool_use_id(&self) -> Option<&str> {
        self.payload["tool_use_id"].as_str()
    }
    pub fn tool_name(&self) -> Option<&str> {
        self.payload["tool_name"].as_str()
    }
}

/// Tool results that produce no Post event, counted per origin (hooks.md §6 rule 4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub denials: u64,
    pub validation_errors: u64,
    pub unmatched_results: u64,
}

/// A converted session: its id, its events in delivery order, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct SessionEvents {
    pub session_id: String,
    pub transcript_path: String,
    pub events: Vec<HookEvent>,
    pub dropped_main: Dropped,
    pub dropped_sidechain: Dropped,
    pub dropped_subagent: Dropped,
}

impl SessionEvents {
    pub fn count(&self, kind: EventKind, origin: Option<Origin>) -> usize {
        self.events
            .iter()
            .filter(|e| e.kind == kind && origin.is_none_or(|o| e.origin == o))
            .count()
    }
}
