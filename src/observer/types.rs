//! Domain types of the observer stage: one recorded tool event as the observer
//! sees it, and the observation / summary drafts an observer produces before
//! §14 correction, bounding and storage (`docs/spec/pipeline.md` §8, §10, §14).

use serde::{Deserialize, Serialize};

/// One stored tool event (a `tool_uses` row) as handed to an observer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolEvent {
    /// `tool_uses.id` of the row.
    pub row_id: i64,
    /// Tool name as sent by the agent (`Bash`, `Edit`, `mcp__server__tool`, …).
    pub tool_name: String,
    /// Cleaned tool input (object, or a string for e.g. `apply_patch`).
    pub tool_input: serde_json::Value,
    /// Cleaned tool response; for a failure `{"error": …, "is_interrupt": …}`.
    pub tool_response: serde_json::Value,
    /// True for a PostToolUseFailure event.
    pub is_error: bool,
    /// Working directory of the event, when known.
    pub cwd: Option<String>,
    /// When the event happened, epoch milliseconds.
    pub occurred_at_epoch: i64,
}

/// An observation as produced by an observer (also what the XML parser yields), before §14 bounds
/// and storage.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ObservationDraft {
    pub obs_type: String,
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub facts: Vec<String>,
    pub narrative: Option<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

/// A session summary as produced by an observer (also what the XML parser yields), before §14
/// bounds and storage.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SummaryDraft {
    pub request: Option<String>,
    pub investigated: Option<String>,
    pub learned: Option<String>,
    pub completed: Option<String>,
    pub next_steps: Option<String>,
    pub notes: Option<String>,
}
