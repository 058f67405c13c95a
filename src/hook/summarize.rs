//! Stop → `summarize` (docs/spec/hooks.md §3.5): `POST /api/sessions/summarize` with the turn's last
//! assistant message (from the event, else from the transcript's tail). Subagents are skipped.

use serde_json::json;

use super::env::Budget;
use super::event::IngestEvent;
use super::output::EMPTY;
use super::run::Run;
use super::transcript::last_assistant_message;
use super::transport::{Start, deliver};
use crate::protocol::IngestRoute;

pub fn run(r: &Run<'_>) -> String {
    if r.input.agent("agent_id").is_some() {
        return EMPTY.into();
    }
    let budget = Budget::new(r.hook.started, r.hook.async_budget());
    let message = match r.input.str("last_assistant_message").filter(|m| !m.trim().is_empty()) {
        Some(m) => m.to_string(),
        None => r
            .input
            .str("transcript_path")
            .and_then(|p| last_assistant_message(std::path::Path::new(p)))
            .unwrap_or_default(),
    };
    let body = json!({
        "contentSessionId": r.session_id(),
        "project": r.identity().primary,
        "cwd": r.cwd,
        "last_assistant_message": message,
        "platformSource": r.platform,
        "stop_hook_active": r.input.bool("stop_hook_active").unwrap_or(false),
    });
    let mut event = IngestEvent::new("summarize", IngestRoute::Summarize, body, r.occurred_at);
    deliver(&r.hook, &mut event, &budget, Start::AndHandOff);
    EMPTY.into()
}
