//! Domain types of the observer stage, handed between batching, the observer and the store: one
//! recorded tool event as the observer sees it, a claimed batch, the observation / summary drafts
//! an observer produces before §14 correction, bounding and storage, and what the store is given
//! back (`docs/spec/pipeline.md` §7–§8, §10, §14).

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
    /// Relations the observer proposes (`<from> <kind> <to>`, issue 41): kept in the graph only
    /// when the batch's calls show both ends.
    pub relations: Vec<String>,
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

/// Everything the observer needs about the session a batch belongs to.
#[derive(Debug, Clone)]
pub struct BatchMeta {
    pub session_db_id: i64,
    pub memory_session_id: String,
    pub content_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub project_root: String,
    pub prompt_number: i64,
    pub prompt_text: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub pending_ids: Vec<i64>,
    /// The prompt is private: the observer sees `[private]` instead of its text.
    pub prompt_private: bool,
    /// When the prompt was submitted (epoch ms; the batch's oldest row when unknown).
    pub prompt_epoch: i64,
    /// Highest `attempts` among the batch's rows (failed provider calls so far).
    pub attempts: i64,
    /// Smallest `created_at_epoch` of the batch's rows: the observations' time.
    pub oldest_epoch: i64,
}

impl BatchMeta {
    /// A batch of the first prompt of a Claude Code session, its rows from `epoch` — for tests
    /// and benches; the worker claims its own batches (`store/pending.rs`).
    pub fn first_prompt(session: (i64, &str, &str), project: &str, project_root: &str, epoch: i64) -> Self {
        let (session_db_id, memory_session_id, content_session_id) = session;
        Self {
            session_db_id,
            memory_session_id: memory_session_id.into(),
            content_session_id: content_session_id.into(),
            platform_source: "claude".into(),
            project: project.into(),
            project_root: project_root.into(),
            prompt_number: 1,
            prompt_text: None,
            agent_id: None,
            agent_type: None,
            pending_ids: vec![],
            prompt_private: false,
            prompt_epoch: epoch,
            attempts: 0,
            oldest_epoch: epoch,
        }
    }
}

#[derive(Debug, Clone)]
pub enum BatchWork {
    Observations(Vec<ToolEvent>),
    Summary {
        last_assistant_message: String,
        observation_titles: Vec<String>,
        /// Types of `observation_titles`, same order.
        observation_types: Vec<String>,
    },
}

#[derive(Debug, Clone)]
pub struct ClaimedBatch {
    pub meta: BatchMeta,
    pub work: BatchWork,
}

impl ClaimedBatch {
    /// The batch's identity: its first pending row (a released batch is claimed again under the
    /// same rows, so replies are matched to the batch in flight by it).
    pub fn id(&self) -> i64 {
        self.meta.pending_ids.first().copied().unwrap_or(0)
    }
}

/// What the observer made of a batch; drafts are already bounded and redacted.
#[derive(Debug, Clone)]
pub struct BatchOutput {
    pub observations: Vec<ObservationDraft>,
    pub summary: Option<SummaryDraft>,
    /// `observer` or `extractive`.
    pub origin: &'static str,
    pub provider: String,
    pub model: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub source_rows: Vec<i64>,
}

impl BatchOutput {
    /// What the extractive observer produced: no provider, no tokens.
    pub fn extractive(observations: Vec<ObservationDraft>, summary: Option<SummaryDraft>, source_rows: Vec<i64>) -> Self {
        Self {
            observations,
            summary,
            origin: "extractive",
            provider: "extractive".into(),
            model: "extractive".into(),
            input_tokens: 0,
            output_tokens: 0,
            source_rows,
        }
    }
}

/// Provider calls whose tokens are not carried by a stored [`BatchOutput`] (failed calls,
/// re-asks, calls whose batch went to the extractive observer), added to today's `token_usage`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageDelta {
    pub provider: String,
    pub model: String,
    pub calls: i64,
    pub failures: i64,
    pub reasks: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}
