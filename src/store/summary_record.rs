//! The session summary and the prompt as stored rows: one list each (the record macro), from
//! which come the struct, its column list and its row reader by name. What the read side computes
//! from them (read tokens, titles, the API rows) is in `retrieval/records.rs`; the team's push
//! reads summaries through the same list.

use super::record::record;

record! {
    /// A row of `session_summaries`.
    pub struct Summary, SUMMARY_COLS = "s" {
        id: i64 = "id",
        memory_session_id: String = "memory_session_id",
        project: String = "project",
        merged_into_project: Option<String> = "merged_into_project",
        platform_source: String = "platform_source",
        request: Option<String> = "request",
        investigated: Option<String> = "investigated",
        learned: Option<String> = "learned",
        completed: Option<String> = "completed",
        next_steps: Option<String> = "next_steps",
        notes: Option<String> = "notes",
        files_read: String = "files_read",
        files_edited: String = "files_edited",
        prompt_number: Option<i64> = "prompt_number",
        discovery_tokens: i64 = "discovery_tokens",
        created_at: String = "created_at",
        created_at_epoch: i64 = "created_at_epoch",
        provenance: String = "provenance",
        quarantined: bool = "quarantined",
        quarantine_reason: Option<String> = "quarantine_reason",
    }
}

record! {
    /// A row of `user_prompts`.
    pub struct Prompt, PROMPT_COLS = "p" {
        id: i64 = "id",
        content_session_id: String = "content_session_id",
        project: String = "project",
        platform_source: String = "platform_source",
        prompt_number: i64 = "prompt_number",
        prompt_text: String = "prompt_text",
        is_private: bool = "is_private",
        created_at: String = "created_at",
        created_at_epoch: i64 = "created_at_epoch",
    }
}
